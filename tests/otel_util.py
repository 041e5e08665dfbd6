"""One OpenTelemetry SDK tracer provider per test process, with an in-memory span exporter.

OpenTelemetry lets a process set its global tracer provider once; every test module that
looks at spans shares this one (and clears the exporter per test).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

# An optional package (the dev extra installs it): without it every module that looks at spans
# is skipped at collection, with this reason, instead of failing to import.
pytest.importorskip("opentelemetry.sdk", reason="the span tests need opentelemetry-sdk")

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

__all__ = ["InMemorySpanExporter", "call_events", "metric_points", "metric_reader", "openinference",
           "parent_name", "span_exporter", "trace", "tracer_provider", "turn_spans"]

_EXPORTER: InMemorySpanExporter | None = None


def span_exporter() -> InMemorySpanExporter:
    """The shared exporter, emptied; the global provider is set on first use."""
    global _EXPORTER
    if _EXPORTER is None:
        _EXPORTER = InMemorySpanExporter()
        provider = trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            provider = TracerProvider()
            trace.set_tracer_provider(provider)
        provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
    _EXPORTER.clear()
    return _EXPORTER


def tracer_provider() -> TracerProvider:
    provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider)
    return provider


def turn_spans(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == "toolstream.turn"]


def call_events(span: ReadableSpan) -> list[dict[str, Any]]:
    """The span's ``toolstream.tool_call`` events, as plain attribute dicts."""
    return [dict(e.attributes or {}) for e in span.events if e.name == "toolstream.tool_call"]


def parent_name(span: ReadableSpan, exporter: InMemorySpanExporter) -> str | None:
    """The name of ``span``'s parent among the exported spans (``None``: a root or unknown)."""
    if span.parent is None:
        return None
    by_id = {s.context.span_id: s for s in exporter.get_finished_spans() if s.context is not None}
    parent = by_id.get(span.parent.span_id)
    return parent.name if parent is not None else None


@contextmanager
def openinference(module: str, instrumentor_name: str) -> Iterator[InMemorySpanExporter]:
    """OpenInference's instrumentation ``module.instrumentor_name`` on the shared provider, for
    one test (a test extra, so a missing package skips): the tests that nest under its spans."""
    instrumentation = pytest.importorskip(module)
    exporter = span_exporter()
    instrumentor = getattr(instrumentation, instrumentor_name)()
    instrumentor.instrument(tracer_provider=tracer_provider())
    try:
        yield exporter
    finally:
        instrumentor.uninstrument()


@contextmanager
def metric_reader(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """An in-memory OpenTelemetry SDK metric reader wired to the core's meter for one test."""
    from opentelemetry import metrics as otel
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from toolstream_core import _metrics

    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    monkeypatch.setattr(otel, "get_meter", lambda name, *a, **k: provider.get_meter(name, *a, **k))
    # The core creates its instruments lazily on first use; make it create them again here.
    monkeypatch.setattr(_metrics.metrics, "_ready", False)
    monkeypatch.setattr(_metrics.metrics, "_instruments", {})
    try:
        yield reader
    finally:
        provider.shutdown()


def metric_points(reader: Any) -> dict[str, list[Any]]:
    """``metric name -> data points`` read from ``reader`` now."""
    found: dict[str, list[Any]] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                found.setdefault(metric.name, []).extend(metric.data.data_points)
    return found
