"""Issue 14 for LlamaIndex: traces under OpenInference's spans, and AG-UI from either source.

Real above the HTTP line: LlamaIndex's own LLM classes and SDK clients talk to the emulator,
``ToolstreamFunctionAgent`` runs the workflow, OpenInference's real LlamaIndex instrumentation
makes the framework's spans.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from agui_util import replay
from docs_examples import run_example
from li_helpers import APIS, THIRD_PARTY_WARNINGS, Recorder, make_llm, run_agent
from llama_index.core.base.llms.types import ChatMessage
from otel_util import InMemorySpanExporter, call_events, openinference, parent_name, turn_spans
from toolstream_core.agui import AGUIToolCallEvents
from toolstream_core.testing import VendorEmulator

from llamaindex_toolstream import CallStreamEvent, ToolstreamFunctionAgent, ToolstreamLLM

pytestmark = [
    *THIRD_PARTY_WARNINGS,
    # OpenInference's own handler calls pydantic's deprecated ``.json()``.
    pytest.mark.filterwarnings("ignore:The `json` method is deprecated"),
]


@pytest.fixture
def instrumented() -> Iterator[InMemorySpanExporter]:
    """OpenInference's LlamaIndex instrumentation, for this test only (a test extra: only the tests
    that nest under its spans need it)."""
    with openinference("openinference.instrumentation.llama_index", "LlamaIndexInstrumentor") as exporter:
        yield exporter


@pytest.mark.parametrize("api", APIS)
async def test_rejected_call_is_an_event_under_the_agent_step(api: str, emu: VendorEmulator,
                                                              instrumented: InMemorySpanExporter) -> None:
    emu.queue(api, "truncated_length")
    recorder = Recorder()
    agent = ToolstreamFunctionAgent(tools=recorder.tools(), llm=make_llm(api, emu.base_url))
    outcome = await run_agent(agent, recorder, emu)
    assert outcome.error is None and outcome.runs == []
    [answer] = outcome.tool_messages
    cut = next(s for s in turn_spans(instrumented) if call_events(s))
    [event] = call_events(cut)
    assert event["gen_ai.tool.call.id"] == answer.additional_kwargs["tool_call_id"]
    assert event["gen_ai.tool.name"] == "write_file"
    assert event["error.type"] == "stream_truncated"
    assert parent_name(cut, instrumented) == "ToolstreamFunctionAgent.run_agent_step"
    roots = [s for s in instrumented.get_finished_spans() if s.parent is None]
    assert [r.name for r in roots] == ["ToolstreamFunctionAgent.run"]
    assert cut.context.trace_id == roots[0].context.trace_id  # one trace for the whole run


@pytest.mark.parametrize("api", APIS)
async def test_agui_from_the_stream_handler(api: str, emu: VendorEmulator) -> None:
    emu.queue(api, "truncated_length")
    emu.queue(api, "parallel_calls")
    recorder = Recorder()
    agent = ToolstreamFunctionAgent(tools=recorder.tools(), llm=make_llm(api, emu.base_url))
    outcome = await run_agent(agent, recorder, emu)
    adapter = AGUIToolCallEvents()
    for event in outcome.events:
        if isinstance(event, CallStreamEvent):
            adapter.translate(event)
    views = replay(adapter.events)
    answers = {m.additional_kwargs["tool_call_id"]: str(m.content) for m in outcome.tool_messages}
    [cut] = [v for v in views.values() if v.rejection is not None]
    assert cut.rejection is not None and cut.rejection["reason"] == "stream_truncated"
    assert cut.result == answers[cut.id]
    committed = [v for v in views.values() if v.rejection is None]
    assert sorted(json.loads(v.args)["city"] for v in committed) == ["Paris", "Tokyo"]
    assert sorted(args["city"] for _, args in outcome.runs) == ["Paris", "Tokyo"]


@pytest.mark.parametrize("api", APIS)
async def test_agui_from_the_llm_callback(api: str, emu: VendorEmulator) -> None:
    emu.queue(api, "truncated_length")
    adapter = AGUIToolCallEvents(parent_message_id="assistant-1")
    llm = ToolstreamLLM(make_llm(api, emu.base_url), on_event=adapter)
    stream = await llm.astream_chat_with_tools(Recorder().tools(), chat_history=[ChatMessage(role="user",
                                                                                             content="go")])
    responses = [response async for response in stream]
    [result] = llm.error_results_from_response(responses[-1])
    [view] = replay(adapter.events).values()
    assert view.id == result.tool_call_id and view.result == result.content
    assert view.rejection is not None and view.rejection["reason"] == "stream_truncated"


def test_docs_example_runs() -> None:
    assert run_example("llamaindex-agui-trace") == [
        "TOOL_CALL_START TOOL_CALL_END CUSTOM TOOL_CALL_RESULT",
        "ToolstreamFunctionAgent.run_agent_step stream_truncated",
    ]
