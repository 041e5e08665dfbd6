"""The LlamaIndex side of a legal next request: results in the calls' order, paused turns
continued, and ``check_history`` (the same rules as the LangChain shim's).

Real LLM classes and SDKs against the emulator, which answers an unpaired history with the
vendor's 400; the stock ``FunctionAgent`` runs the same input for comparison.
"""

from __future__ import annotations

from typing import Any

import pytest
from li_helpers import APIS, THIRD_PARTY_WARNINGS, Recorder, make_llm, run_agent, unpaired
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, TextBlock, ThinkingBlock, ToolCallBlock
from toolstream_core.testing import Received, VendorEmulator

from llamaindex_toolstream import (
    ToolstreamFunctionAgent,
    ToolstreamLLM,
    check_history,
    pair_orphan_calls,
)

pytestmark = THIRD_PARTY_WARNINGS

TOKYO_ONLY = {"get_weather": {"type": "object", "required": ["city"],
                              "properties": {"city": {"type": "string", "enum": ["Tokyo"]}}}}


def results_sent(received: Received) -> list[str]:
    """The text of each tool result in the request, in the order it was sent."""
    body = received.body
    if received.api == "openai-chat":
        return [str(m["content"]) for m in body["messages"] if m.get("role") == "tool"]
    if received.api == "openai-responses":
        return [str(i["output"]) for i in body["input"] if i.get("type") == "function_call_output"]
    if received.api == "anthropic":
        return [str(b["content"]) for m in body["messages"] if isinstance(m["content"], list)
                for b in m["content"] if b.get("type") == "tool_result"]
    return [str(p["functionResponse"]["response"]) for c in body["contents"]
            for p in c.get("parts", []) if "functionResponse" in p]


@pytest.mark.parametrize("api", APIS)
async def test_a_rejected_first_call_is_answered_in_the_calls_order(
        api: str, emu: VendorEmulator) -> None:
    """Two parallel calls to one tool, the first rejected by the schema: the workflow hands
    the committed call's result back first; the next request answers the first call first
    (Gemini, here without ids, pairs results by position)."""
    emu.queue(api, "parallel_no_ids" if api == "gemini" else "parallel_calls", "text")
    recorder = Recorder()
    llm = ToolstreamLLM(make_llm(api, emu.base_url), tools=TOKYO_ONLY)
    outcome = await run_agent(ToolstreamFunctionAgent(tools=recorder.tools(), llm=llm),
                              recorder, emu)
    assert outcome.error is None and outcome.runs == [("get_weather", {"city": "Tokyo"})]
    sent = results_sent(emu.requests[-1])
    assert len(sent) == 2 and "schema_violation" in sent[0] and "sunny in Tokyo" in sent[1]
    if api == "gemini":
        assert "(id " not in sent[0]  # the model never saw an id: none is quoted
    assert unpaired(outcome.memory) == []


@pytest.mark.parametrize("streaming", [True, False])
async def test_a_paused_turn_is_continued(streaming: bool,
                                          emu: VendorEmulator) -> None:
    """Anthropic ``pause_turn`` twice, then a call, then the answer. The stock agent ends at
    the first pause as if the model had finished; the gated agent sends the paused turn back
    each time and runs the call of the turn that ended."""
    outcomes = []
    for cls in (FunctionAgent, ToolstreamFunctionAgent):
        emu.queue("anthropic", "pause_turn", "pause_turn", "single_call", "text")
        recorder = Recorder()
        agent = cls(tools=recorder.tools(), llm=make_llm("anthropic", emu.base_url),
                    streaming=streaming)
        outcomes.append(await run_agent(agent, recorder, emu))
        emu.clear()
    stock, ours = outcomes
    assert stock.requests == 1 and stock.runs == []
    assert ours.error is None and ours.requests == 4
    assert [name for name, _ in ours.runs] == ["write_file"]
    assert str(ours.result).startswith("All done")
    assert unpaired(ours.memory) == []


def test_pair_orphan_calls_keeps_the_calls_order() -> None:
    calls = [ToolCallBlock(tool_call_id=i, tool_name="get_weather", tool_kwargs={})
             for i in ("a", "b", "c")]
    history = [ChatMessage(role="user", content="go"),
               ChatMessage(role="assistant", blocks=list(calls)),
               ChatMessage(role="tool", content="B", additional_kwargs={"tool_call_id": "b"}),
               ChatMessage(role="tool", content="A", additional_kwargs={"tool_call_id": "a"}),
               ChatMessage(role="tool", content="A2", additional_kwargs={"tool_call_id": "a"})]
    paired = pair_orphan_calls(history)
    tools = [m for m in paired if m.role == "tool"]
    assert [m.additional_kwargs["tool_call_id"] for m in tools] == ["a", "b", "c"]
    assert [m.content for m in tools[:2]] == ["A", "B"] and "[cancelled]" in str(tools[2].content)
    assert check_history(paired, "anthropic") == []
    assert [p.call_id for p in check_history(history[:3], "anthropic")] == ["a", "c"]


def thinking_history(keep_thinking: bool) -> list[ChatMessage]:
    thinking: list[Any] = [ThinkingBlock(content="hmm", additional_information={"signature": "s"})]
    blocks: list[Any] = [TextBlock(text="checking"),
                         ToolCallBlock(tool_call_id="toolu_1", tool_name="get_weather",
                                       tool_kwargs={"city": "Paris"})]
    return [ChatMessage(role="user", content="weather?"),
            ChatMessage(role="assistant", blocks=[*thinking, *blocks] if keep_thinking else blocks),
            ChatMessage(role="tool", content="sunny", additional_kwargs={"tool_call_id": "toolu_1"})]


def test_check_history_finds_a_lost_thinking_block() -> None:
    assert check_history(thinking_history(True), "anthropic") == []
    problems = check_history(thinking_history(False), "anthropic", reasoning=True)
    assert [(p.kind, p.index, p.call_id, p.repairable) for p in problems] == [
        ("missing_thinking", 1, "toolu_1", False)]


def test_check_history_finds_a_lost_gemini_signature() -> None:
    call = ToolCallBlock(tool_call_id="c1", tool_name="get_weather", tool_kwargs={})
    signed = ChatMessage(role="assistant", blocks=[call],
                         additional_kwargs={"thought_signatures": [b"sig"]})
    lost = ChatMessage(role="assistant", blocks=[call], additional_kwargs={})
    answer = ChatMessage(role="tool", content="x", additional_kwargs={"tool_call_id": "c1"})
    user = ChatMessage(role="user", content="go")
    assert check_history([user, signed, answer], "gemini") == []
    problems = check_history([user, signed, answer, lost, answer], "gemini")
    assert [(p.kind, p.index) for p in problems] == [("missing_thought_signature", 3)]
