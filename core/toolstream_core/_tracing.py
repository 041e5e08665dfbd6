"""OpenTelemetry traces of the gate's decisions: one span per turn, one span event per call.

A rejected call never reaches a tool, so no framework span ever mentions it; this module is
where it becomes visible in a trace. Everything happens once per turn, at ``finish``, from
the decided ``Turn``: nothing is recorded per chunk, and without a configured tracer provider
:func:`active` is a dictionary lookup that says no (``opentelemetry`` is never imported here:
a process that configured tracing has imported it already).

Names follow the OpenTelemetry GenAI semantic conventions where one exists
(``gen_ai.provider.name``, ``gen_ai.tool.call.id``, ``gen_ai.tool.name``,
``gen_ai.tool.call.arguments``, ``gen_ai.response.finish_reasons``, ``error.type``);
the rest is under ``toolstream.*``. ``docs/observability.md`` lists them.

Content is opt-in, as the GenAI conventions make it: by default a call's event holds its id,
name, kind, state, reason and byte count, never its argument text nor a parse message that
could quote it. ``trace_tool_arguments`` (config) or
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` (environment) turns it on; a
tool marked sensitive stays masked even then.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from ._models import CallState, Provider, Reason, ToolCall, Turn
from ._sensitive import capture_content, masked_text

if TYPE_CHECKING:
    from ._table import CallTable

__all__ = [
    "ARGUMENTS_LIMIT",
    "EVENT_NAME",
    "SPAN_NAME",
    "active",
    "gen_ai_provider",
    "record_turn",
    "trace_parent",
    "untraced",
]

_log = logging.getLogger(__name__)

SPAN_NAME = "toolstream.turn"
EVENT_NAME = "toolstream.tool_call"
ARGUMENTS_LIMIT = 8192
"""Characters of argument text kept on a span event; a trace is not an argument store."""

_GEN_AI_PROVIDER: dict[str, str] = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    # google-genai speaks to both the Gemini API and Vertex AI: the generic Google value.
    "gemini": "gcp.gen_ai",
}

_parent: ContextVar[Any] = ContextVar("toolstream_trace_parent", default=None)
_UNTRACED = object()


def gen_ai_provider(provider: Provider | str | None) -> str:
    """The ``gen_ai.provider.name`` value for one of the core's wire names."""
    return _GEN_AI_PROVIDER.get(provider or "", provider or "unknown")


