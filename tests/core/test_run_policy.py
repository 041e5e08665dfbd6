"""``RunPolicy``: the agent run's decisions, sans-I/O, the same for both agents (the shims'
agent tests run them through LangChain and LlamaIndex; these pin each rule alone)."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

import pytest
from toolstream_core import AssembleConfig, CallState, ToolCall
from toolstream_core._decision import view_record
from toolstream_core._run_policy import MAX_PAUSED_CONTINUATIONS
from toolstream_core.integration import RunPolicy, RunState


def view(committed: list[str], rejected: tuple[str, ...] = ()) -> Any:
    return view_record({
        "version": 1, "mode": "tap", "provider": "openai-chat", "complete": True,
        "finish_reason": "tool_calls", "error": None,
        "committed": [{"id": i, "name": "get_time"} for i in committed],
        "rejected": [{"id": i, "name": "x", "tool_call_id": i, "reason": "cancelled",
                      "content": "no"} for i in rejected],
        "dropped": [], "server_calls": [], "anomalies": 0})


def test_admit_refuses_what_the_gate_did_not_commit() -> None:
    policy = RunPolicy(AssembleConfig())
    refusal = policy.admit(view(["a"]), "b", "rm", RunState())
    assert refusal is not None and refusal.reason == "not_committed"
    assert refusal.tool_call_id == "b" and "[not_committed]" in refusal.content
    assert policy.admit(view(["a"]), "a", "get_time", RunState(run_calls=1)) is None
    assert policy.admit(None, "b", "rm", RunState()) is None  # not through the gate
    assert RunPolicy(AssembleConfig(), guard=False).admit(view(["a"]), "b", "rm", RunState()) is None


def test_admit_checks_the_budget_on_the_count_now() -> None:
    """Two committed in this turn, the run's count holding them: with a budget of 3 and one
    call spent elsewhere since, the turn's second call is the run's fourth."""
    policy = RunPolicy(AssembleConfig(max_tool_calls_per_run=3))
    turn = view(["a", "b"])
    assert policy.admit(turn, "a", "get_time", RunState(run_calls=3)) is None
    assert policy.admit(turn, "b", "get_time", RunState(run_calls=3)) is None
    late = policy.admit(turn, "b", "get_time", RunState(run_calls=4))
    assert late is not None and late.reason == "run_budget_exceeded"
    assert "[run_budget_exceeded]" in late.content and late.tool_call_id == "b"


def test_the_budget_left_for_a_turn() -> None:
    assert RunPolicy(AssembleConfig()).budget_left(RunState(run_calls=9)) is None
    policy = RunPolicy(AssembleConfig(max_tool_calls_per_run=2))
    assert [policy.budget_left(RunState(run_calls=n)) for n in (0, 1, 2, 5)] == [2, 1, 0, 0]


def test_a_paused_turn_is_continued_up_to_the_cap() -> None:
    policy = RunPolicy(AssembleConfig())
    state = RunState()
    for _ in range(MAX_PAUSED_CONTINUATIONS):
        after = policy.continue_paused(state)
        assert after is not None
        state = after
    assert state.paused_turns == MAX_PAUSED_CONTINUATIONS
    assert policy.continue_paused(state) is None


def test_after_turn_counts_retries_and_gives_up() -> None:
    policy = RunPolicy(AssembleConfig(), max_retries=1)
    first = policy.after_turn(RunState(run_calls=2, paused_turns=3), committed=0, runs=0, errors=1)
    assert first.failed and first.retry and not first.give_up
    assert first.state == RunState(run_calls=2, failed_turns=1)
    second = policy.after_turn(first.state, committed=0, runs=0, errors=1)
    assert second.failed and not second.retry and second.give_up
    assert second.state.failed_turns == 0
    ok = policy.after_turn(first.state, committed=2, runs=2, errors=1)
    assert not ok.failed and ok.state == RunState(run_calls=4)
    cancelled = policy.after_turn(RunState(), committed=0, runs=0, errors=1, cancelled=True)
    assert cancelled.failed and not cancelled.retry and not cancelled.give_up
    assert policy.after_turn(RunState(), committed=0, runs=0, errors=0, unstructured=True).retry


def test_run_state_reads_and_writes_its_keys() -> None:
    state = RunState.read({"toolstream_run_calls": 3, "toolstream_failed_turns": -1,
                           "toolstream_paused_turns": True})
    assert state == RunState(run_calls=3)
    assert RunState.read(None) == RunState()
    assert RunState(run_calls=4).changes(state) == {"toolstream_run_calls": 4}
    with pytest.raises(ValueError, match="max_retries"):
        RunPolicy(AssembleConfig(), max_retries=-1)


def call(ident: str | None) -> ToolCall:
    return ToolCall(key=ident, index=0, id=ident, name="get_time", kind="function",
                    state=CallState.committed, raw_arguments="{}")


def test_the_pipeline_starts_each_call_once_and_hands_it_over_once() -> None:
    started: list[str | None] = []

    def start(c: ToolCall) -> Future[str] | None:
        started.append(c.id)
        if c.id == "skip":
            return None
        future: Future[str] = Future()
        future.set_result(f"ran {c.id}")
        return future

    assert RunPolicy(AssembleConfig()).pipeline(start) is None  # not allowed by the config
    pipeline = RunPolicy(AssembleConfig(execute_before_stream_end=True)).pipeline(start)
    assert pipeline is not None
    for ident in ("a", "a", None, "skip", "b"):
        pipeline(call(ident))
    assert started == ["a", "skip", "b"] and pipeline.started == ["a", "b"]
    assert pipeline.results() == {"a": "ran a", "b": "ran b"}
    taken = pipeline.take("a")
    assert taken is not None and taken.result() == "ran a"
    assert pipeline.take("a") is None and pipeline.started == ["b"]

