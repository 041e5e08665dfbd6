"""DESIGN §5: OpenAI-compatible servers that send ``function.arguments`` as a JSON object (or
any non-string JSON value) send structured arguments, exactly like Gemini ``args``.

Decision recorded here: a call that gets both text fragments and a structured value fails
``upstream_error`` (which of the two the server meant is unknowable); the same value sent
twice on one call is the same value, a different one is ``duplicate_conflict``.
"""

from __future__ import annotations

import json
from typing import Any

import builders as b
import pytest
from builders import run
from toolstream_core import CallState, Reason

BASE = {"id": "chatcmpl-x", "object": "chat.completion.chunk"}


def chunk(tool_call: dict[str, Any] | None = None, finish: str | None = None) -> dict[str, Any]:
    delta: dict[str, Any] = {"tool_calls": [tool_call]} if tool_call is not None else {}
    return {**BASE, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def whole(arguments: Any, *, call_id: str = "call_1", index: int = 0) -> dict[str, Any]:
    return chunk({"index": index, "id": call_id, "type": "function",
                  "function": {"name": "f", "arguments": arguments}})


@pytest.mark.parametrize("value", [{"a": 1, "b": [True, None]}, {"city": "Zürich"}, {}])
def test_object_arguments_commit_as_structured_arguments(value: Any) -> None:
    turn = run([whole(value), chunk(finish="tool_calls")], provider="openai-chat")
    [call] = turn.calls
    assert (call.state, call.arguments) == (CallState.committed, value)
    assert call.raw_arguments == json.dumps(value, separators=(",", ":"), ensure_ascii=False)


@pytest.mark.parametrize(("value", "reason"), [([1, 2], Reason.arguments_not_object), (7, Reason.arguments_not_object),
                                               ({"n": float("nan")}, Reason.invalid_json),
                                               ({"s": "\ud800"}, Reason.invalid_json)])
def test_non_object_or_non_json_values_get_the_text_verdict(value: Any, reason: Reason) -> None:
    turn = run([whole(value), chunk(finish="tool_calls")], provider="openai-chat")
    assert [(c.state, c.reason) for c in turn.calls] == [(CallState.failed, reason)]
    raw = turn.calls[0].raw_arguments
    assert raw is None or raw.encode("utf-8")


def test_object_arguments_still_need_the_finish_signal() -> None:
    turn = run([whole({"a": 1})], provider="openai-chat")
    assert [(c.state, c.reason) for c in turn.calls] == [(CallState.failed, Reason.stream_truncated)]


def test_text_then_object_on_one_call_is_upstream_error() -> None:
    events = [chunk({"index": 0, "id": "call_1", "type": "function", "function": {"name": "f", "arguments": '{"a"'}}),
              chunk({"index": 0, "function": {"arguments": {"a": 1}}}), chunk(finish="tool_calls")]
    turn = run(events, provider="openai-chat")
    assert [(c.state, c.reason) for c in turn.calls] == [(CallState.failed, Reason.upstream_error)]


def test_empty_text_then_object_is_the_object() -> None:
    events = [whole(""), chunk({"index": 0, "function": {"arguments": {"a": 1}}}), chunk(finish="tool_calls")]
    turn = run(events, provider="openai-chat")
    assert [(c.state, c.arguments) for c in turn.calls] == [(CallState.committed, {"a": 1})]


def test_the_same_object_repeated_on_one_call_commits_once_a_different_one_conflicts() -> None:
    same = run([whole({"a": 1}), whole({"a": 1}), chunk(finish="tool_calls")], provider="openai-chat")
    assert [(c.state, c.arguments) for c in same.calls] == [(CallState.committed, {"a": 1})]
    other = run([whole({"a": 1}), whole({"a": 2}), chunk(finish="tool_calls")], provider="openai-chat")
    assert [(c.state, c.reason) for c in other.calls] == [(CallState.failed, Reason.duplicate_conflict)]


def test_object_arguments_in_the_builder_stream_shape() -> None:
    events = b.openai_chat([b.Call(id="call_1", name="f", arguments="")])
    events[1]["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"] = {"q": "x"}
    turn = run(events, provider="openai-chat")
    assert [(c.id, c.state, c.arguments) for c in turn.calls] == [("call_1", CallState.committed, {"q": "x"})]
