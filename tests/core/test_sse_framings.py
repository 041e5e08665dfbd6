"""``toolstream_core.sse`` for Ollama's NDJSON and Bedrock's AWS event-stream framing.

The Bedrock corpus streams are re-encoded as the frames Bedrock sends (the test kit's encoder,
CRCs included) and every cut of those bytes must give back the events boto3 would yield
(``{":event-type": payload}``), in order. Bad bytes never raise.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streams_util import stream_paths
from toolstream_core import Assembler
from toolstream_core.sse import (
    UNPARSABLE_KEY,
    AWSEventStreamDecoder,
    EventDecoder,
    NDJSONDecoder,
    format_for,
    iter_events,
)
from toolstream_core.testing._eventstream import encode_error, encode_event, encode_exception

pytest.importorskip("botocore.eventstream")

BEDROCK_FILES = stream_paths(apis=("bedrock-converse",))
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

OLLAMA_CHUNKS: list[dict[str, Any]] = [
    {"model": "qwen3", "created_at": "2025-01-01T00:00:00Z",
     "message": {"role": "assistant", "content": "", "thinking": "météo…"}, "done": False},
    {"model": "qwen3", "created_at": "2025-01-01T00:00:01Z",
     "message": {"role": "assistant", "content": "", "tool_calls": [
         {"id": "call_1", "function": {"index": 0, "name": "get_weather", "arguments": {"city": "Zürich"}}}]},
     "done": False},
    {"model": "qwen3", "created_at": "2025-01-01T00:00:02Z", "message": {"role": "assistant", "content": ""},
     "done": True, "done_reason": "stop", "eval_count": 12},
]


def bedrock_events(path: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()[1:]]
    return [{line["event"]: line["data"]} for line in lines]


def frames(events: list[dict[str, Any]]) -> bytes:
    return b"".join(encode_event(*next(iter(e.items()))) for e in events)


def ndjson(chunks: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in chunks).encode()


def decode(pieces: list[bytes], fmt: Any = "auto") -> tuple[list[dict[str, Any]], EventDecoder]:
    decoder = EventDecoder(fmt)
    return list(iter_events(pieces, decoder=decoder)), decoder


def bytewise(body: bytes) -> list[bytes]:
    return [body[i : i + 1] for i in range(len(body))]


# -------------------------------------------------------------------- AWS event stream


@pytest.mark.parametrize("path", BEDROCK_FILES, ids=lambda p: p.stem)
def test_bedrock_stream_as_frames_fed_byte_by_byte(path: Path) -> None:
    events = bedrock_events(path)
    got, decoder = decode(bytewise(frames(events)))
    assert got == events
    assert decoder.format == "aws-eventstream"
    assert decoder.truncated is False


@FAST
@given(data=st.data())
def test_bedrock_frames_any_cut_gives_the_events(data: st.DataObject) -> None:
    events = bedrock_events(data.draw(st.sampled_from(BEDROCK_FILES)))
    body = frames(events)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=40)))
    pieces = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]
    assert decode(pieces, "aws-eventstream")[0] == events


def test_decoded_bedrock_frames_commit_through_the_assembler() -> None:
    [path] = [p for p in BEDROCK_FILES if p.stem.endswith("__0")]
    events, _ = decode(bytewise(frames(bedrock_events(path))))
    assembler = Assembler(provider="bedrock-converse")
    for event in events:
        assembler.feed(event)
    turn = assembler.finish()
    assert [(c.name, c.arguments) for c in turn.committed] == [("get_temperature", {"city": "Paris"})]


def test_exception_and_error_frames_become_named_events() -> None:
    body = encode_exception("throttlingException", "slow down") + encode_error("Boom", "it broke")
    got, _ = decode([body])
    assert got == [{"throttlingException": {"message": "slow down"}},
                   {"error": {"code": "Boom", "message": "it broke"}}]


def test_a_frame_with_a_bad_message_crc_is_marked_and_the_next_frame_read() -> None:
    first = bytearray(encode_event("messageStart", {"role": "assistant"}))
    first[-6] ^= 0x01
    got, decoder = decode([bytes(first) + encode_event("messageStop", {"stopReason": "end_turn"})])
    assert UNPARSABLE_KEY in got[0]
    assert got[1:] == [{"messageStop": {"stopReason": "end_turn"}}]
    assert decoder.truncated is False


def test_a_corrupt_prelude_ends_the_framing_with_one_marker() -> None:
    body = bytearray(encode_event("messageStart", {"role": "assistant"}) * 3)
    body[5] ^= 0x01
    got, _ = decode(bytewise(bytes(body)))
    assert len(got) == 1 and UNPARSABLE_KEY in got[0]


def test_a_payload_that_is_not_json_is_marked() -> None:
    from toolstream_core.testing._eventstream import encode_frame

    frame = encode_frame({":event-type": "contentBlockDelta", ":message-type": "event"}, b"{nope")
    assert decode([frame])[0] == [{UNPARSABLE_KEY: "{nope"}]


def test_a_body_cut_inside_a_frame_is_truncated() -> None:
    body = frames([{"messageStart": {"role": "assistant"}}, {"messageStop": {"stopReason": "tool_use"}}])
    got, decoder = decode([body[:-3]])
    assert got == [{"messageStart": {"role": "assistant"}}]
    assert decoder.truncated is True


def test_prelude_crc_is_checked_before_waiting_for_a_frame() -> None:
    """A garbage length never makes the decoder wait for megabytes that will not come."""
    prelude = (10_000_000).to_bytes(4, "big") + (0).to_bytes(4, "big")
    bogus = prelude + (zlib.crc32(prelude) ^ 1).to_bytes(4, "big")
    got, _ = decode([bogus + b"\x00" * 64])
    assert len(got) == 1 and UNPARSABLE_KEY in got[0]


@FAST
@given(garbage=st.binary(max_size=200), cuts=st.lists(st.integers(0, 220), max_size=10))
def test_garbage_frames_never_raise(garbage: bytes, cuts: list[int]) -> None:
    body = b"\x00" + garbage
    points = sorted({c % (len(body) + 1) for c in cuts})
    pieces = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    for event in decode(pieces)[0]:
        assert isinstance(event, dict)


def test_long_frame_in_tiny_chunks_decodes() -> None:
    """One 1 MB frame in 16-byte chunks; re-joining the buffer per feed would take minutes."""
    text = "aé\\" * 200_000
    body = encode_event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"toolUse": {"input": text}}})
    decoder = AWSEventStreamDecoder()
    got: list[dict[str, Any]] = []
    for i in range(0, len(body), 16):
        got.extend(decoder.feed(body[i : i + 16]))
    assert got == [{"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": text}}}}]


# ----------------------------------------------------------------------------- NDJSON


def test_ollama_ndjson_fed_byte_by_byte() -> None:
    got, decoder = decode(bytewise(ndjson(OLLAMA_CHUNKS)), "ndjson")
    assert got == OLLAMA_CHUNKS
    assert decoder.format == "ndjson" and decoder.truncated is False


def test_ndjson_in_auto_mode_reads_every_object() -> None:
    assert decode(bytewise(ndjson(OLLAMA_CHUNKS)))[0] == OLLAMA_CHUNKS


def test_a_bad_ndjson_line_is_marked_and_the_next_line_read() -> None:
    body = b'{"a": 1}\r\n{bad\n\n{"b": 2}\n'
    assert decode([body], "ndjson")[0] == [{"a": 1}, {UNPARSABLE_KEY: "{bad"}, {"b": 2}]


def test_a_last_line_without_newline_counts_only_when_it_parses() -> None:
    whole, decoder = decode([b'{"a": 1}\n{"b": 2}'], "ndjson")
    assert whole == [{"a": 1}, {"b": 2}] and decoder.truncated is False
    cut, decoder = decode([b'{"a": 1}\n{"b": '], "ndjson")
    assert cut == [{"a": 1}] and decoder.truncated is True


def test_ndjson_feed_after_close_raises() -> None:
    decoder = NDJSONDecoder()
    decoder.close()
    assert decoder.close() == []
    with pytest.raises(RuntimeError):
        decoder.feed(b"{}\n")


@pytest.mark.parametrize(("content_type", "fmt"), [
    ("application/vnd.amazon.eventstream", "aws-eventstream"),
    ("application/x-ndjson", "ndjson"),
    ("text/event-stream; charset=utf-8", "sse"),
    ("application/json", "auto"),
])
def test_format_for_content_type(content_type: str, fmt: str) -> None:
    assert format_for(content_type) == fmt
