"""Rule 7, duplicates (docs/DESIGN.md §4.7, with §5.6).

A call re-sent whole (the GPT-4.1-nano ``{..}{..}`` bug, or the same id sent again) commits
once; a re-send that differs is ``duplicate_conflict``. Anthropic can re-send a ``tool_use``
block whole at the index it already used; a LiteLLM-style summary chunk re-sends an OpenAI
chat call with its arguments encoded once more as a JSON string (BerriAI/litellm issue 20480).
Both are the same call, committed once with one result.
"""

from __future__ import annotations

import json
from typing import Any

import builders as b
import pytest
from builders import ADD, PROVIDERS, make, run, states
from toolstream_core import AssembleConfig, CallState, Reason

SPACED = '{"a": 2, "b": 3}'


@pytest.mark.parametrize("copies", [2, 3])
def test_rule7_gpt41_nano_resent_arguments_commit_once(copies: int) -> None:
    text = ADD * copies
    turn = run(b.openai_chat([b.Call(id="call_1", name="add", arguments=text, cuts=range(2, len(text), 4))]),
               provider="openai-chat")
    assert len(turn.calls) == 1
    [call] = turn.calls
    assert (call.state, call.arguments, call.raw_arguments) == (CallState.committed, {"a": 2, "b": 3}, text)
    assert turn.error_results() == []


@pytest.mark.parametrize("text", ['{"a":1}{"a":2}', '{"a":1}{"a": 1}'])
def test_rule7_chat_concatenated_objects_that_differ_do_not_commit(text: str) -> None:
    turn = run(b.openai_chat([b.Call(id="call_1", name="f", arguments=text)]), provider="openai-chat")
    assert states(turn) == [("call_1", CallState.failed, Reason.duplicate_conflict)]
    assert len(turn.error_results()) == 1


@pytest.mark.parametrize("text", ["[1][1]", '{"a":1}{"a":1}x', '"s""s"'])
def test_rule7_chat_only_objects_are_deduplicated(text: str) -> None:
    turn = run(b.openai_chat([b.Call(id="call_1", name="f", arguments=text)]), provider="openai-chat")
    assert turn.calls[0].state is CallState.failed
    assert turn.calls[0].reason is Reason.invalid_json


@pytest.mark.parametrize("provider", ["openai-responses", "anthropic"])
def test_rule7_concatenated_objects_are_only_a_chat_quirk(provider: str) -> None:
    turn = run(make(provider, [b.Call(id="call_1", name="add", arguments=ADD + ADD)]), provider=provider)
    assert states(turn) == [("call_1", CallState.failed, Reason.invalid_json)]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule7_same_id_resent_with_same_arguments_is_one_call(provider: str) -> None:
    calls = [
        b.Call(id="call_1", name="add", arguments=ADD, cuts=(3,)),
        b.Call(id="call_1", name="add", arguments=ADD, cuts=(5,)),
        b.Call(id="call_2", name="add", arguments='{"a":0,"b":0}'),
    ]
    turn = run(make(provider, calls), provider=provider)
    assert [(c.id, c.state) for c in turn.calls] == [("call_1", CallState.committed), ("call_2", CallState.committed)]
    assert turn.calls[0].arguments == {"a": 2, "b": 3}
    assert turn.error_results() == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule7_same_id_resent_with_different_arguments_is_duplicate_conflict(provider: str) -> None:
    calls = [
        b.Call(id="call_1", name="add", arguments=ADD),
        b.Call(id="call_1", name="add", arguments='{"a":9,"b":9}'),
        b.Call(id="call_2", name="add", arguments=ADD),
    ]
    turn = run(make(provider, calls), provider=provider)
    assert [(c.id, c.state, c.reason) for c in turn.calls] == [
        ("call_1", CallState.failed, Reason.duplicate_conflict), ("call_2", CallState.committed, None)]
    assert [r.tool_call_id for r in turn.error_results()] == ["call_1"]  # one result per id


