"""Byte-level decoding of vendor streaming bodies into vendor events.

The assembler takes vendor events (the parsed JSON payloads). Callers who hold the raw
HTTP body - a proxy, a recorder, a test replaying a cassette, a client not using a vendor
SDK - need something between the socket and the assembler that survives any cut of the
bytes: inside a line, between ``\\r`` and ``\\n``, inside a multi-byte UTF-8 character.
This module is that layer, sans-I/O like the rest of the core: the caller feeds bytes and
gets back whatever became complete; nothing here reads, sleeps or blocks.

Four wire formats exist among the supported vendors:

* Server-Sent Events (OpenAI, Anthropic, Gemini with ``alt=sse``, Cohere, most compatible
  servers), decoded by :class:`SSEDecoder` per the WHATWG HTML "event stream" rules.
* A JSON array streamed element by element (Gemini ``streamGenerateContent`` without
  ``alt=sse``), decoded by :class:`JSONArrayStreamDecoder`.
* Newline-delimited JSON (Ollama's ``/api/chat``), decoded by :class:`NDJSONDecoder`.
* The AWS binary event-stream framing (Bedrock ``converse-stream``), decoded by
  :class:`AWSEventStreamDecoder` with botocore's own frame parser
  (``botocore.eventstream.EventStreamBuffer``), imported only when such a body arrives.

:class:`EventDecoder` picks the format and turns payloads into ``dict`` events; it never
raises on bad bytes, it marks them (``{"toolstream_unparsable": text}``) so the assembler
can count the anomaly. Every decoder only looks at new bytes on each ``feed`` and keeps
incomplete input as a list of pieces (or one growing buffer), so a body cut into tiny chunks
costs linear time.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Any, Literal, TypeAlias

from ._aws import AWSEventStreamDecoder, _aws_or_unreadable, _Unreadable
from ._common import UNPARSABLE_KEY, Bytes, _parse_object
from ._json_array import JSONArrayStreamDecoder
from ._ndjson import NDJSONDecoder
from ._server_sent import SSEDecoder, SSEMessage

__all__ = [
    "UNPARSABLE_KEY",
    "AWSEventStreamDecoder",
    "EventDecoder",
    "JSONArrayStreamDecoder",
    "NDJSONDecoder",
    "SSEDecoder",
    "SSEMessage",
    "StreamFormat",
    "aiter_events",
    "format_for",
    "iter_events",
]

StreamFormat: TypeAlias = Literal["sse", "json-array", "ndjson", "aws-eventstream", "auto"]

_BOM_BYTES = b"\xef\xbb\xbf"
_JSON_WS = b" \t\r\n"


def format_for(content_type: str) -> StreamFormat:
    """The decoder format a response's ``Content-Type`` names (``auto`` when it names none)."""
    kind = content_type.lower()
    if "amazon.eventstream" in kind:
        return "aws-eventstream"
    if "ndjson" in kind or "jsonl" in kind or "jsonlines" in kind:
        return "ndjson"
    if "event-stream" in kind:
        return "sse"
    return "auto"


