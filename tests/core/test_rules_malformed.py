"""DESIGN §5: an event that is not the vendor's shape fails the live calls it could have
touched; a well-formed event of a kind the core does not know stays ignored.

Also here: an SDK object with no field set (what the SDKs make of ``data: {}``) and identity
fields of the wrong type, on hand-built events with the one odd field.
"""

from __future__ import annotations

from typing import Any

import builders as b
import pytest
from builders import (
    PROVIDERS,
    chat_add,
    chat_call,
    chat_chunk,
    chat_tail,
    gemini_chunk,
    gemini_end,
    gemini_weather,
    named_states,
    run,
    snapshot,
)
from google.genai import types as genai_types
from openai.types.chat import ChatCompletionChunk
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


# -- an SDK object with no field set is the dict {} ---------------------------------------------

def test_rule_malformed_empty_chat_sdk_object_fails_the_live_call() -> None:
    empty = ChatCompletionChunk.construct()  # what the openai SDK makes of `data: {}`
    turn = run([*chat_add(), empty, *chat_tail()], provider="openai-chat")
    assert named_states(turn) == [("add", CallState.failed, Reason.upstream_error)]
    assert any("no field set" in a for a in turn.anomalies)


def test_rule_malformed_chat_sdk_usage_chunk_with_no_choices_stays_legal() -> None:
    usage = ChatCompletionChunk.model_validate({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [], "usage": {"completion_tokens": 5, "prompt_tokens": 1, "total_tokens": 6}})
    turn = run([*chat_add(), usage, *chat_tail()], provider="openai-chat")
    assert named_states(turn) == [("add", CallState.committed, None)]
    assert turn.calls[0].arguments == {"a": 1}


def _sdk(event: dict[str, Any]) -> genai_types.GenerateContentResponse:
    return genai_types.GenerateContentResponse.model_validate(event)


def test_rule_malformed_empty_gemini_sdk_object_fails_the_live_call() -> None:
    events = [_sdk(e) for e in gemini_weather()]
    events += [genai_types.GenerateContentResponse(), *(_sdk(e) for e in gemini_end())]
    turn = run(events, provider="gemini")
    assert named_states(turn) == [("getWeather", CallState.failed, Reason.upstream_error)]


def test_rule_malformed_gemini_sdk_usage_only_chunk_stays_legal() -> None:
    usage = _sdk({"usageMetadata": {"candidatesTokenCount": 3}})
    events = [*(_sdk(e) for e in gemini_weather()), usage, *(_sdk(e) for e in gemini_end())]
    turn = run(events, provider="gemini")
    assert named_states(turn) == [("getWeather", CallState.committed, None)]
    assert turn.calls[0].arguments == {"location": "Boston"}


# -- identity fields of the wrong type fail that call --------------------------------------------

def _anthropic(block: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"type": "message_start", "message": {"id": "msg_1", "content": []}},
        {"type": "content_block_start", "index": 0, "content_block": block},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{}"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        {"type": "message_stop"},
    ]


def _responses(item: dict[str, Any], *, item_id: Any = "fc_1", output_index: Any = 0) -> list[dict[str, Any]]:
    return [
        {"type": "response.output_item.added", "output_index": 0, "item": item},
        {"type": "response.function_call_arguments.delta", "item_id": item_id, "output_index": output_index,
         "delta": "{}"},
        {"type": "response.completed", "response": {"status": "completed"}},
    ]


_ITEM = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "add", "arguments": ""}
_BLOCK = {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {}}

MISTYPED = [
    pytest.param("anthropic", _anthropic({**_BLOCK, "id": 7}), id="anthropic-block-id"),
    pytest.param("anthropic", _anthropic({**_BLOCK, "name": ["add"]}), id="anthropic-block-name"),
    pytest.param("openai-responses", _responses({**_ITEM, "call_id": 7}), id="responses-call-id"),
    pytest.param("openai-responses", _responses({**_ITEM, "name": {}}), id="responses-name"),
    pytest.param("openai-responses", _responses(_ITEM, item_id=7), id="responses-item-id"),
    pytest.param("openai-responses", _responses(_ITEM, output_index="0"), id="responses-output-index"),
    pytest.param("gemini", [gemini_chunk([{"functionCall": {"id": 7, "name": "add", "args": {}}}],
                                         finish_reason="STOP")],
                 id="gemini-id"),
    pytest.param("openai-chat", [chat_chunk([chat_call(0, "", id=7, name="add")]), chat_chunk([chat_call(0, "{}")]),
                                 chat_chunk(finish="tool_calls")], id="chat-id"),
    pytest.param("openai-chat", [chat_chunk([chat_call(0, "", id="call_1", name=True)]),
                                 chat_chunk([chat_call(0, "{}")]),
                                 chat_chunk(finish="tool_calls")], id="chat-name"),
]


@pytest.mark.parametrize(("provider", "events"), MISTYPED)
def test_rule_malformed_mistyped_identity_field_fails_that_call(provider: str, events: list[Any]) -> None:
    turn = run(events, provider=provider)
    assert turn.calls, "the call (or its orphaned arguments) must be reported"
    assert all(c.state is CallState.failed and c.reason is Reason.upstream_error for c in turn.calls)
    assert turn.anomalies
    assert len(turn.error_results()) == len(turn.calls)


@pytest.mark.parametrize(("provider", "events"), [
    pytest.param("anthropic", _anthropic(_BLOCK), id="anthropic"),
    pytest.param("openai-responses", _responses(_ITEM), id="responses"),
    pytest.param("gemini", [gemini_chunk([{"functionCall": {"id": "c1", "name": "add", "args": {}}}],
                                         finish_reason="STOP")],
                 id="gemini"),
])
def test_rule_malformed_well_typed_identity_still_commits(provider: str, events: list[Any]) -> None:
    turn = run(events, provider=provider)
    assert named_states(turn) == [("add", CallState.committed, None)]


def _no_index(tc: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in tc.items() if key != "index"}


def test_rule_mistyped_id_without_index_fails_every_live_call_of_the_choice() -> None:
    """With no index the id is the delta's only identity: a bool id may be any live call's,
    whatever name it comes with (found by the fuzz harness, seed 28, on missing_index)."""
    first = [chat_chunk([_no_index(chat_call(0, "", id="call_w", name="get_weather"))]),
             chat_chunk([_no_index(chat_call(0, '{"city": "Paris"}'))])]
    second = [chat_chunk([_no_index(chat_call(0, "", id=True, name="write_file"))]),
              chat_chunk([_no_index(chat_call(0, '{"path": "/tmp/x"}'))])]
    other_choice = [*chat_add(ci=1), *chat_tail(ci=1)]
    turn = run([*first, *second, *other_choice, chat_chunk(finish="tool_calls")], provider="openai-chat")
    assert named_states(turn) == [("get_weather", CallState.failed, Reason.upstream_error),
                             ("write_file", CallState.failed, Reason.upstream_error),
                             ("add", CallState.committed, None)]
    assert len(turn.error_results()) == 2


def test_rule_mistyped_id_with_an_index_fails_only_its_call() -> None:
    second = [chat_chunk([chat_call(1, "", id=True, name="mul")]), chat_chunk([chat_call(1, "{}")])]
    turn = run([*chat_add(), *second, *chat_tail()], provider="openai-chat")
    assert named_states(turn) == [("add", CallState.committed, None), ("mul", CallState.failed, Reason.upstream_error)]
