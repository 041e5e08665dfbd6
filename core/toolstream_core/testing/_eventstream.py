"""AWS event-stream ENCODER: the binary framing Bedrock's ConverseStream speaks.

The emulator and the tests need real frames, the ones botocore's own parser
(``botocore.eventstream.EventStreamBuffer``) reads, CRCs included, so the SDK
under test runs its real decode path. The core never encodes: it only reads
frames (``toolstream_core.sse.EventStreamDecoder``), through botocore.

A frame (all integers big-endian)::

    total_length u32 | headers_length u32 | prelude_crc u32   (the prelude)
    headers (headers_length bytes)
    payload
    message_crc u32   (CRC32 of every byte before it, prelude included)

Each header is ``name_len u8 | name | type u8 | value``; toolstream writes
only strings (type 7: ``len u16 | utf-8``), which is all Bedrock sends.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "encode_error",
    "encode_event",
    "encode_exception",
    "encode_frame",
    "encode_headers",
    "encode_stream",
]

_STRING = 7
_PRELUDE = struct.Struct(">II")
_U32 = struct.Struct(">I")


def _crc(data: bytes, start: int = 0) -> int:
    """CRC32 as the AWS framing wants it: unsigned on every platform."""
    return zlib.crc32(data, start) & 0xFFFFFFFF


def encode_headers(headers: Mapping[str, str]) -> bytes:
    """String headers in the event-stream wire form, in the given order."""
    out = bytearray()
    for name, value in headers.items():
        raw_name = name.encode()
        raw_value = value.encode()
        out += bytes([len(raw_name)]) + raw_name
        out += bytes([_STRING]) + struct.pack(">H", len(raw_value)) + raw_value
    return bytes(out)


def encode_frame(headers: Mapping[str, str], payload: bytes) -> bytes:
    """One whole frame: prelude with its CRC, headers, payload, message CRC."""
    raw_headers = encode_headers(headers)
    total = _PRELUDE.size + 4 + len(raw_headers) + len(payload) + 4
    prelude = _PRELUDE.pack(total, len(raw_headers))
    prelude += _U32.pack(_crc(prelude))
    body = prelude + raw_headers + payload
    return body + _U32.pack(_crc(body))


def _json(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


def encode_event(event_type: str, data: Mapping[str, Any]) -> bytes:
    """A ``:message-type event`` frame, as Bedrock sends ``contentBlockDelta`` etc."""
    headers = {
        ":event-type": event_type,
        ":content-type": "application/json",
        ":message-type": "event",
    }
    return encode_frame(headers, _json(data))


def encode_exception(exception_type: str, message: str) -> bytes:
    """A modelled exception mid-stream (``throttlingException`` ...).

    botocore turns it into ``EventStreamError`` when the SDK iterates.
    """
    headers = {
        ":exception-type": exception_type,
        ":content-type": "application/json",
        ":message-type": "exception",
    }
    return encode_frame(headers, _json({"message": message}))


def encode_error(code: str, message: str) -> bytes:
    """An unmodelled error frame (``:message-type error``, no payload)."""
    headers = {":error-code": code, ":error-message": message, ":message-type": "error"}
    return encode_frame(headers, b"")


def encode_stream(events: Iterable[tuple[str, Mapping[str, Any]]]) -> bytes:
    """A whole body from ``(event_type, payload)`` pairs, e.g. a corpus stream."""
    return b"".join(encode_event(kind, data) for kind, data in events)
