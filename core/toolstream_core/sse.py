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

import codecs
import json
import re
import struct
import zlib
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

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

#: Key of the marker event emitted for a payload that is not a JSON object.
UNPARSABLE_KEY = "toolstream_unparsable"

StreamFormat: TypeAlias = Literal["sse", "json-array", "ndjson", "aws-eventstream", "auto"]
#: What ``feed`` accepts: anything the incremental UTF-8 decoder can read.
Bytes: TypeAlias = bytes | bytearray | memoryview

_BOM_BYTES = b"\xef\xbb\xbf"
_JSON_WS = b" \t\r\n"
_EOL = re.compile(r"\r\n|\r|\n")
# JSON-array scanner: what matters in each state (everything else is skipped by the regex
# engine, which keeps the per-byte cost in C).
_IN_STRING_STOP = re.compile(r'["\\]')
_IN_CONTAINER_STOP = re.compile(r'[\[\]{}"]')
_SCALAR_STOP = re.compile(r'[\s,\[\]{}"]')
_NON_WS = re.compile(r"\S")


def _utf8_decoder() -> codecs.IncrementalDecoder:
    # Incremental so a character cut across two feeds is decoded whole; "replace" because
    # garbage bytes must never raise (WHATWG decodes event streams the same way).
    return codecs.getincrementaldecoder("utf-8")(errors="replace")


def _reject_constant(name: str) -> Any:
    # NaN / Infinity are not JSON; a payload carrying them is an anomaly, not data.
    raise ValueError(f"non-standard JSON constant {name}")


def _parse_object(text: str) -> dict[str, Any]:
    """Parse one payload; anything that is not a JSON object becomes the marker event.

    Deeply nested garbage makes ``json`` hit the recursion limit and huge integers hit
    Python's digit limit: both are bad input, so both are caught here rather than raised.
    """
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return {UNPARSABLE_KEY: text}
    if isinstance(value, dict):
        return value
    return {UNPARSABLE_KEY: text}


@dataclass(frozen=True, slots=True)
class SSEMessage:
    """One dispatched Server-Sent Event.

    ``event`` is ``None`` when no ``event:`` field was sent (the browser would call it
    ``"message"``). ``id`` is the stream's last event id at dispatch time, which per the
    spec persists across events until the server sends another ``id:``; ``None`` when the
    server never sent one.
    """

    event: str | None
    data: str
    id: str | None = None


