"""DESIGN §5 and 4.5 edge cases closed after issue 9: empty SDK objects, orphans on a fresh chat
index and after a Gemini call ended, identity fields of the wrong type, non-JSON whitespace,
and the id-less legacy chat protocol.

Self-contained (hand-built wire events, real SDK classes where the SDK is what builds the odd
object), so the rule-test split in ``test_rules*.py`` does not move under them.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

import pytest
from google.genai import types as genai_types
from openai.types.chat import ChatCompletionChunk
from toolstream_core import AssembleConfig, Assembler, CallState, Reason, Turn


def _run(events: Iterable[Any], provider: str, **kwargs: Any) -> Turn:
    assembler = Assembler(provider=provider, **kwargs)  # type: ignore[arg-type]
    for event in events:
        assembler.feed(event)
    return assembler.finish()


def _chunk(tool_calls: list[dict[str, Any]] | None = None, *, ci: int = 0, finish: str | None = None,
           **delta: Any) -> dict[str, Any]:
    body: dict[str, Any] = dict(delta)
    if tool_calls is not None:
        body["tool_calls"] = tool_calls
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk",
            "choices": [{"index": ci, "delta": body, "finish_reason": finish}]}


def _tc(index: Any, arguments: str | None = None, *, id: Any = None, name: Any = None) -> dict[str, Any]:
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if arguments is not None:
        function["arguments"] = arguments
    out: dict[str, Any] = {"index": index, "function": function}
    if id is not None:
        out["id"] = id
    return out


def _chat_add(ci: int = 0) -> list[dict[str, Any]]:
    return [_chunk([_tc(0, "", id=f"call_a{ci}", name="add")], ci=ci),
            _chunk([_tc(0, '{"a": 1')], ci=ci)]


def _chat_tail(ci: int = 0) -> list[dict[str, Any]]:
    return [_chunk([_tc(0, "}")], ci=ci), _chunk(ci=ci, finish="tool_calls")]


def _states(turn: Turn) -> list[tuple[str | None, CallState, Reason | None]]:
    return [(c.name, c.state, c.reason) for c in turn.calls]


# -- §5.2: an SDK object with no field set is the dict {} ----------------------------------------

def test_rule_malformed_empty_chat_sdk_object_fails_the_live_call() -> None:
    empty = ChatCompletionChunk.construct()  # what the openai SDK makes of `data: {}`
    turn = _run([*_chat_add(), empty, *_chat_tail()], "openai-chat")
    assert _states(turn) == [("add", CallState.failed, Reason.upstream_error)]
    assert any("no field set" in a for a in turn.anomalies)


def test_rule_malformed_chat_sdk_usage_chunk_with_no_choices_stays_legal() -> None:
    usage = ChatCompletionChunk.model_validate({
        "id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [], "usage": {"completion_tokens": 5, "prompt_tokens": 1, "total_tokens": 6}})
    turn = _run([*_chat_add(), usage, *_chat_tail()], "openai-chat")
    assert _states(turn) == [("add", CallState.committed, None)]
    assert turn.calls[0].arguments == {"a": 1}


def _gemini(parts: list[dict[str, Any]], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate]}


def _gemini_weather() -> list[dict[str, Any]]:
    return [
        _gemini([{"functionCall": {"name": "getWeather", "willContinue": True}}]),
        _gemini([{"functionCall": {"partialArgs": [
            {"jsonPath": "$.location", "stringValue": "Bos", "willContinue": True}], "willContinue": True}}]),
    ]


def _gemini_end() -> list[dict[str, Any]]:
    return [
        _gemini([{"functionCall": {"partialArgs": [{"jsonPath": "$.location", "stringValue": "ton"}],
                                   "willContinue": True}}]),
        _gemini([{"functionCall": {}}], finish="STOP"),
    ]


def _sdk(event: dict[str, Any]) -> genai_types.GenerateContentResponse:
    return genai_types.GenerateContentResponse.model_validate(event)


def test_rule_malformed_empty_gemini_sdk_object_fails_the_live_call() -> None:
    events = [_sdk(e) for e in _gemini_weather()]
    events += [genai_types.GenerateContentResponse(), *(_sdk(e) for e in _gemini_end())]
    turn = _run(events, "gemini")
    assert _states(turn) == [("getWeather", CallState.failed, Reason.upstream_error)]


def test_rule_malformed_gemini_sdk_usage_only_chunk_stays_legal() -> None:
    usage = _sdk({"usageMetadata": {"candidatesTokenCount": 3}})
    events = [*(_sdk(e) for e in _gemini_weather()), usage, *(_sdk(e) for e in _gemini_end())]
    turn = _run(events, "gemini")
    assert _states(turn) == [("getWeather", CallState.committed, None)]
    assert turn.calls[0].arguments == {"location": "Boston"}


# -- §5.1: orphans -------------------------------------------------------------------------------

def test_rule_orphan_chat_fragment_on_unopened_index_fails_the_choice_not_a_new_call() -> None:
    orphan = _chunk([_tc(7, ', "c": 1')])
    other_choice = [*_chat_add(ci=1), *_chat_tail(ci=1)]
    turn = _run([*_chat_add(), orphan, *other_choice, *_chat_tail()], "openai-chat")
    by_id = {c.id: (c.state, c.reason) for c in turn.calls}
    assert by_id == {"call_a0": (CallState.failed, Reason.upstream_error),
                     "call_a1": (CallState.committed, None)}
    assert len(turn.error_results()) == 1


def test_rule_orphan_chat_new_index_with_a_name_still_opens_a_call() -> None:
    second = [_chunk([_tc(1, "", id="call_m", name="mul")]), _chunk([_tc(1, "{}")])]
    turn = _run([*_chat_add(), *second, *_chat_tail()], "openai-chat")
    assert _states(turn) == [("add", CallState.committed, None), ("mul", CallState.committed, None)]


def test_rule_orphan_gemini_partial_args_after_the_call_ended_fails_it() -> None:
    ended = _gemini([{"functionCall": {"partialArgs": [{"jsonPath": "$.location", "stringValue": "ton"}]}}])
    orphan = _gemini([{"functionCall": {"partialArgs": [{"jsonPath": "$.unit", "stringValue": "C"}]}}])
    turn = _run([*_gemini_weather(), ended, orphan, _gemini([], finish="STOP")], "gemini")
    assert _states(turn) == [("getWeather", CallState.failed, Reason.upstream_error)]
    assert len(turn.error_results()) == 1  # no nameless call for an id the vendor never sent


def test_rule_orphan_gemini_partial_args_spare_other_candidates() -> None:
    def on(ci: int, event: dict[str, Any]) -> dict[str, Any]:
        event = copy.deepcopy(event)
        event["candidates"][0]["index"] = ci
        return event

    ended = _gemini([{"functionCall": {"name": "now", "args": {}}}])
    orphan = _gemini([{"functionCall": {"partialArgs": [{"jsonPath": "$.x", "stringValue": "1"}]}}])
    turn = _run([on(1, ended), *_gemini_weather(), on(1, orphan), *_gemini_end()], "gemini")
    assert {c.name: (c.state, c.reason) for c in turn.calls} == {
        "now": (CallState.failed, Reason.upstream_error),
        "getWeather": (CallState.committed, None)}


# -- §5.2: identity fields of the wrong type fail that call --------------------------------------

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
    pytest.param("gemini", [_gemini([{"functionCall": {"id": 7, "name": "add", "args": {}}}], finish="STOP")],
                 id="gemini-id"),
    pytest.param("openai-chat", [_chunk([_tc(0, "", id=7, name="add")]), _chunk([_tc(0, "{}")]),
                                 _chunk(finish="tool_calls")], id="chat-id"),
    pytest.param("openai-chat", [_chunk([_tc(0, "", id="call_1", name=True)]), _chunk([_tc(0, "{}")]),
                                 _chunk(finish="tool_calls")], id="chat-name"),
]


@pytest.mark.parametrize(("provider", "events"), MISTYPED)
def test_rule_malformed_mistyped_identity_field_fails_that_call(provider: str, events: list[Any]) -> None:
    turn = _run(events, provider)
    assert turn.calls, "the call (or its orphaned arguments) must be reported"
    assert all(c.state is CallState.failed and c.reason is Reason.upstream_error for c in turn.calls)
    assert turn.anomalies
    assert len(turn.error_results()) == len(turn.calls)


@pytest.mark.parametrize(("provider", "events"), [
    pytest.param("anthropic", _anthropic(_BLOCK), id="anthropic"),
    pytest.param("openai-responses", _responses(_ITEM), id="responses"),
    pytest.param("gemini", [_gemini([{"functionCall": {"id": "c1", "name": "add", "args": {}}}], finish="STOP")],
                 id="gemini"),
])
def test_rule_malformed_well_typed_identity_still_commits(provider: str, events: list[Any]) -> None:
    turn = _run(events, provider)
    assert _states(turn) == [("add", CallState.committed, None)]


# -- 4.5: whitespace-only arguments are {} only for JSON whitespace -------------------------------

@pytest.mark.parametrize(("text", "state"), [
    (" \t\r\n ", CallState.committed),
    ("\u00a0", CallState.failed),
    ("\u2003\u3000", CallState.failed),
    (" \u00a0 ", CallState.failed),
])
def test_rule5_whitespace_only_arguments_are_json_whitespace(text: str, state: CallState) -> None:
    events = [_chunk([_tc(0, "", id="call_1", name="add")]), _chunk([_tc(0, text)]), _chunk(finish="tool_calls")]
    turn = _run(events, "openai-chat")
    call = turn.calls[0]
    assert call.state is state
    if state is CallState.committed:
        assert call.arguments == {}
    else:
        assert call.reason is Reason.invalid_json


# -- the legacy chat `function_call` protocol has no ids ------------------------------------------

def _legacy(pieces: list[str]) -> list[dict[str, Any]]:
    first = _chunk(function_call={"name": "add", "arguments": ""})
    return [first, *(_chunk(function_call={"arguments": p}) for p in pieces), _chunk(finish="function_call")]


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_rule5_legacy_function_call_gets_a_stable_synthesized_id(mode: str) -> None:
    config = AssembleConfig(mode=mode)  # type: ignore[arg-type]
    one = _run(_legacy(['{"a": 1, "b": 2}']), "openai-chat", config=config)
    other = _run(_legacy(['{"a"', ': 1, "b', '": 2}']), "openai-chat", config=config)
    assert _states(one) == [("add", CallState.committed, None)]
    assert one.calls[0].arguments == {"a": 1, "b": 2}
    assert one.calls[0].id is not None and one.calls[0].id == other.calls[0].id


def test_rule5_strict_mode_still_fails_a_missing_id_where_the_protocol_has_ids() -> None:
    events = [_chunk([_tc(0, "", name="add")]), _chunk([_tc(0, "{}")]), _chunk(finish="tool_calls")]
    turn = _run(events, "openai-chat", config=AssembleConfig(mode="strict"))
    assert _states(turn) == [("add", CallState.failed, Reason.missing_id_or_name)]


def _no_index(tc: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in tc.items() if key != "index"}


def test_rule_mistyped_id_without_index_fails_every_live_call_of_the_choice() -> None:
    """With no index the id is the delta's only identity: a bool id may be any live call's,
    whatever name it comes with (found by the fuzz harness, seed 28, on missing_index)."""
    first = [_chunk([_no_index(_tc(0, "", id="call_w", name="get_weather"))]),
             _chunk([_no_index(_tc(0, '{"city": "Paris"}'))])]
    second = [_chunk([_no_index(_tc(0, "", id=True, name="write_file"))]),
              _chunk([_no_index(_tc(0, '{"path": "/tmp/x"}'))])]
    other_choice = [*_chat_add(ci=1), *_chat_tail(ci=1)]
    turn = _run([*first, *second, *other_choice, _chunk(finish="tool_calls")], "openai-chat")
    assert _states(turn) == [("get_weather", CallState.failed, Reason.upstream_error),
                             ("write_file", CallState.failed, Reason.upstream_error),
                             ("add", CallState.committed, None)]
    assert len(turn.error_results()) == 2


def test_rule_mistyped_id_with_an_index_fails_only_its_call() -> None:
    second = [_chunk([_tc(1, "", id=True, name="mul")]), _chunk([_tc(1, "{}")])]
    turn = _run([*_chat_add(), *second, *_chat_tail()], "openai-chat")
    assert _states(turn) == [("add", CallState.committed, None), ("mul", CallState.failed, Reason.upstream_error)]
