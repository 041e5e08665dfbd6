"""The LlamaIndex side of a legal next request: results in the calls' order, paused turns
continued, ``check_history`` (the same rules as the LangChain shim's), and the gated LLM's
``history=`` policy (repair every outgoing history; ``"check"`` raises ``HistoryError``).

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
    HistoryError,
    ToolstreamFunctionAgent,
    ToolstreamLLM,
    check_history,
    pair_orphan_calls,
)

pytestmark = THIRD_PARTY_WARNINGS

TOKYO_ONLY = {"get_weather": {"type": "object", "required": ["city"],
                              "properties": {"city": {"type": "string", "enum": ["Tokyo"]}}}}


def tool_results(received: Received) -> list[tuple[str, str]]:
    """``(answered id, text)`` of each tool result in the request, in the order it was sent
    (Gemini's results carry no id: the function's name stands in)."""
    body = received.body
    if received.api == "openai-chat":
        items = [(m["tool_call_id"], m["content"]) for m in body["messages"] if m.get("role") == "tool"]
    elif received.api == "openai-responses":
        items = [(i["call_id"], i["output"]) for i in body["input"]
                 if i.get("type") == "function_call_output"]
    elif received.api == "anthropic":
        items = [(b["tool_use_id"], b["content"]) for m in body["messages"]
                 if isinstance(m["content"], list) for b in m["content"] if b.get("type") == "tool_result"]
    else:
        items = [(p["functionResponse"]["name"], p["functionResponse"]["response"])
                 for c in body["contents"] for p in c.get("parts", []) if "functionResponse" in p]
    return [(str(ident), str(text)) for ident, text in items]


def results_sent(received: Received) -> list[str]:
    """The text of each tool result in the request, in the order it was sent."""
    return [text for _, text in tool_results(received)]


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


async def test_a_turn_paused_past_the_cap_ends_as_it_is(emu: VendorEmulator) -> None:
    """The run policy's cap, the same in both agents (``MAX_PAUSED_CONTINUATIONS``): after ten
    continuations in a row the turn ends with what the vendor said, without client calls."""
    emu.queue("anthropic", *["pause_turn"] * 12)
    recorder = Recorder()
    agent = ToolstreamFunctionAgent(tools=recorder.tools(), llm=make_llm("anthropic", emu.base_url))
    outcome = await run_agent(agent, recorder, emu)
    assert outcome.error is None and outcome.requests == 11  # the first turn and ten more
    assert outcome.runs == []
    assert unpaired(outcome.memory) == []


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


# -- the gated LLM's history policy (``history=``, as the LangChain shim's) -------------------


def two_calls_one_answer() -> list[ChatMessage]:
    calls: list[Any] = [ToolCallBlock(tool_call_id=f"call_{c}", tool_name="get_weather",
                                      tool_kwargs={"city": c}) for c in ("Paris", "Rome")]
    return [ChatMessage(role="user", content="weather?"),
            ChatMessage(role="assistant", blocks=calls),
            ChatMessage(role="tool", content="sunny",
                        additional_kwargs={"tool_call_id": "call_Paris", "name": "get_weather"})]


def answered_ids(received: Received) -> list[str]:
    """The call ids the request's tool results answer, in the order they were sent."""
    return [ident for ident, _ in tool_results(received)]


@pytest.mark.parametrize("api", APIS)
def test_an_unanswered_id_is_answered_before_the_request_leaves(api: str,
                                                                emu: VendorEmulator) -> None:
    """The probe: two calls, one result. Plain LlamaIndex sends the second id unanswered and
    gets the vendor's 400; the gated LLM answers it and the vendor takes the request."""
    history = two_calls_one_answer()
    with pytest.raises(Exception, match=r"(?i)tool|function"):
        make_llm(api, emu.base_url).chat(history)
    emu.clear()
    answer = ToolstreamLLM(make_llm(api, emu.base_url)).chat(history)
    assert answer.message.content  # accepted: the emulator answered
    assert len(emu.requests) == 1
    if api != "gemini":  # Gemini pairs its results by position
        assert answered_ids(emu.requests[0]) == ["call_Paris", "call_Rome"]
    assert len(history) == 3  # the caller's list is not modified


async def test_the_streamed_tool_call_path_repairs_too(emu: VendorEmulator) -> None:
    """``astream_chat_with_tools`` (what the agent calls) gets the same repaired history."""
    llm = ToolstreamLLM(make_llm("anthropic", emu.base_url))
    stream = await llm.astream_chat_with_tools(Recorder().tools(), chat_history=two_calls_one_answer())
    texts = [response.message.content async for response in stream]
    assert texts and texts[-1]
    assert answered_ids(emu.requests[0]) == ["call_Paris", "call_Rome"]


def test_history_off_sends_the_history_as_given(emu: VendorEmulator) -> None:
    llm = ToolstreamLLM(make_llm("openai-chat", emu.base_url), history="off")
    with pytest.raises(Exception, match=r"(?i)tool"):
        llm.chat(two_calls_one_answer())


