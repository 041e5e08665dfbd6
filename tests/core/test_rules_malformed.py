"""DESIGN §5: an event that is not the vendor's shape fails the live calls it could have
touched; a well-formed event of a kind the core does not know stays ignored."""

from __future__ import annotations

from typing import Any

import builders as b
import pytest
from builders import PROVIDERS, run, snapshot
from toolstream_core import CallState, Reason

ADD = '{"a":2,"b":3}'
GARBAGE: list[Any] = [None, [], ["x"], "data", b"\xff\xfe", 42, 3.5, True, {}]
RETYPED: dict[str, list[Any]] = {
    "openai-chat": [
        {"id": "x", "object": "chat.completion.chunk", "choices": "oops"},
        {"id": "x", "object": "chat.completion.chunk", "choices": 0},
        {"id": "x", "object": "chat.completion.chunk", "choices": [{"index": "0", "delta": {}}]},
        {"id": "x", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": [1]}]},
        {"id": "x", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"tool_calls": {"a": 1}}}]},
        {"id": "x", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"tool_calls": ""}}]},
        {"id": "x", "object": "chat.completion.chunk",
         "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": 7, "function": {}}]}}]},
        {"id": "x", "object": "chat.completion.chunk",
         "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"name": 7}}]}}]},
        {"candidates": 3},
        {"type": 3},
    ],
    "openai-responses": [
        {"type": 3},
        {"choices": []},
        {"type": "response.output_item.added", "item": "x", "output_index": 0},
        {"type": "response.output_item.added", "item": {"type": 5}, "output_index": 0},
        {"type": "response.output_item.added", "item": {"type": "function_call", "id": "fc_9", "call_id": "c9",
                                                        "name": "f", "arguments": ""}, "output_index": "9"},
        {"type": "response.completed", "response": "done"},
    ],
    "anthropic": [
        {"type": 3},
        {"index": 0},
        {"type": "content_block_delta", "index": 0, "delta": [1]},
        {"type": "content_block_delta", "index": 0, "delta": {"type": 7}},
        {"type": "content_block_start", "index": 5, "content_block": "x"},
        {"type": "message_start", "message": {"content": "x"}},
        {"type": "message_delta", "delta": "x"},
    ],
    "gemini": [
        {"candidates": 3},
        {"candidates": [{"content": {"parts": {"a": 1}}}]},
        {"candidates": ["x"]},
        {"candidates": [{"index": "0", "content": {"parts": []}}]},
        {"candidates": [{"content": {"parts": [{"functionCall": "f"}]}}]},
        {"candidates": [{"content": {"parts": [{"functionCall": {"name": 5}}]}}]},
        {"candidates": [{"content": {"parts": [{"functionCall": {"willContinue": 1.5}}]}}]},
        {"candidates": [{"content": {"parts": [{"functionCall": {"partialArgs": {"jsonPath": "$.a"}}}]}}]},
        {"type": "nonsense"},
    ],
}
UNKNOWN_KINDS: dict[str, list[Any]] = {
    "openai-chat": [
        {"id": "x", "object": "chat.completion.chunk", "choices": [], "usage": {"completion_tokens": 3}},
        {"id": "x", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "hi"}}]},
        {"type": "ping"},
        {"done": True},
    ],
    "openai-responses": [
        {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 3, "delta": "hi"},
        {"type": "response.brand_new_event", "payload": [1, 2]},
        {"type": "response.reasoning_summary_text.delta", "delta": "thinking"},
    ],
    "anthropic": [
        {"type": "ping"},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "citations_delta", "citation": {}}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "x"}},
        {"type": "brand_new_event"},
    ],
    "gemini": [
        {"usageMetadata": {"promptTokenCount": 3}},
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "hi", "thought": True}]}}],
         "modelVersion": "g"},
        {"done": True},
    ],
}


def stream(provider: str) -> list[dict[str, Any]]:
    """One call, its arguments in two fragments, the vendor's normal end."""
    return b.build(provider, [b.Call(id="c1", name="add", arguments=ADD, cuts=(3,))],
                   **({"with_ids": True} if provider == "gemini" else {}))


def middle(provider: str, events: list[Any]) -> int:
    """A position after the call's first fragment, before its end."""
    return {"openai-chat": 3, "openai-responses": 4, "anthropic": 3, "gemini": 1}[provider]


@pytest.mark.parametrize("garbage", GARBAGE, ids=repr)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_garbage_event_fails_the_live_call(provider: str, garbage: Any) -> None:
    events: list[Any] = stream(provider)
    events.insert(middle(provider, events), garbage)
    turn = run(events, provider=provider)
    assert [(c.state, c.reason) for c in turn.calls] == [(CallState.failed, Reason.upstream_error)]
    assert turn.anomalies and len(turn.error_results()) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_garbage_before_any_call_fails_nothing_later(provider: str) -> None:
    events: list[Any] = [*GARBAGE, *stream(provider)]
    turn = run(events, provider=provider)
    assert [c.state for c in turn.calls] == [CallState.committed]
    assert len(turn.anomalies) >= len(GARBAGE)


@pytest.mark.parametrize(("provider", "event"), [(p, e) for p, es in RETYPED.items() for e in es], ids=repr)
def test_event_with_fields_of_the_wrong_type_fails_the_live_call(provider: str, event: Any) -> None:
    events: list[Any] = stream(provider)
    events.insert(middle(provider, events), event)
    turn = run(events, provider=provider)
    assert [c.state for c in turn.calls if c.id in ("c1", None) or c.name == "add"] == [CallState.failed]
    assert all(c.state is not CallState.committed for c in turn.calls)


@pytest.mark.parametrize(("provider", "event"), [(p, e) for p, es in UNKNOWN_KINDS.items() for e in es], ids=repr)
def test_well_formed_events_of_unknown_kinds_are_ignored(provider: str, event: Any) -> None:
    events: list[Any] = stream(provider)
    expected = snapshot(run(events, provider=provider))
    events.insert(middle(provider, events), event)
    assert snapshot(run(events, provider=provider)) == expected
