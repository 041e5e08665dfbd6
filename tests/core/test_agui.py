"""Issue 14: the gate's events as AG-UI tool-call events, checked with ``ag-ui-protocol``.

The core's events come from real SDK streams (emulator); the adapter's output goes through
the package's SSE encoder and back through its ``Event`` models (``agui_util``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from agui_util import replay
from sdk_turn import APIS, sdk_turn
from toolstream_core import AssembleConfig, AssemblerEvent, Turn
from toolstream_core.agui import AGUIToolCallEvents
from toolstream_core.testing import TOOLS, VendorEmulator


def decided(emu: VendorEmulator, api: str, scenario: str, on_event: Any,
            config: AssembleConfig | None = None) -> Turn:
    return sdk_turn(emu, api, scenario, tools=TOOLS, config=config, on_event=on_event)


@pytest.mark.parametrize("api", APIS)
def test_committed_calls_stream_their_arguments_then_end(api: str, emulator: VendorEmulator) -> None:
    adapter = AGUIToolCallEvents(parent_message_id="msg-1")
    turn = decided(emulator, api, "parallel_calls", adapter)
    views = replay(adapter.events)
    assert set(views) == {c.id for c in turn.committed} and len(views) == 2
    for call in turn.committed:
        view = views[call.id]
        assert view.name == "get_weather"
        assert json.loads(view.args) == call.arguments  # the frontend saw the whole arguments
        assert view.result is None and view.rejection is None  # the tool's result is not ours
        assert view.order[0] == "TOOL_CALL_START" and view.order[-1] == "TOOL_CALL_END"
    starts = [e for e in adapter.events if e.type == "TOOL_CALL_START"]
    assert {e.parent_message_id for e in starts} == {"msg-1"}  # type: ignore[attr-defined]


@pytest.mark.parametrize("api", APIS)
def test_a_rejected_call_ends_with_its_reason(api: str, emulator: VendorEmulator) -> None:
    adapter = AGUIToolCallEvents()
    turn = decided(emulator, api, "truncated_length", adapter)
    [call] = turn.rejected
    [result] = turn.error_results()
    [view] = replay(adapter.events).values()
    assert view.id == call.id and view.name == "write_file"
    assert view.args == (call.raw_arguments or "")  # the half-written arguments were shown ...
    assert view.order[-2:] == ["TOOL_CALL_END", "TOOL_CALL_RESULT"]  # ... and the call closed
    assert view.result == result.content  # with the text the model receives
    assert view.rejection is not None
    assert view.rejection["reason"] == "stream_truncated" and view.rejection["state"] == "failed"


def test_private_arguments_show_progress_without_text(emulator: VendorEmulator) -> None:
    adapter = AGUIToolCallEvents(forward_args=False)
    turn = decided(emulator, "openai-chat", "truncated_length", adapter,
                   AssembleConfig(ui_forward_partial_args=False))
    [view] = replay(adapter.events).values()
    assert view.id == turn.rejected[0].id
    assert view.args == "" and view.order == ["TOOL_CALL_START", "TOOL_CALL_END", "TOOL_CALL_RESULT"]


def test_runs_are_kept_apart_by_scope(emulator: VendorEmulator) -> None:
    # Keys restart at every response; scope names the run an event belongs to (LangChain's
    # ToolstreamCallbackHandler: lambda: handler.run_id).
    run = ["run-1"]
    adapter = AGUIToolCallEvents(scope=lambda: run[0])
    first: list[AssemblerEvent] = []
    second: list[AssemblerEvent] = []
    decided(emulator, "anthropic", "single_call", first.append)
    decided(emulator, "anthropic", "truncated_length", second.append)

    def deliver(run_id: str, event: AssemblerEvent) -> None:
        run[0] = run_id
        adapter(event)

    for a, b in zip(first, second, strict=False):  # interleaved, as two concurrent runs would be
        deliver("run-1", a)
        deliver("run-2", b)
    for event in first[len(second):]:
        deliver("run-1", event)
    for event in second[len(first):]:
        deliver("run-2", event)
    views = replay(adapter.events)
    assert sorted((v.name, v.rejection is None) for v in views.values()) == [
        ("write_file", False), ("write_file", True)]


def test_other_objects_are_ignored() -> None:
    adapter = AGUIToolCallEvents()
    assert adapter.translate({"type": "text"}) == [] and adapter.events == []


def test_private_arguments_are_inferred_from_the_events(emulator: VendorEmulator) -> None:
    # The adapter is not told the config: a delta without text is enough to keep the
    # half-written arguments (and the final raw text) away from the frontend.
    adapter = AGUIToolCallEvents()
    decided(emulator, "anthropic", "truncated_length", adapter, AssembleConfig(ui_forward_partial_args=False))
    [view] = replay(adapter.events).values()
    assert view.args == "" and view.rejection is not None and view.rejection["reason"] == "stream_truncated"
