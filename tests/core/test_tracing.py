"""Issue 14: every decided tool call is visible in an OpenTelemetry trace.

The real vendor SDKs stream from the local emulator; the core decides; the SDK's in-memory
exporter shows what a tracing backend would receive. Tracing off (no tracer provider) is
checked in a fresh interpreter, since a process can set its global provider only once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from docs_examples import run_example
from otel_util import InMemorySpanExporter, call_events, parent_name, span_exporter, trace, turn_spans
from sdk_turn import APIS, sdk_turn
from toolstream_core import AssembleConfig, CallState
from toolstream_core import _tracing as tracing
from toolstream_core.testing import TOOLS, VendorEmulator

GEN_AI_PROVIDER = {"openai-chat": "openai", "openai-responses": "openai", "anthropic": "anthropic",
                   "gemini": "gcp.gen_ai"}
# get_weather for Paris only: a parallel Paris + Tokyo turn commits one call and rejects one.
PARIS_ONLY = {**TOOLS, "get_weather": {"type": "object", "properties": {
    "city": {"type": "string", "enum": ["Paris"]}}, "required": ["city"]}}


@pytest.fixture
def spans() -> InMemorySpanExporter:
    return span_exporter()


@pytest.mark.parametrize("api", APIS)
def test_a_truncated_call_is_a_span_event_with_its_reason(api: str, emulator: VendorEmulator,
                                                          spans: InMemorySpanExporter) -> None:
    turn = sdk_turn(emulator, api, "truncated_length", tools=TOOLS)
    [rejected] = turn.rejected
    [span] = turn_spans(spans)
    assert span.attributes is not None
    assert span.attributes["gen_ai.provider.name"] == GEN_AI_PROVIDER[api]
    assert span.attributes["toolstream.provider"] == api
    assert span.attributes["toolstream.calls.rejected"] == 1
    assert span.attributes["toolstream.calls.committed"] == 0
    assert span.attributes["toolstream.turn.complete"] is False
    assert span.attributes["toolstream.arguments.bytes"] == len((rejected.raw_arguments or "").encode())
    [event] = call_events(span)
    assert event["gen_ai.tool.call.id"] == rejected.id
    assert event["gen_ai.tool.name"] == "write_file"
    assert event["gen_ai.provider.name"] == GEN_AI_PROVIDER[api]
    assert event["error.type"] == "stream_truncated"
    assert event["toolstream.tool_call.state"] == "failed"
    assert "gen_ai.tool.call.arguments" not in event  # content is opt-in
    assert event["toolstream.tool_call.argument_bytes"] == len((rejected.raw_arguments or "").encode())


@pytest.mark.parametrize("api", APIS)
def test_content_capture_puts_the_argument_text_on_the_event(api: str, emulator: VendorEmulator,
                                                             spans: InMemorySpanExporter) -> None:
    turn = sdk_turn(emulator, api, "truncated_length", tools=TOOLS,
                    config=AssembleConfig(trace_tool_arguments=True))
    [rejected] = turn.rejected
    [event] = call_events(turn_spans(spans)[0])
    assert event["gen_ai.tool.call.arguments"] == rejected.raw_arguments


@pytest.mark.parametrize("api", APIS)
def test_committed_calls_carry_no_error_type(api: str, emulator: VendorEmulator,
                                             spans: InMemorySpanExporter,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    turn = sdk_turn(emulator, api, "parallel_calls", tools=PARIS_ONLY)
    assert [c.arguments for c in turn.committed] == [{"city": "Paris"}]
    [span] = turn_spans(spans)
    assert span.attributes is not None
    assert (span.attributes["toolstream.calls.committed"], span.attributes["toolstream.calls.rejected"]) == (1, 1)
    assert span.attributes["gen_ai.response.finish_reasons"] == (turn.finish_reason,)
    events = {e["gen_ai.tool.call.id"]: e for e in call_events(span)}
    assert set(events) == {c.id for c in turn.calls}
    for call in turn.calls:
        event = events[call.id]
        assert event["gen_ai.tool.name"] == "get_weather"
        assert event["toolstream.tool_call.state"] == str(call.state)
        assert json.loads(str(event["gen_ai.tool.call.arguments"])) == json.loads(call.raw_arguments or "")
        if call.state is CallState.committed:
            assert "error.type" not in event
        else:
            assert event["error.type"] == "schema_violation"


@pytest.mark.parametrize("config", [
    AssembleConfig(),  # the default: no content
    AssembleConfig(trace_tool_arguments=False, ui_forward_partial_args=True),
    AssembleConfig(sensitive_tools=("get_weather",), trace_tool_arguments=True),
], ids=["default", "explicitly-off", "sensitive-tool"])
def test_argument_text_stays_out_unless_asked_for(config: AssembleConfig, emulator: VendorEmulator,
                                                  spans: InMemorySpanExporter,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    if config.trace_tool_arguments is False:  # the explicit key beats the environment
        monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    sdk_turn(emulator, "anthropic", "parallel_calls", tools=PARIS_ONLY, config=config)
    [span] = turn_spans(spans)
    events = call_events(span)
    assert len(events) == 2
    assert not any("gen_ai.tool.call.arguments" in e for e in events)
    assert sorted(e.get("error.type", "") for e in events) == ["", "schema_violation"]


def test_a_dropped_call_is_still_reported(emulator: VendorEmulator, spans: InMemorySpanExporter) -> None:
    config = AssembleConfig(max_tool_argument_bytes=1000, on_args_overflow="drop_with_protocol_repair")
    turn = sdk_turn(emulator, "openai-chat", "large_args", tools=TOOLS, config=config)
    assert turn.calls == () and len(turn.dropped) == 1
    [span] = turn_spans(spans)
    assert span.attributes is not None and span.attributes["toolstream.calls.dropped"] == 1
    [event] = call_events(span)
    assert event["error.type"] == "arguments_exceed_max_bytes"
    assert event["toolstream.tool_call.dropped"] is True
    assert event["gen_ai.tool.call.id"] == turn.dropped[0].id


def test_the_turn_nests_under_the_current_span_or_the_given_parent(emulator: VendorEmulator,
                                                                   spans: InMemorySpanExporter) -> None:
    tracer = trace.get_tracer("tests")
    with tracer.start_as_current_span("agent step"):
        sdk_turn(emulator, "openai-chat", "single_call", tools=TOOLS)
    model_span = tracer.start_span("model call")
    with tracing.trace_parent(model_span):
        sdk_turn(emulator, "openai-chat", "single_call", tools=TOOLS)
    model_span.end()
    first, second = turn_spans(spans)
    assert parent_name(first, spans) == "agent step"
    assert parent_name(second, spans) == "model call"
    assert [e["toolstream.tool_call.state"] for e in call_events(second)] == ["committed"]


def test_a_failing_tracer_never_changes_the_turn(emulator: VendorEmulator, spans: InMemorySpanExporter,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("exporter down")

    monkeypatch.setattr(trace, "get_tracer", broken)
    turn = sdk_turn(emulator, "anthropic", "truncated_length", tools=TOOLS)
    assert [c.reason for c in turn.rejected] == ["stream_truncated"]
    assert turn_spans(spans) == []


_OFF = """
import sys
from toolstream_core import Assembler, _tracing
from toolstream_core.testing import TOOLS
from toolstream_core.testing._clients import stream_sdk
loaded = sorted(m for m in ("opentelemetry", "ag_ui", "langgraph", "langchain_core", "llama_index")
                if m in sys.modules)
calls = []
_tracing.record_turn = lambda *a: calls.append(a)
result = stream_sdk("openai-chat", model="gpt-4.1-mini", base_url=sys.argv[1])
assembler = Assembler(provider="openai-chat", tools=TOOLS)
for event in result.events:
    assembler.feed(event)
turn = assembler.finish()
import opentelemetry.trace  # imported, but no provider configured: still off
turn2 = Assembler(provider="openai-chat").finish()
print(loaded, _tracing.active(), len(calls), len(turn.calls), "opentelemetry.sdk" in sys.modules)
"""


def test_without_a_tracer_provider_nothing_is_imported_or_recorded(emulator: VendorEmulator) -> None:
    emulator.clear()
    emulator.queue("openai-chat", "single_call")
    out = subprocess.run([sys.executable, "-c", _OFF, emulator.base_url], capture_output=True,
                         text=True, timeout=120, check=True).stdout.split()
    # Importing the core and assembling a turn loads no tracing, UI or framework package;
    # with OpenTelemetry imported but no provider set, no turn is recorded.
    assert out == ["[]", "False", "0", "1", "False"]


def test_docs_example_runs() -> None:
    assert run_example("core-trace") == [
        "toolstream.turn toolstream.tool_call write_file failed stream_truncated True"]
