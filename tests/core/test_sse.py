"""Tests for ``toolstream_core.sse``: raw body bytes -> vendor events, under any cut.

The real-stream tests re-encode the recorded vendor events of ``tests/streams`` as the
bytes a server would send (SSE, and Gemini's JSON array for the gemini folder) and check
that every way of cutting those bytes gives back the recorded events, in order.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streams_util import BONUS_APIS, MAIN_APIS, stream_paths
from toolstream_core.sse import (
    UNPARSABLE_KEY,
    EventDecoder,
    JSONArrayStreamDecoder,
    SSEDecoder,
    SSEMessage,
    aiter_events,
    iter_events,
)

STREAM_FILES = stream_paths(apis=MAIN_APIS + BONUS_APIS)  # in-repo corpus + $TOOLSTREAM_STREAMS
GEMINI_FILES = [p for p in STREAM_FILES if p.parent.name == "gemini"]
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

Record = dict[str, Any]


def load_records(path: Path) -> list[Record]:
    """The event lines of one corpus file (the header line has neither data nor done)."""
    records = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            if "data" in obj or obj.get("done") is True:
                records.append(obj)
    return records


def expected_events(records: list[Record]) -> list[Record]:
    return [r["data"] for r in records if "data" in r]


def sse_body(
    records: list[Record],
    *,
    eol: str = "\n",
    with_event_names: bool = True,
    keepalive_every: int = 0,
    bom: bool = False,
) -> bytes:
    """Encode records as an SSE body the way vendors write it (non-ASCII kept raw)."""
    out = ["\ufeff"] if bom else []
    for n, record in enumerate(records):
        if keepalive_every and n % keepalive_every == 0:
            out.append(f": OPENROUTER PROCESSING{eol}{eol}")
        if "data" not in record:
            out.append(f"data: [DONE]{eol}{eol}")
            continue
        if with_event_names and "event" in record:
            out.append(f"event: {record['event']}{eol}")
        out.append(f"data: {json.dumps(record['data'], ensure_ascii=False)}{eol}{eol}")
    return "".join(out).encode("utf-8")


def array_body(events: list[Record]) -> bytes:
    """Encode events like Gemini's non-SSE streamGenerateContent: pretty elements, CRLF."""
    parts = [json.dumps(e, indent=2, ensure_ascii=False) for e in events]
    return ("[" + "\r\n,\r\n".join(parts) + "\r\n]").encode("utf-8")


def split_at(body: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(body) + 1) for c in cuts})
    pieces, last = [], 0
    for p in points:
        pieces.append(body[last:p])
        last = p
    pieces.append(body[last:])
    return pieces


def inside_multibyte(body: bytes) -> list[int]:
    """Cut positions that split a UTF-8 character (the byte there is a continuation)."""
    return [i for i, b in enumerate(body) if 0x80 <= b <= 0xBF]


def decode_all(pieces: list[bytes], fmt: str = "auto") -> tuple[list[Record], EventDecoder]:
    decoder = EventDecoder(fmt)  # type: ignore[arg-type]
    events: list[Record] = []
    for piece in pieces:
        events.extend(decoder.feed(piece))
    events.extend(decoder.close())
    return events, decoder


def bytewise(body: bytes) -> list[bytes]:
    return [body[i : i + 1] for i in range(len(body))]


