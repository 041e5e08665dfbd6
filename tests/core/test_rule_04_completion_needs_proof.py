"""Rule 4, completion needs proof (docs/DESIGN.md §4.4).

A call commits only when the transport completed *and* the vendor said the turn ended
normally; every other ending fails the open calls, even when their arguments happen to parse.
"""

from __future__ import annotations

import builders as b
import pytest
from builders import ADD, PROVIDERS, lenient, make, run, states
from toolstream_core import AssembleConfig, Assembler, CallState, Reason

# Each vendor's finish values by what they prove: a normal end commits, a cut by the token
# limit is truncation, anything else the vendor ended is an upstream error.
_FINISHES: dict[str, dict[Reason | None, tuple[str, ...]]] = {
    "openai-chat": {None: ("tool_calls", "stop", "function_call"),
                    Reason.stream_truncated: ("length",),
                    Reason.upstream_error: ("content_filter", "insufficient_system_resource")},
    "anthropic": {None: ("tool_use", "end_turn", "stop_sequence", "pause_turn"),
                  Reason.stream_truncated: ("max_tokens", "model_context_window_exceeded"),
                  Reason.upstream_error: ("refusal",)},
    "openai-responses": {None: ("completed",),
                         Reason.stream_truncated: ("incomplete",),
                         Reason.upstream_error: ("failed", "cancelled")},
    "gemini": {None: ("STOP",),
               Reason.stream_truncated: ("MAX_TOKENS",),
               Reason.upstream_error: ("SAFETY", "RECITATION", "MALFORMED_FUNCTION_CALL", "OTHER",
                                       "BLOCKLIST", "PROHIBITED_CONTENT", "UNEXPECTED_TOOL_CALL",
                                       "FINISH_REASON_UNSPECIFIED")},
}
COMPLETION_TABLE: list[tuple[str, str, Reason | None]] = [
    (provider, finish, reason)
    for provider, by_reason in _FINISHES.items()
    for reason, finishes in by_reason.items()
    for finish in finishes
]


@pytest.mark.parametrize("mode", ["strict", "lenient"])
@pytest.mark.parametrize(("provider", "finish", "reason"), COMPLETION_TABLE)
def test_rule4_completion_table(provider: str, finish: str, reason: Reason | None, mode: str) -> None:
    events = make(provider, [b.Call(id="call_1", name="add", arguments=ADD, cuts=(3,))], finish_reason=finish)
    turn = run(events, provider=provider, config=AssembleConfig(mode=mode))  # type: ignore[arg-type]
    [call] = turn.calls
    assert turn.finish_reason == finish  # verbatim
    if reason is None:
        assert (call.state, turn.complete) == (CallState.committed, True)
    else:
        assert (call.state, call.reason, turn.complete) == (CallState.failed, reason, False)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule4_parsable_prefix_then_cut_does_not_commit(provider: str) -> None:
    """``{"query":"a"}`` parses, but ``,"limit":10}`` was still to come: not proof."""
    prefix = [b.Call(id="call_1", name="search", arguments='{"query":"a"}', cuts=(9,))]
    for ending, transport in (("none", True), ("finish", False), ("truncated", True), ("error", True)):
        turn = run(make(provider, prefix, ending=ending), provider=provider, transport_complete=transport)
        [call] = turn.calls
        assert call.state is CallState.failed, (ending, transport)
        assert call.arguments is None
        assert call.reason in (Reason.stream_truncated, Reason.upstream_error)
        assert turn.complete is False
    # and in lenient mode a dropped connection is still no proof
    turn = run(make(provider, prefix, ending="none"), provider=provider, transport_complete=False, config=lenient())
    assert (turn.calls[0].state, turn.calls[0].reason) == (CallState.failed, Reason.stream_truncated)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule4_missing_finish_signal_is_stream_truncated(provider: str) -> None:
    turn = run(make(provider, [b.Call(id="call_1", name="add", arguments=ADD, cuts=(3,))], ending="none"),
               provider=provider)
    assert states(turn) == [("call_1", CallState.failed, Reason.stream_truncated)]
    assert (turn.finish_reason, turn.complete) == (None, False)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule4_lenient_clean_end_without_finish_reason_commits(provider: str) -> None:
    turn = run(make(provider, [b.Call(id="call_1", name="add", arguments=ADD, cuts=(3,))], ending="none"),
               provider=provider, config=lenient())
    assert states(turn) == [("call_1", CallState.committed, None)]
    assert turn.complete is True


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule4_dropped_connection_after_the_finish_signal_is_truncated(provider: str) -> None:
    error = ConnectionResetError("peer reset")
    assembler = Assembler(provider=provider)
    for event in make(provider, [b.Call(id="call_1", name="add", arguments=ADD, cuts=(3,))]):
        assembler.feed(event)
    turn = assembler.finish(transport_complete=False, error=error)
    assert states(turn) == [("call_1", CallState.failed, Reason.stream_truncated)]
    assert turn.complete is False
    assert turn.error is error


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule4_error_event_is_upstream_error(provider: str) -> None:
    turn = run(make(provider, [b.Call(id="call_1", name="add", arguments=ADD, cuts=(3,))], ending="error"),
               provider=provider)
    assert states(turn) == [("call_1", CallState.failed, Reason.upstream_error)]


def test_rule4_chat_content_filter_then_stop_is_still_upstream_error() -> None:
    events = b.openai_chat([b.Call(id="call_1", name="add", arguments=ADD)], finish_reason="content_filter")
    events.append({**events[0], "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    turn = run(events, provider="openai-chat")
    assert states(turn) == [("call_1", CallState.failed, Reason.upstream_error)]


def test_rule4_responses_content_filter_incomplete_is_upstream_error_even_if_completed_follows() -> None:
    events = b.openai_responses([b.Call(id="call_1", name="add", arguments=ADD)], ending="truncated",
                                incomplete_reason="content_filter")
    assert run(events, provider="openai-responses").calls[0].reason is Reason.upstream_error
    events += b.openai_responses([])[-1:]  # a response.completed after it
    turn = run(events, provider="openai-responses")
    assert states(turn) == [("call_1", CallState.failed, Reason.upstream_error)]


def test_rule4_anthropic_message_delta_without_message_stop_is_no_proof() -> None:
    turn = run(b.anthropic([b.Call(id="toolu_1", name="add", arguments=ADD)], message_stop=False), provider="anthropic")
    assert states(turn) == [("toolu_1", CallState.failed, Reason.stream_truncated)]


def test_rule4_anthropic_message_stop_without_stop_reason_is_no_proof() -> None:
    events = [e for e in b.anthropic([b.Call(id="toolu_1", name="add", arguments=ADD)]) if e["type"] != "message_delta"]
    turn = run(events, provider="anthropic")
    assert turn.calls[0].state is CallState.failed


def test_rule4_gemini_prompt_block_is_upstream_error() -> None:
    events = b.gemini([b.Call(id="g1", name="add", arguments=ADD)], ending="none", with_ids=True)
    events.append({"promptFeedback": {"blockReason": "SAFETY"}})
    events += b.gemini([])  # then a STOP
    turn = run(events, provider="gemini")
    assert states(turn) == [("g1", CallState.failed, Reason.upstream_error)]


def test_rule4_turn_complete_and_finish_reason_none_when_no_signal() -> None:
    turn = run(b.openai_chat([], ending="none"), provider="openai-chat")
    assert (turn.calls, turn.finish_reason, turn.complete) == ((), None, False)
    turn = run(b.openai_chat([]), provider="openai-chat")
    assert (turn.finish_reason, turn.complete) == ("tool_calls", True)
