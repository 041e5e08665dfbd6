"""The tap withholds a failed call's fragments from the framework (issue 37.3).

Once the gate failed a call mid-stream (its arguments passed the cap), the rest of its bytes
decide nothing, and a framework that still got them would keep paying for each (LlamaIndex's
OpenAI class rebuilds the argument string per chunk). On the real SDK clients over HTTP against
the emulator: the consumer of the tapped stream sees the fragments up to the failure and the
stream's own end, not the thousands of fragments after it; a healthy stream reaches it whole;
and `Assembler.spent` names an event that touched only a failed call, never one that carries
anything else, on every wire alike.
"""

from __future__ import annotations

from typing import Any

import pytest
from flood_streams import APIS, CONFIG, FRAGMENTS, SEEN_AT_MOST, flood_body
from toolstream_core import AssembleConfig, Assembler, CallRejected, Reason
from toolstream_core.integration import GateSession, tap_client
from toolstream_core.testing import TOOLS, VendorEmulator
from toolstream_core.vendors import declare_tools, make_client, open_stream

MODELS = {"openai-chat": "gpt-4o-mini", "anthropic": "claude-sonnet-4-5"}


def _client(api: str, emu: VendorEmulator, asynchronous: bool = False) -> Any:
    base = emu.base_url + ("/v1" if api.startswith("openai") else "")
    return make_client(api, api_key="test", base_url=base, asynchronous=asynchronous)


def _tap(client: Any, session: GateSession) -> Any:
    return tap_client(client, session, "openai" if type(client).__name__.endswith("OpenAI")
                      else "anthropic")


def _session(api: str) -> GateSession:
    return GateSession(tools=TOOLS, config=AssembleConfig.coerce(CONFIG), provider=api)


@pytest.mark.parametrize("api", APIS)
def test_a_failed_calls_fragments_do_not_reach_the_framework(emu: VendorEmulator, api: str) -> None:
    emu.queue_body(api, flood_body(api))
    session = _session(api)
    tapped = _tap(_client(api, emu), session)
    seen = list(open_stream(api, tapped, model=MODELS[api], contents="go",
                            tools=declare_tools(api, TOOLS), max_tokens=4096))
    turn = session.end()
    assert [call.reason for call in turn.rejected] == [Reason.arguments_exceed_max_bytes]
    assert not turn.committed
    assert len(seen) <= SEEN_AT_MOST < FRAGMENTS  # the flood sent FRAGMENTS + 6 events
    # what was withheld is only the failed call's fragments: the stream's end still arrived
    assert "stop" in repr(seen[-1]).lower() or "finish_reason='tool_calls'" in repr(seen[-1])


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("api", APIS)
async def test_the_async_tap_withholds_them_too(emu: VendorEmulator, api: str) -> None:
    emu.queue_body(api, flood_body(api))
    session = _session(api)
    client = _tap(_client(api, emu, asynchronous=True), session)
    tools = declare_tools(api, TOOLS)
    messages = [{"role": "user", "content": "go"}]
    if api == "anthropic":
        stream = await client.messages.create(model=MODELS[api], max_tokens=4096,
                                              messages=messages, tools=tools, stream=True)
    else:
        stream = await client.chat.completions.create(model=MODELS[api], messages=messages,
                                                      tools=tools, stream=True)
    seen = [event async for event in stream]
    turn = session.end()
    assert [call.reason for call in turn.rejected] == [Reason.arguments_exceed_max_bytes]
    assert len(seen) <= SEEN_AT_MOST < FRAGMENTS


@pytest.mark.parametrize("api", APIS)
def test_a_healthy_stream_reaches_the_framework_whole(emu: VendorEmulator, api: str) -> None:
    emu.queue(api, "parallel_calls")
    session = _session(api)
    events: list[Any] = []
    plain = list(open_stream(api, _client(api, emu), model=MODELS[api], contents="go",
                             tools=declare_tools(api, TOOLS), max_tokens=4096))
    emu.queue(api, "parallel_calls")
    tapped = _tap(_client(api, emu), session)
    for event in open_stream(api, tapped, model=MODELS[api], contents="go",
                             tools=declare_tools(api, TOOLS), max_tokens=4096):
        events.append(event)
    assert len(events) == len(plain) > 0
    assert len(session.end().committed) == 2


def _chat(delta: dict[str, Any], **choice: Any) -> dict[str, Any]:
    return {"id": "c", "choices": [{"index": 0, "delta": delta, "finish_reason": None, **choice}]}


def _call(index: int, text: str, **more: Any) -> dict[str, Any]:
    return _chat({"tool_calls": [{"index": index, "function": {"arguments": text}, **more}]})


CAP = 64
BIG = "x" * (CAP * 4)

