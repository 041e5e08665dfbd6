"""The outgoing history is legal before it leaves, whatever left a call unanswered.

Real chat-model classes and real SDKs against the emulator, which answers an unpaired history
with the vendor's own 400: a request that gets an answer is a request the vendor accepts.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.types import Command
from lc_util import Recorder, assert_history_paired, make_model, recording_tools
from toolstream_core.testing import Received, VendorEmulator

from langchain_toolstream import (
    HistoryError,
    ToolstreamMiddleware,
    check_history,
    pair_orphan_calls,
    with_toolstream,
)

sqlite = pytest.importorskip("langgraph.checkpoint.sqlite")


def two_calls_one_answer() -> list[BaseMessage]:
    calls = [{"name": "get_weather", "args": {"city": c}, "id": f"call_{c}", "type": "tool_call"}
             for c in ("Paris", "Rome")]
    return [HumanMessage("weather?"), AIMessage(content="", tool_calls=calls),
            ToolMessage("sunny", tool_call_id="call_Paris")]


def answered_ids(received: Received) -> list[str]:
    """The call ids the request's tool results answer, in the order they were sent."""
    body = received.body
    if received.api == "openai-chat":
        return [m["tool_call_id"] for m in body["messages"] if m.get("role") == "tool"]
    if received.api == "openai-responses":
        return [i["call_id"] for i in body["input"] if i.get("type") == "function_call_output"]
    if received.api == "anthropic":
        return [b["tool_use_id"] for m in body["messages"] if isinstance(m["content"], list)
                for b in m["content"] if b.get("type") == "tool_result"]
    return [p["functionResponse"]["name"] + ":" + str(p["functionResponse"]["response"])
            for c in body["contents"] for p in c.get("parts", []) if "functionResponse" in p]


def test_an_unanswered_id_is_answered_before_the_request_leaves(api: str,
                                                                emu: VendorEmulator) -> None:
    """The probe: two calls, one result. Plain LangChain sends the second id unanswered."""
    history = two_calls_one_answer()
    with pytest.raises(Exception, match=r"(?i)tool|function"):
        make_model(api, emu).invoke(history)  # the vendor's 400
    emu.clear()
    answer = with_toolstream(make_model(api, emu)).invoke(history)
    assert answer.text  # accepted: the emulator answered
    assert len(emu.requests) == 1
    if api != "gemini":  # Gemini has no ids: its results pair by position
        assert answered_ids(emu.requests[0]) == ["call_Paris", "call_Rome"]
    assert len(history) == 3  # the caller's list is not modified


def test_history_off_sends_the_history_as_given(api: str, emu: VendorEmulator) -> None:
    with pytest.raises(Exception, match=r"(?i)tool|function"):
        with_toolstream(make_model(api, emu), history="off").invoke(two_calls_one_answer())


def test_results_follow_the_calls_order_and_duplicates_are_dropped(api: str,
                                                                   emu: VendorEmulator) -> None:
    calls = [{"name": "get_weather", "args": {"city": c}, "id": f"call_{c}", "type": "tool_call"}
             for c in ("Paris", "Rome")]
    history: list[BaseMessage] = [
        HumanMessage("weather?"), AIMessage(content="", tool_calls=calls),
        ToolMessage("denied", tool_call_id="call_Rome", status="error"),
        ToolMessage("sunny", tool_call_id="call_Paris"),
        ToolMessage("sunny again", tool_call_id="call_Paris"),
    ]
    with_toolstream(make_model(api, emu)).invoke(history)
    sent = answered_ids(emu.requests[0])
    if api == "gemini":
        assert len(sent) == 2 and "sunny" in sent[0] and "denied" in sent[1]
    else:
        assert sent == ["call_Paris", "call_Rome"]


def test_pair_orphan_calls_gives_one_result_per_id() -> None:
    paired = pair_orphan_calls(two_calls_one_answer())
    assert [m.tool_call_id for m in paired if isinstance(m, ToolMessage)] == [
        "call_Paris", "call_Rome"]
    assert_history_paired(paired)
    assert check_history(paired, "openai-chat") == []


# -- the causes: a tool that raises, a denial, an interrupt, a resume ----------------------------


def checkpointer(path: Path) -> Any:
    import sqlite3

    return sqlite.SqliteSaver(sqlite3.connect(path, check_same_thread=False))


