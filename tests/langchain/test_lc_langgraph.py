"""A hand-built LangGraph graph with ``ToolNode``: the wrapper as a drop-in chat model."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from lc_util import (
    APIS,
    Recorder,
    assert_history_paired,
    make_model,
    recording_tools,
    stream_by_mode,
    tool_messages,
)
from toolstream_core.testing import VendorEmulator

from langchain_toolstream import error_tool_messages, with_toolstream


def gated_graph(model: Any, tools: list[Any]) -> Any:
    """The documented pattern: pair rejected calls in the model node; route on the AIMessage."""
    bound = with_toolstream(model).bind_tools(tools)

    def agent(state: MessagesState) -> dict[str, Any]:
        ai = bound.invoke(state["messages"])
        return {"messages": [ai, *error_tool_messages(ai)]}

    def route(state: MessagesState) -> str:
        ai = next(m for m in reversed(state["messages"]) if isinstance(m, AIMessage))
        if ai.tool_calls:
            return "tools"
        retries = sum(1 for m in state["messages"] if isinstance(m, AIMessage))
        return "agent" if ai.invalid_tool_calls and retries < 3 else END

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", route, ["tools", "agent", END])
    graph.add_edge("tools", "agent")
    return graph.compile()


def plain_graph(model: Any, tools: list[Any]) -> Any:
    bound = model.bind_tools(tools)

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    return graph.compile()


def stream_graph(graph: Any) -> tuple[list[str], list[Any]]:
    """``stream_mode="messages"`` text pieces, and the final messages."""
    items, final = stream_by_mode(graph, ["messages"])
    texts = [chunk.text for chunk, _meta in items["messages"]
             if isinstance(chunk, AIMessageChunk) and chunk.text]
    return texts, final


@pytest.mark.parametrize("api", APIS)
def test_truncated_call_in_a_toolnode_graph(api: str, emu: VendorEmulator) -> None:
    # Plain LangChain in the same graph: ToolNode runs write_file(path="/tmp/a") on OpenAI
    # chat, Responses and Anthropic (the repaired call validates).
    emu.queue(api, "truncated_length")
    plain = Recorder()
    stream_graph(plain_graph(make_model(api, emu), recording_tools(plain)))
    assert plain.calls == ([] if api == "gemini" else
                           [("write_file", {"path": "/tmp/a", "content": ""})])

    emu.clear()
    emu.queue(api, "truncated_length")
    recorder = Recorder()
    texts, messages = stream_graph(gated_graph(make_model(api, emu), recording_tools(recorder)))
    assert recorder.calls == []
    assert [m.status for m in tool_messages(messages)] == ["error"]
    assert_history_paired(messages)
    assert len(emu.requests) == 2  # the retry request was legal
    assert len(texts) > 1 and "".join(texts) == messages[-1].text  # text streamed in pieces


@pytest.mark.parametrize("api", APIS)
def test_parallel_calls_run_in_a_toolnode_graph(api: str, emu: VendorEmulator) -> None:
    emu.queue(api, "parallel_calls")
    recorder = Recorder()
    _texts, messages = stream_graph(gated_graph(make_model(api, emu), recording_tools(recorder)))
    assert sorted(recorder.calls, key=repr) == [("get_weather", {"city": "Paris"}),
                                                ("get_weather", {"city": "Tokyo"})]
    assert [m.status for m in tool_messages(messages)] == ["success", "success"]
    assert_history_paired(messages)
