"""The AWS binary event-stream framing (Bedrock ``converse-stream``), frames read by botocore."""

from __future__ import annotations

import struct
import zlib
from typing import Any

from ._common import UNPARSABLE_KEY, Bytes, _parse_object

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
