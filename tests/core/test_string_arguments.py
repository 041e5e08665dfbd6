"""The framework's copy of a chat chunk (``with_string_arguments``): what the shims' taps
hand LangChain / LlamaIndex after the core has read the original (DESIGN §5.3).

The copy must carry each object's compact JSON (what the core commits as ``raw_arguments``),
leave the original untouched (the core may still hold it), and hand back the very same chunk
when there is nothing to change (the taps call it on every chat chunk).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from openai.types.chat import ChatCompletionChunk
from toolstream_core import Assembler
from toolstream_core._string_arguments import with_string_arguments


def chunk(*calls: dict[str, Any], text: str | None = None) -> dict[str, Any]:
    delta: dict[str, Any] = {"role": "assistant"}
    if calls:
        delta["tool_calls"] = list(calls)
    if text is not None:
        delta["content"] = text
    return {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}


def call(arguments: Any, index: int = 0, call_id: str = "call_1") -> dict[str, Any]:
    return {"index": index, "id": call_id, "type": "function",
            "function": {"name": "f", "arguments": arguments}}


def args_of(event: Any) -> list[Any]:
    if isinstance(event, dict):
        return [tc["function"]["arguments"] for tc in event["choices"][0]["delta"]["tool_calls"]]
    return [tc.function.arguments for tc in event.choices[0].delta.tool_calls]


@pytest.mark.parametrize("sdk", [False, True], ids=["wire-dict", "sdk-object"])
def test_object_arguments_become_the_compact_json_the_core_commits(sdk: bool) -> None:
    value = {"city": "Zürich", "days": [1, 2], "deep": {"x": None}}
    wire = chunk(call(value), call('{"a":', index=1, call_id="call_2"))
    before = copy.deepcopy(wire)
    original: Any = wire
    if sdk:  # the SDK parses without validating, so its model holds the dict as sent
        original = ChatCompletionChunk.model_validate(
            {**wire, "choices": [{**wire["choices"][0], "delta": {
                **wire["choices"][0]["delta"], "tool_calls": [call("{}"), call('{"a":', index=1, call_id="call_2")]}}]})
        original.choices[0].delta.tool_calls[0].function.arguments = value  # type: ignore[index,union-attr]
    framework = with_string_arguments(original)
    assert framework is not original
    assert args_of(framework) == ['{"city":"Zürich","days":[1,2],"deep":{"x":null}}', '{"a":']
    assert args_of(original)[0] == value  # the core's event is not touched
    assert wire == before
    assembler = Assembler(provider="openai-chat")
    assembler.feed(original)
    assembler.feed({**chunk(), "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    committed = {c.id: c.raw_arguments for c in assembler.finish().committed}
    assert committed == {"call_1": args_of(framework)[0]}  # the copy says what the core commits


@pytest.mark.parametrize("event", [
    chunk(call('{"a": 1}')),
    chunk(call(None)),
    chunk(text="hello"),
    {"choices": []},
    {"usage": {"completion_tokens": 3}},
    chunk({"index": 0, "id": "c", "type": "custom", "custom": {"name": "f", "input": "x"}}),
], ids=["string", "none", "text", "no-choices", "usage-only", "custom-tool"])
def test_nothing_to_change_hands_back_the_same_chunk(event: dict[str, Any]) -> None:
    assert with_string_arguments(event) is event


def test_only_the_choice_that_changes_is_copied() -> None:
    event = chunk(call({"a": 1}))
    event["choices"].append({"index": 1, "delta": {"content": "x"}, "finish_reason": None})
    framework = with_string_arguments(event)
    assert framework["choices"][1] is event["choices"][1]
    assert args_of(framework) == ['{"a":1}']
