"""Rule 8, bounds (docs/DESIGN.md §4.8).

Argument size is counted in UTF-8 bytes and capped per call (buffer released at once), the
number of calls is capped per stream, and ``drop_with_protocol_repair`` moves bad calls aside.
"""

from __future__ import annotations

import json
from typing import Any

import builders as b
import pytest
from builders import ADD, PROVIDERS, TEXT_VENDORS, make, record_events, run, snapshot, states
from hypothesis import given, settings
from hypothesis import strategies as st
from toolstream_core import (
    ArgumentsDelta,
    AssembleConfig,
    Assembler,
    CallCommitted,
    CallRejected,
    CallState,
    Reason,
)
from toolstream_core._call import ROOM


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule8_size_is_counted_in_utf8_bytes(provider: str) -> None:
    text = json.dumps({"s": "é" * 30}, ensure_ascii=False)  # 38 code points, 68 bytes
    assert len(text) < 50 < len(text.encode("utf-8"))
    config = AssembleConfig(max_tool_argument_bytes=50)
    turn = run(make(provider, [b.Call(id="call_1", name="f", arguments=text, cuts=(5, 20))]), provider=provider,
               config=config)
    assert states(turn) == [("call_1", CallState.failed, Reason.arguments_exceed_max_bytes)]
    exact = AssembleConfig(max_tool_argument_bytes=len(text.encode("utf-8")))
    turn = run(make(provider, [b.Call(id="call_1", name="f", arguments=text, cuts=(5, 20))]), provider=provider,
               config=exact)
    assert states(turn) == [("call_1", CallState.committed, None)]


@pytest.mark.parametrize("provider", TEXT_VENDORS)
def test_rule8_overflow_fails_at_once_releases_the_buffer_and_drops_later_fragments(provider: str) -> None:
    text = json.dumps({"blob": "y" * 400})
    config = AssembleConfig(max_tool_argument_bytes=100)
    assembler, seen = record_events(provider=provider, config=config)
    events = make(provider, [b.Call(id="call_1", name="f", arguments=text, cuts=range(10, 400, 10))], ending="none")
    rejected_at = None
    for position, event in enumerate(events):
        assembler.feed(event)
        if rejected_at is None and any(isinstance(e, CallRejected) for e in seen):
            rejected_at = position
    assert rejected_at is not None and rejected_at < len(events) - 2, "failed while streaming, not at the end"
    after = seen[next(i for i, e in enumerate(seen) if isinstance(e, CallRejected)):]
    assert not [e for e in after if isinstance(e, ArgumentsDelta)], "later fragments are dropped"
    assert max(e.total_bytes for e in seen if isinstance(e, ArgumentsDelta)) <= 100
    turn = assembler.finish()
    [call] = turn.calls
    assert call.reason is Reason.arguments_exceed_max_bytes
    assert call.raw_arguments is None or len(call.raw_arguments.encode()) <= 100


def test_rule8_responses_done_text_and_anthropic_start_input_are_bounded_too() -> None:
    config = AssembleConfig(max_tool_argument_bytes=64)
    big = json.dumps({"blob": "z" * 200})
    turn = run(b.openai_responses([b.Call(id="c1", name="f", arguments=big)], deltas=False),
               provider="openai-responses", config=config)
    assert turn.calls[0].reason is Reason.arguments_exceed_max_bytes
    turn = run(b.anthropic([b.Call(id="t1", name="f", arguments="")], start_inputs={0: json.loads(big)}),
               provider="anthropic", config=config)
    assert turn.calls[0].reason is Reason.arguments_exceed_max_bytes


def test_rule8_gemini_partial_args_are_counted_like_structured_args() -> None:
    """The same arguments as ``args`` or as ``partialArgs`` meet the same byte cap."""
    text = '{"location":"San Francisco","unit":"celsius"}'  # 45 bytes of JSON, 20 bytes of values
    config = AssembleConfig(max_tool_argument_bytes=30)
    whole = run(b.gemini([b.Call(id="g1", name="w", arguments=text)], with_ids=True), provider="gemini", config=config)
    streamed = run(b.gemini([
        b.Call(id="g1", name="w", arguments=text, cuts=(3,)),
    ], mode="partial", with_ids=True), provider="gemini",
                   config=config)
    assert whole.calls[0].reason is Reason.arguments_exceed_max_bytes
    assert streamed.calls[0].reason is Reason.arguments_exceed_max_bytes


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule8_too_many_tool_calls_counted_over_the_whole_stream(provider: str) -> None:
    calls = [b.Call(id=f"call_{n}", name="add", arguments=ADD) for n in range(4)]
    turn = run(make(provider, calls), provider=provider, config=AssembleConfig(max_tool_calls_in_flight_assemble=2))
    assert states(turn) == [("call_0", CallState.committed, None), ("call_1", CallState.committed, None),
                            ("call_2", CallState.failed, Reason.too_many_tool_calls),
                            ("call_3", CallState.failed, Reason.too_many_tool_calls)]
    assert [r.tool_call_id for r in turn.error_results()] == ["call_2", "call_3"]


