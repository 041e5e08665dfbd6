"""Rule 1, identity (docs/DESIGN.md §4.1).

Which call a fragment belongs to is the vendor's own call identity (chat choice and index,
the Responses output item, the Anthropic block index, each Gemini ``functionCall`` part),
never "the last call with the same name".
"""

from __future__ import annotations

import copy
import json

import builders as b
import pytest
from builders import ADD, SEARCH, TEXT_VENDORS, lenient, make, run, states
from toolstream_core import CallState, Reason


def test_rule1_chat_key_is_choice_and_tool_call_index() -> None:
    calls = [
        b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(2, 9, 14)),
        b.Call(id="call_2", name="add", arguments=ADD, cuts=(3,)),
    ]
    turn = run(b.openai_chat(calls, schedule=b.round_robin([4, 3])), provider="openai-chat")
    assert [(c.index, c.id, c.raw_arguments) for c in turn.calls] == [(0, "call_1", SEARCH), (1, "call_2", ADD)]


def test_rule1_chat_same_tool_call_index_in_two_choices_is_two_calls() -> None:
    first = b.openai_chat([b.Call(id="call_a", name="search", arguments=SEARCH, cuts=(5,))], choice=0, role_chunk=False,
                          ending="none")
    second = b.openai_chat([b.Call(id="call_b", name="search", arguments='{"query":"x"}', cuts=(5,))], choice=1,
                           role_chunk=False, ending="none")
    events = [e for pair in zip(first, second, strict=True) for e in pair]
    events += b.openai_chat([], choice=0, role_chunk=False) + b.openai_chat([], choice=1, role_chunk=False)
    turn = run(events, provider="openai-chat")
    assert sorted((c.id, c.raw_arguments, c.state) for c in turn.calls) == [
        ("call_a", SEARCH, CallState.committed), ("call_b", '{"query":"x"}', CallState.committed)]


def test_rule1_chat_index_zero_reused_with_new_id_starts_new_call() -> None:
    calls = [
        b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(4,)),
        b.Call(id="call_2", name="add", arguments=ADD, cuts=(4,)),
    ]
    turn = run(b.openai_chat(calls, indexes=[0, 0]), provider="openai-chat")
    assert [(c.id, c.name, c.raw_arguments, c.state) for c in turn.calls] == [
        ("call_1", "search", SEARCH, CallState.committed), ("call_2", "add", ADD, CallState.committed)]


def test_rule1_chat_missing_index_bare_fragments_join_the_most_recent_call() -> None:
    calls = [
        b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(4, 11)),
        b.Call(id="call_2", name="add", arguments=ADD, cuts=(4,)),
    ]
    turn = run(b.openai_chat(calls, omit_index=True), provider="openai-chat")
    assert [(c.id, c.raw_arguments, c.state) for c in turn.calls] == [
        ("call_1", SEARCH, CallState.committed), ("call_2", ADD, CallState.committed)]


def test_rule1_chat_missing_index_id_routes_interleaved_fragments() -> None:
    calls = [
        b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(4, 11)),
        b.Call(id="call_2", name="add", arguments=ADD, cuts=(4,)),
    ]
    events = b.openai_chat(calls, omit_index=True, identity="every", schedule=b.round_robin([3, 2]))
    turn = run(events, provider="openai-chat")
    assert [(c.id, c.name, c.raw_arguments) for c in turn.calls] == [("call_1", "search", SEARCH),
                                                                      ("call_2", "add", ADD)]


def test_rule1_chat_name_without_id_starts_a_new_call() -> None:
    chunk = {"choices": [{"index": 0, "delta": {"tool_calls": [{"function": {"name": "now", "arguments": "{}"}}]},
                          "finish_reason": None}]}
    events = [copy.deepcopy(chunk), copy.deepcopy(chunk), *b.openai_chat([], role_chunk=False)]
    turn = run(events, provider="openai-chat", config=lenient())
    assert len(turn.calls) == 2
    assert all(c.state is CallState.committed and c.raw_arguments == "{}" for c in turn.calls)
    assert turn.calls[0].id != turn.calls[1].id


def test_rule1_chat_whole_call_and_finish_reason_in_one_chunk() -> None:
    events = b.openai_chat([b.Call(id="call_1", name="add", arguments=ADD)], args_on_open=True,
                           finish_in_last_chunk=True, role_chunk=False)
    assert len(events) == 1
    turn = run(events, provider="openai-chat")
    assert states(turn) == [("call_1", CallState.committed, None)]
    assert turn.finish_reason == "tool_calls"


def test_rule1_chat_usage_only_chunks_change_nothing() -> None:
    events = b.openai_chat([b.Call(id="call_1", name="add", arguments=ADD, cuts=(3,))], usage_chunk=True)
    events.insert(1, {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [],
                      "usage": None})
    turn = run(events, provider="openai-chat")
    assert states(turn) == [("call_1", CallState.committed, None)]


def test_rule1_chat_arguments_null_on_the_opening_delta() -> None:
    turn = run(b.openai_chat([b.Call(id="call_1", name="add", arguments=ADD, cuts=(3,))], null_arguments=True),
               provider="openai-chat")
    assert (turn.calls[0].raw_arguments, turn.calls[0].state) == (ADD, CallState.committed)
    only_null = run(b.openai_chat([b.Call(id="call_2", name="now", arguments="")], null_arguments=True),
                    provider="openai-chat")
    assert (only_null.calls[0].state, only_null.calls[0].arguments) == (CallState.committed, {})