class SSEDecoder:
    """Incremental Server-Sent Events decoder (WHATWG HTML, "Parsing an event stream").

    Feed raw body bytes in any cut; get back the events completed by a blank line.
    Differs from the browser algorithm in one deliberate way: :meth:`close` dispatches a
    final event that has data but lacks its terminating blank line, because several
    servers end the body right after the last ``data:`` line and dropping that event
    would lose the finish signal. :attr:`truncated` records that the body did not end on
    an event boundary.
    """

    def __init__(self) -> None:
        self._decoder = _utf8_decoder()
        self._started = False  # the first decoded character was inspected for a BOM
        self._skip_lf = False  # the previous text ended with "\r": a leading "\n" is its pair
        self._line_parts: list[str] = []
        self._data_lines: list[str] = []
        self._event_type = ""
        self._dirty = False  # a field was seen since the last dispatch
        self._closed = False
        self.last_event_id: str | None = None
        """The last ``id:`` value received (spec: "last event ID buffer")."""
        self.retry: int | None = None
        """The last valid ``retry:`` value in milliseconds; informational only."""
        self.truncated = False
        """Set by :meth:`close` when the body ended inside a line or an event."""

    def feed(self, data: Bytes) -> list[SSEMessage]:
        """Decode the next piece of the body; return the events it completed.

        Raises ``RuntimeError`` after :meth:`close` (a caller bug, not bad input).
        """
        if self._closed:
            raise RuntimeError("SSEDecoder.feed() called after close()")
        return self._feed_text(self._decoder.decode(data))

    def close(self) -> list[SSEMessage]:
        """Signal the end of the body; return the last event if it was left pending.

        An incomplete UTF-8 sequence at the very end becomes U+FFFD. Calling it again
        returns an empty list.
        """
        if self._closed:
            return []
        out = self._feed_text(self._decoder.decode(b"", final=True))
        self._closed = True
        if self._line_parts:
            self.truncated = True
            line = "".join(self._line_parts)
            self._line_parts = []
            self._process_line(line)
        if self._dirty:
            self.truncated = True
        self._dispatch(out)
        return out

    def _feed_text(self, text: str) -> list[SSEMessage]:
        out: list[SSEMessage] = []
        text, self._started = _body_text(text, self._started), self._started or bool(text)
        if not text:
            return out
        if self._skip_lf:
            self._skip_lf = False
            if text[0] == "\n":
                text = text[1:]
        start = 0
        for match in _EOL.finditer(text):
            piece = text[start : match.start()]
            if self._line_parts:
                self._line_parts.append(piece)
                line = "".join(self._line_parts)
                self._line_parts = []
            else:
                line = piece
            start = match.end()
            if line:
                self._process_line(line)
            else:
                self._dispatch(out)
        if start < len(text):
            self._line_parts.append(text[start:])
        elif text and text[-1] == "\r":
            # Only now is it unknown whether "\r" is a line end alone or half of "\r\n".
            self._skip_lf = True
        return out

    def _process_line(self, line: str) -> None:
        if line[0] == ":":
            return  # comment / keep-alive
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data_lines.append(value)
        elif name == "event":
            self._event_type = value
        elif name == "id":
            if "\x00" not in value:
                self.last_event_id = value
        elif name == "retry":
            if value and value.isascii() and value.isdigit():
                self.retry = int(value)
        else:
            return  # unknown fields are ignored, as the spec says
        self._dirty = True

    def _dispatch(self, out: list[SSEMessage]) -> None:
        self._dirty = False
        if self._data_lines:
            out.append(
                SSEMessage(
                    event=self._event_type or None,
                    data="\n".join(self._data_lines),
                    id=self.last_event_id,
                )
            )
        self._data_lines = []
        self._event_type = ""