def test_rule7_same_id_resent_with_another_name_is_duplicate_conflict() -> None:
    turn = run(b.anthropic([
        b.Call(id="toolu_1", name="add", arguments=ADD),
        b.Call(id="toolu_1", name="sub", arguments=ADD),
    ]), provider="anthropic")
    assert states(turn) == [("toolu_1", CallState.failed, Reason.duplicate_conflict)]
    assert len(turn.error_results()) == 1


def anthropic_resent_at_same_index(second_arguments: str, second_name: str = "add") -> list[dict[str, Any]]:
    first = b.anthropic([b.Call(id="toolu_1", name="add", arguments=SPACED, cuts=(4,))], ending="none")
    again = b.anthropic([b.Call(id="toolu_1", name=second_name, arguments=second_arguments, cuts=(6,))])
    return first + [e for e in again if e["type"] != "message_start"]


def test_rule7_anthropic_block_resent_whole_at_the_same_index_commits_once() -> None:
    turn = run(anthropic_resent_at_same_index(SPACED), provider="anthropic")
    assert states(turn) == [("toolu_1", CallState.committed, None)]
    assert turn.calls[0].arguments == {"a": 2, "b": 3}
    assert turn.error_results() == []


@pytest.mark.parametrize(("arguments", "name"), [('{"a": 9, "b": 3}', "add"), (SPACED, "sub")])
def test_rule7_anthropic_block_resent_at_the_same_index_differently_conflicts(arguments: str, name: str) -> None:
    turn = run(anthropic_resent_at_same_index(arguments, name), provider="anthropic")
    assert states(turn) == [("toolu_1", CallState.failed, Reason.duplicate_conflict)]
    assert [r.tool_call_id for r in turn.error_results()] == ["toolu_1"]


def litellm_summary(arguments: Any, *, index: int | None = 0) -> dict[str, Any]:
    call: dict[str, Any] = {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": arguments}}
    if index is not None:
        call["index"] = index
    return {"id": "chatcmpl-x", "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]}


@pytest.mark.parametrize("index", [0, None, 3])
def test_rule7_litellm_summary_chunk_with_double_encoded_arguments_is_the_same_call(index: int | None) -> None:
    events = b.openai_chat([b.Call(id="call_1", name="add", arguments=SPACED, cuts=(5,))])
    events.append(litellm_summary(json.dumps(SPACED), index=index))
    turn = run(events, provider="openai-chat")
    assert states(turn) == [("call_1", CallState.committed, None)]
    assert turn.calls[0].arguments == {"a": 2, "b": 3}
    assert turn.error_results() == []


@pytest.mark.parametrize("encoded", [json.dumps('{"a": 2, "b": 4}'), json.dumps(json.dumps(SPACED)), '"not json"'])
def test_rule7_litellm_summary_chunk_that_decodes_to_something_else_is_duplicate_conflict(encoded: str) -> None:
    events = b.openai_chat([b.Call(id="call_1", name="add", arguments=SPACED)])
    events.append(litellm_summary(encoded, index=None))
    turn = run(events, provider="openai-chat")
    assert [(c.state, c.reason) for c in turn.calls] == [(CallState.failed, Reason.duplicate_conflict)]
    assert len(turn.error_results()) == 1


@pytest.mark.parametrize("summary_index", [0, None])
def test_rule7_a_summary_copy_has_its_own_byte_budget(summary_index: int | None) -> None:
    """Rule 8 with rule 7: a re-sent copy does not push a call under the cap over it."""
    text = json.dumps({"content": "x" * 600})
    config = AssembleConfig(max_tool_argument_bytes=1000)
    events = b.openai_chat([b.Call(id="call_1", name="add", arguments=text, cuts=range(50, len(text), 50))])
    events.append(litellm_summary(json.dumps(text), index=summary_index))
    turn = run(events, provider="openai-chat", config=config)
    assert [(c.state, c.arguments) for c in turn.calls] == [(CallState.committed, json.loads(text))]
    too_big = b.openai_chat([b.Call(id="call_1", name="add", arguments=json.dumps({"content": "x" * 1200}))])
    assert run(too_big, provider="openai-chat", config=config).calls[0].reason is Reason.arguments_exceed_max_bytes
