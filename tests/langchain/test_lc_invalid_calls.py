"""Issue 36: a call the model malformed is LangChain's invalid tool call, with the gate or not.

LangChain 1.5's ``create_agent`` holds a call whose arguments did not parse as an invalid tool
call: it never runs, a turn with nothing else to run ends the loop, and the agent answers the
call itself (``ToolMessage``, "malformed or truncated") before its next model request. With
the gate added that stays so for a call the model malformed in a turn the vendor finished
(``RecordView.malformed``): the gate refuses it (LangChain's streaming aggregation would have
repaired ``{"city": "Paris"`` into a runnable call) and leaves it to LangChain's own answer.
A call the vendor did not finish is the gate's: answered in its words in the same turn, and
the model asked again (``test_lc_agent``, ``test_lc_retries``).

Over the emulator: the partner class's real requests, read back from their bodies.
"""

from __future__ import annotations

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from lc_util import chat_body, make_model
from toolstream_core.testing import VendorEmulator

from langchain_toolstream import ToolstreamMiddleware

MALFORMED = '{"city": "Paris"'


def test_a_malformed_call_is_langchains_invalid_call(emu: VendorEmulator) -> None:
    ran: list[str] = []

    @tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        ran.append(city)
        return f"sunny in {city}"

    emu.queue_body("openai-chat", chat_body(call=("call_bad", "get_weather", MALFORMED),
                                            finish="tool_calls"))
    agent = create_agent(make_model("openai-chat", emu), tools=[get_weather],
                         middleware=[ToolstreamMiddleware()], checkpointer=InMemorySaver())
    thread = {"configurable": {"thread_id": "malformed"}}
    first = agent.invoke({"messages": [HumanMessage("Weather in Paris?")]}, thread)

    # the stock agent's end: one request, the call invalid and not yet answered, nothing ran
    assert len(emu.requests) == 1 and ran == []
    last = first["messages"][-1]
    assert isinstance(last, AIMessage) and not last.tool_calls
    assert [(c["id"], c["error"]) for c in last.invalid_tool_calls] == [("call_bad", "invalid_json")]
    assert not any(isinstance(m, ToolMessage) for m in first["messages"])

    # the next request answers it once, in LangChain's words, and the vendor accepts it
    emu.queue("openai-chat", "text")
    agent.invoke({"messages": [HumanMessage("Try again")]}, thread)
    assert emu.statuses == [200, 200] and ran == []
    sent = [m for m in emu.requests[-1].body["messages"] if m.get("role") == "tool"]
    assert [m["tool_call_id"] for m in sent] == ["call_bad"]
    assert "malformed or truncated" in str(sent[0]["content"])
