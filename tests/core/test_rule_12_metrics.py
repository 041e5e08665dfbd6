"""Rule 12, metrics (docs/DESIGN.md §4.12).

With the ``otel`` extra installed, the instruments fire with the ``provider`` and ``tool_name``
labels (and ``tenant`` when the config names one), read back through the OpenTelemetry SDK's
in-memory reader. Each seed-004 name keeps the seed's meaning: commit latency from the end of
the stream, argument bytes of every call, and the executor's refusal counted only where an
executor refuses; what the gate measures besides has names of its own.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import builders as b
import pytest
from builders import ADD, PIPELINE, run
from otel_util import metric_points, metric_reader
from toolstream_core import AssembleConfig, Assembler, CallState
from toolstream_core._metrics import record_refused_execution


@pytest.fixture
def otel_reader(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """An in-memory OpenTelemetry SDK reader wired to the core's meter for one test."""
    with metric_reader(monkeypatch) as reader:
        yield reader


class Clock:
    """A monotonic clock the test moves by hand, so latencies are exact and load-independent."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    from toolstream_core import _call, _table

    fake = Clock()
    monkeypatch.setattr(_table, "time", fake)
    monkeypatch.setattr(_call, "time", fake)
    return fake


_points = metric_points


def _labels(points: dict[str, list[Any]], name: str) -> list[dict[str, Any]]:
    return [dict(p.attributes) for p in points.get(name, [])]


def _sums(points: dict[str, list[Any]], name: str, key: str = "tool_name") -> dict[Any, float]:
    """Per label value: a histogram's sum or a counter's value."""
    return {p.attributes[key]: p.sum if hasattr(p, "sum") else p.value
            for p in points.get(name, [])}


def test_rule12_every_instrument_fires_with_provider_and_tool_labels(otel_reader: Any) -> None:
    config = AssembleConfig(max_tool_argument_bytes=64)
    run(b.openai_chat([b.Call(id="c1", name="add", arguments=ADD), b.Call(id="c2", name="parse", arguments='{"a":'),
                       b.Call(id="c3", name="big", arguments=json.dumps({"x": "y" * 99})),
                       b.Call(id="c4", name="nano", arguments=ADD + ADD)]), provider="openai-chat", config=config)
    run(b.anthropic([
        b.Call(id="t1", name="dup", arguments=ADD),
        b.Call(id="t1", name="dup", arguments='{"a":0}'),
    ]), provider="anthropic")
    record_refused_execution("rm", provider="anthropic")
    points = _points(otel_reader)
    expected = {
        "tool_assemble_args_bytes": ("openai-chat", "add"),
        "tool_assemble_to_commit_seconds": ("openai-chat", "add"),
        "tool_assemble_open_to_commit_seconds": ("openai-chat", "add"),
        "tool_assemble_invalid_json_total": ("openai-chat", "parse"),
        "tool_assemble_overflow_total": ("openai-chat", "big"),
        "tool_assemble_rejected_total": ("openai-chat", "parse"),
        "tool_assemble_duplicate_total": ("anthropic", "dup"),
        "tool_execute_rejected_not_committed_total": ("anthropic", "rm"),
    }
    for name, (provider, tool) in expected.items():
        assert name in points, f"{name} never recorded"
        found = [{k: v for k, v in labels.items() if k in ("provider", "tool_name")}
                 for labels in _labels(points, name)]
        assert {"provider": provider, "tool_name": tool} in found, (name, found)
    nano = _labels(points, "tool_assemble_duplicate_total")
    assert {"provider": "openai-chat", "tool_name": "nano"} in nano
    assert _sums(points, "tool_assemble_args_bytes")["add"] == len(ADD)


def test_rule12_a_gate_rejection_is_not_an_executor_refusal(otel_reader: Any) -> None:
    """The seed's anti-regression counter stays at zero while the gate rejects calls: it counts
    an executor's attempt to run an uncommitted call, which a gate rejection is not. The gate's
    own rejections are ``tool_assemble_rejected_total``, by reason."""
    run(b.openai_chat([b.Call(id="c1", name="add", arguments='{"a":'),
                       b.Call(id="c2", name="add", arguments="[1]")]), provider="openai-chat")
    points = _points(otel_reader)
    assert "tool_execute_rejected_not_committed_total" not in points
    reasons = _sums(points, "tool_assemble_rejected_total", "reason")
    assert reasons == {"invalid_json": 1, "arguments_not_object": 1}


def test_rule12_record_refused_execution_counts_each_refusal(otel_reader: Any) -> None:
    config = AssembleConfig(tenant="acme")
    record_refused_execution("write_file", provider="openai-chat", config=config)
    record_refused_execution("write_file", provider="openai-chat", config=config)
    record_refused_execution(None)
    points = _points(otel_reader)
    counted = {tuple(sorted(p.attributes.items())): p.value
               for p in points["tool_execute_rejected_not_committed_total"]}
    assert counted == {
        (("provider", "openai-chat"), ("tenant", "acme"), ("tool_name", "write_file")): 2,
        (("provider", "unknown"), ("tool_name", "unknown")): 1,
    }


def test_rule12_args_bytes_covers_every_call_with_its_state(otel_reader: Any) -> None:
    """Committed, failed (bad JSON, overflow, truncation) and cancelled calls all report the
    argument bytes they received, labelled with the state they ended in."""
    config = AssembleConfig(max_tool_argument_bytes=32)
    big = json.dumps({"x": "y" * 40})
    run(b.openai_chat([b.Call(id="c1", name="ok", arguments=ADD), b.Call(id="c2", name="bad", arguments='{"a":'),
                       b.Call(id="c3", name="big", arguments=big, cuts=(10, 20, 30, 40))]),
        provider="openai-chat", config=config)
    run(b.anthropic([b.Call(id="t1", name="cut", arguments='{"path": "/tm')], ending="none"),
        provider="anthropic", transport_complete=False)
    assembler = Assembler(provider="anthropic")
    for event in b.anthropic([b.Call(id="t2", name="stop", arguments='{"q": 1}')], ending="none"):
        assembler.feed(event)
    assembler.cancel("the user pressed stop")
    assembler.finish()
    points = _points(otel_reader)
    seen = {(p.attributes["tool_name"], p.attributes["state"]): (p.count, p.sum)
            for p in points["tool_assemble_args_bytes"]}
    assert seen[("ok", "committed")] == (1, len(ADD))
    assert seen[("bad", "failed")] == (1, len('{"a":'))
    assert seen[("cut", "failed")] == (1, len('{"path": "/tm'))
    assert seen[("stop", "cancelled")] == (1, len('{"q": 1}'))
    count, size = seen[("big", "failed")]
    assert count == 1 and size > 32  # the bytes received up to the cap, not zero


def test_rule12_to_commit_runs_from_the_end_of_the_stream(otel_reader: Any, clock: Clock) -> None:
    """A call that streamed for 90 s and committed the moment the stream ended has a
    to-commit latency of 0 and an open-to-commit time of 90 s (the old, mislabelled one)."""
    assembler = Assembler(provider="openai-chat")
    events = b.openai_chat([b.Call(id="c1", name="add", arguments=ADD, cuts=(3, 7))])
    for step, event in enumerate(events):
        clock.now = 10.0 + step
        assembler.feed(event)
    clock.now = 100.0
    turn = assembler.finish()
    assert turn.committed
    points = _points(otel_reader)
    assert _sums(points, "tool_assemble_to_commit_seconds") == {"add": 0.0}
    opened = _sums(points, "tool_assemble_open_to_commit_seconds")["add"]
    assert 90.0 - len(events) < opened <= 90.0


def test_rule12_a_pipelined_commit_runs_from_its_block_stop(otel_reader: Any, clock: Clock) -> None:
    """DESIGN 4.10: an Anthropic call commits early once the next block starts; its latency
    runs from its own block stop (the end of its arguments), not from the stream's end."""
    assembler = Assembler(provider="anthropic", config=PIPELINE)
    events = b.anthropic([b.Call(id="t1", name="add", arguments=ADD), b.Call(id="t2", name="sub", arguments="{}")])
    stops = [i for i, e in enumerate(events) if e["type"] == "content_block_stop"]
    for position, event in enumerate(events):
        clock.now = {stops[0]: 5.0, stops[0] + 1: 7.5}.get(position, clock.now + 0.001)
        assembler.feed(event)
    clock.now = 50.0
    turn = assembler.finish()
    assert [c.state for c in turn.calls] == [CallState.committed, CallState.committed]
    latencies = _sums(_points(otel_reader), "tool_assemble_to_commit_seconds")
    assert latencies["add"] == pytest.approx(2.5)  # block stop at 5.0, next block start at 7.5
    assert latencies["sub"] == 0.0  # not pipelined: committed when the stream ended


