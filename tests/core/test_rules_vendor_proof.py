"""DESIGN §4.4: on Responses the vendor's own proof is used: sequence numbers and final copies.

Every Responses event carries a ``sequence_number``; one that skips or goes back means events
were lost or repeated, so every call live then fails (``upstream_error``). The done events and
the terminal response carry the vendor's own copy of each call's arguments, which must equal
the assembled text. The probe: one argument delta and the done events lost (sequence 3, then 5,
then 8) must not commit ``delete(path="/tmp/a")`` when the vendor sent ``dry_run: true``.
"""

from __future__ import annotations

from typing import Any

import pytest
from responses_http import through_sdk
from toolstream_core import Assembler, CallState, Reason, Turn

SENT = '{"path":"/tmp/a","dry_run":true}'
ITEM = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "delete", "arguments": "",
        "status": "in_progress"}
DONE = {**ITEM, "arguments": SENT, "status": "completed"}


def probe_stream() -> list[dict[str, Any]]:
    """The whole stream, numbered 0..8; the probe loses events 4, 6 and 7."""
    arg = {"item_id": "fc_1", "output_index": 0}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": "r", "status": "in_progress", "output": []}},
        {"type": "response.in_progress", "response": {"id": "r", "status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "output_index": 0, "item": ITEM},
        {"type": "response.function_call_arguments.delta", **arg, "delta": '{"path":"/tmp/a"'},
        {"type": "response.function_call_arguments.delta", **arg, "delta": ',"dry_run":true'},
        {"type": "response.function_call_arguments.delta", **arg, "delta": "}"},
        {"type": "response.function_call_arguments.done", **arg, "arguments": SENT},
        {"type": "response.output_item.done", "output_index": 0, "item": DONE},
        {"type": "response.completed", "response": {"id": "r", "status": "completed", "output": [DONE]}},
    ]
    return [{**event, "sequence_number": n} for n, event in enumerate(events)]


def lost(events: list[dict[str, Any]], *positions: int) -> list[dict[str, Any]]:
    return [e for n, e in enumerate(events) if n not in positions]


def unnumbered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "sequence_number"} for e in events]


def run(events: list[Any], *, sdk: bool = False) -> Turn:
    assembler = Assembler(provider="openai-responses")
    for event in through_sdk(events) if sdk else events:
        assembler.feed(event)
    return assembler.finish()


def verdicts(turn: Turn) -> list[tuple[CallState, Reason | None]]:
    return [(c.state, c.reason) for c in turn.calls]


@pytest.mark.parametrize("sdk", [False, True], ids=["dicts", "sdk"])
def test_rule4_the_whole_stream_commits_what_the_vendor_sent(sdk: bool) -> None:
    [call] = run(probe_stream(), sdk=sdk).calls
    assert call.committed and call.arguments == {"path": "/tmp/a", "dry_run": True}


@pytest.mark.parametrize("sdk", [False, True], ids=["dicts", "sdk"])
def test_rule4_a_lost_delta_and_lost_done_events_commit_nothing(sdk: bool) -> None:
    turn = run(lost(probe_stream(), 4, 6, 7), sdk=sdk)
    assert verdicts(turn) == [(CallState.failed, Reason.upstream_error)]
    assert any("skips" in a for a in turn.anomalies)


@pytest.mark.parametrize("sdk", [False, True], ids=["dicts", "sdk"])
def test_rule4_without_sequence_numbers_the_final_copy_catches_the_loss(sdk: bool) -> None:
    turn = run(unnumbered(lost(probe_stream(), 4, 6, 7)), sdk=sdk)
    assert verdicts(turn) == [(CallState.failed, Reason.upstream_error)]


def test_rule4_absent_sequence_numbers_are_fine() -> None:
    assert run(unnumbered(probe_stream())).calls[0].committed


def test_rule4_a_sequence_number_that_goes_back_fails_the_live_calls() -> None:
    events = probe_stream()
    events.insert(4, events[3])  # the same delta delivered twice
    assert verdicts(run(events)) == [(CallState.failed, Reason.upstream_error)]


def test_rule4_a_sequence_gap_among_harmless_events_still_fails_the_live_calls() -> None:
    events = probe_stream()  # lose the response.in_progress after the call opened
    events.insert(3, {"type": "response.in_progress", "sequence_number": 3,
                      "response": {"id": "r", "status": "in_progress"}})
    numbered = [{**e, "sequence_number": n} for n, e in enumerate(events)]
    assert run(numbered).calls[0].committed
    assert verdicts(run(lost(numbered, 3))) == [(CallState.failed, Reason.upstream_error)]


def test_rule4_a_call_opened_after_the_gap_is_not_touched_by_it() -> None:
    events = probe_stream()
    events[2:2] = [{"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 5,
                    "content_index": 0, "delta": "hi"}] * 2
    numbered = [{**e, "sequence_number": n} for n, e in enumerate(events)]
    assert run(lost(numbered, 2)).calls[0].committed  # nothing was live when the text was lost


@pytest.mark.parametrize("value", ["7", 7.0, True, [7]])
def test_rule4_a_mistyped_sequence_number_fails_the_live_calls_and_the_one_it_opens(value: Any) -> None:
    events = probe_stream()
    events[2] = {**events[2], "sequence_number": value}  # the event that opens the call
    assert verdicts(run(events)) == [(CallState.failed, Reason.upstream_error)]


def test_rule4_a_final_copy_that_differs_from_the_assembled_text_fails_the_call() -> None:
    events = probe_stream()
    other = {**DONE, "arguments": '{"path":"/tmp/a"}'}
    events[-1] = {**events[-1], "response": {"id": "r", "status": "completed", "output": [other]}}
    turn = run(events)
    assert verdicts(turn) == [(CallState.failed, Reason.upstream_error)]


def test_rule4_a_final_copy_of_a_call_that_never_streamed_fails_the_live_calls() -> None:
    events = probe_stream()
    ghost = {**DONE, "id": "fc_2", "call_id": "call_2"}
    events[-1] = {**events[-1], "response": {"id": "r", "status": "completed", "output": [DONE, ghost]}}
    assert verdicts(run(events)) == [(CallState.failed, Reason.upstream_error)]
