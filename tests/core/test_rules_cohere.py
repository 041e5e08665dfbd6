"""Every rule of docs/DESIGN.md §4-§5 on the Cohere v2 chat stream (provider "cohere")."""

from __future__ import annotations

from typing import Any

import pytest
from new_family_rules import PIPELINE, assert_sdk_objects_detected, commit_points, outcome, run
from new_family_streams import cohere
from toolstream_core import AssembleConfig

P = "cohere"
WEATHER = ["{\"location\": \"Zü", "rich\"}"]
TWO = [("get_weather_1", "get_weather", WEATHER), ("get_time_2", "get_time", [])]


def test_rule1_calls_are_keyed_by_index_and_fragments_concatenate() -> None:
    turn = run(cohere(TWO), P)
    assert [(c.id, c.name, c.index, c.arguments) for c in turn.committed] == [
        ("get_weather_1", "get_weather", 0, {"location": "Zürich"}), ("get_time_2", "get_time", 1, {})]


def test_rule1_auto_detection_and_sdk_objects() -> None:
    assert_sdk_objects_detected(cohere(TWO), P, "cohere.v2.types.v2chat_stream_response", "V2ChatStreamResponse")


@pytest.mark.parametrize(("finish", "reason"), [
    ("TOOL_CALL", None), ("COMPLETE", None), ("STOP_SEQUENCE", None), ("MAX_TOKENS", "stream_truncated"),
    ("ERROR", "upstream_error"), ("TIMEOUT", "upstream_error"), ("SOMETHING_NEW", "upstream_error")])
def test_rule4_finish_reason_table(finish: str, reason: str | None) -> None:
    assert {c.reason.value if c.reason else None for c in run(cohere(TWO, finish), P).calls} == {reason}


def test_rule4_no_message_end_dropped_transport_and_error_field() -> None:
    assert len(run(cohere(TWO, None), P).rejected) == 2
    assert len(run(cohere(TWO), P, transport_complete=False).rejected) == 2
    events = cohere(TWO)
    events[-1]["delta"]["error"] = "internal failure"
    assert [c.reason.value for c in run(events, P).rejected] == ["upstream_error"] * 2


def test_rule4_cohere_api_error_is_an_upstream_error() -> None:
    api_error = pytest.importorskip("cohere.core.api_error")
    error = api_error.ApiError(status_code=500, body={"message": "boom"})
    turn = run(cohere(TWO, None), P, transport_complete=False, error=error)
    assert [c.reason.value for c in turn.rejected] == ["upstream_error"] * 2


def test_rule4_backstop_output_tokens() -> None:
    assert len(run(cohere(TWO, output_tokens=40), P, max_output_tokens=40).rejected) == 2


def test_rule6_half_json_is_not_repaired() -> None:
    turn = run(cohere([("c1", "get_weather", ["{\"location\": "])]), P)
    assert outcome(turn) == [("get_weather", "failed", "invalid_json")]


def test_rule7_a_call_started_again_with_the_same_id_commits_once_or_conflicts() -> None:
    again = cohere([("c1", "get_weather", WEATHER)], None)[2:]
    assert outcome(run(cohere([("c1", "get_weather", WEATHER)], None) + again + cohere([], "TOOL_CALL")[2:], P)) == [
        ("get_weather", "committed", None)]
    other = cohere([("c1", "get_weather", ["{}"])], None)[2:]
    assert outcome(run(cohere([("c1", "get_weather", WEATHER)], None) + other + cohere([], "TOOL_CALL")[2:], P)) == [
        ("get_weather", "failed", "duplicate_conflict")]


def test_rule8_bounds() -> None:
    turn = run(cohere([("c1", "get_weather", ["{\"a\": \"", "x" * 80, "\"}"])]), P,
               config=AssembleConfig(max_tool_argument_bytes=40))
    assert outcome(turn) == [("get_weather", "failed", "arguments_exceed_max_bytes")]


def test_rule10_a_call_settles_when_the_next_starts_or_at_tool_call_finish() -> None:
    events = cohere([("a", "get_weather", WEATHER), ("b", "get_weather", ["{}"])])
    starts = [i for i, e in enumerate(events) if e["type"] == "tool-call-start"]
    assert commit_points(events, P, config=PIPELINE) == {"a": starts[1], "b": len(events) - 1}
    # a cut: the call the next start settled stands (the opt-in's risk), the last never commits
    cut = cohere([("a", "get_weather", WEATHER), ("b", "get_weather", ["{}"])], "MAX_TOKENS")
    assert commit_points(cut, P, config=PIPELINE) == {"a": starts[1]}


def test_rule5_1_a_delta_for_an_index_never_started_fails_every_live_call() -> None:
    events = cohere(TWO)
    events.insert(4, {"type": "tool-call-delta", "index": 5,
                      "delta": {"message": {"tool_calls": {"function": {"arguments": "{}"}}}}})
    assert outcome(run(events, P))[0] == ("get_weather", "failed", "upstream_error")


@pytest.mark.parametrize(("field", "value"), [("id", 7), ("name", ["x"]), ("arguments", 3)])
def test_rule5_2_mistyped_start_fields_fail_the_call(field: str, value: Any) -> None:
    events = cohere(TWO)
    start = events[2]["delta"]["message"]["tool_calls"]
    (start if field == "id" else start["function"])[field] = value
    turn = run(events, P)
    assert turn.calls[0].reason is not None and turn.calls[0].reason.value == "upstream_error"
    assert outcome(turn)[1] == ("get_time", "committed", None)


@pytest.mark.parametrize("garbage", [None, [], "x", 7, {}, {"type": 3},
                                     {"type": "tool-call-end", "index": "0"}])
def test_rule5_2_garbage_never_raises_and_fails_live_calls(garbage: Any) -> None:
    events = cohere(TWO)
    events.insert(4, garbage)
    assert outcome(run(events, P))[0] == ("get_weather", "failed", "upstream_error")


def test_rule5_2_unknown_kinds_are_ignored() -> None:
    events = cohere(TWO)
    events.insert(3, {"type": "citation-start", "index": 0, "delta": {"message": {"citations": {}}}})
    events.insert(3, {"type": "brand-new-kind"})
    assert outcome(run(events, P)) == outcome(run(cohere(TWO), P))


def test_rule8_one_byte_fragments_assemble_in_linear_time() -> None:
    """256 KiB of arguments in 1-byte tool-call-deltas; a quadratic buffer misses the deadline."""
    from test_linearity import deadline

    size = 256 * 1024
    events = cohere([("c1", "write", ["{\"d\": \"", *("x" * size), "\"}"])])
    with deadline(120):
        turn = run(events, P, config=AssembleConfig(max_tool_argument_bytes=size + 64))
    assert len(turn.committed[0].arguments["d"]) == size