def test_rule12_tenant_label_only_when_configured(otel_reader: Any) -> None:
    run(b.openai_chat([b.Call(id="c1", name="add", arguments=ADD)]), provider="openai-chat",
        config=AssembleConfig(tenant="acme"))
    run(b.openai_chat([b.Call(id="c1", name="sub", arguments=ADD)]), provider="openai-chat")
    points = _points(otel_reader)
    for name in ("tool_assemble_args_bytes", "tool_assemble_to_commit_seconds"):
        tenants = {p.attributes["tool_name"]: p.attributes.get("tenant") for p in points[name]}
        assert tenants == {"add": "acme", "sub": None}, name


def test_rule12_labels_stay_low_cardinality(otel_reader: Any) -> None:
    """No label carries an id, argument text or a detail: only fixed vocabularies and names."""
    run(b.openai_chat([b.Call(id=f"call_{i}", name="add", arguments=f'{{"a": {i}') for i in range(5)]),
        provider="openai-chat", config=AssembleConfig(tenant="acme"))
    allowed = {"provider", "tool_name", "tenant", "state", "reason"}
    points = _points(otel_reader)
    for name, found in points.items():
        for point in found:
            assert set(point.attributes) <= allowed, (name, point.attributes)
    assert len(points["tool_assemble_rejected_total"]) == 1  # five calls, one series
