"""DESIGN §5: a fragment that cannot be attributed to a call fails every live call it could
belong to (``upstream_error``). It is never just logged while the call commits without it."""

from __future__ import annotations

import copy
from typing import Any

import builders as b
import pytest
from toolstream_core import CallState, Reason

ADD = '{"a":2,"b":3}'


@pytest.mark.parametrize("index", [7, None, "1", 1.0, True, [1]])
def test_anthropic_input_json_delta_for_no_known_block_fails_the_live_calls(index: Any) -> None:
    events = b.anthropic([
        b.Call(id="t1", name="search", arguments='{"q":"x","author":{"name":"Ann"}}', cuts=(5, 15)),
        b.Call(id="t2", name="add", arguments=ADD),
    ], text_block=True, schedule=[0, 1, 0, 0, 0])
    at = next(i for i, e in enumerate(events) if e.get("delta", {}).get("partial_json") == '"x","autho')
    events.insert(at + 1, {"type": "content_block_delta", "index": index,
                       "delta": {"type": "input_json_delta", "partial_json": '"x'}})
    turn = b.run(events, provider="anthropic")
    assert b.states(turn) == [("t1", CallState.failed, Reason.upstream_error),
                              ("t2", CallState.failed, Reason.upstream_error)]
    assert len(turn.error_results()) == 2


def test_anthropic_orphan_fragment_after_every_call_ended_fails_nothing_already_decided() -> None:
    events = b.anthropic([b.Call(id="t1", name="add", arguments=ADD)])
    events.insert(-1, {"type": "content_block_delta", "index": 9,
                       "delta": {"type": "input_json_delta", "partial_json": "{}"}})
    turn = b.run(events, provider="anthropic", config=b_pipeline())
    assert b.states(turn) == [("t1", CallState.committed, None)]


def b_pipeline() -> Any:
    from toolstream_core import AssembleConfig

    return AssembleConfig(execute_before_stream_end=True, allow_pipelined_execute=("add",))


def test_anthropic_tool_block_started_with_a_null_index_fails() -> None:
    events = b.anthropic([b.Call(id="t1", name="add", arguments=ADD), b.Call(id="t2", name="add", arguments=ADD)])
    start = next(e for e in events if e["type"] == "content_block_start")
    start["index"] = None
    turn = b.run(events, provider="anthropic")
    assert [(c.id, c.state, c.reason) for c in turn.calls if c.id == "t1"] == [
        ("t1", CallState.failed, Reason.upstream_error)]
    assert all(c.state is not CallState.committed for c in turn.calls if c.id == "t1")


@pytest.mark.parametrize("index", ["0", 0.0, True, {"i": 0}])
def test_chat_tool_call_delta_with_a_non_integer_index_fails_the_calls_of_that_choice(index: Any) -> None:
    events = b.openai_chat([
        b.Call(id="c1", name="search", arguments='{"q":"x","author":{"name":"Ann"}}', cuts=(5, 15)),
        b.Call(id="c2", name="add", arguments=ADD),
    ], schedule=[0, 0, 1, 1, 0])
    events.insert(5, {**events[1], "choices": [{"index": 0, "finish_reason": None, "delta": {"tool_calls": [
        {"index": index, "function": {"arguments": '"x'}}]}}]})
    other_choice = b.openai_chat([b.Call(id="d1", name="add", arguments=ADD)], choice=1, role_chunk=False)[:-1]
    turn = b.run(events[:-1] + other_choice + events[-1:], provider="openai-chat")
    assert b.states(turn) == [("c1", CallState.failed, Reason.upstream_error),
                              ("c2", CallState.failed, Reason.upstream_error),
                              ("d1", CallState.committed, None)]


def test_responses_arguments_for_an_item_never_added_fail_the_live_calls() -> None:
    events = b.openai_responses([b.Call(id="c1", name="add", arguments=ADD, cuts=(3,))])
    at = next(i for i, e in enumerate(events) if e["type"] == "response.function_call_arguments.delta")
    events.insert(at, {"type": "response.function_call_arguments.delta", "item_id": "fc_never",
                       "output_index": 5, "delta": "{}", "sequence_number": 0})
    turn = b.run(events, provider="openai-responses")
    assert b.states(turn) == [("c1", CallState.failed, Reason.upstream_error)]


def test_rule_orphan_chat_fragment_on_unopened_index_fails_the_choice_not_a_new_call() -> None:
    orphan = b.chat_chunk([b.chat_call(7, ', "c": 1')])
    other_choice = [*b.chat_add(ci=1), *b.chat_tail(ci=1)]
    turn = b.run([*b.chat_add(), orphan, *other_choice, *b.chat_tail()], provider="openai-chat")
    by_id = {c.id: (c.state, c.reason) for c in turn.calls}
    assert by_id == {"call_a0": (CallState.failed, Reason.upstream_error),
                     "call_a1": (CallState.committed, None)}
    assert len(turn.error_results()) == 1


def test_rule_orphan_chat_new_index_with_a_name_still_opens_a_call() -> None:
    second = [b.chat_chunk([b.chat_call(1, "", id="call_m", name="mul")]), b.chat_chunk([b.chat_call(1, "{}")])]
    turn = b.run([*b.chat_add(), *second, *b.chat_tail()], provider="openai-chat")
    assert b.named_states(turn) == [("add", CallState.committed, None), ("mul", CallState.committed, None)]


def test_rule_orphan_gemini_partial_args_after_the_call_ended_fails_it() -> None:
    ended = b.gemini_chunk([{"functionCall": {"partialArgs": [{"jsonPath": "$.location", "stringValue": "ton"}]}}])
    orphan = b.gemini_chunk([{"functionCall": {"partialArgs": [{"jsonPath": "$.unit", "stringValue": "C"}]}}])
    turn = b.run([*b.gemini_weather(), ended, orphan, b.gemini_chunk([], finish_reason="STOP")], provider="gemini")
    assert b.named_states(turn) == [("getWeather", CallState.failed, Reason.upstream_error)]
    assert len(turn.error_results()) == 1  # no nameless call for an id the vendor never sent


def test_rule_orphan_gemini_partial_args_spare_other_candidates() -> None:
    def on(ci: int, event: dict[str, Any]) -> dict[str, Any]:
        event = copy.deepcopy(event)
        event["candidates"][0]["index"] = ci
        return event

    ended = b.gemini_chunk([{"functionCall": {"name": "now", "args": {}}}])
    orphan = b.gemini_chunk([{"functionCall": {"partialArgs": [{"jsonPath": "$.x", "stringValue": "1"}]}}])
    turn = b.run([on(1, ended), *b.gemini_weather(), on(1, orphan), *b.gemini_end()], provider="gemini")
    assert {c.name: (c.state, c.reason) for c in turn.calls} == {
        "now": (CallState.failed, Reason.upstream_error),
        "getWeather": (CallState.committed, None)}