def test_a_tool_that_raised_is_answered_on_the_next_turn(api: str, emu: VendorEmulator,
                                                         tmp_path: Path) -> None:
    @tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        raise RuntimeError("weather service down")

    emu.queue(api, "parallel_calls")
    config: Any = {"configurable": {"thread_id": "t"}}
    agent = create_agent(make_model(api, emu), tools=[get_weather],
                         middleware=[ToolstreamMiddleware()], checkpointer=checkpointer(
                             tmp_path / "db.sqlite"))
    with pytest.raises(RuntimeError, match="weather service down"):
        agent.invoke({"messages": [HumanMessage("weather?")]}, config)
    emu.clear()
    result = agent.invoke({"messages": [HumanMessage("and now?")]}, config)
    assert len(emu.requests) == 1 and result["messages"][-1].text  # accepted
    assert len(answered_ids(emu.requests[0])) == 2


def test_a_denied_call_keeps_the_calls_order(api: str, emu: VendorEmulator,
                                             tmp_path: Path) -> None:
    """HumanInTheLoopMiddleware answers a denied call before the approved one runs."""
    recorder = Recorder()
    emu.queue(api, "parallel_calls", "text")
    config: Any = {"configurable": {"thread_id": "t"}}
    agent = create_agent(
        make_model(api, emu), tools=recording_tools(recorder),
        middleware=[ToolstreamMiddleware(),
                    HumanInTheLoopMiddleware(interrupt_on={"get_weather": True})],
        checkpointer=checkpointer(tmp_path / "db.sqlite"))
    agent.invoke({"messages": [HumanMessage("weather?")]}, config)
    decisions = [{"type": "approve"}, {"type": "reject", "message": "not Tokyo"}]
    result = agent.invoke(Command(resume={"decisions": decisions}), config)
    assert recorder.calls == [("get_weather", {"city": "Paris"})]
    assert result["messages"][-1].text and len(emu.requests) == 2
    calls = [c["id"] for c in result["messages"][1].tool_calls]
    sent = answered_ids(emu.requests[1])
    if api == "gemini":
        assert "sunny" in sent[0] and "not Tokyo" in sent[1]
    else:
        assert sent == calls


def test_an_abandoned_interrupt_is_answered_after_a_resume_from_sqlite(
        api: str, emu: VendorEmulator, tmp_path: Path) -> None:
    """The run stops at an approval, the process goes away, a new one loads the thread from
    SQLite and the user writes instead of deciding: the pending calls are answered."""
    recorder = Recorder()
    db = tmp_path / "db.sqlite"
    config: Any = {"configurable": {"thread_id": "t"}}

    def agent() -> Any:
        return create_agent(
            make_model(api, emu), tools=recording_tools(recorder),
            middleware=[ToolstreamMiddleware(),
                        HumanInTheLoopMiddleware(interrupt_on={"get_weather": True})],
            checkpointer=checkpointer(db))

    emu.queue(api, "parallel_calls")
    first = agent().invoke({"messages": [HumanMessage("weather?")]}, config)
    assert first.get("__interrupt__")
    emu.clear()
    emu.queue(api, "text")
    result = agent().invoke({"messages": [HumanMessage("never mind; what time is it?")]},
                            config)
    assert recorder.calls == [] and result["messages"][-1].text
    assert len(emu.requests) == 1 and len(answered_ids(emu.requests[0])) == 2


# -- check_history and the local error -------------------------------------------------------


def thinking_history(keep_thinking: bool) -> list[BaseMessage]:
    blocks: list[Any] = [{"type": "thinking", "thinking": "hmm", "signature": "sig"}]
    call = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
    content = [*blocks, call] if keep_thinking else [call]
    return [HumanMessage("weather?"),
            AIMessage(content=content, tool_calls=[{"name": "get_weather", "id": "toolu_1",
                                                   "args": {"city": "Paris"},
                                                   "type": "tool_call"}]),
            ToolMessage("sunny", tool_call_id="toolu_1")]


def test_check_history_finds_a_lost_thinking_block() -> None:
    assert check_history(thinking_history(True), "anthropic") == []
    problems = check_history(thinking_history(False), "anthropic", reasoning=True)
    assert [(p.kind, p.call_id, p.repairable) for p in problems] == [
        ("missing_thinking", "toolu_1", False)]
    assert check_history(thinking_history(False), "anthropic") == []  # thinking off