# ---------------------------------------------------------------------------------------
# Real vendor streams
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("path", STREAM_FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_real_stream_as_sse_fed_byte_by_byte(path: Path) -> None:
    """One byte per feed is every cut at once, multi-byte characters included."""
    records = load_records(path)
    body = sse_body(records, keepalive_every=5)
    events, decoder = decode_all(bytewise(body))
    assert events == expected_events(records)
    assert decoder.format == "sse"
    assert decoder.saw_done == any("data" not in r for r in records)
    assert decoder.truncated is False


@pytest.mark.parametrize("path", GEMINI_FILES, ids=lambda p: p.stem)
def test_real_gemini_stream_as_json_array_fed_byte_by_byte(path: Path) -> None:
    events_in = expected_events(load_records(path))
    body = array_body(events_in)
    events, decoder = decode_all(bytewise(body))
    assert events == events_in
    assert decoder.format == "json-array"
    assert decoder.truncated is False


def test_corpus_exercises_multibyte_cuts() -> None:
    """Guard the byte-by-byte tests: the corpus must actually contain non-ASCII payloads."""
    assert any(inside_multibyte(sse_body(load_records(p))) for p in STREAM_FILES)


@FAST
@given(data=st.data())
def test_real_stream_sse_random_cuts(data: st.DataObject) -> None:
    path = data.draw(st.sampled_from(STREAM_FILES), label="stream")
    records = load_records(path)
    body = sse_body(
        records,
        eol=data.draw(st.sampled_from(["\n", "\r\n", "\r"]), label="eol"),
        with_event_names=data.draw(st.booleans(), label="event names"),
        keepalive_every=data.draw(st.integers(0, 3), label="keepalive every"),
        bom=data.draw(st.booleans(), label="bom"),
    )
    cut = st.integers(0, len(body))
    mb = inside_multibyte(body)
    if mb:
        cut = st.one_of(cut, st.sampled_from(mb))
    pieces = split_at(body, data.draw(st.lists(cut, max_size=40), label="cuts"))
    events, decoder = decode_all(pieces)
    assert events == expected_events(records)
    assert decoder.saw_done == any("data" not in r for r in records)


@FAST
@given(data=st.data())
def test_real_gemini_stream_json_array_random_cuts(data: st.DataObject) -> None:
    path = data.draw(st.sampled_from(GEMINI_FILES), label="stream")
    events_in = expected_events(load_records(path))
    body = array_body(events_in)
    cut = st.integers(0, len(body))
    mb = inside_multibyte(body)
    if mb:
        cut = st.one_of(cut, st.sampled_from(mb))
    pieces = split_at(body, data.draw(st.lists(cut, max_size=40), label="cuts"))
    fmt = data.draw(st.sampled_from(["auto", "json-array"]), label="format")
    events, decoder = decode_all(pieces, fmt)
    assert events == events_in
    assert decoder.truncated is False


# ---------------------------------------------------------------------------------------
# SSE wire details
# ---------------------------------------------------------------------------------------


def sse_messages(pieces: list[bytes]) -> list[SSEMessage]:
    decoder = SSEDecoder()
    out: list[SSEMessage] = []
    for piece in pieces:
        out.extend(decoder.feed(piece))
    out.extend(decoder.close())
    return out


def test_crlf_split_across_feeds_is_one_line_end() -> None:
    # Read as two line ends, "\r" | "\n" would be a blank line dispatching "1" alone.
    msgs = sse_messages([b"data: 1\r", b"\ndata: 2\r", b"\n\r", b"\n"])
    assert msgs == [SSEMessage(event=None, data="1\n2", id=None)]


def test_lone_cr_line_ends_and_cr_cr_is_a_blank_line() -> None:
    msgs = sse_messages([b"data: a\r\rdata: b\r", b"\r"])
    assert [m.data for m in msgs] == ["a", "b"]


def test_mixed_line_ends_in_one_feed() -> None:
    msgs = sse_messages([b"data: a\ndata: b\r\ndata: c\r\r\ndata: d\n\n"])
    assert [m.data for m in msgs] == ["a\nb\nc", "d"]


def test_comments_and_keepalives_are_not_events() -> None:
    body = (
        b": OPENROUTER PROCESSING\n\n"
        b'data: {"id":"1",\n'
        b": mid-event comment\n"
        b'data: "object":"chat.completion.chunk"}\n\n'
        b":\n\n"
    )
    events, _ = decode_all([body])
    assert events == [{"id": "1", "object": "chat.completion.chunk"}]


def test_multiline_data_joined_with_newline() -> None:
    msgs = sse_messages([b"data: first\ndata:second\ndata\ndata:  spaced\n\n"])
    # One optional space is stripped; a bare "data" field contributes an empty line.
    assert msgs == [SSEMessage(event=None, data="first\nsecond\n\n spaced", id=None)]
    events, _ = decode_all([b'data: {"a":\ndata: [1,\ndata: 2]}\n\n'])
    assert events == [{"a": [1, 2]}]


def test_event_id_and_retry_fields() -> None:
    decoder = SSEDecoder()
    msgs = decoder.feed(
        b"event: message_start\nid: 7\nretry: 1500\ndata: a\n\n"
        b"data: b\n\n"  # no event name: not inherited; the id persists (spec)
        b"id: bad\x00id\nretry: 10s\nevent: ping\ndata: c\n\n"
        b"id\ndata: d\n\n"  # a bare "id" resets the last event id to ""
    )
    assert msgs == [
        SSEMessage(event="message_start", data="a", id="7"),
        SSEMessage(event=None, data="b", id="7"),
        SSEMessage(event="ping", data="c", id="7"),
        SSEMessage(event=None, data="d", id=""),
    ]
    assert decoder.retry == 1500
    assert decoder.close() == []


def test_event_without_data_is_not_dispatched() -> None:
    assert sse_messages([b"event: ping\n\nid: 3\n\nretry: 5\n\ndata: x\n\n"]) == [
        SSEMessage(event=None, data="x", id="3")
    ]


def test_unknown_fields_and_field_names_are_exact() -> None:
    msgs = sse_messages([b"Data: no\ndata : no\nfoo: bar\ndata: yes\n\n"])
    assert [m.data for m in msgs] == ["yes"]


def test_done_marker_is_not_an_event() -> None:
    events, decoder = decode_all([b'data: {"a":1}\n\n', b"data: [DONE]\n\n"])
    assert events == [{"a": 1}]
    assert decoder.saw_done is True
    _, decoder = decode_all([b'data: {"a":1}\n\n'])
    assert decoder.saw_done is False


def test_event_name_is_not_injected_into_payload() -> None:
    body = (
        b"event: error\n"
        b'data: {"error":{"message":"Tool call validation failed","code":"tool_use_failed"}}\n\n'
        b"event: content_block_stop\n"
        b'data: {"type":"content_block_stop","index":0}\n\n'
    )
    events, _ = decode_all([body])
    assert events == [
        {"error": {"message": "Tool call validation failed", "code": "tool_use_failed"}},
        {"type": "content_block_stop", "index": 0},
    ]


@pytest.mark.parametrize(
    "payload",
    [
        '{"type":"content_block_delta","delta":',  # cut JSON
        "42",  # valid JSON, not an object
        '"text"',
        "null",
        '{"x": NaN}',  # not JSON
        "{'a': 1}",
        "[" * 100_000,  # would exhaust the recursion limit
        "[" * 5000 + "]" * 5000,
        '{"n": ' + "9" * 5000 + "}",  # past Python's integer digit limit
    ],
)
def test_payload_that_is_not_a_json_object_is_marked_not_raised(payload: str) -> None:
    body = f"data: {payload}\n\ndata: {{\"ok\": true}}\n\n".encode()
    events, _ = decode_all([body])
    assert events == [{UNPARSABLE_KEY: payload}, {"ok": True}]


def test_blank_data_is_a_keepalive_not_an_anomaly() -> None:
    events, _ = decode_all([b"data:\n\ndata: \n\ndata: {}\n\n"])
    assert events == [{}]


def test_bom_is_stripped_once_even_when_split() -> None:
    bom = "\ufeff".encode()
    body = bom + b"data: 1\n\n" + bom + b"data: 2\n\ndata: 3\n\n"
    # The second BOM makes its line's field name "\ufeffdata", which is ignored.
    for pieces in ([body], [bom[:1], bom[1:2], body[2:]], bytewise(body)):
        assert [m.data for m in sse_messages(pieces)] == ["1", "3"]
    events, decoder = decode_all([bom[:2], bom[2:] + b'data: {"a":1}\n\n'])
    assert events == [{"a": 1}]
    assert decoder.format == "sse"


def test_invalid_utf8_is_replaced_after_incremental_decoding() -> None:
    e_acute = "é".encode()
    msgs = sse_messages([b"data: \xff", b"x" + e_acute[:1], e_acute[1:] + b"\n\n"])
    assert msgs == [SSEMessage(event=None, data="\ufffdxé", id=None)]
    # An incomplete character at the very end becomes one replacement character.
    assert sse_messages([b"data: a" + e_acute[:1]]) == [
        SSEMessage(event=None, data="a\ufffd", id=None)
    ]


def test_pending_event_flushed_at_close_only_if_it_has_data() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b'data: {"a":1}') == []
    assert decoder.close() == [SSEMessage(event=None, data='{"a":1}', id=None)]
    assert decoder.truncated is True
    decoder = SSEDecoder()
    assert decoder.feed(b"data: x\n\nevent: ping\n") == [SSEMessage(None, "x", None)]
    assert decoder.close() == []
    complete = SSEDecoder()
    complete.feed(b"data: x\n\n: trailing comment\n")
    assert complete.close() == []
    assert complete.truncated is False


