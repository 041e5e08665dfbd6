"""Anthropic extended thinking end to end: the signed thinking block goes back with its call.

The emulator's ``thinking_call`` scenario streams a ``thinking`` block (``thinking_delta``
pieces, then its ``signature_delta``) before a ``tool_use``, and, like Anthropic, answers a
thinking request whose tool loop lost that block with a 400. The real ``ChatAnthropic``
with ``thinking`` on, gated by the middleware (``history="check"`` by default): the tool
runs and the next request carries the block as streamed; the same history without the
block raises ``HistoryError`` before anything is sent.
"""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from lc_util import Recorder, make_model, recording_tools
from toolstream_core.testing import VendorEmulator
from toolstream_core.testing._scenarios import build_script, scenario_rng

from langchain_toolstream import HistoryError, ToolstreamMiddleware, with_toolstream

THINKING = build_script("thinking_call", scenario_rng(0, "anthropic", "thinking_call")).extra["thinking"]


def thinking_model(emu: VendorEmulator) -> Any:
    return make_model("anthropic", emu, max_tokens=4000,
                      thinking={"type": "enabled", "budget_tokens": 2000})


def run_thinking_turn(emu: VendorEmulator) -> tuple[list[BaseMessage], Recorder]:
    """One agent run: the thinking turn with its call, the tool, the final answer."""
    recorder = Recorder()
    emu.queue("anthropic", "thinking_call", "text")
    agent = create_agent(thinking_model(emu), tools=recording_tools(recorder),
                         middleware=[ToolstreamMiddleware()])
    result = agent.invoke({"messages": [HumanMessage("weather in Paris?")]})
    return result["messages"], recorder


def without_thinking(messages: list[BaseMessage]) -> list[BaseMessage]:
    """``messages`` with each AIMessage's thinking blocks dropped (what a lossy store does)."""
    out: list[BaseMessage] = []
    for message in messages:
        if isinstance(message, AIMessage) and isinstance(message.content, list):
            kept = [b for b in message.content
                    if not (isinstance(b, dict) and b.get("type") == "thinking")]
            message = AIMessage(content=kept, tool_calls=message.tool_calls, id=message.id)
        out.append(message)
    return out


def test_the_signed_thinking_block_goes_back_with_its_call(emu: VendorEmulator) -> None:
    messages, recorder = run_thinking_turn(emu)
    assert recorder.calls == [("get_weather", {"city": "Paris"})]
    assert emu.statuses == [200, 200]  # the vendor's rule held: the follow-up was accepted
    first = messages[1]
    assert isinstance(first, AIMessage) and isinstance(first.content, list)
    thinking = first.content[0]
    assert isinstance(thinking, dict) and thinking["type"] == "thinking"
    assert thinking["thinking"] == THINKING and thinking["signature"].startswith("EqQB")
    sent = emu.requests[1].body
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2000}
    assert sent["messages"][1]["content"][0] == {"type": "thinking", "thinking": THINKING,
                                                 "signature": thinking["signature"]}
    assert [b["type"] for b in sent["messages"][1]["content"]] == ["thinking", "tool_use"]
    assert "sunny in Paris" in messages[-1].text


def test_the_same_history_without_its_thinking_block_is_refused(emu: VendorEmulator) -> None:
    messages, _ = run_thinking_turn(emu)
    stripped = without_thinking(messages[:3])  # the question, the call, its result
    emu.clear()
    with pytest.raises(HistoryError, match="not preceded by its thinking block") as caught:
        with_toolstream(thinking_model(emu), history="check").invoke(stripped)
    problem, = caught.value.problems
    call = messages[1]
    assert isinstance(call, AIMessage)
    assert (problem.kind, problem.index, problem.call_id) == (
        "missing_thinking", 1, call.tool_calls[0]["id"])
    assert emu.requests == []  # nothing was sent
    # Sent anyway ("repair" only answers ids), the vendor refuses it: the check is not idle.
    with pytest.raises(anthropic.BadRequestError, match="Expected `thinking`"):
        with_toolstream(thinking_model(emu), history="repair").invoke(stripped)
    assert emu.statuses == [400]
