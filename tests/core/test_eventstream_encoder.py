"""The test kit's AWS event-stream encoder writes frames botocore's own parser accepts."""

from __future__ import annotations

import json
import zlib

import pytest
from toolstream_core.testing._eventstream import (
    encode_error,
    encode_event,
    encode_exception,
    encode_stream,
)

eventstream = pytest.importorskip("botocore.eventstream")


def _parse(raw: bytes) -> list[tuple[dict[str, object], bytes]]:
    buf = eventstream.EventStreamBuffer()
    buf.add_data(raw)
    return [(dict(m.headers), m.payload) for m in buf]


def test_event_frame_round_trips_through_botocore() -> None:
    data = {"contentBlockIndex": 0, "delta": {"toolUse": {"input": '{"city": "Zürich"'}}}
    [(headers, payload)] = _parse(encode_event("contentBlockDelta", data))
    assert headers[":event-type"] == "contentBlockDelta"
    assert headers[":message-type"] == "event"
    assert headers[":content-type"] == "application/json"
    assert json.loads(payload) == data


def test_exception_and_error_frames_carry_their_headers() -> None:
    raw = encode_exception("throttlingException", "slow down") + encode_error("Boom", "bad")
    (h1, p1), (h2, p2) = _parse(raw)
    assert (h1[":message-type"], h1[":exception-type"]) == ("exception", "throttlingException")
    assert json.loads(p1) == {"message": "slow down"}
    assert (h2[":message-type"], h2[":error-code"], h2[":error-message"]) == ("error", "Boom", "bad")
    assert p2 == b""


def test_stream_of_frames_parses_in_order_when_fed_byte_by_byte() -> None:
    events = [("messageStart", {"role": "assistant"}), ("messageStop", {"stopReason": "tool_use"})]
    raw = encode_stream(events)
    buf = eventstream.EventStreamBuffer()
    got = []
    for i in range(len(raw)):
        buf.add_data(raw[i : i + 1])
        got.extend((m.headers[":event-type"], json.loads(m.payload)) for m in buf)
    assert got == events


def test_a_flipped_payload_byte_fails_the_message_crc() -> None:
    raw = bytearray(encode_event("messageStop", {"stopReason": "end_turn"}))
    raw[-6] ^= 0x01
    with pytest.raises(eventstream.ChecksumMismatch):
        _parse(bytes(raw))


def test_prelude_crc_is_the_crc32_of_the_first_eight_bytes() -> None:
    raw = encode_event("messageStart", {"role": "assistant"})
    assert int.from_bytes(raw[8:12], "big") == zlib.crc32(raw[:8]) & 0xFFFFFFFF
    assert int.from_bytes(raw[:4], "big") == len(raw)