def test_close_is_idempotent_and_feed_after_close_raises() -> None:
    for decoder in (SSEDecoder(), JSONArrayStreamDecoder(), EventDecoder()):
        decoder.feed(b"data: 1")
        decoder.close()
        assert decoder.close() == []
        with pytest.raises(RuntimeError):
            decoder.feed(b"\n\n")


def test_unknown_format_is_rejected() -> None:
    with pytest.raises(ValueError, match="format"):
        EventDecoder("msgpack")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------
# JSON array (Gemini without alt=sse)
# ---------------------------------------------------------------------------------------


def test_array_element_yielded_as_soon_as_complete() -> None:
    decoder = JSONArrayStreamDecoder()
    assert decoder.feed(b'[{"a": "]}\\"[{"') == []
    assert decoder.feed(b"}\r\n") == [{"a": ']}"[{'}]
    assert decoder.feed(b',\r\n{"b": [1, {"c": 2}]}') == [{"b": [1, {"c": 2}]}]
    assert decoder.feed(b"\r\n]") == []
    assert decoder.close() == []
    assert decoder.truncated is False


def test_array_backslash_escape_split_across_feeds() -> None:
    decoder = JSONArrayStreamDecoder()
    # The cut falls between a backslash and the quote it escapes.
    assert decoder.feed(b'[{"a": "x\\') == []
    assert decoder.feed(b'"}"}, {"b": "\\\\"}]') == [{"a": 'x"}'}, {"b": "\\"}]