@pytest.mark.parametrize("text", ["[1,2]", '"just text"', "3.5", "null", "true"])
@pytest.mark.parametrize("provider", TEXT_VENDORS)
def test_rule8_arguments_must_be_object_false_commits_any_json_value(provider: str, text: str) -> None:
    config = AssembleConfig(arguments_must_be_object=False)
    turn = run(make(provider, [b.Call(id="call_1", name="f", arguments=text)]), provider=provider, config=config)
    assert (turn.calls[0].state, turn.calls[0].arguments) == (CallState.committed, json.loads(text))


@pytest.mark.parametrize("provider", TEXT_VENDORS)
def test_rule8_drop_with_protocol_repair_moves_invalid_json_to_dropped(provider: str) -> None:
    config = AssembleConfig(on_invalid_json="drop_with_protocol_repair")
    calls = [
        b.Call(id="call_1", name="f", arguments='{"a":'),
        b.Call(id="call_2", name="add", arguments=ADD),
        b.Call(id="call_3", name="f", arguments="[1]"),
    ]
    turn = run(make(provider, calls), provider=provider, config=config)
    assert [(c.id, c.reason) for c in turn.dropped] == [("call_1", Reason.invalid_json)]
    assert [c.id for c in turn.calls] == ["call_2", "call_3"]
    assert "call_1" not in [r.tool_call_id for r in turn.error_results()]
    # a failure other than invalid_json is still rejected and paired
    assert [(r.tool_call_id, r.reason) for r in turn.error_results()] == [("call_3", Reason.arguments_not_object)]


def test_rule8_overflow_with_drop_with_protocol_repair_goes_to_dropped() -> None:
    config = AssembleConfig(max_tool_argument_bytes=16, on_args_overflow="drop_with_protocol_repair")
    turn = run(b.anthropic([
        b.Call(id="t1", name="f", arguments=json.dumps({"x": "y" * 40}), cuts=(5,)),
        b.Call(id="t2", name="add", arguments=ADD),
    ]),
               provider="anthropic", config=config)
    assert [(c.id, c.reason) for c in turn.dropped] == [("t1", Reason.arguments_exceed_max_bytes)]
    assert states(turn) == [("t2", CallState.committed, None)]
    assert turn.error_results() == []


def test_rule8_drop_with_protocol_repair_does_not_drop_truncated_calls() -> None:
    config = AssembleConfig(on_invalid_json="drop_with_protocol_repair")
    turn = run(b.openai_chat([b.Call(id="call_1", name="f", arguments='{"a":')], ending="none"), provider="openai-chat",
               config=config)
    assert turn.dropped == ()
    assert states(turn) == [("call_1", CallState.failed, Reason.stream_truncated)]


# -- the run budget (seed 004 gate step 5: max_tool_calls_per_run) ---------------------------

THREE = [b.Call(id="call_1", name="add", arguments=ADD), b.Call(id="call_2", name="add", arguments=ADD),
         b.Call(id="call_3", name="add", arguments=ADD)]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule8_a_call_past_the_run_budget_fails_run_budget_exceeded(provider: str) -> None:
    turn = run(make(provider, THREE), provider=provider, run_budget=2)
    assert states(turn) == [("call_1", CallState.committed, None), ("call_2", CallState.committed, None),
                            ("call_3", CallState.failed, Reason.run_budget_exceeded)]
    assert turn.run_budget_left == 0
    [result] = turn.error_results()
    assert result.reason is Reason.run_budget_exceeded
    assert result.tool_call_id == "call_3"
    assert "used up its budget of tool calls [run_budget_exceeded]" in result.content
    assert "Do not retry it or call other tools in this run" in result.content


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule8_a_run_budget_of_zero_commits_nothing(provider: str) -> None:
    turn = run(make(provider, THREE[:1]), provider=provider, run_budget=0)
    assert states(turn) == [("call_1", CallState.failed, Reason.run_budget_exceeded)]
    assert turn.run_budget_left == 0


