"""The rules of docs/DESIGN.md §4-§5 on the Cohere v1 chat stream (``event_type`` events,
read by provider "cohere"): synthesized ids, the generation's complete calls, stream-end."""

from __future__ import annotations

import json
from typing import Any

import pytest
from new_family_rules import assert_sdk_objects_detected, outcome, run
from toolstream_core import AssembleConfig

P = "cohere"
WEATHER = ["{\"location\": \"Zü", "rich\"}"]
TWO = [("get_weather", WEATHER), ("get_time", ["{}"])]


def cohere_v1(calls: list[tuple[str, list[str]]], finish: str | None = "COMPLETE", *,
              generation: bool = True, output_tokens: int = 20) -> list[dict[str, Any]]:
    """stream-start, a plan chunk, tool-calls-chunk per call, the generation, stream-end."""
    events: list[dict[str, Any]] = [
        {"event_type": "stream-start", "generation_id": "g1", "is_finished": False},
        {"event_type": "tool-calls-chunk", "tool_call_delta": {"text": "I will look."}, "text": "I will look."},
    ]
    for n, (name, fragments) in enumerate(calls):
        events.append({"event_type": "tool-calls-chunk", "tool_call_delta": {"index": n, "name": name}})
        events += [{"event_type": "tool-calls-chunk", "tool_call_delta": {"index": n, "parameters": f}}
                   for f in fragments]
    complete = [{"name": name, "parameters": json.loads("".join(f))} for name, f in calls]
    if generation:
        events.append({"event_type": "tool-calls-generation", "text": "I will look.", "tool_calls": complete})
    if finish is not None:
        events.append({"event_type": "stream-end", "finish_reason": finish, "response": {
            "text": "", "tool_calls": complete,
            "meta": {"billed_units": {"output_tokens": output_tokens}}}})
    return events


def test_rule1_calls_by_index_with_synthesized_ids() -> None:
    turn = run(cohere_v1(TWO), P)
    assert [(c.name, c.index, c.arguments) for c in turn.committed] == [
        ("get_weather", 0, {"location": "Zürich"}), ("get_time", 1, {})]
    ids = [c.id for c in turn.committed]
    assert all(i and i.startswith("call_ts") for i in ids) and len(set(ids)) == 2
    assert [c.id for c in run(cohere_v1(TWO), P).committed] == ids  # stable


def test_rule1_auto_detection_and_sdk_objects() -> None:
    assert_sdk_objects_detected(cohere_v1(TWO), P, "cohere.types.streamed_chat_response", "StreamedChatResponse")


def test_rule1_the_generation_alone_carries_whole_calls() -> None:
    events = [e for e in cohere_v1(TWO) if e["event_type"] != "tool-calls-chunk"]
    assert [(c.name, c.arguments) for c in run(events, P).committed] == [
        ("get_weather", {"location": "Zürich"}), ("get_time", {})]


@pytest.mark.parametrize(("finish", "reason"), [
    ("COMPLETE", None), ("MAX_TOKENS", "stream_truncated"), ("ERROR", "upstream_error"),
    ("ERROR_TOXIC", "upstream_error"), ("ERROR_LIMIT", "upstream_error"),
    ("USER_CANCEL", "upstream_error")])
def test_rule4_finish_reason_table(finish: str, reason: str | None) -> None:
    assert {c.reason.value if c.reason else None for c in run(cohere_v1(TWO, finish), P).calls} == {reason}


def test_rule4_cut_without_generation_or_without_end_never_runs() -> None:
    cut = run(cohere_v1(TWO, "MAX_TOKENS", generation=False), P)
    assert [c.reason.value for c in cut.rejected] == ["stream_truncated"] * 2
    assert all(c.id for c in cut.rejected)  # answered by a synthesized id
    assert len(run(cohere_v1(TWO, None), P).rejected) == 2
    assert len(run(cohere_v1(TWO), P, transport_complete=False).rejected) == 2


def test_rule4_backstop_output_tokens() -> None:
    assert len(run(cohere_v1(TWO, output_tokens=40), P, max_output_tokens=40).rejected) == 2


def test_rule6_half_json_is_not_repaired() -> None:
    events = cohere_v1([("get_weather", ["{}"])])
    events[3]["tool_call_delta"]["parameters"] = "{\"location\": "
    assert outcome(run(events, P)) == [("get_weather", "failed", "invalid_json")]


def test_rule8_bounds() -> None:
    turn = run(cohere_v1([("get_weather", ["{\"a\": \"", "x" * 80, "\"}"])]), P,
               config=AssembleConfig(max_tool_argument_bytes=40))
    assert outcome(turn) == [("get_weather", "failed", "arguments_exceed_max_bytes")]


def test_bad_input_a_streamed_call_missing_from_the_generation_fails() -> None:
    events = cohere_v1(TWO)
    events[-2]["tool_calls"] = events[-2]["tool_calls"][:1]
    assert outcome(run(events, P)) == [("get_weather", "committed", None),
                                       ("get_time", "failed", "upstream_error")]


def test_bad_input_orphan_parameters_and_bad_index_fail_live_calls() -> None:
    orphan = cohere_v1(TWO, generation=False)
    orphan.insert(3, {"event_type": "tool-calls-chunk", "tool_call_delta": {"index": 7, "parameters": "{"}})
    assert {c.reason.value for c in run(orphan, P).calls if c.reason} == {"upstream_error"}
    bad = cohere_v1(TWO)
    bad.insert(3, {"event_type": "tool-calls-chunk", "tool_call_delta": {"index": "0", "parameters": "x"}})
    assert outcome(run(bad, P)) == [("get_weather", "failed", "upstream_error"),
                                     ("get_time", "committed", None)]  # opened after it


def test_bad_input_generation_not_a_list_is_malformed() -> None:
    events = cohere_v1(TWO)
    events[-2]["tool_calls"] = {"name": "get_time"}
    turn = run(events, P)
    assert not turn.committed and len(turn.rejected) == 2


def test_rule7_a_call_named_again_or_after_the_generation_never_runs_twice() -> None:
    again = cohere_v1(TWO)
    again.insert(3, dict(again[2]))  # the name chunk of get_weather, repeated
    assert outcome(run(again, P)) == [("get_weather", "failed", "upstream_error"),
                                      ("get_weather", "committed", None), ("get_time", "committed", None)]
    late = cohere_v1(TWO)
    late.insert(-1, {"event_type": "tool-calls-chunk", "tool_call_delta": {"index": 2, "name": "get_time"}})
    assert outcome(run(late, P))[2] == ("get_time", "failed", "upstream_error")