def test_truncated_array_yields_nothing_more() -> None:
    events, decoder = decode_all([b'[{"a": 1},\r\n{"b": {"c": "unfin'])
    assert events == [{"a": 1}]
    assert decoder.truncated is True
    events, decoder = decode_all([b'[{"a": 1}'])  # elements complete, array not closed
    assert events == [{"a": 1}]
    assert decoder.truncated is True
    events, decoder = decode_all([b'[{"a": 1}]'])
    assert decoder.truncated is False


def test_array_garbage_resynchronises() -> None:
    events, decoder = decode_all([b'[{"a": ]}, }, {"b": 2}, tru, 3]'], "json-array")
    assert events == [
        {UNPARSABLE_KEY: '{"a": ]'},
        {UNPARSABLE_KEY: "}"},  # the stray closer
        {UNPARSABLE_KEY: "}"},
        {"b": 2},
        {UNPARSABLE_KEY: "tru"},
        {UNPARSABLE_KEY: "3"},  # valid JSON but not an event
    ]
    assert decoder.truncated is False


def test_json_array_decoder_returns_any_json_value() -> None:
    decoder = JSONArrayStreamDecoder()
    assert decoder.feed(b'[1, "s", true, null, [2], {"x": 1}, tru]') == [
        1,
        "s",
        True,
        None,
        [2],
        {"x": 1},
        {UNPARSABLE_KEY: "tru"},
    ]


