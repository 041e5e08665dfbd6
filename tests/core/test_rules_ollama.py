"""Every rule of docs/DESIGN.md §4-§5 that applies to Ollama's /api/chat (provider "ollama").

Ollama sends whole calls (object arguments), so there are no fragments to re-chunk: identity,
duplicates and completion carry the weight.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from new_family_rules import PIPELINE, commit_points, outcome, run
from new_family_streams import ollama, ollama_call, write_jsonl
from toolstream_core import AssembleConfig
from toolstream_core.testing import run_fuzz

P = "ollama"
WEATHER = {"city": "Zürich"}


def two(**kw: Any) -> list[dict[str, Any]]:
    return [ollama_call("get_weather", WEATHER, **kw), ollama_call("get_time", {})]


@pytest.mark.parametrize("ids", ["ids and index", "index only", "neither"])
def test_rule1_whole_calls_with_or_without_id_and_index(ids: str) -> None:
    calls = {"ids and index": [ollama_call("get_weather", WEATHER, call_id="call_a", index=0),
                               ollama_call("get_time", {}, call_id="call_b", index=1)],
             "index only": [ollama_call("get_weather", WEATHER, index=0), ollama_call("get_time", {}, index=1)],
             "neither": two()}[ids]
    for split in (False, True):
        turn = run(ollama(calls, split=split), P)
        assert [(c.name, c.arguments) for c in turn.committed] == [("get_weather", WEATHER), ("get_time", {})]
        assert all(c.id for c in turn.calls), "a call with no vendor id gets a synthesized one"


@pytest.mark.parametrize("with_ids", [True, False], ids=["ids", "no ids"])
def test_rule1_an_omitted_index_is_call_0_as_go_encodes_it(with_ids: bool) -> None:
    """Ollama's server is Go: its encoder drops a zero ``function.index`` (``omitempty``), so
    a call without an index followed by one with ``index: 1`` is call 0, then call 1, in that
    order and as two calls, whatever order the chunks bring them in."""
    first = ollama_call("get_weather", WEATHER, call_id="call_a" if with_ids else None)
    second = ollama_call("get_time", {}, call_id="call_b" if with_ids else None, index=1)
    for calls in ([first, second], [second, first]):
        for split in (False, True):
            turn = run(ollama(calls, split=split), P)
            assert [(c.name, c.index) for c in turn.committed] == [("get_weather", 0), ("get_time", 1)]


def test_rule1_a_server_that_numbers_no_call_keeps_their_arrival_order() -> None:
    turn = run(ollama([ollama_call("get_time", {}), ollama_call("get_weather", WEATHER),
                       ollama_call("get_time", {})], split=True), P)
    assert [c.name for c in turn.committed] == ["get_time", "get_weather", "get_time"]


def test_rule1_auto_detects_ollama_chunks() -> None:
    turn = run(ollama(two()), None)
    assert turn.provider == P and len(turn.committed) == 2


def test_rule1_ollama_client_objects_read_like_dicts() -> None:
    types = pytest.importorskip("ollama._types")
    objects = [types.ChatResponse.model_validate(c) for c in ollama(two())]
    assert run(objects, None).committed == run(ollama(two()), P).committed


@pytest.mark.parametrize(("reason", "expect"), [
    ("stop", None), ("length", "stream_truncated"), ("load", "upstream_error"), ("unload", "upstream_error")])
def test_rule4_done_reason_table(reason: str, expect: str | None) -> None:
    turn = run(ollama(two(), reason), P)
    assert {c.reason.value if c.reason else None for c in turn.calls} == {expect}


def test_rule4_a_stream_without_done_true_is_truncated() -> None:
    assert [c.reason.value for c in run(ollama(two(), done=False), P).rejected] == ["stream_truncated"] * 2


def test_rule4_done_without_a_reason_is_no_proof_but_lenient_accepts_it() -> None:
    assert len(run(ollama(two(), None), P).rejected) == 2
    lenient = AssembleConfig.from_mapping({"mode": "lenient"})
    assert len(run(ollama(two(), None), P, config=lenient).committed) == 2


def test_rule4_dropped_transport_and_error_chunks() -> None:
    assert len(run(ollama(two()), P, transport_complete=False).rejected) == 2
    events = [*ollama(two(), done=False), {"error": "model runner has unexpectedly stopped"}]
    assert [c.reason.value for c in run(events, P).rejected] == ["upstream_error"] * 2


def test_rule4_ollama_response_error_is_an_upstream_error() -> None:
    types = pytest.importorskip("ollama._types")
    turn = run(ollama(two(), done=False), P, transport_complete=False, error=types.ResponseError("boom", 500))
    assert [c.reason.value for c in turn.rejected] == ["upstream_error"] * 2


def test_rule4_backstop_eval_count_at_the_limit() -> None:
    assert len(run(ollama(two(), eval_count=32), P, max_output_tokens=32).rejected) == 2


def test_rule5_3_object_arguments_get_the_strict_verdict() -> None:
    turn = run(ollama([ollama_call("get_weather", {"x": float("nan")})]), P)
    assert outcome(turn) == [("get_weather", "failed", "invalid_json")]


@pytest.mark.parametrize(("arguments", "reason"), [
    ("{\"city\": \"Bern\"}", None), ("{\"city\": ", "invalid_json"), ([1, 2], "arguments_not_object"),
    (7, "arguments_not_object")])
def test_rule3_string_and_mistyped_arguments(arguments: Any, reason: str | None) -> None:
    turn = run(ollama([ollama_call("get_weather", arguments)]), P)
    assert [c.reason.value if c.reason else None for c in turn.calls] == [reason]


def test_rule7_a_call_sent_again_with_the_same_id_commits_once() -> None:
    call = ollama_call("get_weather", WEATHER, call_id="call_a", index=0)
    turn = run(ollama([call], split=True)[:-1] + ollama([call]), P)
    assert outcome(turn) == [("get_weather", "committed", None)]


def test_rule7_the_same_id_with_other_arguments_is_a_conflict() -> None:
    first = ollama_call("get_weather", WEATHER, call_id="call_a")
    second = ollama_call("get_weather", {"city": "Bern"}, call_id="call_a")
    turn = run(ollama([first], done=False) + ollama([second]), P)
    assert outcome(turn) == [("get_weather", "failed", "duplicate_conflict")]


def test_rule7_a_different_call_at_a_reused_index_is_a_new_call() -> None:
    calls = [ollama_call("get_weather", WEATHER, index=0), ollama_call("get_time", {}, index=0)]
    turn = run(ollama(calls, split=True), P)
    assert [c.name for c in turn.committed] == ["get_weather", "get_time"]


def test_rule8_bounds() -> None:
    turn = run(ollama([ollama_call("get_weather", {"city": "x" * 100})]), P,
               config=AssembleConfig(max_tool_argument_bytes=50))
    assert outcome(turn) == [("get_weather", "failed", "arguments_exceed_max_bytes")]
    config = AssembleConfig(max_tool_calls_in_flight_assemble=1)
    assert [c.reason.value if c.reason else None for c in run(ollama(two()), P, config=config).calls] == [
        None, "too_many_tool_calls"]


def test_rule10_a_whole_call_settles_after_its_chunk() -> None:
    calls = [ollama_call("get_weather", WEATHER, call_id="a"), ollama_call("get_weather", {}, call_id="b")]
    events = ollama(calls, split=True)
    assert commit_points(events, P, config=PIPELINE) == {"a": 1, "b": 2}
    assert commit_points(events, P) == {"a": -1, "b": -1}


def test_rule10_a_call_in_the_done_chunk_of_a_cut_is_not_pipelined() -> None:
    events = ollama([], "length")
    events[-1]["message"]["tool_calls"] = [ollama_call("get_weather", WEATHER, call_id="a")]
    assert commit_points(events, P, config=PIPELINE) == {}


@pytest.mark.parametrize(("where", "value"), [
    ("id", 7), ("index", "0"), ("function", "x"), ("tool_calls", {"a": 1}), ("message", [])])
def test_rule5_2_mistyped_identity_or_structure_fails_every_live_call(where: str, value: Any) -> None:
    events = ollama([ollama_call("get_weather", WEATHER, call_id="a")], split=True, done=False)
    bad = ollama([ollama_call("get_time", {}, call_id="b", index=1)], split=True)
    target = bad[1]["message"]
    if where == "message":
        bad[1]["message"] = value
    elif where == "tool_calls":
        target["tool_calls"] = value
    else:
        holder = target["tool_calls"][0] if where in ("id", "function") else target["tool_calls"][0]["function"]
        holder[where] = value
    turn = run(events + bad[1:], P)
    assert not turn.committed


@pytest.mark.parametrize("garbage", [None, [], "x", 7, {}, {"done": "yes", "message": {}}])
def test_rule5_2_garbage_never_raises(garbage: Any) -> None:
    events = ollama(two())
    events.insert(2, garbage)  # after the calls' chunk, before done: both calls are live
    assert not run(events, P).committed


def test_fuzz_harness_finds_nothing_unsafe_in_ollama_streams(tmp_path: Path) -> None:
    streams = [
        write_jsonl(tmp_path / "a.jsonl", P, ollama([ollama_call("get_weather", WEATHER, call_id="a", index=0),
                                                    ollama_call("get_time", {}, call_id="b", index=1)], split=True)),
        write_jsonl(tmp_path / "b.jsonl", P, ollama(two())),
        write_jsonl(tmp_path / "c.jsonl", P, ollama(two(), "length")),
    ]
    report = run_fuzz([str(p) for p in streams], cases=1500, seed=5)
    assert report.by_api["ollama"].cases >= 1500
    assert not report.violations, [v.reproduction for v in report.violations[:3]]