class JSONArrayStreamDecoder:
    """Incremental decoder for a JSON array whose elements arrive over time.

    This is Gemini's ``streamGenerateContent`` body without ``alt=sse``:
    ``[{...}\\r\\n,\\r\\n{...}\\r\\n]``. Each element is returned as soon as its last byte
    arrives, found by tracking string/escape state and bracket depth over new text only;
    the element text is then parsed once. An element that does not parse becomes
    ``{"toolstream_unparsable": text}`` and scanning resynchronises after it.

    A body that is not an array - a bare ``{"error": ...}`` object, or newline-delimited
    JSON values - yields its top-level values the same way. A body that ends inside the
    array or inside an element sets :attr:`truncated`; the incomplete element is dropped,
    never guessed at.
    """

    def __init__(self) -> None:
        self._decoder = _utf8_decoder()
        self._started = False
        self._in_array = False  # inside the outer "[": elements live at depth 1
        self._depth = 0  # container depth, the outer array included
        self._in_elem = False
        self._elem_is_scalar = False  # a number / literal: ends at the next delimiter
        self._in_string = False
        self._escape = False  # the previous text ended on a backslash inside a string
        self._parts: list[str] = []
        self._elem_start = 0  # within the text being scanned
        self._closed = False
        self.truncated = False
        """Set by :meth:`close` when the body ended inside the array or an element."""

    def feed(self, data: Bytes) -> list[Any]:
        """Decode the next piece of the body; return the elements it completed, parsed.

        Raises ``RuntimeError`` after :meth:`close` (a caller bug, not bad input).
        """
        return [_parse_value(text) for text in self._feed_texts(data)]

    def close(self) -> list[Any]:
        """Signal the end of the body; return a last bare value if one was pending."""
        return [_parse_value(text) for text in self._close_texts()]

    def _feed_texts(self, data: Bytes) -> list[str]:
        if self._closed:
            raise RuntimeError("JSONArrayStreamDecoder.feed() called after close()")
        return self._scan(self._decoder.decode(data))

    def _close_texts(self) -> list[str]:
        if self._closed:
            return []
        out = self._scan(self._decoder.decode(b"", final=True))
        self._closed = True
        if self._in_elem:
            if self._elem_is_scalar and not self._in_array:
                out.append("".join(self._parts))  # a bare value ends with the body
            else:
                self.truncated = True
            self._parts = []
            self._in_elem = False
        if self._in_array:
            self.truncated = True
        return out

    def _scan(self, text: str) -> list[str]:
        """The elements ``text`` completes; the state machine's one loop, one step per state."""
        text, self._started = _body_text(text, self._started), self._started or bool(text)
        if not text:
            return []
        out: list[str] = []
        self._elem_start = 0  # where the current element starts within ``text``
        n = len(text)
        i = 0
        while 0 <= i < n:
            if self._escape:
                self._escape = False
                i += 1
            elif self._in_string:
                i = self._in_string_step(text, i, out)
            elif self._in_elem and self._elem_is_scalar:
                i = self._scalar_step(text, i, out)
            elif self._in_elem:
                i = self._container_step(text, i, out)
            else:
                i = self._between_step(text, i, out)
        if self._in_elem:
            self._parts.append(text[self._elem_start:])
        return out

    # Each step reads ``text`` from ``i`` and returns where the scan goes on, or -1 when the
    # rest of ``text`` holds nothing for its state (the next ``feed`` resumes there).

    def _in_string_step(self, text: str, i: int, out: list[str]) -> int:
        j = _find(_IN_STRING_STOP, text, i)
        if j < 0:
            return -1
        if text[j] == "\\":
            self._escape = True
            return j + 1
        self._in_string = False
        if self._in_elem and self._depth == (1 if self._in_array else 0):  # a string element ended
            out.append(self._take(text, self._elem_start, j + 1))
        return j + 1

    def _scalar_step(self, text: str, i: int, out: list[str]) -> int:
        j = _find(_SCALAR_STOP, text, i)
        if j >= 0:
            out.append(self._take(text, self._elem_start, j))
        return j  # the delimiter is handled as between-elements input

    def _container_step(self, text: str, i: int, out: list[str]) -> int:
        j = _find(_IN_CONTAINER_STOP, text, i)
        if j < 0:
            return -1
        c = text[j]
        if c == '"':
            self._in_string = True
        elif c in "[{":
            self._depth += 1
        else:
            self._depth -= 1
            if self._depth == (1 if self._in_array else 0):
                out.append(self._take(text, self._elem_start, j + 1))
        return j + 1

    def _between_step(self, text: str, i: int, out: list[str]) -> int:
        j = _find(_NON_WS, text, i)
        if j < 0:
            return -1
        c = text[j]
        if c == "[" and not self._in_array:
            self._in_array = True
            self._depth = 1
        elif c == "]" and self._in_array:
            self._in_array = False
            self._depth = 0
        elif c == "," and self._in_array:
            pass
        elif c in "]},":
            out.append(c)  # stray delimiter: surfaces as one unparsable element
        else:
            self._start_element(c, j)
        return j + 1

    def _start_element(self, c: str, j: int) -> None:
        self._in_elem = True
        self._parts = []
        self._elem_start = j
        if c in "[{":
            self._depth += 1
        elif c == '"':
            self._in_string = True
        else:
            self._elem_is_scalar = True

    def _take(self, text: str, start: int, end: int) -> str:
        """End the current element at ``text[end]`` and return its whole text."""
        self._in_elem = False
        self._elem_is_scalar = False
        piece = text[start:end]
        if self._parts:
            self._parts.append(piece)
            piece = "".join(self._parts)
            self._parts = []
        return piece


