"""Issue 14 for LangChain: traces under OpenInference's spans, LangGraph's custom stream, AG-UI.

Real above the HTTP line: the vendor SDKs talk to the emulator, LangChain's integration classes
drive them, ``create_agent`` / LangGraph run the loop; OpenInference's real instrumentation
makes the framework's spans; the SDK's in-memory exporter shows them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from agui_util import replay
from docs_examples import run_example
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langgraph.graph import START, MessagesState, StateGraph
from lc_util import APIS, Recorder, make_model, recording_tools, stream_by_mode, tool_messages
from otel_util import InMemorySpanExporter, call_events, openinference, span_exporter, turn_spans
from toolstream_core import AssembleConfig
from toolstream_core.agui import AGUIToolCallEvents
from toolstream_core.testing import VendorEmulator

from langchain_toolstream import ToolstreamCallbackHandler, ToolstreamMiddleware, with_toolstream
from langchain_toolstream._observability import graph_progress

TEXT_APIS = ("openai-chat", "openai-responses", "anthropic")  # deltas are argument text


def gated_agent(api: str, emu: VendorEmulator, recorder: Recorder) -> Any:
    return create_agent(make_model(api, emu), tools=recording_tools(recorder),
                        middleware=[ToolstreamMiddleware()])


def custom_items(agent: Any) -> tuple[list[dict[str, Any]], list[Any]]:
    """``stream_mode=["messages", "custom"]`` as a UI runs it: the custom items, the messages."""
    items, final = stream_by_mode(agent, ["messages", "custom"])
    return items["custom"], final


# -- LangGraph's custom stream ------------------------------------------------------------------


@pytest.mark.parametrize("api", APIS)
def test_custom_stream_shows_a_cut_call_growing_then_rejected(api: str, emu: VendorEmulator) -> None:
    emu.queue(api, "truncated_length")
    recorder = Recorder()
    items, messages = custom_items(gated_agent(api, emu, recorder))
    assert recorder.calls == []
    assert json.loads(json.dumps(items)) == items  # plain JSON, as documented
    first_turn = items[:next(i for i, item in enumerate(items) if item["type"] == "toolstream.call_rejected") + 1]
    kinds = [item["type"] for item in first_turn]
    assert kinds[0] == "toolstream.call_opened" and kinds[-1] == "toolstream.call_rejected"
    assert set(kinds[1:-1]) == {"toolstream.arguments_delta"}
    sizes = [item["total_bytes"] for item in first_turn[1:-1]]
    assert sizes == sorted(sizes) and sizes[-1] > 0  # the arguments grew
    rejected = first_turn[-1]
    [answer] = tool_messages(messages)
    assert rejected["id"] == answer.tool_call_id and rejected["name"] == "write_file"
    assert (rejected["reason"], rejected["state"]) == ("stream_truncated", "failed")
    assert rejected["content"] == answer.content  # what the model was told
    # Gemini sends no ids: the core's synthesized id arrives with the verdict.
    assert {item["id"] for item in first_turn} == ({None, answer.tool_call_id} if api == "gemini"
                                                   else {answer.tool_call_id})
    if api in TEXT_APIS:
        assert "".join(item["fragment"] for item in first_turn[1:-1]) == '{"path":"/tmp/a'


@pytest.mark.parametrize("api", APIS)
def test_custom_stream_shows_the_committed_arguments(api: str, emu: VendorEmulator) -> None:
    emu.queue(api, "single_call")
    recorder = Recorder()
    items, _messages = custom_items(gated_agent(api, emu, recorder))
    [(name, ran_with)] = recorder.calls
    [committed] = [item for item in items if item["type"] == "toolstream.call_committed"]
    assert committed["name"] == name == "write_file"
    assert committed["arguments"] == {k: v for k, v in ran_with.items() if k in committed["arguments"]}
    assert committed["arguments"]["path"] == ran_with["path"]
    if api in TEXT_APIS:
        fragments = [i["fragment"] for i in items if i["type"] == "toolstream.arguments_delta"]
        assert json.loads("".join(fragments)) == committed["arguments"]


def test_custom_stream_from_a_hand_built_graph(emu: VendorEmulator) -> None:
    emu.queue("anthropic", "truncated_length")
    bound = with_toolstream(make_model("anthropic", emu)).bind_tools(recording_tools(Recorder()))

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_edge(START, "agent")
    items = list(graph.compile().stream({"messages": [HumanMessage("go")]}, stream_mode="custom"))
    assert [i["type"] for i in items][::len(items) - 1] == ["toolstream.call_opened", "toolstream.call_rejected"]
    assert items[-1]["reason"] == "stream_truncated"


def test_private_arguments_stay_out_of_the_custom_stream(emu: VendorEmulator) -> None:
    emu.queue("openai-chat", "truncated_length")
    agent = create_agent(make_model("openai-chat", emu), tools=recording_tools(Recorder()),
                         middleware=[ToolstreamMiddleware(config={"ui_forward_partial_args": False})])
    items, _ = custom_items(agent)
    deltas = [i for i in items if i["type"] == "toolstream.arguments_delta"]
    assert deltas and all(d["fragment"] is None and d["total_bytes"] > 0 for d in deltas)


def test_outside_a_graph_nothing_is_written_and_nothing_fails(emu: VendorEmulator) -> None:
    emu.queue("openai-chat", "single_call")
    assert graph_progress(AssembleConfig()) is None
    assert RunnableLambda(lambda _: graph_progress(AssembleConfig())).invoke(None) is None  # LCEL
    message = with_toolstream(make_model("openai-chat", emu)).bind_tools(
        recording_tools(Recorder())).invoke("go")
    assert [c["name"] for c in message.tool_calls] == ["write_file"]


# -- traces ---------------------------------------------------------------------------------------


@pytest.fixture
def instrumented() -> Iterator[InMemorySpanExporter]:
    """OpenInference's LangChain instrumentation, for this test only (a test extra: only the tests
    that nest under its spans need it)."""
    with openinference("openinference.instrumentation.langchain", "LangChainInstrumentor") as exporter:
        yield exporter


def _llm_parent(span: Any, exporter: InMemorySpanExporter) -> Any:
    by_id = {s.context.span_id: s for s in exporter.get_finished_spans()}
    return by_id[span.parent.span_id]


@pytest.mark.parametrize("api", APIS)
def test_rejected_call_is_an_event_on_a_span_under_the_llm_span(api: str, emu: VendorEmulator,
                                                                instrumented: InMemorySpanExporter) -> None:
    emu.queue(api, "truncated_length")
    result = gated_agent(api, emu, Recorder()).invoke({"messages": [HumanMessage("go")]})
    [answer] = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    first, second = turn_spans(instrumented)  # the cut turn, then the retry's text answer
    [event] = call_events(first)
    assert event["gen_ai.tool.call.id"] == answer.tool_call_id
    assert event["gen_ai.tool.name"] == "write_file"
    assert event["error.type"] == "stream_truncated"
    assert call_events(second) == []
    for turn in (first, second):
        parent = _llm_parent(turn, instrumented)
        assert parent.attributes["openinference.span.kind"] == "LLM"  # the chat model's own span
        assert turn.context.trace_id == parent.context.trace_id


async def test_async_agent_nests_committed_calls_too(emu: VendorEmulator,
                                                     instrumented: InMemorySpanExporter) -> None:
    emu.queue("anthropic", "parallel_calls")
    recorder = Recorder()
    await gated_agent("anthropic", emu, recorder).ainvoke({"messages": [HumanMessage("go")]})
    assert len(recorder.calls) == 2
    first = turn_spans(instrumented)[0]
    events = call_events(first)
    assert [e["toolstream.tool_call.state"] for e in events] == ["committed", "committed"]
    assert not any("error.type" in e for e in events)
    assert _llm_parent(first, instrumented).attributes["openinference.span.kind"] == "LLM"


# -- AG-UI ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("api", APIS)
def test_agui_from_the_callback_handler(api: str, emu: VendorEmulator) -> None:
    emu.queue(api, "truncated_length")
    emu.queue(api, "parallel_calls")
    adapter = AGUIToolCallEvents()
    recorder = Recorder()
    result = gated_agent(api, emu, recorder).invoke(
        {"messages": [HumanMessage("go")]}, {"callbacks": [ToolstreamCallbackHandler(on_event=adapter)]})
    views = replay(adapter.events)
    answers = {m.tool_call_id: m for m in result["messages"] if isinstance(m, ToolMessage)}
    rejected = [v for v in views.values() if v.rejection is not None]
    committed = [v for v in views.values() if v.rejection is None]
    [cut] = rejected
    assert cut.rejection is not None and cut.rejection["reason"] == "stream_truncated"
    assert cut.result == answers[cut.id].content
    assert sorted(json.loads(v.args)["city"] for v in committed) == ["Paris", "Tokyo"]
    assert {v.id for v in committed} <= set(answers)
    assert len(recorder.calls) == 2


# -- the documented examples ----------------------------------------------------------------------


def test_docs_examples_run() -> None:
    assert run_example("langchain-trace") == ["LLM ToolstreamChatModel stream_truncated"]
    lines = run_example("langgraph-custom")
    assert lines[0] == "toolstream.call_opened write_file "
    assert lines[-1] == "toolstream.call_rejected write_file stream_truncated"
    assert all(line.startswith("args so far:") for line in lines[1:-1]) and len(lines) > 3
    [kinds] = run_example("langchain-agui")
    assert kinds.split()[0] == "TOOL_CALL_START"
    assert kinds.split()[-3:] == ["TOOL_CALL_END", "CUSTOM", "TOOL_CALL_RESULT"]


def test_the_handlers_view_of_an_ungated_model_is_not_traced(emu: VendorEmulator) -> None:
    # The handler mirrors a plain model's stream for display; it decides nothing, so no span.
    exporter = span_exporter()
    emu.queue("openai-chat", "truncated_length")
    seen: list[Any] = []
    handler = ToolstreamCallbackHandler(on_event=seen.append)
    plain = make_model("openai-chat", emu).bind_tools(recording_tools(Recorder()))
    for _chunk in plain.stream("go", {"callbacks": [handler]}):
        pass
    assert [type(e).__name__ for e in seen][-1] == "CallRejected"  # it did observe the call
    assert turn_spans(exporter) == []