def test_bare_json_body_in_auto_mode() -> None:
    # A JSON error body (no array) and newline-delimited objects are JSON, not SSE.
    events, decoder = decode_all([b'  \n{"error": {"code": 400}}\n'])
    assert events == [{"error": {"code": 400}}]
    assert decoder.format == "json-array"
    events, _ = decode_all([b'{"a": 1}\n{"b', b'": 2}\n'])
    assert events == [{"a": 1}, {"b": 2}]


def test_auto_detection_waits_for_first_significant_byte() -> None:
    decoder = EventDecoder()
    assert decoder.feed(b"\xef\xbb") == []
    assert decoder.feed(b"\xbf \r\n") == []
    assert decoder.format is None
    assert decoder.feed(b'\t[{"a":') == []
    assert decoder.format == "json-array"
    assert decoder.feed(b"1}]") == [{"a": 1}]
    decoder = EventDecoder()
    decoder.feed(b"\n\n: ping\n")
    assert decoder.format == "sse"
    assert EventDecoder().close() == []  # empty body: no events, no error


def test_forced_format_overrides_detection() -> None:
    events, _ = decode_all([b'[{"a":1}]'], "sse")  # not SSE lines: nothing dispatched
    assert events == []
    events, _ = decode_all([b'data: {"a":1}\n\n'], "json-array")
    assert events == [{UNPARSABLE_KEY: "data:"}, {"a": 1}]  # bare-value mode resyncs


# ---------------------------------------------------------------------------------------
# Properties: any cut gives what one feed gives; SSE against a reference model
# ---------------------------------------------------------------------------------------


def reference_sse(body: bytes) -> list[SSEMessage]:
    """Whole-body WHATWG event-stream parser (plus the EOF flush this project asks for)."""
    text = body.decode("utf-8", errors="replace")
    text = text.removeprefix("\ufeff")
    lines = re.split(r"\r\n|\r|\n", text)
    out: list[SSEMessage] = []
    data: list[str] = []
    event = ""
    last_id: str | None = None

    def dispatch() -> None:
        nonlocal data, event
        if data:
            out.append(SSEMessage(event or None, "\n".join(data), last_id))
        data, event = [], ""

    for line in lines:
        if line == "":
            dispatch()
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            data.append(value)
        elif name == "event":
            event = value
        elif name == "id" and "\x00" not in value:
            last_id = value
    dispatch()
    return out


SSE_ALPHABET = st.sampled_from(
    ["data", "event", "id", "retry", ":", " ", "\r", "\n", "\r\n", "x", "é", "\u2028",
     "\ufeff", "{", "}", '"', "\x00", "[DONE]"]
)  # fmt: skip
SSE_BYTES = st.one_of(
    st.lists(SSE_ALPHABET, max_size=40).map(lambda xs: "".join(xs).encode()),
    st.binary(max_size=60),
)


@FAST
@given(body=SSE_BYTES, cuts=st.lists(st.integers(0, 200), max_size=12))
def test_sse_decoder_matches_reference_under_any_cut(body: bytes, cuts: list[int]) -> None:
    assert sse_messages(split_at(body, cuts)) == reference_sse(body)


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.text(alphabet=st.sampled_from('ab"\\/[]{},:é\u2028\n\t😀'), max_size=8),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.text(alphabet='k"\\[]é', max_size=4), children, max_size=3),
    max_leaves=12,
)