def _body_text(text: str, started: bool) -> str:
    """``text`` without the byte-order mark a body's first text may start with."""
    return text[1:] if not started and text[:1] == "\ufeff" else text


def _find(pattern: re.Pattern[str], text: str, i: int) -> int:
    """Where ``pattern`` next matches in ``text`` from ``i``; -1 when it does not."""
    m = pattern.search(text, i)
    return -1 if m is None else m.start()


def _parse_value(text: str) -> Any:
    """Parse one array element; unparsable text becomes the marker event."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return {UNPARSABLE_KEY: text}


class NDJSONDecoder:
    """Incremental newline-delimited JSON: Ollama's ``/api/chat`` body, one object per line.

    Each line is parsed on its own, so one bad line becomes one marker event and the next
    line is read normally. A last line without its newline is an event when it parses (the
    object is self-delimiting); when it does not, the body was cut inside it: it is dropped,
    never guessed at, and :attr:`truncated` is set.
    """

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._closed = False
        self.truncated = False
        """Set by :meth:`close` when the body ended inside a line that does not parse."""

    def feed(self, data: Bytes) -> list[dict[str, Any]]:
        """Decode the next piece of the body; return the lines it completed, parsed."""
        if self._closed:
            raise RuntimeError("NDJSONDecoder.feed() called after close()")
        chunk = bytes(data)
        out: list[dict[str, Any]] = []
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            piece = chunk[start:end]
            if self._parts:
                self._parts.append(piece)
                piece = b"".join(self._parts)
                self._parts = []
            self._line(piece, out)
            start = end + 1
        if start < len(chunk):
            self._parts.append(chunk[start:])
        return out

    def close(self) -> list[dict[str, Any]]:
        """Signal the end of the body; return a last line that lacked its newline."""
        if self._closed:
            return []
        self._closed = True
        rest = b"".join(self._parts)
        self._parts = []
        out: list[dict[str, Any]] = []
        if rest.strip():
            self._line(rest, out)
            if UNPARSABLE_KEY in out[-1]:
                out.pop()
                self.truncated = True
        return out

    @staticmethod
    def _line(raw: bytes, out: list[dict[str, Any]]) -> None:
        text = raw.decode("utf-8", "replace").strip()
        if text.startswith("\ufeff"):
            text = text[1:].strip()
        if text:
            out.append(_parse_object(text))


_PRELUDE = struct.Struct(">III")
_MIN_FRAME = 16  # prelude (12) + message CRC (4)
_MAX_FRAME = 24 * 1024 * 1024  # botocore: 128 KiB of headers + 16 MiB of payload, and some


class AWSEventStreamDecoder:
    """Incremental AWS event-stream decoder (Bedrock ``converse-stream``), frames read by botocore.

    Events come out in the shape boto3 yields them: ``{":event-type": payload}``, for example
    ``{"contentBlockDelta": {"contentBlockIndex": 0, "delta": {...}}}``. A modelled exception
    frame becomes ``{":exception-type": payload}`` (``{"throttlingException": {"message": ...}}``),
    an unmodelled error frame ``{"error": {"code": ..., "message": ...}}``; the Bedrock adapter
    fails the turn on both, as boto3 raises ``EventStreamError`` for them.

    Bytes are kept in one buffer and a frame is handed to botocore's
    ``EventStreamBuffer`` only once all of it has arrived, so tiny chunks cost linear time.
    Bad bytes never raise: a frame whose message CRC, headers or payload are bad becomes one
    ``{"toolstream_unparsable": ...}`` marker and the next frame is read; a prelude whose CRC
    is bad (the frame lengths cannot be trusted) becomes one marker and ends the decoding.

    Needs botocore (``pip install toolstream[bedrock]``); constructing it without botocore
    raises ``ImportError`` saying so.
    """

    def __init__(self) -> None:
        try:
            from botocore.eventstream import EventStreamBuffer, ParserError  # type: ignore[import-untyped]
        except ImportError as exc:  # pragma: no cover - botocore is in the bedrock extra
            raise ImportError(
                "reading an AWS event-stream body (Bedrock converse-stream) needs botocore: "
                "pip install 'toolstream[bedrock]' (or boto3)") from exc
        self._buffer_class = EventStreamBuffer
        self._parser_error = ParserError
        self._buf = bytearray()
        self._broken = False
        self._closed = False
        self.truncated = False
        """Set by :meth:`close` when the body ended inside a frame."""

    def feed(self, data: Bytes) -> list[dict[str, Any]]:
        """Decode the next piece of the body; return the frames it completed, as events."""
        if self._closed:
            raise RuntimeError("AWSEventStreamDecoder.feed() called after close()")
        if self._broken:
            return []
        self._buf += data
        out: list[dict[str, Any]] = []
        while len(self._buf) >= _PRELUDE.size and not self._broken:
            total = self._frame_length()
            if total is None or len(self._buf) < total:
                break
            frame = bytes(self._buf[:total])
            del self._buf[:total]
            out.append(self._event(frame))
        if self._broken:
            out.append({UNPARSABLE_KEY: "AWS event-stream prelude is corrupt; the rest of the body "
                                        "cannot be framed"})
            self._buf = bytearray()
        return out

    def close(self) -> list[dict[str, Any]]:
        """Signal the end of the body; a partial frame left over means it was cut."""
        if self._closed:
            return []
        self._closed = True
        if self._buf and not self._broken:
            self.truncated = True
        self._buf = bytearray()
        return []

    def _frame_length(self) -> int | None:
        total, headers_length, crc = _PRELUDE.unpack_from(self._buf)
        if (zlib.crc32(bytes(self._buf[:8])) & 0xFFFFFFFF) != crc or not (
                _MIN_FRAME <= total <= _MAX_FRAME and headers_length <= total - _MIN_FRAME):
            self._broken = True
            return None
        return int(total)

    def _event(self, frame: bytes) -> dict[str, Any]:
        parser = self._buffer_class()
        parser.add_data(frame)
        try:
            message = next(parser)
        except (self._parser_error, ValueError, KeyError, IndexError, struct.error) as exc:
            return {UNPARSABLE_KEY: f"bad AWS event-stream frame ({type(exc).__name__}: {exc})"}
        return _frame_event(message.headers, message.payload)


def _frame_event(headers: dict[str, Any], payload: bytes) -> dict[str, Any]:
    """One botocore message as the event boto3 would yield (or the decoder's error shapes)."""
    kind = headers.get(":message-type")
    if kind == "error":
        return {"error": {"code": str(headers.get(":error-code")), "message": str(headers.get(":error-message"))}}
    name = headers.get(":event-type") if kind == "event" else headers.get(":exception-type")
    if kind not in ("event", "exception") or not isinstance(name, str) or not name:
        return {UNPARSABLE_KEY: f"AWS event-stream frame of message type {kind!r} with no name"}
    text = payload.decode("utf-8", "replace")
    body = _parse_object(text) if text.strip() else {}
    if UNPARSABLE_KEY in body:
        return body
    return {name: body}


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


class _Unreadable:
    """``auto`` met an AWS event-stream body without botocore: one marker, then nothing."""

    truncated = False

    def __init__(self) -> None:
        self._said = False

    def feed(self, data: Bytes) -> list[dict[str, Any]]:
        if self._said:
            return []
        self._said = True
        return [{UNPARSABLE_KEY: "an AWS event-stream body (Bedrock); install botocore to read it"}]

    def close(self) -> list[dict[str, Any]]:
        return self.feed(b"")


def _aws_or_unreadable() -> AWSEventStreamDecoder | _Unreadable:
    try:
        return AWSEventStreamDecoder()
    except ImportError:
        return _Unreadable()


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
