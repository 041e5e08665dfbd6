"""Inside AgentWorkflow, the UI stream handler, and offline cassette replay.

Stock comparisons are measured on the same inputs: inside ``AgentWorkflow`` the stock
``FunctionAgent`` runs a truncated call with repaired arguments exactly as it does alone, and
its ``AgentStream`` events carry ``parse_partial_json`` guesses of half-received arguments.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from li_helpers import APIS, THIRD_PARTY_WARNINGS, Recorder, make_llm, run_agent, unpaired
from li_scripted import scripted_chat
from llama_index.core.agent.workflow import AgentStream, AgentWorkflow, FunctionAgent
from llama_index.llms.openai import OpenAI
from toolstream_core.testing import VendorEmulator

from llamaindex_toolstream import (
    CallCommittedEvent,
    CallOpenedEvent,
    CallProgressEvent,
    CallRejectedEvent,
    ToolstreamFunctionAgent,
    ToolstreamStreamHandler,
    stream_call_events,
)

pytestmark = THIRD_PARTY_WARNINGS


WRITE = {"path": "/tmp/notes.txt",
         "content": 'Shopping list:\n- "fresh" bread\n- tea\tgreen\nC:\\temp is not a path here.\n'}
WRITE_BYTES = len(json.dumps(WRITE, separators=(",", ":"), ensure_ascii=False).encode())


def _workflow(cls: type, recorder: Recorder, llm: Any, *, helper: bool = False) -> AgentWorkflow:
    agents = [cls(name="writer", description="Writes files and checks the weather.",
                  tools=recorder.tools(), llm=llm)]
    if helper:  # a second agent makes AgentWorkflow add its return_direct handoff tool
        agents.append(cls(name="helper", description="Answers questions.", tools=[], llm=llm))
    return AgentWorkflow(agents=agents, root_agent="writer")


@pytest.mark.parametrize("api", ["openai-chat", "anthropic"])
async def test_agent_workflow_truncated_call_is_answered(api: str,
                                                         emu: VendorEmulator) -> None:
    outcomes = {}
    for cls in (FunctionAgent, ToolstreamFunctionAgent):
        recorder = Recorder()
        emu.queue(api, "truncated_length")
        workflow = _workflow(cls, recorder, make_llm(api, emu.base_url),
                             helper=True)
        outcomes[cls] = await run_agent(workflow, recorder, emu)
    stock, ours = outcomes[FunctionAgent], outcomes[ToolstreamFunctionAgent]
    assert stock.runs == [("write_file", {"path": None, "content": ""})]
    assert ours.runs == [] and ours.error is None and ours.requests == 2
    [message] = ours.tool_messages
    assert "[stream_truncated]" in str(message.content)
    assert unpaired(ours.memory) == []


@pytest.mark.parametrize("api", APIS)
async def test_agent_workflow_happy_path(api: str, emu: VendorEmulator) -> None:
    recorder = Recorder()
    emu.queue(api, "parallel_calls")
    workflow = _workflow(ToolstreamFunctionAgent, recorder,
                         make_llm(api, emu.base_url), helper=True)
    outcome = await run_agent(workflow, recorder, emu)
    assert outcome.error is None
    assert outcome.runs == [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})]
    assert outcome.requests == 2 and unpaired(outcome.memory) == []


async def test_agent_workflow_mixed_turn_runs_the_good_call_and_answers_the_bad(
        emu: VendorEmulator) -> None:
    # One valid and one invalid call in the same turn. Stock runs get_weather twice: once
    # with Paris, once with {} (its parse_partial_json fallback) which fails on the missing
    # argument; the shim runs Paris once and answers the other id with invalid_json.
    calls = [("call_ok", "get_weather", ['{"city":', ' "Paris"}']),
             ("call_bad", "get_weather", ['{"city": "Ro', "me\"}}"])]
    for cls, expected_runs in ((FunctionAgent, [("get_weather", {"city": "Paris"})]),
                               (ToolstreamFunctionAgent, [("get_weather", {"city": "Paris"})])):
        recorder = Recorder()
        with scripted_chat(emu, calls) as server:
            llm = OpenAI(model="gpt-4o-mini", api_key="test", api_base=server.base_url + "/v1",
                         max_retries=0)
            outcome = await run_agent(_workflow(cls, recorder, llm), recorder)
            statuses = list(server.statuses)
        assert outcome.runs == expected_runs
        assert statuses == [200, 200]
        contents = {m.additional_kwargs["tool_call_id"]: str(m.content)
                    for m in outcome.tool_messages}
        assert set(contents) == {"call_ok", "call_bad"}
        if cls is FunctionAgent:
            assert "missing 1 required positional argument" in contents["call_bad"]
        else:
            assert "[invalid_json]" in contents["call_bad"]
            assert contents["call_ok"] == "sunny in Paris"


# -- the UI stream handler -----------------------------------------------------------------------


@pytest.mark.parametrize("api", APIS)
async def test_handler_reports_progress_then_commit(api: str,
                                                    emu: VendorEmulator) -> None:
    recorder = Recorder()
    agent = ToolstreamFunctionAgent(tools=recorder.tools(),
                                    llm=make_llm(api, emu.base_url))
    emu.queue(api, "single_call")
    handler = agent.run(user_msg="go")
    stream = ToolstreamStreamHandler(handler)
    events = [event async for event in stream]
    result = await stream
    assert "All done" in str(result)

    assert isinstance(events[0], CallOpenedEvent) and isinstance(events[-1], CallCommittedEvent)
    progress = [e for e in events if isinstance(e, CallProgressEvent)]
    sizes = [e.bytes_so_far for e in progress]
    assert sizes == sorted(sizes) and sizes[-1] == WRITE_BYTES
    if api != "gemini":  # Gemini's arguments arrive whole, once
        assert "".join(e.fragment or "" for e in progress) == json.dumps(
            WRITE, separators=(",", ":"), ensure_ascii=False)
    assert events[-1].tool_kwargs == WRITE
    [view] = stream.calls.values()
    assert (view.tool_name, view.status, view.bytes_so_far) == ("write_file", "committed",
                                                                 WRITE_BYTES)
    # the handler only reads: the tool ran once, by the agent
    assert recorder.runs == [("write_file", WRITE)]


@pytest.mark.parametrize("api", ["openai-chat", "anthropic"])
async def test_handler_reports_rejection_and_stock_streams_guesses(
    api: str, emu: VendorEmulator
) -> None:
    # Stock: AgentStream.tool_calls carry parse_partial_json guesses of the half-received
    # arguments on every chunk (a UI shows {"path": None} as if it were the call).
    recorder = Recorder()
    stock = FunctionAgent(tools=recorder.tools(), llm=make_llm(api, emu.base_url))
    emu.queue(api, "truncated_length")
    stock_handler = stock.run(user_msg="go")
    guesses = [e.tool_calls for e in [ev async for ev in stock_handler.stream_events()]
               if isinstance(e, AgentStream) and e.tool_calls]
    await stock_handler
    assert guesses and guesses[-1][0].tool_kwargs == {"path": None}

    agent = ToolstreamFunctionAgent(tools=Recorder().tools(),
                                    llm=make_llm(api, emu.base_url),
                                    config={"ui_forward_partial_args": False})
    emu.queue(api, "truncated_length")
    handler = agent.run(user_msg="go")
    events = []
    async for event in ToolstreamStreamHandler(handler, passthrough=True):
        events.append(event)
    await handler
    assert not any(isinstance(e, AgentStream) and e.tool_calls for e in events)
    call_events = [e for e in events if isinstance(e, CallOpenedEvent | CallProgressEvent |
                                                              CallCommittedEvent | CallRejectedEvent)]
    assert all(e.fragment is None for e in call_events if isinstance(e, CallProgressEvent))
    rejected = [e for e in call_events if isinstance(e, CallRejectedEvent)]
    assert [(e.tool_name, e.reason) for e in rejected] == [("write_file", "stream_truncated")]
    assert "cut off" in rejected[0].content
    assert not any(isinstance(e, CallCommittedEvent) for e in call_events)


async def test_stream_call_events_filters(emu: VendorEmulator) -> None:
    agent = ToolstreamFunctionAgent(tools=Recorder().tools(),
                                    llm=make_llm("openai-responses", emu.base_url))
    emu.queue("openai-responses", "parallel_calls")
    handler = agent.run(user_msg="go")
    kinds = [type(e).__name__ async for e in stream_call_events(handler)]
    await handler
    assert kinds.count("CallOpenedEvent") == 2 and kinds.count("CallCommittedEvent") == 2
    assert set(kinds) <= {"CallOpenedEvent", "CallProgressEvent", "CallCommittedEvent"}


# -- bundled cassettes, offline -------------------------------------------------------------------


def _default_llm(api: str) -> Any:
    """The LLM classes with their default vendor URLs: answered by the cassette, offline."""
    from google.genai import types
    from llama_index.llms.anthropic import Anthropic
    from llama_index.llms.google_genai import GoogleGenAI
    from llama_index.llms.openai import OpenAIResponses

    if api == "openai-chat":
        return OpenAI(model="gpt-4o-mini", api_key="test", max_retries=0)
    if api == "openai-responses":
        return OpenAIResponses(model="gpt-4o-mini", api_key="test", max_retries=0)
    if api == "anthropic":
        return Anthropic(model="claude-sonnet-4-5", api_key="test", max_retries=0)
    return GoogleGenAI(model="gemini-2.5-flash", api_key="test", max_retries=0, max_tokens=1024,
                       context_window=100_000, http_options=types.HttpOptions())


@pytest.mark.parametrize(
    "api",
    [pytest.param(api, marks=[pytest.mark.toolstream_cassette(f"{api}/truncated_length")]) for api in APIS],
)
async def test_cassette_truncated_length_offline(api: str, toolstream_cassette: Any) -> None:
    # Stock on the same cassettes: see test_li_agent.STOCK_TRUNCATED (the emulator plays the
    # same bytes the cassettes were recorded from).
    recorder = Recorder()
    agent = ToolstreamFunctionAgent(tools=recorder.tools(), llm=_default_llm(api))
    outcome = await run_agent(agent, recorder)
    assert outcome.error is None and outcome.runs == []
    [message] = outcome.tool_messages
    assert "[stream_truncated]" in str(message.content)
    assert toolstream_cassette.play_count == 2  # the turn and the follow-up that carries the error result


@pytest.mark.parametrize("api", APIS)
async def test_handler_shows_a_resent_call_once(api: str, emu: VendorEmulator) -> None:
    # Stock shows (and, on Responses and Gemini, runs) the re-sent copy as a second call.
    agent = ToolstreamFunctionAgent(tools=Recorder().tools(),
                                    llm=make_llm(api, emu.base_url))
    emu.queue(api, "resent_duplicate")
    stream = ToolstreamStreamHandler(agent.run(user_msg="go"))
    [_ async for _ in stream]
    await stream
    assert [(v.tool_name, v.status) for v in stream.calls.values()] == [("get_weather", "committed")]