class EventDecoder:
    """Raw body bytes in, vendor events (``dict``) out: the decoder callers use.

    ``format="auto"`` looks at the first byte that is not a BOM or whitespace: ``[`` or
    ``{`` means a JSON body (Gemini's streamed array, a bare JSON error object, or
    newline-delimited JSON such as Ollama's, which the array decoder reads value by value),
    a zero byte as the very first byte means the AWS event-stream framing (a frame's length
    is a big-endian u32 under 16 MiB), anything else means Server-Sent Events. Pass
    ``format_for(content_type)`` when the response's ``Content-Type`` is known. Without
    botocore an AWS body in ``auto`` becomes one marker event saying so. For SSE each message's ``data`` is parsed as
    JSON; ``[DONE]`` is the OpenAI end marker, not an event (:attr:`saw_done` records it);
    a message whose data is empty or whitespace is a keep-alive and yields nothing. The
    SSE ``event:`` name is not copied into the payload: vendor payloads carry their own
    ``type``, and those without one (``{"error": ...}``) are passed on unchanged.

    Nothing here raises on bad input. A payload that is not a JSON object is yielded as
    ``{"toolstream_unparsable": <text>}`` so the assembler counts it as an anomaly.
    """

    def __init__(self, format: StreamFormat = "auto") -> None:
        if format not in ("sse", "json-array", "ndjson", "aws-eventstream", "auto"):
            raise ValueError("format must be 'sse', 'json-array', 'ndjson', 'aws-eventstream' or "
                             f"'auto', not {format!r}")
        self._sse: SSEDecoder | None = None
        self._array: JSONArrayStreamDecoder | None = None
        self._other: NDJSONDecoder | AWSEventStreamDecoder | _Unreadable | None = None
        if format == "sse":
            self._sse = SSEDecoder()
        elif format == "json-array":
            self._array = JSONArrayStreamDecoder()
        elif format == "ndjson":
            self._other = NDJSONDecoder()
        elif format == "aws-eventstream":
            self._other = AWSEventStreamDecoder()
        self._pending: list[bytes] = []  # auto: bytes seen before the format is known
        self._bom_pos = 0  # auto: how many BOM bytes matched at the start (3 = settled)
        self._closed = False
        self.saw_done = False
        """An SSE ``data: [DONE]`` arrived."""

    @property
    def format(self) -> Literal["sse", "json-array", "ndjson", "aws-eventstream"] | None:
        """The format in use; ``None`` while ``auto`` has only seen whitespace."""
        if self._sse is not None:
            return "sse"
        if self._array is not None:
            return "json-array"
        if isinstance(self._other, NDJSONDecoder):
            return "ndjson"
        return "aws-eventstream" if self._other is not None else None

    @property
    def truncated(self) -> bool:
        """The body ended mid-structure (inside an array element, line or event).

        Only meaningful after :meth:`close`; a hint that the connection dropped.
        """
        if self._sse is not None:
            return self._sse.truncated
        if self._array is not None:
            return self._array.truncated
        return self._other.truncated if self._other is not None else False

    def feed(self, data: Bytes) -> list[dict[str, Any]]:
        """Decode the next piece of the body; return the events it completed.

        Raises ``RuntimeError`` after :meth:`close` (a caller bug, not bad input).
        """
        if self._closed:
            raise RuntimeError("EventDecoder.feed() called after close()")
        if self._sse is None and self._array is None and self._other is None:
            chunk = bytes(data)
            self._pending.append(chunk)
            if not self._detect(chunk):
                return []
            data = b"".join(self._pending)
            self._pending = []
        if self._sse is not None:
            return self._from_messages(self._sse.feed(data))
        if self._other is not None:
            return self._other.feed(data)
        assert self._array is not None
        return self._from_elements(self._array._feed_texts(data))

    def close(self) -> list[dict[str, Any]]:
        """Signal the end of the body; return any event that only the end completes."""
        if self._closed:
            return []
        self._closed = True
        if self._sse is None and self._array is None and self._other is None:
            # Only whitespace (or part of a BOM) arrived: no event in either format.
            self._pending = []
            return []
        if self._sse is not None:
            return self._from_messages(self._sse.close())
        if self._other is not None:
            return self._other.close()
        assert self._array is not None
        return self._from_elements(self._array._close_texts())

    def _detect(self, chunk: bytes) -> bool:
        """Look at one more chunk of the body's start; True once the format is chosen."""
        pos = 0
        if self._bom_pos == 0 and chunk[:1] == b"\x00" and not any(self._pending[:-1]):
            self._other = _aws_or_unreadable()
            return True
        while self._bom_pos < 3 and pos < len(chunk):
            if chunk[pos] != _BOM_BYTES[self._bom_pos]:
                if self._bom_pos:
                    self._sse = SSEDecoder()  # a broken BOM is not JSON's "[" or "{"
                    return True
                self._bom_pos = 3
                break
            self._bom_pos += 1
            pos += 1
        rest = chunk[pos:].lstrip(_JSON_WS)
        if not rest:
            return False
        if rest[:1] in (b"[", b"{"):
            self._array = JSONArrayStreamDecoder()
        else:
            self._sse = SSEDecoder()
        return True

    def _from_messages(self, messages: list[SSEMessage]) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        for message in messages:
            text = message.data
            stripped = text.strip()
            if not stripped:
                continue
            if stripped == "[DONE]":
                self.saw_done = True
                continue
            events.append(_parse_object(text))
        return events

    @staticmethod
    def _from_elements(texts: list[str]) -> list[dict[str, Any]]:
        return [_parse_object(text) for text in texts]


def iter_events(
    chunks: Iterable[Bytes],
    format: StreamFormat = "auto",
    *,
    decoder: EventDecoder | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield the vendor events of a body given as an iterable of byte chunks.

    Pass your own ``decoder`` to read :attr:`EventDecoder.truncated` and
    :attr:`EventDecoder.saw_done` afterwards (``format`` is then ignored).
    """
    dec = decoder if decoder is not None else EventDecoder(format)
    for chunk in chunks:
        yield from dec.feed(chunk)
    yield from dec.close()


async def aiter_events(
    chunks: AsyncIterable[Bytes],
    format: StreamFormat = "auto",
    *,
    decoder: EventDecoder | None = None,
) -> AsyncIterator[dict[str, Any]]:
    """Async twin of :func:`iter_events` (e.g. over ``httpx.Response.aiter_bytes()``)."""
    dec = decoder if decoder is not None else EventDecoder(format)
    async for chunk in chunks:
        for event in dec.feed(chunk):
            yield event
    for event in dec.close():
        yield event
