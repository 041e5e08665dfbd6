"""Rule 7, duplicates (docs/DESIGN.md §4.7).

A call re-sent whole (the GPT-4.1-nano ``{..}{..}`` bug, or the same id sent again) commits
once; a re-send that differs is ``duplicate_conflict``.
"""

from __future__ import annotations

import builders as b
import pytest
from builders import ADD, PROVIDERS, make, run, states
from toolstream_core import CallState, Reason


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
