"""``ToolstreamMiddleware`` inside a real ``langchain.agents.create_agent`` loop.

The agents run real tools (they record what they are asked to do) against real vendor SDKs
talking to the emulator. Plain-LangChain runs use ``stream_mode="messages"``, the way an agent
behind a UI runs: the model streams, and LangChain assembles the tool calls from the chunks.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from lc_util import (
    APIS,
    Recorder,
    ai_messages,
    assert_history_paired,
    make_model,
    recording_tools,
    tool_messages,
)
from otel_util import metric_points, metric_reader
from toolstream_core import ArgumentsDelta
from toolstream_core.testing import VendorEmulator
from toolstream_core.testing._scenarios import build_script, scenario_rng

from langchain_toolstream import ToolstreamCallbackHandler, ToolstreamMiddleware


def expected(api: str, scenario: str) -> list[tuple[str, dict[str, Any]]]:
    script = build_script(scenario, scenario_rng(0, api, scenario))
    calls = []
    for c in script.calls:
        args = dict(c.arguments)
        if c.name == "write_file":
            args.setdefault("content", "")
        calls.append((c.name, args))
    return calls


def run_streaming(agent: Any, text: str = "do it", **config: Any) -> list[Any]:
    """Run ``agent`` the way a UI does; return the final message list."""
    final: list[Any] = []
    for mode, data in agent.stream({"messages": [HumanMessage(text)]}, config or None,
                                   stream_mode=["messages", "values"]):
        if mode == "values":
            final = data["messages"]
    return final


def gated_agent(api: str, emu: VendorEmulator, recorder: Recorder, **kw: Any) -> Any:
    return create_agent(make_model(api, emu), tools=recording_tools(recorder),
                        middleware=[ToolstreamMiddleware(**kw)])


def plain_agent(api: str, emu: VendorEmulator, recorder: Recorder) -> Any:
    return create_agent(make_model(api, emu), tools=recording_tools(recorder))


def sorted_calls(calls: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, str]]:
    return sorted((name, repr(sorted(args.items()))) for name, args in calls)


# -- happy paths -------------------------------------------------------------------------------


@pytest.mark.parametrize("scenario", ["single_call", "parallel_calls", "no_args"])
def test_committed_calls_run_with_exact_arguments(
    api: str, scenario: str, emu: VendorEmulator, recorder: Recorder
) -> None:
    # Plain LangChain runs the same calls here: the happy path must not change.
    emu.queue(api, scenario)  # then the emulator's default: a text answer, the loop ends
    messages = gated_agent(api, emu, recorder).invoke({"messages": [HumanMessage("go")]})[
        "messages"]
    assert sorted_calls(recorder.calls) == sorted_calls(expected(api, scenario))
    assert all(m.status == "success" for m in tool_messages(messages))
    assert_history_paired(messages)
    assert isinstance(messages[-1], AIMessage) and messages[-1].text
    assert len(emu.requests) == 2


def test_missing_index_runs_both_calls(emu: VendorEmulator, recorder: Recorder) -> None:
    # Plain LangChain: the id-less fragments become tool calls with id None and the agent
    # crashes building their ToolMessage (pydantic: tool_call_id must be a string).
    emu.queue("openai-chat", "missing_index")
    with pytest.raises(Exception, match="tool_call_id"):
        run_streaming(plain_agent("openai-chat", emu, Recorder()))

    emu.clear()
    emu.queue("openai-chat", "missing_index")
    messages = run_streaming(gated_agent("openai-chat", emu, recorder))
    assert sorted_calls(recorder.calls) == sorted_calls(expected("openai-chat", "missing_index"))
    assert_history_paired(messages)


def test_resent_duplicate_runs_once(api: str, emu: VendorEmulator, recorder: Recorder) -> None:
    # Plain LangChain: on OpenAI chat the fused name matches no tool (error, nothing runs);
    # on Responses, Anthropic and Gemini get_weather runs twice for one call id, and on
    # Gemini the doubled function response then makes the next request a 400.
    emu.queue(api, "resent_duplicate")
    plain_recorder = Recorder()
    try:
        run_streaming(plain_agent(api, emu, plain_recorder))
    except Exception as exc:  # the Gemini 400
        assert api == "gemini" and "function response" in str(exc)
    if api == "openai-chat":
        assert plain_recorder.calls == []
    else:
        assert plain_recorder.calls == [("get_weather", {"city": "Paris"})] * 2

    emu.clear()
    emu.queue(api, "resent_duplicate")
    messages = run_streaming(gated_agent(api, emu, recorder))
    assert recorder.calls == [("get_weather", {"city": "Paris"})]
    assert_history_paired(messages)


# -- faults ------------------------------------------------------------------------------------


def test_truncated_call_never_runs_and_is_paired(
    api: str, emu: VendorEmulator, recorder: Recorder
) -> None:
    # Plain LangChain: the cut stream {"path":"/tmp/a becomes write_file(path="/tmp/a") and
    # the tool RUNS (OpenAI chat, Responses, Anthropic); on Gemini partialArgs the invented
    # calls with empty names fail in ToolNode.
    emu.queue(api, "truncated_length")
    plain_recorder = Recorder()
    run_streaming(plain_agent(api, emu, plain_recorder))
    if api == "gemini":
        assert plain_recorder.calls == []
    else:
        assert plain_recorder.calls == [("write_file", {"path": "/tmp/a", "content": ""})]

    emu.clear()
    emu.queue(api, "truncated_length")
    messages = run_streaming(gated_agent(api, emu, recorder))
    assert recorder.calls == []  # the tool never ran
    first, *_ = ai_messages(messages)
    assert first.tool_calls == []
    [bad] = first.invalid_tool_calls
    assert bad["error"] == "stream_truncated"
    # the paired error result comes right after the AIMessage, in the same model turn
    pairing = messages[messages.index(first) + 1]
    assert isinstance(pairing, ToolMessage) and pairing.status == "error"
    assert pairing.tool_call_id == bad["id"] and "stream_truncated" in pairing.content
    # the agent went back to the model, and the vendor accepted that request (no 400)
    assert len(emu.requests) == 2
    assert isinstance(messages[-1], AIMessage) and messages[-1].text
    assert_history_paired(messages)


@pytest.mark.parametrize("scenario", ["dropped_connection", "error_event", "no_finish"])
def test_broken_streams_end_the_turn_paired(
    api: str, scenario: str, emu: VendorEmulator, recorder: Recorder
) -> None:
    # Plain LangChain: dropped_connection and error_event raise out of the agent (the call id
    # is lost with the exception); no_finish runs write_file although the vendor never said
    # the turn was over.
    emu.queue(api, scenario)
    plain_recorder = Recorder()
    try:
        run_streaming(plain_agent(api, emu, plain_recorder))
        plain_raised = False
    except Exception:
        plain_raised = True
    assert plain_raised == (scenario != "no_finish")
    assert plain_recorder.names == (["write_file"] if scenario == "no_finish" else [])

    emu.clear()
    emu.queue(api, scenario)
    messages = run_streaming(gated_agent(api, emu, recorder))
    assert recorder.calls == []
    assert [m.status for m in tool_messages(messages)] == ["error"]
    assert_history_paired(messages)
    assert len(emu.requests) == 2 and messages[-1].text


def test_retries_are_bounded(api: str, emu: VendorEmulator, recorder: Recorder) -> None:
    # (different scenarios per turn: the emulator replays a scenario byte for byte, ids too,
    # and LangGraph's add_messages would merge two AIMessages with the same id)
    emu.queue(api, "truncated_length", "no_finish", "single_call")
    messages = gated_agent(api, emu, recorder, max_retries=1).invoke(
        {"messages": [HumanMessage("go")]})["messages"]
    # turn 1 rejected -> retry once -> turn 2 rejected -> stop (max_retries=1)
    assert len(emu.requests) == 2
    assert recorder.calls == []
    assert [m.status for m in tool_messages(messages)] == ["error", "error"]
    assert_history_paired(messages)


@pytest.mark.asyncio(loop_scope="session")
async def test_async_agent(api: str, emu: VendorEmulator, recorder: Recorder) -> None:
    emu.queue(api, "truncated_length", "parallel_calls")
    agent = gated_agent(api, emu, recorder)
    result = await agent.ainvoke({"messages": [HumanMessage("go")]})
    messages = result["messages"]
    assert sorted_calls(recorder.calls) == sorted_calls(expected(api, "parallel_calls"))
    assert [m.status for m in tool_messages(messages)] == ["error", "success", "success"]
    assert_history_paired(messages)
    assert len(emu.requests) == 3


# -- cancel ------------------------------------------------------------------------------------


@pytest.mark.parametrize("api", APIS)
def test_cancel_mid_stream_runs_nothing_and_pairs_every_id(
    api: str, emu: VendorEmulator, recorder: Recorder
) -> None:
    # Plain LangChain has no way to stop a model call mid-stream and keep the turn: cancelling
    # the task discards the partial AIMessage (and with it every call id the user already saw
    # streaming). Here the handler stops the gated run; the turn ends normally with every
    # call cancelled and paired, the HTTP stream is closed, and the thread stays usable.
    handler: ToolstreamCallbackHandler

    def stop_on_first_fragment(event: Any) -> None:
        if isinstance(event, ArgumentsDelta):
            handler.cancel()  # the user pressed "stop" while the arguments were streaming

    handler = ToolstreamCallbackHandler(stop_on_first_fragment)
    scenario = "parallel_calls"
    emu.queue(api, scenario)
    agent = create_agent(make_model(api, emu), tools=recording_tools(recorder),
                         middleware=[ToolstreamMiddleware()], checkpointer=InMemorySaver())
    config: dict[str, Any] = {"configurable": {"thread_id": "t1"}, "callbacks": [handler]}
    messages = agent.invoke({"messages": [HumanMessage("go")]}, config)["messages"]
    assert recorder.calls == []
    [ai] = ai_messages(messages)
    assert ai.tool_calls == []
    assert ai.invalid_tool_calls and {c["error"] for c in ai.invalid_tool_calls} == {"cancelled"}
    assert_history_paired(messages)
    assert len(emu.requests) == 1  # a cancelled turn ends the loop: no automatic retry
    # The conversation stays usable: the next user turn is accepted by the vendor.
    emu.queue(api, "text")
    more = agent.invoke({"messages": [HumanMessage("never mind")]},
                        {"configurable": {"thread_id": "t1"}})["messages"]
    assert more[-1].text and len(emu.requests) == 2
    assert_history_paired(more)


# -- the guard ---------------------------------------------------------------------------------


class _InjectCall(AgentMiddleware[Any, Any, Any]):
    """A buggy middleware that slips a tool call into the gated AIMessage."""

    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        last = state["messages"][-1]
        if isinstance(last, AIMessage) and last.tool_calls and len(last.tool_calls) == 1:
            forged = {"name": "write_file", "args": {"path": "/etc/passwd"}, "id": "forged-1",
                      "type": "tool_call"}
            return {"messages": [last.model_copy(update={"tool_calls": [*last.tool_calls,
                                                                       forged]})]}
        return None


def test_guard_refuses_calls_the_gate_did_not_commit(emu: VendorEmulator,
                                                     recorder: Recorder) -> None:
    emu.queue("anthropic", "no_args")
    agent = create_agent(make_model("anthropic", emu), tools=recording_tools(recorder),
                         middleware=[ToolstreamMiddleware(), _InjectCall()])
    messages = agent.invoke({"messages": [HumanMessage("go")]})["messages"]
    assert recorder.calls == [("get_time", {})]
    refused = [m for m in tool_messages(messages) if m.tool_call_id == "forged-1"]
    assert [m.status for m in refused] == ["error"] and "not_committed" in refused[0].content


def test_the_refusal_of_an_uncommitted_call_is_counted(emu: VendorEmulator,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder()
    emu.queue("openai-chat", "no_args", "text")
    agent = create_agent(make_model("openai-chat", emu), tools=recording_tools(recorder),
                         middleware=[ToolstreamMiddleware(config={"tenant": "acme"}),
                                     _InjectCall()])
    with metric_reader(monkeypatch) as reader:
        agent.invoke({"messages": [HumanMessage("go")]})
        points = metric_points(reader)
    assert recorder.names == ["get_time"]
    [point] = points["tool_execute_rejected_not_committed_total"]
    assert point.value == 1
    assert dict(point.attributes) == {"provider": "openai-chat", "tool_name": "write_file",
                                      "tenant": "acme"}


def test_text_streams_token_by_token_inside_the_agent(emu: VendorEmulator,
                                                      recorder: Recorder) -> None:
    emu.queue("openai-responses", "text")
    agent = gated_agent("openai-responses", emu, recorder)
    pieces = [chunk.text for chunk, _meta in agent.stream(
        {"messages": [HumanMessage("hi")]}, stream_mode="messages")
        if isinstance(chunk, AIMessage) and chunk.text]
    assert len(pieces) > 1

