"""Anthropic ``pause_turn``: the gated agent sends a paused turn back until it ends.

A long server-tool turn (web search) can stop with ``stop_reason: "pause_turn"``; the client
must send the assistant message back, as the last message, for the vendor to continue it.
"""

from __future__ import annotations

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from lc_util import Recorder, assert_history_paired, make_model, recording_tools
from toolstream_core.testing import VendorEmulator

from langchain_toolstream import ToolstreamMiddleware
from langchain_toolstream._messages import MESSAGES


def test_a_paused_turn_is_continued(emu: VendorEmulator) -> None:
    """Two pauses, then a call, then the answer. Plain create_agent ends at the first pause as
    if the model had finished; the gated agent continues the turn and runs its call."""
    plain = Recorder()
    emu.queue("anthropic", "pause_turn")
    result = create_agent(make_model("anthropic", emu), tools=recording_tools(plain)).invoke(
        {"messages": [HumanMessage("go")]})
    assert len(emu.requests) == 1 and plain.calls == []
    assert result["messages"][-1].response_metadata["stop_reason"] == "pause_turn"

    emu.clear()
    recorder = Recorder()
    emu.queue("anthropic", "pause_turn", "pause_turn", "single_call", "text")
    agent = create_agent(make_model("anthropic", emu), tools=recording_tools(recorder),
                         middleware=[ToolstreamMiddleware()])
    messages = agent.invoke({"messages": [HumanMessage("go")]})["messages"]
    assert len(emu.requests) == 4 and recorder.names == ["write_file"]
    assert messages[-1].text.startswith("All done")
    continued = emu.requests[1].body["messages"]
    assert continued[-1]["role"] == "assistant"  # the paused turn went back, to be continued
    assert [b["type"] for b in continued[-1]["content"]] == ["text", "server_tool_use"]
    assert_history_paired(messages)


def test_a_client_call_in_a_paused_turn_is_held() -> None:
    """Decided: a client call inside a paused message is neither run nor answered; it leaves
    the message that goes back (the vendor makes it again when the turn has ended)."""
    content = [{"type": "text", "text": "searching"},
               {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
                "input": {"query": "q"}},
               {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                "input": {"city": "Paris"}}]
    message = AIMessage(content=content, tool_calls=[
        {"name": "get_weather", "args": {"city": "Paris"}, "id": "toolu_1", "type": "tool_call"}],
        response_metadata={"stop_reason": "pause_turn"})
    held = MESSAGES.continued(message)
    assert held.tool_calls == [] and held.invalid_tool_calls == []
    assert [b["type"] for b in held.content if isinstance(b, dict)] == ["text", "server_tool_use"]
    assert message.tool_calls  # the original is not modified


def test_a_turn_paused_past_the_cap_ends_as_it_is(emu: VendorEmulator) -> None:
    """The run policy's cap, the same in both agents (``MAX_PAUSED_CONTINUATIONS``): after ten
    continuations in a row the turn ends with what the vendor said, without client calls, and
    the run ends there as after an answer (before the cap, LangChain ran on into LangGraph's
    recursion limit and raised)."""
    recorder = Recorder()
    emu.queue("anthropic", *["pause_turn"] * 12)
    agent = create_agent(make_model("anthropic", emu), tools=recording_tools(recorder),
                         middleware=[ToolstreamMiddleware()])
    messages = agent.invoke({"messages": [HumanMessage("go")]})["messages"]
    assert len(emu.requests) == 11  # the first turn and ten continuations
    assert recorder.names == []
    last = messages[-1]
    assert isinstance(last, AIMessage) and last.tool_calls == []
    assert last.response_metadata["stop_reason"] == "pause_turn"
    assert_history_paired(messages)
