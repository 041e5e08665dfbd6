"""Rule 12, metrics (docs/DESIGN.md §4.12).

With the ``otel`` extra installed, the six OpenTelemetry instruments fire with the
``provider`` and ``tool_name`` labels.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import builders as b
import pytest
from builders import ADD, run
from toolstream_core import AssembleConfig


@pytest.fixture
def otel_reader(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """An in-memory OpenTelemetry SDK reader wired to the core's meter for one test."""
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
    yield reader
    provider.shutdown()


def _points(reader: Any) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                found.setdefault(metric.name, []).extend(metric.data.data_points)
    return found


def test_rule12_the_six_instruments_fire_with_provider_and_tool_labels(otel_reader: Any) -> None:
    config = AssembleConfig(max_tool_argument_bytes=64)
    run(b.openai_chat([b.Call(id="c1", name="add", arguments=ADD), b.Call(id="c2", name="parse", arguments='{"a":'),
                       b.Call(id="c3", name="big", arguments=json.dumps({"x": "y" * 99})),
                       b.Call(id="c4", name="nano", arguments=ADD + ADD)]), provider="openai-chat", config=config)
    run(b.anthropic([
        b.Call(id="t1", name="dup", arguments=ADD),
        b.Call(id="t1", name="dup", arguments='{"a":0}'),
    ]), provider="anthropic")
    points = _points(otel_reader)
    expected = {
        "tool_assemble_args_bytes": ("openai-chat", "add"),
        "tool_assemble_to_commit_seconds": ("openai-chat", "add"),
        "tool_assemble_invalid_json_total": ("openai-chat", "parse"),
        "tool_assemble_overflow_total": ("openai-chat", "big"),
        "tool_execute_rejected_not_committed_total": ("openai-chat", "parse"),
        "tool_assemble_duplicate_total": ("anthropic", "dup"),
    }
    for name, (provider, tool) in expected.items():
        assert name in points, f"{name} never recorded"
        labels = [dict(p.attributes) for p in points[name]]
        assert {"provider": provider, "tool_name": tool} in labels, (name, labels)
    nano = [dict(p.attributes) for p in points["tool_assemble_duplicate_total"]]
    assert {"provider": "openai-chat", "tool_name": "nano"} in nano
    sizes = {p.attributes["tool_name"]: p.sum for p in points["tool_assemble_args_bytes"]}
    assert sizes["add"] == len(ADD)
