"""The tap withholds a failed call's fragments from the framework (issue 37.3).

Once the gate failed a call mid-stream (its arguments passed the cap), the rest of its bytes
decide nothing, and a framework that still got them would keep paying for each (LlamaIndex's
OpenAI class rebuilds the argument string per chunk). On the real SDK clients over HTTP against
the emulator: the consumer of the tapped stream sees the fragments up to the failure and the
stream's own end, not the thousands of fragments after it; a healthy stream reaches it whole;
and `fragment_slot` names a bare fragment only, never an event that carries anything else.
"""

from __future__ import annotations

from typing import Any

import pytest
from flood_streams import APIS, CONFIG, FRAGMENTS, SEEN_AT_MOST, flood_body
from toolstream_core import AssembleConfig, Reason
from toolstream_core._fragments import fragment_slot
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
    assert fragment_slot(api, seen[-1]) is None


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


FRAGMENT = {"tool_calls": [{"index": 1, "function": {"arguments": "abc"}}]}


@pytest.mark.parametrize(("provider", "event", "slot"), [
    ("openai-chat", _chat(FRAGMENT), 1),
    ("openai-chat", _chat({**FRAGMENT, "content": "hi"}), None),  # text rides along
    ("openai-chat", _chat(FRAGMENT, finish_reason="tool_calls"), None),
    ("openai-chat", {**_chat(FRAGMENT), "usage": {"completion_tokens": 3}}, None),
    ("openai-chat", _chat({"tool_calls": [{"index": 1, "id": "call_2",
                                           "function": {"arguments": ""}}]}), None),  # opens a call
    ("openai-chat", _chat({"tool_calls": [{"index": 1, "function": {"name": "f"}}]}), None),
    ("openai-chat", _chat({**FRAGMENT, "reasoning_content": "think"}), None),  # an extra field
    ("openai-chat", _chat({"tool_calls": [FRAGMENT["tool_calls"][0]] * 2}), None),
    ("anthropic", {"type": "content_block_delta", "index": 2,
                   "delta": {"type": "input_json_delta", "partial_json": "{"}}, 2),
    ("anthropic", {"type": "content_block_delta", "index": 2,
                   "delta": {"type": "text_delta", "text": "hi"}}, None),
    ("anthropic", {"type": "content_block_stop", "index": 2}, None),
    ("openai-responses", {"type": "response.function_call_arguments.delta", "output_index": 3,
                          "item_id": "fc_1", "delta": "{"}, 3),
    ("openai-responses", {"type": "response.output_text.delta", "output_index": 3,
                          "delta": "hi"}, None),
    ("gemini", {"candidates": []}, None),  # a wire it does not read
    ("openai-chat", None, None),  # not an event at all
])
def test_only_a_bare_fragment_has_a_slot(provider: str, event: Any, slot: int | None) -> None:
    assert fragment_slot(provider, event) == slot