def test_rule8_the_config_maximum_is_the_budget_when_the_caller_says_nothing() -> None:
    config = AssembleConfig(max_tool_calls_per_run=1)
    turn = run(b.openai_chat(THREE), provider="openai-chat", config=config)
    assert [c.reason for c in turn.calls] == [None, Reason.run_budget_exceeded, Reason.run_budget_exceeded]
    assert turn.run_budget_left == 0
    # What the caller says is left wins, but never past the maximum.
    assert run(b.openai_chat(THREE), provider="openai-chat", config=config, run_budget=0).committed == ()
    assert len(run(b.openai_chat(THREE), provider="openai-chat", config=config, run_budget=5).committed) == 1
    unbounded = run(b.openai_chat(THREE), provider="openai-chat")
    assert (len(unbounded.committed), unbounded.run_budget_left) == (3, None)


def test_rule8_max_tool_calls_per_run_two_stops_a_third_call_across_turns() -> None:
    """The issue's "done when": an agent making one call per turn, carrying ``run_budget_left``
    from each turn to the next, gets its third call answered with an error result."""
    config = AssembleConfig.from_mapping({"max_tool_calls_per_run": 2})
    left: int | None = None
    verdicts = []
    for n in range(1, 4):
        turn = run(b.openai_chat([b.Call(id=f"call_{n}", name="add", arguments=ADD)]), provider="openai-chat",
                   config=config, run_budget=left)
        left = turn.run_budget_left
        verdicts.append((turn.calls[0].state, turn.calls[0].reason, left))
    assert verdicts == [(CallState.committed, None, 1), (CallState.committed, None, 0),
                        (CallState.failed, Reason.run_budget_exceeded, 0)]


def test_rule8_only_calls_that_pass_every_other_check_use_the_budget() -> None:
    """Gate step 5 comes last: a call failing its own check keeps its reason and costs nothing."""
    calls = [b.Call(id="call_1", name="add", arguments='{"a":'), b.Call(id="call_2", name="add", arguments=ADD),
             b.Call(id="call_3", name="add", arguments=ADD)]
    turn = run(b.openai_chat(calls), provider="openai-chat", run_budget=1)
    assert states(turn) == [("call_1", CallState.failed, Reason.invalid_json),
                            ("call_2", CallState.committed, None),
                            ("call_3", CallState.failed, Reason.run_budget_exceeded)]


def test_rule8_the_budget_goes_to_the_calls_in_queue_order() -> None:
    """``finalize_order: provider_index`` is the order calls are queued in, so the budget
    follows it, not the order the calls happened to arrive in."""
    events = b.openai_chat([b.Call(id="late", name="add", arguments=ADD),
                            b.Call(id="early", name="add", arguments=ADD)])
    for event in events:  # the call that arrives first carries the higher vendor index
        for choice in event.get("choices", []):
            for call in (choice.get("delta") or {}).get("tool_calls") or []:
                call["index"] = 1 - call["index"]
    turn = run(events, provider="openai-chat", run_budget=1)
    assert states(turn) == [("early", CallState.committed, None),
                            ("late", CallState.failed, Reason.run_budget_exceeded)]
    arrival = run(events, provider="openai-chat", run_budget=1, config=AssembleConfig(finalize_order="arrival"))
    assert states(arrival) == [("late", CallState.committed, None),
                               ("early", CallState.failed, Reason.run_budget_exceeded)]


@pytest.mark.parametrize("provider", ["anthropic", "openai-responses", "gemini"])
def test_rule8_pipelined_commits_count_against_the_budget_first(provider: str) -> None:
    """DESIGN 4.10: a call committed before the stream ends is checked against the budget at
    that moment; the calls decided at the end get what is left."""
    calls = [b.Call(id="call_1", name="add", arguments=ADD), b.Call(id="call_2", name="write", arguments=ADD),
             b.Call(id="call_3", name="add", arguments=ADD)]
    assembler, seen = record_events(provider=provider, config=b.PIPELINE, run_budget=1)
    for event in make(provider, calls):
        assembler.feed(event)
    early = [e.call.id for e in seen if isinstance(e, CallCommitted)]
    turn = assembler.finish()
    assert early == ["call_1"], "the first call committed before the stream ended"
    assert states(turn) == [("call_1", CallState.committed, None),
                            ("call_2", CallState.failed, Reason.run_budget_exceeded),
                            ("call_3", CallState.failed, Reason.run_budget_exceeded)]
    assert turn.run_budget_left == 0