def test_the_middleware_raises_locally_instead_of_the_vendors_400(emu: VendorEmulator) -> None:
    model = make_model("anthropic", emu, max_tokens=4000,
                       thinking={"type": "enabled", "budget_tokens": 2000})
    agent = create_agent(model, tools=recording_tools(Recorder()),
                         middleware=[ToolstreamMiddleware()])
    with pytest.raises(HistoryError, match="thinking") as caught:
        agent.invoke({"messages": thinking_history(False)})
    assert [p.kind for p in caught.value.problems] == ["missing_thinking"]
    assert emu.requests == []  # nothing was sent


# -- results follow the calls' order (Gemini pairs by position) ----------------------------------

TOKYO_ONLY = {"get_weather": {"type": "object", "required": ["city"],
                              "properties": {"city": {"type": "string", "enum": ["Tokyo"]}}}}


def test_a_rejected_first_call_is_answered_in_the_calls_order(api: str,
                                                               emu: VendorEmulator) -> None:
    """Two parallel calls to one tool, the first rejected by the schema: the gate answers it
    in the model turn, the second call's tool runs after, and the next request still puts
    the first call's result first. Gemini (no ids here) pairs results by position."""
    recorder = Recorder()
    emu.queue(api, "parallel_no_ids" if api == "gemini" else "parallel_calls", "text")
    agent = create_agent(make_model(api, emu), tools=recording_tools(recorder),
                         middleware=[ToolstreamMiddleware(tools=TOKYO_ONLY)])
    result = agent.invoke({"messages": [HumanMessage("weather?")]})
    assert recorder.calls == [("get_weather", {"city": "Tokyo"})]
    assert len(emu.requests) == 2 and result["messages"][-1].text
    sent = answered_ids(emu.requests[1])
    if api == "gemini":
        assert "schema" in sent[0] and "sunny in Tokyo" in sent[1]
        assert "(id " not in sent[0]  # the model never saw an id: none is quoted
    else:
        record = result["messages"][1].response_metadata["toolstream"]
        assert sent == record["order"] and len(sent) == 2


def test_check_history_reads_responses_reasoning_and_gemini_signatures() -> None:
    call = {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1", "type": "tool_call"}
    answer = ToolMessage("sunny", tool_call_id="call_1")
    with_reasoning = AIMessage(content=[{"type": "reasoning", "id": "rs_1", "summary": []}],
                               tool_calls=[call])
    without = AIMessage(content="", tool_calls=[call])
    history = [HumanMessage("go"), with_reasoning, answer, without, answer]
    assert check_history(history, "openai-responses") == []  # stored: the vendor has it
    problems = check_history(history, "openai-responses", stored=False)
    assert [(p.kind, p.index) for p in problems] == [("missing_reasoning", 3)]
    signed = AIMessage(content="", tool_calls=[call], additional_kwargs={
        "__gemini_function_call_thought_signatures__": {"call_1": "c2ln"}})
    problems = check_history([HumanMessage("go"), signed, answer, without, answer], "gemini")
    assert [(p.kind, p.index) for p in problems] == [("missing_thought_signature", 3)]


def test_the_middleware_lets_langchain_patch_a_lost_gemini_signature(emu: VendorEmulator) -> None:
    """ChatGoogleGenerativeAI sends Google's documented bypass for a call that lost its
    signature, which the API accepts: the middleware does not stop that request."""
    call = {"name": "get_weather", "args": {"city": "Paris"}, "id": "call_1", "type": "tool_call"}
    signed = AIMessage(content="", tool_calls=[call], additional_kwargs={
        "__gemini_function_call_thought_signatures__": {"call_1": "c2ln"}})
    lost = AIMessage(content="", tool_calls=[{**call, "id": "call_2"}])
    history = [HumanMessage("go"), signed, ToolMessage("sunny", tool_call_id="call_1"),
               lost, ToolMessage("sunny", tool_call_id="call_2")]
    agent = create_agent(make_model("gemini", emu), tools=recording_tools(Recorder()),
                         middleware=[ToolstreamMiddleware()])
    result = agent.invoke({"messages": history})
    assert len(emu.requests) == 1 and result["messages"][-1].text
