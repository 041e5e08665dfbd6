"""Anthropic extended thinking end to end under LlamaIndex: the signed block goes back.

``Anthropic`` (llama-index-llms-anthropic) keeps a streamed thinking block as a
``ThinkingBlock`` whose ``additional_information["signature"]`` collects the
``signature_delta``, and sends it back as a ``thinking`` block before the call. The
emulator's ``thinking_call`` scenario streams that block before a ``tool_use`` and, like
Anthropic, answers a thinking request whose tool loop lost it with a 400. The gated agent
(``history="check"`` by default) runs the tool and its next request carries the block; the
same history without it raises ``HistoryError`` before anything is sent.
"""

from __future__ import annotations

from typing import Any

import anthropic
import pytest
from li_helpers import THIRD_PARTY_WARNINGS, Outcome, Recorder, make_llm, run_agent
from llama_index.core.base.llms.types import ChatMessage, ThinkingBlock
from toolstream_core.testing import VendorEmulator
from toolstream_core.testing._scenarios import build_script, scenario_rng

from llamaindex_toolstream import HistoryError, ToolstreamFunctionAgent, ToolstreamLLM

pytestmark = THIRD_PARTY_WARNINGS

THINKING = build_script("thinking_call", scenario_rng(0, "anthropic", "thinking_call")).extra["thinking"]


def thinking_llm(emu: VendorEmulator) -> Any:
    return make_llm("anthropic", emu.base_url, max_tokens=4000,
                    thinking_dict={"type": "enabled", "budget_tokens": 2000})


async def run_thinking_turn(emu: VendorEmulator) -> tuple[Outcome, Recorder]:
    """One agent run: the thinking turn with its call, the tool, the final answer."""
    recorder = Recorder()
    emu.queue("anthropic", "thinking_call", "text")
    agent = ToolstreamFunctionAgent(tools=recorder.tools(), llm=thinking_llm(emu))
    return await run_agent(agent, recorder, emu, user_msg="weather in Paris?"), recorder


def without_thinking(messages: list[ChatMessage]) -> list[ChatMessage]:
    """``messages`` with each assistant message's thinking blocks dropped."""
    return [ChatMessage(role=m.role, additional_kwargs=m.additional_kwargs,
                        blocks=[b for b in m.blocks if not isinstance(b, ThinkingBlock)])
            for m in messages]


async def test_the_signed_thinking_block_goes_back_with_its_call(emu: VendorEmulator) -> None:
    outcome, recorder = await run_thinking_turn(emu)
    assert outcome.error is None and recorder.runs == [("get_weather", {"city": "Paris"})]
    assert emu.statuses == [200, 200]  # the vendor's rule held: the follow-up was accepted
    thinking = [b for m in outcome.memory for b in m.blocks if isinstance(b, ThinkingBlock)]
    assert [b.content for b in thinking] == [THINKING]
    signature = thinking[0].additional_information["signature"]
    assert signature.startswith("EqQB")
    sent = emu.requests[1].body
    assert sent["thinking"] == {"type": "enabled", "budget_tokens": 2000}
    assistant = sent["messages"][1]["content"]
    assert assistant[0] == {"type": "thinking", "thinking": THINKING, "signature": signature}
    assert [b["type"] for b in assistant] == ["thinking", "tool_use"]
    assert "sunny in Paris" in str(outcome.result)


async def test_the_same_history_without_its_thinking_block_is_refused(emu: VendorEmulator) -> None:
    outcome, _ = await run_thinking_turn(emu)
    history = outcome.memory[:3]  # the question, the call, its result
    assert [m.role.value for m in history] == ["user", "assistant", "tool"]
    stripped = without_thinking(history)
    emu.clear()
    with pytest.raises(HistoryError, match="not preceded by its thinking block") as caught:
        ToolstreamLLM(thinking_llm(emu), history="check").chat(stripped)
    problem, = caught.value.problems
    assert (problem.kind, problem.index) == ("missing_thinking", 1)
    assert problem.call_id == history[2].additional_kwargs["tool_call_id"]
    assert emu.requests == []  # nothing was sent
    # Sent anyway ("repair" only answers ids), the vendor refuses it: the check is not idle.
    with pytest.raises(anthropic.BadRequestError, match="Expected `thinking`"):
        ToolstreamLLM(thinking_llm(emu), history="repair").chat(stripped)
    assert emu.statuses == [400]