@pytest.mark.parametrize("value", [-1, 1.0, "2", True])
def test_rule8_run_budget_must_be_a_count(value: object) -> None:
    with pytest.raises(ValueError, match="run_budget"):
        run([], provider="openai-chat", run_budget=value)


# -- with no reader of deltas, the hot call's bytes are counted in runs of ROOM fragments -------


@pytest.mark.parametrize("provider", TEXT_VENDORS)
def test_rule8_without_a_reader_overflow_fails_within_room_fragments_of_the_cap(provider: str) -> None:
    """No ``on_event``: the bytes are counted at the look every ``ROOM`` fragments, so the call
    fails, while it streams, at most ``ROOM`` events after the one where a reader of deltas
    (counted per fragment) saw it fail; its buffer goes with it."""
    text = json.dumps({"blob": "y" * 2000})
    config = AssembleConfig(max_tool_argument_bytes=100)
    events = make(provider, [b.Call(id="call_1", name="f", arguments=text, cuts=range(10, 2000, 10))],
                  ending="none")

    def failed_at(assembler: Assembler) -> int:
        return next(i for i, event in enumerate(events)
                    if any(isinstance(e, CallRejected) for e in assembler.feed(event)))

    exact = failed_at(Assembler(provider=provider, config=config, deltas=True))  # type: ignore[arg-type]
    in_runs = Assembler(provider=provider, config=config)  # type: ignore[arg-type]
    assert exact <= failed_at(in_runs) <= exact + ROOM < len(events) - 100
    [call] = in_runs.finish().calls
    assert (call.reason, call.raw_arguments) == (Reason.arguments_exceed_max_bytes, None)


@pytest.mark.parametrize("provider", TEXT_VENDORS)
@pytest.mark.parametrize("ending", ["finish", "none"])
def test_rule8_bytes_still_waiting_are_counted_before_any_decision(provider: str, ending: str) -> None:
    """Fewer than ``ROOM`` fragments, one byte past the cap, then the end of the call and of
    the stream: no look came, and the call still fails the cap instead of committing."""
    config = AssembleConfig(max_tool_argument_bytes=len(ADD) - 1)
    events = make(provider, [b.Call(id="call_1", name="f", arguments=ADD, cuts=(3, 6, 9))], ending=ending)
    assert len(events) < ROOM
    turn = run(events, provider=provider, config=config, transport_complete=ending == "finish")
    assert states(turn) == [("call_1", CallState.failed, Reason.arguments_exceed_max_bytes)]


@pytest.mark.parametrize("provider", TEXT_VENDORS)
def test_rule8_a_cancel_counts_the_waiting_bytes_first(provider: str) -> None:
    config = AssembleConfig(max_tool_argument_bytes=len(ADD) - 1)
    events = make(provider, [b.Call(id="call_1", name="f", arguments=ADD, cuts=(3, 6, 9))], ending="none")
    assembler = Assembler(provider=provider, config=config)  # type: ignore[arg-type]
    for event in events:
        assembler.feed(event)
    assembler.cancel()
    assert states(assembler.finish()) == [("call_1", CallState.failed, Reason.arguments_exceed_max_bytes)]


_CUT_TEXT = st.text(st.sampled_from(list('ab"\\\u00e9\u4e2d\U0001f600')), min_size=1, max_size=120)


@given(data=st.data())
@settings(max_examples=150, derandomize=True, deadline=None)
def test_rule8_counting_in_runs_decides_as_counting_each_fragment(data: st.DataObject) -> None:
    """Property: with no reader (counted in runs) and with one (counted per fragment), every
    stream, cut and cap gives the same Turn."""
    provider = data.draw(st.sampled_from(TEXT_VENDORS))
    text = json.dumps({"s": data.draw(_CUT_TEXT)}, ensure_ascii=False)
    cuts = sorted(data.draw(st.sets(st.integers(1, len(text) - 1), max_size=len(text) - 1)))
    cap = data.draw(st.integers(1, 2 * len(text.encode("utf-8"))))
    ending = data.draw(st.sampled_from(["finish", "none"]))
    events = make(provider, [b.Call(id="call_1", name="f", arguments=text, cuts=tuple(cuts))], ending=ending)
    config = AssembleConfig(max_tool_argument_bytes=cap)
    in_runs = run(events, provider=provider, config=config, transport_complete=ending == "finish")
    each = Assembler(provider=provider, config=config, on_event=lambda event: None)  # type: ignore[arg-type]
    for event in events:
        each.feed(event)
    assert snapshot(in_runs) == snapshot(each.finish(transport_complete=ending == "finish"))
    overflowed = len(text.encode("utf-8")) > cap
    assert (in_runs.calls[0].reason is Reason.arguments_exceed_max_bytes) == overflowed


