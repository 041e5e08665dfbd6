"""Rule 3, arguments are an opaque string (docs/DESIGN.md §4.3).

Fragments are concatenated in arrival order; nothing parses, trims or inspects them while the
call is open (Anthropic's ``input: {}`` placeholder ignored, Responses done events checked).
"""

from __future__ import annotations

import json

import builders as b
import pytest
from builders import ADD, PROVIDERS, SEARCH, TEXT_VENDORS, make, record_events, run, states
from toolstream_core import CallCommitted, CallRejected, CallState, Reason


@pytest.mark.parametrize("provider", TEXT_VENDORS)
def test_rule3_raw_arguments_are_the_exact_concatenation(provider: str) -> None:
    text = ' \n{"path": "/tmp/ä ✓", "n": 1}\t '
    turn = run(make(provider, [b.Call(id="call_1", name="write", arguments=text, cuts=range(0, 40, 3))]),
               provider=provider)
    [call] = turn.calls
    assert call.raw_arguments == text  # never trimmed
    assert call.arguments == {"path": "/tmp/ä ✓", "n": 1}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule3_nothing_is_decided_while_the_call_is_open(provider: str) -> None:
    """A fragment that is a complete JSON object on its own decides nothing before the end."""
    calls = [
        b.Call(id="call_1", name="search", arguments='{"query":"a"}{"x":1', cuts=(13,)),
    ] if provider == "openai-chat" else [
        b.Call(id="call_1", name="search", arguments='{"query":"a"}', cuts=(13,))]
    assembler, seen = record_events(provider=provider)
    for event in make(provider, calls, ending="none"):
        assembler.feed(event)
    assert not [e for e in seen if isinstance(e, (CallCommitted, CallRejected))]


def test_rule3_anthropic_initial_empty_input_placeholder_is_ignored() -> None:
    turn = run(b.anthropic([b.Call(id="toolu_1", name="add", arguments=ADD, cuts=(1, 5))]), provider="anthropic")
    assert turn.calls[0].raw_arguments == ADD  # not "{}" + ADD
    assert turn.calls[0].arguments == {"a": 2, "b": 3}


def test_rule3_anthropic_complete_input_in_content_block_start() -> None:
    events = b.anthropic([
        b.Call(id="toolu_1", name="roll", arguments=""),
        b.Call(id="toolu_2", name="add", arguments=ADD, cuts=(3,)),
    ], start_inputs={0: {"player": "player1"}})
    turn = run(events, provider="anthropic")
    assert [(c.id, c.arguments, c.state) for c in turn.calls] == [
        ("toolu_1", {"player": "player1"}, CallState.committed), ("toolu_2", {"a": 2, "b": 3}, CallState.committed)]
    assert json.loads(turn.calls[0].raw_arguments) == {"player": "player1"}


def test_rule3_anthropic_complete_tool_use_in_message_start() -> None:
    events = b.anthropic([b.Call(id="toolu_1", name="roll", arguments='{"player":"player2"}')], in_message_start=True)
    turn = run(events, provider="anthropic")
    assert [(c.id, c.name, c.arguments, c.state) for c in turn.calls] == [
        ("toolu_1", "roll", {"player": "player2"}, CallState.committed)]


def test_rule3_responses_without_deltas_takes_the_done_event_arguments() -> None:
    events = b.openai_responses([
        b.Call(id="call_1", name="search", arguments=SEARCH),
        b.Call(id="call_2", name="add", arguments=ADD),
    ], deltas=False)
    turn = run(events, provider="openai-responses")
    assert [(c.raw_arguments, c.state) for c in turn.calls] == [(SEARCH, CallState.committed),
                                                                 (ADD, CallState.committed)]


def test_rule3_responses_only_output_item_done_carries_arguments() -> None:
    events = b.openai_responses([b.Call(id="call_1", name="search", arguments=SEARCH)], deltas=False,
                                arguments_done_event=False)
    turn = run(events, provider="openai-responses")
    assert [(c.raw_arguments, c.state) for c in turn.calls] == [(SEARCH, CallState.committed)]


def test_rule3_responses_done_event_contradicting_deltas_is_upstream_error() -> None:
    calls = [
        b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(5, 12)),
        b.Call(id="call_2", name="add", arguments=ADD, cuts=(3,)),
    ]
    events = b.openai_responses(calls, done_arguments={0: '{"query":"something else"}'})
    turn = run(events, provider="openai-responses")
    assert states(turn) == [("call_1", CallState.failed, Reason.upstream_error),
                            ("call_2", CallState.committed, None)]


def test_rule3_gemini_structured_args_are_the_value() -> None:
    args = {"n": 1.5, "s": "ünï", "deep": {"list": [1, None, True]}}
    turn = run(b.gemini([b.Call(id="g1", name="f", arguments=json.dumps(args))], with_ids=True), provider="gemini")
    [call] = turn.calls
    assert call.arguments == args
    assert json.loads(call.raw_arguments) == args