def thinking_llm(emu: VendorEmulator) -> Any:
    return make_llm("anthropic", emu.base_url,
                    thinking_dict={"type": "enabled", "budget_tokens": 2000})


def test_check_raises_locally_instead_of_the_vendors_400(emu: VendorEmulator) -> None:
    """A tool_use of the current loop that lost its thinking block: only the model could
    rebuild it. ``"check"`` raises before anything is sent, naming the message and the call;
    ``"repair"`` sends it, and the vendor answers with its 400."""
    llm = ToolstreamLLM(thinking_llm(emu))  # history="check", the default
    assert llm.history == "check"
    with pytest.raises(HistoryError) as caught:
        llm.chat(thinking_history(False))
    assert [(p.kind, p.index, p.call_id) for p in caught.value.problems] == [
        ("missing_thinking", 1, "toolu_1")]
    assert "message 1" in str(caught.value) and "toolu_1" in str(caught.value)
    assert "thinking" in str(caught.value) and caught.value.provider == "anthropic"
    assert emu.requests == []  # nothing was sent
    assert llm.chat(thinking_history(True)).message.content  # the intact history goes out
    emu.clear()
    with pytest.raises(Exception, match="Expected `thinking`"):
        ToolstreamLLM(thinking_llm(emu), history="repair").chat(thinking_history(False))
    assert emu.statuses == [400]


def test_check_reads_the_new_user_message_of_a_tool_call(emu: VendorEmulator) -> None:
    """A ``*_chat_with_tools`` call's ``user_msg`` starts a new tool loop: the thinking rule
    no longer looks at the earlier one, so the request goes out."""
    llm = ToolstreamLLM(thinking_llm(emu), history="check")
    response = llm.chat_with_tools(Recorder().tools(), user_msg="and in Rome?",
                                   chat_history=thinking_history(False))
    assert response.message.content and len(emu.requests) == 1


async def test_the_agent_checks_by_default(emu: VendorEmulator) -> None:
    """``ToolstreamFunctionAgent`` defaults to ``"check"`` (as ``ToolstreamMiddleware``);
    ``history="repair"`` lets the same history go out (to the vendor's 400)."""
    agent = ToolstreamFunctionAgent(tools=Recorder().tools(), llm=thinking_llm(emu))
    with pytest.raises(HistoryError, match="thinking") as caught:
        await agent.run(chat_history=thinking_history(False))
    assert [p.kind for p in caught.value.problems] == ["missing_thinking"]
    assert emu.requests == []
    agent = ToolstreamFunctionAgent(tools=Recorder().tools(), llm=thinking_llm(emu),
                                    history="repair")
    with pytest.raises(Exception, match="Expected `thinking`"):
        await agent.run(chat_history=thinking_history(False))
    assert emu.statuses == [400]


def gemini_history() -> list[ChatMessage]:
    call = ToolCallBlock(tool_call_id="c1", tool_name="get_weather", tool_kwargs={"city": "Paris"})
    later = ToolCallBlock(tool_call_id="c2", tool_name="get_weather", tool_kwargs={"city": "Rome"})
    return [ChatMessage(role="user", content="go"),
            ChatMessage(role="assistant", blocks=[call],
                        additional_kwargs={"thought_signatures": [b"sig"]}),
            ChatMessage(role="tool", content="sunny",
                        additional_kwargs={"tool_call_id": "c1", "name": "get_weather"}),
            ChatMessage(role="assistant", blocks=[later], additional_kwargs={}),
            ChatMessage(role="tool", content="rainy",
                        additional_kwargs={"tool_call_id": "c2", "name": "get_weather"})]


def test_check_raises_for_a_lost_gemini_signature(emu: VendorEmulator) -> None:
    """``GoogleGenAI`` sends no bypass value for a lost ``thoughtSignature`` (LangChain's
    class does), so under LlamaIndex ``"check"`` raises for it."""
    llm = ToolstreamLLM(make_llm("gemini", emu.base_url), history="check")
    with pytest.raises(HistoryError, match="thoughtSignature") as caught:
        llm.chat(gemini_history())
    assert [(p.kind, p.index) for p in caught.value.problems] == [("missing_thought_signature", 3)]
    assert emu.requests == []


def test_check_lets_a_responses_call_go_without_its_reasoning(emu: VendorEmulator) -> None:
    """``OpenAIResponses`` sends a function call by ``call_id`` alone and, with
    ``store=False`` (its default), no reasoning item at all, which the API accepts:
    ``"check"`` does not stop that request, though ``check_history`` lists it."""
    reasoning: list[Any] = [ThinkingBlock(content="hm", additional_information={"id": "rs_1"})]
    history = gemini_history()
    history[1] = ChatMessage(role="assistant", blocks=[*reasoning, *history[1].blocks])
    history[3] = ChatMessage(role="assistant", blocks=list(history[3].blocks))
    llm = ToolstreamLLM(make_llm("openai-responses", emu.base_url), history="check")
    assert [p.kind for p in check_history(history, "openai-responses", stored=False)] == [
        "missing_reasoning"]
    assert llm.chat(history).message.content and len(emu.requests) == 1
