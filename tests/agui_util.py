"""Checks on AG-UI event sequences, with the ``ag-ui-protocol`` package's own models.

Each event goes over the wire as the package's SSE encoder writes it and is read back through
the protocol's discriminated ``Event`` union (so a field the models reject fails here); the
sequence rules are the protocol's tool-call lifecycle: ``TOOL_CALL_START``, any number of
``TOOL_CALL_ARGS``, one ``TOOL_CALL_END``, then at most one ``TOOL_CALL_RESULT``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from pydantic import TypeAdapter

pytest.importorskip("ag_ui", reason="the AG-UI checks need ag-ui-protocol (the agui extra)")

from ag_ui.core import BaseEvent, Event, EventType
from ag_ui.encoder import EventEncoder

_EVENT: TypeAdapter[Any] = TypeAdapter(Event)


@dataclass
class ToolCallView:
    """One call as an AG-UI frontend would rebuild it."""

    id: str
    name: str
    args: str = ""
    ended: bool = False
    result: str | None = None
    rejection: dict[str, Any] | None = None
    order: list[str] = field(default_factory=list)


def wire_round_trip(events: list[BaseEvent]) -> list[Any]:
    """The events as a client receives them: SSE-encoded, then parsed by the protocol models."""
    encoder = EventEncoder()
    out = []
    for event in events:
        frame = encoder.encode(event)
        assert frame.startswith("data: ") and frame.endswith("\n\n")
        out.append(_EVENT.validate_python(json.loads(frame[len("data: "):])))
    return out


def replay(events: list[BaseEvent]) -> dict[str, ToolCallView]:
    """Fold a valid sequence into per-call views; any lifecycle violation fails an assertion."""
    calls: dict[str, ToolCallView] = {}
    for event in wire_round_trip(events):
        kind = event.type
        if kind == EventType.TOOL_CALL_START:
            assert event.tool_call_id not in calls, f"second START for {event.tool_call_id}"
            calls[event.tool_call_id] = ToolCallView(event.tool_call_id, event.tool_call_name)
        elif kind == EventType.CUSTOM:
            assert event.name == "toolstream.call_rejected"
            view = calls[event.value["toolCallId"]]
            assert view.ended and view.result is None, "the verdict comes after END, before RESULT"
            view.rejection = event.value
        else:
            view = calls[event.tool_call_id]  # ARGS / END / RESULT only for a started call
            if kind == EventType.TOOL_CALL_ARGS:
                assert not view.ended, "ARGS after END"
                view.args += event.delta
            elif kind == EventType.TOOL_CALL_END:
                assert not view.ended, "second END"
                view.ended = True
            else:
                assert kind == EventType.TOOL_CALL_RESULT and view.ended and view.result is None
                view.result = event.content if isinstance(event.content, str) else str(event.content)
        if kind != EventType.CUSTOM:
            calls[event.tool_call_id].order.append(str(kind.value))
    assert all(view.ended for view in calls.values()), "a call was never ended"
    return calls