@FAST
@given(
    elements=st.lists(st.dictionaries(st.text(max_size=5), JSON_VALUES, max_size=3), max_size=5),
    pretty=st.booleans(),
    ascii_only=st.booleans(),
    cuts=st.lists(st.integers(0, 10_000), max_size=20),
)
def test_json_array_any_cut_gives_the_elements(
    elements: list[Record], pretty: bool, ascii_only: bool, cuts: list[int]
) -> None:
    body = json.dumps(elements, indent=2 if pretty else None, ensure_ascii=ascii_only).encode()
    events, decoder = decode_all(split_at(body, cuts))
    assert events == elements
    assert decoder.truncated is False


@FAST
@given(body=st.binary(max_size=120), cuts=st.lists(st.integers(0, 200), max_size=12))
def test_garbage_never_raises_and_cuts_do_not_matter(body: bytes, cuts: list[int]) -> None:
    for fmt in ("auto", "sse", "json-array"):
        whole, _ = decode_all([body], fmt)
        cut, _ = decode_all(split_at(body, cuts), fmt)
        assert cut == whole
        assert all(isinstance(e, dict) for e in whole)


@FAST
@given(
    body=st.lists(st.sampled_from(['[', ']', '{', '}', '"', "\\", ",", "1", " ", "é", "a"]),
                  max_size=50).map(lambda xs: "".join(xs).encode()),
    cuts=st.lists(st.integers(0, 200), max_size=12),
)  # fmt: skip
def test_json_array_garbage_cuts_do_not_matter(body: bytes, cuts: list[int]) -> None:
    whole = JSONArrayStreamDecoder()
    expected = whole.feed(body) + whole.close()
    decoder = JSONArrayStreamDecoder()
    got = [v for piece in split_at(body, cuts) for v in decoder.feed(piece)] + decoder.close()
    assert got == expected
    assert decoder.truncated == whole.truncated


# ---------------------------------------------------------------------------------------
# Wrappers and cost
# ---------------------------------------------------------------------------------------


def test_iter_events_and_decoder_flags() -> None:
    chunks = [b'data: {"a":', b"1}\r\n\r\ndata: [DO", b"NE]\r\n\r\n"]
    decoder = EventDecoder()
    assert list(iter_events(chunks, decoder=decoder)) == [{"a": 1}]
    assert decoder.saw_done is True
    assert list(iter_events(iter([b'[{"a":1},', b'{"b":2}]']), "json-array")) == [
        {"a": 1},
        {"b": 2},
    ]


def test_aiter_events() -> None:
    async def body() -> AsyncIterator[bytes]:
        for chunk in (b'[{"a": "\xc3', b'\xa9"},\n', b'{"b": 2}\n', b"]"):
            await asyncio.sleep(0)
            yield chunk

    async def collect() -> list[Record]:
        return [e async for e in aiter_events(body())]

    assert asyncio.run(collect()) == [{"a": "é"}, {"b": 2}]


def _feed_in_chunks(body: bytes, size: int) -> Callable[[], list[Record]]:
    def run() -> list[Record]:
        events, _ = decode_all(list(_chunks(body, size)))
        return events

    return run


def _chunks(body: bytes, size: int) -> Iterator[bytes]:
    for i in range(0, len(body), size):
        yield body[i : i + size]


@pytest.mark.parametrize("fmt", ["sse", "json-array"])
def test_long_event_in_tiny_chunks_decodes(fmt: str) -> None:
    """One 1.2 MB event in 16-byte chunks (75k feeds).

    No timing assertion: re-scanning the buffer on every feed would make this run for many
    minutes instead of about a second, which CI's time limit turns into a failure.
    """
    value = "aé\\" * 300_000  # escapes and multi-byte characters on the way
    payload = json.dumps({"x": value}, ensure_ascii=False)
    body = (f"data: {payload}\n\n" if fmt == "sse" else f"[{payload}]").encode()
    assert _feed_in_chunks(body, 16)() == [{"x": value}]