@pytest.mark.parametrize("where", ["top", "choice"])
def test_rule1_chat_error_object_inside_a_chunk_fails_open_calls(where: str) -> None:
    events = b.openai_chat([b.Call(id="call_1", name="add", arguments=ADD, cuts=(3,))])
    error = {"code": 502, "message": "upstream died"}
    if where == "top":
        events.insert(-1, {**events[0], "error": error})
    else:
        events.insert(-1, {**events[0], "choices": [{"index": 0, "delta": {}, "finish_reason": None,
                                                      "error": error}]})
    turn = run(events, provider="openai-chat")
    assert states(turn) == [("call_1", CallState.failed, Reason.upstream_error)]


def test_rule1_responses_identity_is_the_output_item() -> None:
    calls = [
        b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(3, 9)),
        b.Call(id="call_2", name="add", arguments=ADD, cuts=(2,)),
    ]
    events = b.openai_responses(calls, schedule=[0, 1, 0, 1, 0, 1, 0, 1])
    turn = run(events, provider="openai-responses")
    assert [(c.id, c.raw_arguments, c.state) for c in turn.calls] == [
        ("call_1", SEARCH, CallState.committed), ("call_2", ADD, CallState.committed)]


def test_rule1_responses_delta_found_by_output_index_alone() -> None:
    events = b.openai_responses([b.Call(id="call_1", name="add", arguments=ADD, cuts=(3,))])
    for event in events:
        if event["type"].startswith("response.function_call_arguments"):
            del event["item_id"]
    turn = run(events, provider="openai-responses")
    assert states(turn) == [("call_1", CallState.committed, None)]
    assert turn.calls[0].raw_arguments == ADD


def test_rule1_anthropic_identity_is_the_content_block_index() -> None:
    calls = [
        b.Call(id="toolu_1", name="search", arguments=SEARCH, cuts=(3, 9)),
        b.Call(id="toolu_2", name="add", arguments=ADD, cuts=(2,)),
    ]
    events = b.anthropic(calls, text_block=True, schedule=[0, 1, 0, 1, 0, 1, 0, 1, 0, 1])
    turn = run(events, provider="anthropic")
    assert [(c.index, c.id, c.raw_arguments, c.state) for c in turn.calls] == [
        (1, "toolu_1", SEARCH, CallState.committed), (2, "toolu_2", ADD, CallState.committed)]


def test_rule1_gemini_two_parts_same_tool_are_two_calls() -> None:
    calls = [
        b.Call(id=None, name="search", arguments='{"query":"a"}'),
        b.Call(id=None, name="search", arguments='{"query":"a"}'),
    ]
    turn = run(b.gemini(calls, together=True, finish_with_calls=True), provider="gemini")
    assert [(c.name, c.arguments, c.state) for c in turn.calls] == [
        ("search", {"query": "a"}, CallState.committed), ("search", {"query": "a"}, CallState.committed)]
    assert turn.calls[0].id != turn.calls[1].id


def test_rule1_gemini_partial_args_attach_by_position_and_concatenate() -> None:
    args = {"location": "San Francisco", "days": 3, "ops": [{"action": "add", "ok": True}], "note": None}
    calls = [
        b.Call(id=None, name="getWeather", arguments=json.dumps(args), cuts=(1, 4, 9)),
        b.Call(id=None, name="getWeather", arguments='{"location":"Boston"}', cuts=(2,)),
    ]
    turn = run(b.gemini(calls, mode="partial"), provider="gemini")
    assert [c.arguments for c in turn.calls] == [args, {"location": "Boston"}]
    assert all(c.state is CallState.committed for c in turn.calls)


@pytest.mark.parametrize("explicit_false", [False, True])
def test_rule1_gemini_will_continue_false_ends_the_call(explicit_false: bool) -> None:
    calls = [
        b.Call(id=None, name="a", arguments='{"x":"one"}', cuts=(1,)),
        b.Call(id=None, name="b", arguments='{"y":"two"}', cuts=(1,)),
    ]
    events = b.gemini(calls, mode="partial", terminator="last")
    if explicit_false:
        for event in events:
            call = event["candidates"][0]["content"]["parts"][0].get("functionCall", {})
            if "partialArgs" in call and "willContinue" not in call:
                call["willContinue"] = False
    turn = run(events, provider="gemini")
    assert [(c.name, c.arguments) for c in turn.calls] == [("a", {"x": "one"}), ("b", {"y": "two"})]


def test_rule1_never_merges_by_last_call_with_same_name() -> None:
    calls = [
        b.Call(id="call_1", name="search", arguments='{"query":"a"}', cuts=(5,)),
        b.Call(id="call_2", name="search", arguments='{"query":"b"}', cuts=(5,)),
    ]
    for provider in TEXT_VENDORS:
        turn = run(make(provider, calls), provider=provider)
        assert [c.arguments for c in turn.calls] == [{"query": "a"}, {"query": "b"}], provider