@pytest.mark.parametrize("provider", ["openai-chat", "anthropic"])
def test_rule8_a_fragment_for_another_call_counts_the_waiting_bytes_first(provider: str) -> None:
    """Two calls interleaved: the first goes one byte past the cap in fewer than ``ROOM``
    fragments, then the second takes the fast path's hot slot. The first still fails the cap."""
    config = AssembleConfig(max_tool_argument_bytes=len(ADD) - 1)
    calls = [b.Call(id="call_1", name="f", arguments=ADD + " ", cuts=(3, 6, 9)),
             b.Call(id="call_2", name="g", arguments=ADD[:-1] + "}", cuts=(3, 6, 9))]
    events = make(provider, calls, schedule=b.round_robin([5, 5]))
    turn = run(events, provider=provider, config=config)
    assert states(turn) == [("call_1", CallState.failed, Reason.arguments_exceed_max_bytes),
                            ("call_2", CallState.failed, Reason.arguments_exceed_max_bytes)]
    calls[1] = b.Call(id="call_2", name="g", arguments='{"a":2}', cuts=(3,))
    turn = run(make(provider, calls, schedule=b.round_robin([5, 3])), provider=provider, config=config)
    assert states(turn) == [("call_1", CallState.failed, Reason.arguments_exceed_max_bytes),
                            ("call_2", CallState.committed, None)]


def test_rule8_an_idle_timeout_counts_the_waiting_bytes_first() -> None:
    """The drivers' idle timeout decides the live calls: past the cap is what fails them."""
    from toolstream_core._assembler import fail_unfinished

    config = AssembleConfig(max_tool_argument_bytes=len(ADD) - 1)
    assembler = Assembler(provider="openai-chat", config=config)
    for event in make("openai-chat", [b.Call(id="call_1", name="f", arguments=ADD, cuts=(3, 6, 9))],
                      ending="none"):
        assembler.feed(event)
    fail_unfinished(assembler, Reason.idle_timeout, "no event for 1 s")
    assert states(assembler.finish()) == [("call_1", CallState.failed, Reason.arguments_exceed_max_bytes)]


def test_rule8_an_unreadable_event_counts_the_waiting_bytes_first() -> None:
    """An event that raises on the fast path itself goes to ``fail_live``: the call it would
    have tainted had already passed the cap, and that is what it fails with."""

    class Unreadable:
        @property
        def choices(self) -> Any:
            raise RuntimeError("not readable")

    config = AssembleConfig(max_tool_argument_bytes=len(ADD) - 1)
    assembler = Assembler(provider="openai-chat", config=config)
    for event in make("openai-chat", [b.Call(id="call_1", name="f", arguments=ADD, cuts=(3, 6, 9))],
                      ending="none"):
        assembler.feed(event)
    assembler.feed(Unreadable())
    assert states(assembler.finish()) == [("call_1", CallState.failed, Reason.arguments_exceed_max_bytes)]


def test_rule8_a_run_is_room_fragments_long() -> None:
    """The hot call looks at its ``ROOM``-th fragment, the one that made it hot included: a
    call past the cap from its second fragment fails on exactly that fragment, not one later."""
    def chunk(tool_call: dict[str, Any]) -> dict[str, Any]:
        return {"id": "c", "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": {"tool_calls": [tool_call]}, "finish_reason": None}]}

    assembler = Assembler(provider="openai-chat", config=AssembleConfig(max_tool_argument_bytes=100))
    assembler.feed(chunk({"index": 0, "id": "call_1", "type": "function",
                          "function": {"name": "f", "arguments": ""}}))  # fragment 1
    rejected = [i for i in range(2, ROOM + 3)
                if any(isinstance(e, CallRejected)
                       for e in assembler.feed(chunk({"index": 0, "function": {"arguments": "y" * 200}})))]
    assert rejected == [ROOM]
