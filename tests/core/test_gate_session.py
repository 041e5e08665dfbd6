"""``GateSession``: one model call through the gate, the object under both shims (DESIGN §3).

Its verbs (begin, observe, end, cancel, idle_timeout), its observers and its fault policy are
what both shims rely on for "the same input, the same outcome"; the shims' own tests drive it
through the real frameworks. Here it is fed wire events (the sans-I/O layer below the SDKs).
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from builders import Call, make
from toolstream_core import AssembleConfig, AssemblerEvent, CallCommitted, CallOpened, Reason, Turn
from toolstream_core.integration import GateSession

TOOLS = {"add": {"type": "object", "required": ["a"]}}
ADD = Call(id="c1", name="add", arguments='{"a": 1}', cuts=(3,))


def session(**kw: Any) -> GateSession:
    return GateSession(tools=TOOLS, config=AssembleConfig(), provider="anthropic", **kw)


def test_the_request_decides_provider_and_limit_until_something_is_observed() -> None:
    gate = session(limit=5)
    gate.begin("openai-chat", {"max_completion_tokens": 77})
    assert (gate.provider, gate.limit) == ("openai-chat", 77)
    gate.observe(make("openai-chat", [ADD])[0])
    gate.begin("gemini", {"max_tokens": 1})  # too late: the assembler was built
    assert (gate.provider, gate.limit, gate.assembler.max_output_tokens) == ("openai-chat", 77, 77)


def test_observers_see_each_event_once_the_shims_channel_first() -> None:
    order: list[str] = []
    turns: list[Turn] = []

    def forward(event: AssemblerEvent) -> None:
        order.append(f"forward:{type(event).__name__}")

    def on_event(event: AssemblerEvent) -> None:
        order.append(f"user:{type(event).__name__}")

    gate = session(forward=forward, on_event=on_event, on_turn=turns.append)
    caused = [e for event in make("anthropic", [ADD]) for e in gate.observe(event)]
    assert [type(e) for e in caused][:1] == [CallOpened]
    assert order[:2] == ["forward:CallOpened", "user:CallOpened"]
    turn = gate.end()
    assert turns == [turn] and gate.end() is turn  # idempotent, on_turn once
    assert [c.name for c in gate.committed] == ["add"]
    record = gate.record
    assert record is not None and record["mode"] == "tap" and record["committed"][0]["id"] == "c1"


def test_a_failing_observer_is_logged_and_changes_nothing(caplog: pytest.LogCaptureFixture) -> None:
    def broken(_: Any) -> None:
        raise RuntimeError("observer bug")

    gate = session(on_event=broken, on_turn=broken, log=logging.getLogger("shim"))
    for event in make("anthropic", [ADD]):
        gate.observe(event)
    assert [c.name for c in gate.end().committed] == ["add"]
    failed = [r for r in caplog.records if r.name == "shim" and r.exc_info]
    assert {r.getMessage() for r in failed} == {"toolstream: on_event callback failed",
                                                "toolstream: on_turn callback failed"}


def test_a_tapped_stream_that_ended_in_error_is_no_clean_end() -> None:
    gate = session()
    gate.raw_start("anthropic", {"max_tokens": 1000})
    for event in make("anthropic", [ADD]):
        gate.raw_event(event)
    gate.raw_end(ConnectionError("reset"))
    turn = gate.end()  # the framework swallowed the error: the tap still saw it
    assert not turn.complete and [c.reason for c in turn.rejected] == [Reason.stream_truncated]


@pytest.mark.parametrize("policy", ["pair", "raise"])
def test_the_fault_policy_raises_only_what_it_cannot_answer(policy: Any) -> None:
    cut = make("anthropic", [ADD])[:3]  # the call opened, then the connection dropped
    error = ConnectionError("dropped")
    gate = session(on_stream_error=policy)
    for event in cut:
        gate.observe(event)
    turn = gate.end(error)
    assert gate.had_calls and [c.reason for c in turn.rejected] == [Reason.stream_truncated]
    assert gate.raises(error) is (policy == "raise") and gate.record["error"] is not None  # type: ignore[index]
    text_only = session(on_stream_error=policy)
    text_only.end(error)
    assert text_only.raises(error) and not text_only.raises(None)


def test_cancel_and_idle_timeout_decide_every_open_call() -> None:
    for verb, reason in (("cancel", Reason.cancelled), ("idle", Reason.idle_timeout)):
        gate = session()
        for event in make("anthropic", [ADD])[:3]:
            gate.observe(event)
        turn = gate.cancel("stop") if verb == "cancel" else gate.idle_timeout(2)
        assert [c.reason for c in turn.rejected] == [reason]
        assert gate.observe(make("anthropic", [ADD])[-1]) == []  # decided: absorbed
    assert isinstance(gate.error, TimeoutError) and not gate.raises(gate.error)  # paired


def test_committed_calls_are_exposed_as_they_commit() -> None:
    config = AssembleConfig(execute_before_stream_end=True, allow_pipelined_execute=["add"])
    second = Call(id="c2", name="add", arguments='{"a": 2}')
    gate = GateSession(tools=TOOLS, config=config, provider="anthropic")
    events = make("anthropic", [ADD, second])
    seen: list[list[str]] = []
    for event in events:
        caused = gate.observe(event)
        if any(isinstance(e, CallCommitted) for e in caused):
            seen.append([c.id or "" for c in gate.committed])
    assert seen[0] == ["c1"] and gate.turn is None
    assert [c.id for c in gate.end().committed] == ["c1", "c2"]


def test_an_unknown_fault_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="on_stream_error"):
        session(on_stream_error="ignore")


def test_the_sdk_error_the_tap_saw_is_the_evidence() -> None:
    """A framework may wrap the SDK's exception in its own class, which says nothing about the
    vendor (DESIGN 4.4 reads the SDK's class): the one the tap saw decides."""

    class APIError(Exception):  # the SDK's vendor-error class, as the core recognises it
        __module__ = "anthropic._exceptions"

    gate = session()
    gate.raw_start("anthropic", {})
    for event in make("anthropic", [ADD])[:3]:
        gate.raw_event(event)
    vendor = APIError("overloaded")
    gate.raw_end(vendor)
    turn = gate.end(RuntimeError("ChatModelError: overloaded"))
    assert turn.error is vendor and gate.error is vendor
    assert [c.reason for c in turn.rejected] == [Reason.upstream_error]