#: Per wire: events that open two calls and fail the first past the cap (the second stays
#: live), then (event, spent) rows fed one by one. Every wire is judged by the one rule: an
#: event is spent when it touched only the failed call, whatever its shape.
_OPENED = {
    "openai-chat": [
        _chat({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                               "function": {"name": "write_file", "arguments": ""}}]}),
        _chat({"tool_calls": [{"index": 1, "id": "call_2", "type": "function",
                               "function": {"name": "get_weather", "arguments": ""}}]}),
        _call(0, BIG)],
    "anthropic": [
        {"type": "message_start", "message": {"id": "m", "type": "message", "role": "assistant",
                                              "content": [], "usage": {"output_tokens": 1}}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "toolu_1", "name": "write_file", "input": {}}},
        {"type": "content_block_start", "index": 1,
         "content_block": {"type": "tool_use", "id": "toolu_2", "name": "get_weather", "input": {}}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": BIG}}],
    "openai-responses": [
        {"type": "response.output_item.added", "output_index": 0, "item": {
            "type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "write_file",
            "arguments": ""}},
        {"type": "response.output_item.added", "output_index": 1, "item": {
            "type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "get_weather",
            "arguments": ""}},
        {"type": "response.function_call_arguments.delta", "output_index": 0, "item_id": "fc_1",
         "delta": BIG}],
    "bedrock-converse": [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"contentBlockIndex": 0, "start": {
            "toolUse": {"toolUseId": "tu_1", "name": "write_file"}}}},
        {"contentBlockStart": {"contentBlockIndex": 1, "start": {
            "toolUse": {"toolUseId": "tu_2", "name": "get_weather"}}}},
        {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": BIG}}}}],
}

def _gemini(*parts: dict[str, Any], **more: Any) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": list(parts)}, **more}]}


def _partial(text: str, **call: Any) -> dict[str, Any]:
    return {"functionCall": {"partialArgs": [{"jsonPath": "$.content", "stringValue": text}],
                             "willContinue": True, **call}}


_OPENED["gemini"] = [_gemini(_partial("", name="write_file", id="fc_1")), _gemini(_partial(BIG))]

_ROWS: dict[str, list[tuple[Any, bool]]] = {
    "gemini": [
        (_gemini(_partial("abc")), True),
        (_gemini({"text": "hi"}, _partial("abc")), False),  # text rides along
        ({**_gemini(_partial("abc")), "usageMetadata": {"candidatesTokenCount": 9}}, True),
        (_gemini({"functionCall": {}}, finishReason="STOP"), False),
    ],
    "openai-chat": [
        (_call(0, "abc"), True),
        (_chat({"content": "hi", "tool_calls": [{"index": 0, "function": {"arguments": "a"}}]}),
         False),  # text rides along
        (_chat({"reasoning_content": "think",
                "tool_calls": [{"index": 0, "function": {"arguments": "a"}}]}), False),
        (_call(1, '{"ci'), False),  # the live call
        (_chat({"tool_calls": [{"index": 0, "function": {"arguments": "a"}},
                               {"index": 1, "function": {"arguments": "t"}}]}), False),
        (_chat({"content": None, "role": "assistant",
                "tool_calls": [{"index": 0, "function": {"arguments": "a"}}]}), True),
        (_call(0, "abc"), True),
        (_chat({"content": "text alone"}), False),
        (_chat({}, finish_reason="tool_calls"), False),
    ],
    "anthropic": [
        ({"type": "content_block_delta", "index": 0,
          "delta": {"type": "input_json_delta", "partial_json": "abc"}}, True),
        ({"type": "content_block_delta", "index": 1,
          "delta": {"type": "input_json_delta", "partial_json": "{"}}, False),
        ({"type": "content_block_stop", "index": 0}, False),
    ],
    "openai-responses": [
        ({"type": "response.function_call_arguments.delta", "output_index": 0, "item_id": "fc_1",
          "delta": "abc"}, True),
        ({"type": "response.function_call_arguments.delta", "output_index": 1, "item_id": "fc_2",
          "delta": "{"}, False),
        ({"type": "response.output_text.delta", "output_index": 2, "delta": "hi"}, False),
    ],
    "bedrock-converse": [
        ({"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "abc"}}}},
         True),
        ({"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"toolUse": {"input": "{"}}}},
         False),
        ({"contentBlockStop": {"contentBlockIndex": 0}}, False),
    ],
}


@pytest.mark.parametrize("provider", sorted(_ROWS))
def test_an_event_is_spent_when_it_touched_only_a_failed_call(provider: str) -> None:
    assembler = Assembler(tools=TOOLS, config=AssembleConfig(max_tool_argument_bytes=CAP),
                          provider=provider)  # type: ignore[arg-type]
    *opening, flood = _OPENED[provider]
    for event in opening:
        assembler.feed(event)
        assert not assembler.spent
    # the cap is checked in runs of fragments (``_call.ROOM``): flood until the call fails
    for _ in range(64):
        if any(isinstance(e, CallRejected) for e in assembler.feed(flood)):
            break
        assert not assembler.spent  # nothing had failed before it
    got = []
    for event, _ in _ROWS[provider]:
        assembler.feed(event)
        got.append(assembler.spent)
    assert got == [spent for _, spent in _ROWS[provider]]
    turn = assembler.finish()
    assert Reason.arguments_exceed_max_bytes in [c.reason for c in turn.calls]


def test_a_healthy_stream_spends_nothing() -> None:
    """Until a call fails, no event is spent, and the fast path is not left."""
    assembler = Assembler(tools=TOOLS, provider="openai-chat")
    for event in _OPENED["openai-chat"][:2] + [_call(0, "abc")] * 50:
        assembler.feed(event)
        assert not assembler.spent
