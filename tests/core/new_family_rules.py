"""Helpers shared by the rule tests of the newer families (Bedrock, Ollama, Cohere)."""

from __future__ import annotations

from typing import Any

import pytest
from toolstream_core import AssembleConfig, Assembler, CallCommitted, Turn

__all__ = ["assert_sdk_objects_detected", "commit_points", "outcome", "run"]

PIPELINE = AssembleConfig(execute_before_stream_end=True, allow_pipelined_execute=["get_weather"])


def run(events: list[Any], provider: str | None, *, transport_complete: bool = True,
        error: BaseException | None = None, **kwargs: Any) -> Turn:
    assembler = Assembler(provider=provider, **kwargs)  # type: ignore[arg-type]
    for event in events:
        assembler.feed(event)
    return assembler.finish(transport_complete=transport_complete, error=error)


def outcome(turn: Turn) -> list[tuple[str | None, str, str | None]]:
    """(name, state, reason) per client call, in order."""
    return [(c.name, c.state.value, c.reason.value if c.reason else None) for c in turn.calls]


def commit_points(events: list[Any], provider: str, **kwargs: Any) -> dict[str | None, int]:
    """For each call id, the position of the event after which it committed (-1: at finish)."""
    seen: list[Any] = []
    assembler = Assembler(provider=provider, on_event=seen.append, **kwargs)  # type: ignore[arg-type]
    points: dict[str | None, int] = {}
    for position, event in enumerate(events):
        assembler.feed(event)
        for ev in seen:
            if isinstance(ev, CallCommitted) and ev.call.id not in points:
                points[ev.call.id] = position
    assembler.finish()
    for ev in seen:
        if isinstance(ev, CallCommitted) and ev.call.id not in points:
            points[ev.call.id] = -1
    return points


def assert_sdk_objects_detected(events: list[Any], provider: str, module: str, name: str) -> None:
    """Plain dicts are detected as ``provider``, and the SDK's own pydantic objects (type
    ``module.name``, skipped without the SDK) give the same outcome as the dicts."""
    assert run(events, None).provider == provider
    types = pytest.importorskip(module)
    from pydantic import TypeAdapter

    adapter = TypeAdapter(getattr(types, name))
    objects = [adapter.validate_python(e) for e in events]
    assert outcome(run(objects, None)) == outcome(run(events, provider))
