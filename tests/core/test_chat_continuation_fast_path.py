"""Issue 12: the OpenAI chat adapter takes the common continuation chunk (a string fragment for
the call open at the same choice and index, no id, no name) on a short path. Every chunk here
has that exact shape, or differs from it by one field, yet must still meet the full rules:
late text after close, a mistyped name, an orphan index, overflow, interleaved calls.
"""

from __future__ import annotations

from typing import Any

import pytest
from builders import run
from toolstream_core import AssembleConfig, CallState, Reason

BASE = {"id": "chatcmpl-x", "object": "chat.completion.chunk"}


def chunk(tool_call: dict[str, Any] | None = None, finish: str | None = None) -> dict[str, Any]:
    delta: dict[str, Any] = {"tool_calls": [tool_call]} if tool_call is not None else {}
    return {**BASE, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def opening(index: int, call_id: str, name: str = "f") -> dict[str, Any]:
    return chunk({"index": index, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}})


def more(index: int, text: str, **function: Any) -> dict[str, Any]:
    return chunk({"index": index, "function": {"arguments": text, **function}})


def test_continuations_of_interleaved_calls_land_on_their_own_call() -> None:
    events = [opening(0, "call_a"), more(0, '{"x":'), opening(1, "call_b"), more(1, '{"y":2}'),
              more(0, "1}"), chunk(finish="tool_calls")]
    turn = run(events, provider="openai-chat")
    assert [(c.id, c.state, c.arguments) for c in turn.calls] == [
        ("call_a", CallState.committed, {"x": 1}), ("call_b", CallState.committed, {"y": 2})]


def test_text_after_the_finish_reason_fails_the_call() -> None:
    events = [opening(0, "call_a"), more(0, "{}"), chunk(finish="tool_calls"), more(0, '"late"')]
    [call] = run(events, provider="openai-chat").calls
    # the full path gives the same: the late text makes the closed call's text disagree
    assert (call.state, call.reason) == (CallState.failed, Reason.duplicate_conflict)


def test_a_mistyped_name_on_a_continuation_fails_the_call() -> None:
    events = [opening(0, "call_a"), more(0, "{}", name=5), chunk(finish="tool_calls")]
    [call] = run(events, provider="openai-chat").calls
    assert (call.state, call.reason) == (CallState.failed, Reason.upstream_error)


def test_a_continuation_for_an_unopened_index_fails_the_live_calls() -> None:
    events = [opening(0, "call_a"), more(0, "{"), more(3, "}"), chunk(finish="tool_calls")]
    [call] = run(events, provider="openai-chat").calls
    assert call.state is CallState.failed


@pytest.mark.parametrize("pieces", [1, 40])
def test_continuations_past_the_byte_limit_fail_the_call(pieces: int) -> None:
    config = AssembleConfig.from_mapping({"max_tool_argument_bytes": 64})
    text = '{"content":"' + "a" * 100 + '"}'
    step = -(-len(text) // pieces)
    events = [opening(0, "call_a"), *(more(0, text[i:i + step]) for i in range(0, len(text), step)),
              chunk(finish="tool_calls")]
    [call] = run(events, provider="openai-chat", config=config).calls
    assert (call.state, call.reason) == (CallState.failed, Reason.arguments_exceed_max_bytes)


def test_a_non_string_fragment_is_not_taken_as_text() -> None:
    events = [opening(0, "call_a"), more(0, "{"), chunk({"index": 0, "function": {"arguments": 7}}),
              chunk(finish="tool_calls")]
    [call] = run(events, provider="openai-chat").calls
    assert (call.state, call.reason) == (CallState.failed, Reason.upstream_error)