def active() -> bool:
    """Whether a real tracer provider is configured (cheap enough to ask once per turn)."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return False
    try:
        provider = trace.get_tracer_provider()
        return not isinstance(provider, (trace.ProxyTracerProvider, trace.NoOpTracerProvider))
    except Exception:  # a broken OTel install must not break a stream
        return False


@contextmanager
def trace_parent(parent: Any) -> Iterator[None]:
    """Make ``parent`` (an OTel ``Span`` or ``Context``) the parent of turns decided inside.

    For frameworks whose instrumentation keeps its spans out of the current OTel context
    (OpenInference's LangChain tracer parents spans by run id, on purpose): the shim looks up
    the span of the model run and hands it here. ``None`` leaves the current context in force.
    """
    token = _parent.set(parent)
    try:
        yield
    finally:
        _parent.reset(token)


@contextmanager
def untraced() -> Iterator[None]:
    """Turns decided inside are not recorded: for assemblers that only mirror a stream for
    display (the LangChain callback handler's view of an ungated model), which decide nothing."""
    with trace_parent(_UNTRACED):
        yield


def record_turn(assembler: CallTable, turn: Turn) -> None:
    """Record ``turn`` as a span with one event per decided client call. Never raises."""
    if _parent.get() is _UNTRACED:
        return
    try:
        _record(assembler, turn)
    except Exception:  # tracing must never change or break a turn
        _log.debug("toolstream: recording the turn's trace failed", exc_info=True)


def _record(assembler: CallTable, turn: Turn) -> None:
    from opentelemetry import trace

    from . import __version__

    content = capture_content(assembler.config.trace_tool_arguments)
    sizes, first_open = _call_sizes(assembler)
    now_ns = time.time_ns()
    start_ns = now_ns
    if first_open is not None:
        start_ns = now_ns - max(0, int((time.monotonic() - first_open) * 1e9))
    provider = gen_ai_provider(turn.provider)
    calls = [(call, False) for call in turn.calls] + [(call, True) for call in turn.dropped]
    attributes: dict[str, Any] = {
        "gen_ai.provider.name": provider,
        "toolstream.provider": turn.provider or "unknown",
        "toolstream.turn.complete": turn.complete,
        "toolstream.calls.committed": len(turn.committed),
        "toolstream.calls.rejected": len(turn.rejected),
        "toolstream.calls.dropped": len(turn.dropped),
        "toolstream.calls.server": len(turn.server_calls),
        "toolstream.arguments.bytes": sum(sizes.get(c.key, 0) for c, _ in calls),
        "toolstream.anomalies": len(turn.anomalies),
    }
    if turn.finish_reason is not None:
        attributes["gen_ai.response.finish_reasons"] = [turn.finish_reason]
    parent = _parent.get()
    context = None
    if parent is not None:
        context = parent if not isinstance(parent, trace.Span) else trace.set_span_in_context(parent)
    tracer = trace.get_tracer("toolstream", __version__)
    span = tracer.start_span(SPAN_NAME, context=context, kind=trace.SpanKind.INTERNAL,
                             attributes=attributes, start_time=start_ns)
    try:
        for call, dropped in calls:
            span.add_event(EVENT_NAME, _call_attributes(call, provider, sizes, content, dropped),
                           timestamp=now_ns)
        if turn.error is not None:
            span.set_attribute("error.type", type(turn.error).__qualname__)
            span.set_status(trace.Status(trace.StatusCode.ERROR, str(turn.error)[:200]))
    finally:
        span.end(end_time=now_ns)


def _call_sizes(assembler: CallTable) -> tuple[dict[Any, int], float | None]:
    """Argument bytes per call key (re-sent copies included) and when the first call opened."""
    sizes: dict[Any, int] = {}
    first: float | None = None
    for key, call in assembler.calls.items():
        sizes[key] = int(getattr(call, "nbytes", 0)) + int(getattr(call, "twin_bytes", 0))
        opened = getattr(call, "opened_at", None)
        if isinstance(opened, float) and (first is None or opened < first):
            first = opened
    return sizes, first


def _call_attributes(call: ToolCall, provider: str, sizes: dict[Any, int], content: bool,
                     dropped: bool) -> dict[str, Any]:
    """One call's event. Argument text, and a parse message that can quote it, only when the
    user opted into content capture, and then masked as the tool's ``sensitive`` marking says."""
    attributes: dict[str, Any] = {
        "gen_ai.tool.call.id": call.id or "",
        "gen_ai.tool.name": call.name or "",
        "gen_ai.provider.name": provider,
        "toolstream.tool_call.state": str(call.state),
        "toolstream.tool_call.kind": call.kind,
        "toolstream.tool_call.argument_bytes": sizes.get(call.key, 0),
    }
    if call.kind == "function":
        attributes["gen_ai.tool.type"] = "function"
    if call.index is not None:
        attributes["toolstream.tool_call.index"] = call.index
    if dropped:
        attributes["toolstream.tool_call.dropped"] = True
    if call.sensitive is not False:
        attributes["toolstream.tool_call.sensitive"] = True
    if call.state is not CallState.committed:
        reason = call.reason or Reason.upstream_error
        attributes["error.type"] = reason.value
        # A JSON parse message can quote argument text: shown only where the text may be.
        if call.detail and (reason is not Reason.invalid_json or (content and call.sensitive is False)):
            attributes["toolstream.tool_call.detail"] = call.detail[:500]
    text = masked_text(call.arguments, call.raw_arguments, call.sensitive,
                       call.state is CallState.committed) if content else None
    if text is not None:
        attributes["gen_ai.tool.call.arguments"] = text[:ARGUMENTS_LIMIT]
        if len(text) > ARGUMENTS_LIMIT:
            attributes["toolstream.tool_call.arguments_truncated"] = True
    return attributes
