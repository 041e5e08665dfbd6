"""Scale out: the gated agent in separate worker processes on one real PostgreSQL.

Every worker is its own OS process (``python -m benchmarks.scale_out worker``) running
``create_agent`` with ``ToolstreamMiddleware`` on LangGraph's ``PostgresSaver`` and
``PostgresStore``, against the emulator of this test process (``ChatOpenAI`` streaming from
it). A worker can die on purpose with ``os._exit``: inside a tool, right after the tool's
effect and before its result is written, or before a model call. Tool runs are rows in a
Postgres table, committed by the tool itself, so "ran once" is counted across processes and
crashes. Every request is checked in the emulator's log: status 200, and every call id
answered exactly once right after its call.
"""

from __future__ import annotations

from typing import Any

import pytest
from toolstream_core.testing import VendorEmulator

from benchmarks.scale_out import (
    CRASH_EXIT,
    load_problems,
    pairing_problems,
    prepare_database,
    run_load,
    run_worker,
    tool_runs,
)


@pytest.fixture
def db(pg_url: str) -> str:
    """A fresh database with LangGraph's tables and the tool-runs table."""
    prepare_database(pg_url)
    return pg_url


def job(db: str, emu: VendorEmulator, thread: str, **settings: Any) -> dict[str, Any]:
    return {"db": db, "emulator": emu.base_url, "thread": thread, **settings}


def worker(**job_: Any) -> dict[str, Any]:
    """Run one worker that must finish cleanly; what it printed."""
    status, out, err = run_worker(job_)
    assert status == 0 and out is not None, err[-3000:]
    return out


def crashed(**job_: Any) -> None:
    """Run one worker that must die on purpose (and print nothing)."""
    status, out, err = run_worker(job_)
    assert (status, out) == (CRASH_EXIT, None), err[-3000:]


def assert_every_request_legal(emu: VendorEmulator) -> None:
    assert emu.statuses and set(emu.statuses) == {200}
    assert [pairing_problems(r.body) for r in emu.requests] == [[]] * len(emu.requests)


def answers(body: dict[str, Any]) -> dict[str, str]:
    """``call id -> content`` of the tool results a Chat Completions request sends."""
    return {m["tool_call_id"]: m["content"] for m in body["messages"] if m.get("role") == "tool"}


def test_an_approval_in_another_worker_runs_the_call_once(db: str, emu: VendorEmulator) -> None:
    thread = "hitl"
    settings = job(db, emu, thread, model=f"scenario:single_call@{thread}", hitl=["write_file"])
    first = worker(**settings, input="write my notes")
    assert first["interrupted"] and tool_runs(db) == []
    record = first["records"][0]
    call_id = record["committed"][0]["id"]

    second = worker(**settings, input={"resume": {"decisions": [{"type": "approve"}]}})
    assert second["records"][0] == record  # A's decision record, read back in B
    runs = tool_runs(db)
    assert [(r["call_id"], r["name"]) for r in runs] == [(call_id, "write_file")]
    assert_every_request_legal(emu)
    assert len(emu.requests) == 2
    assert answers(emu.requests[1].body)[call_id].startswith("wrote ")


@pytest.mark.parametrize(("store", "repeatable", "runs"), [
    (True, False, 1),   # the ledger says it started: answered, not run again
    (True, True, 2),    # declared safe to repeat: runs again
    (False, False, 2),  # no store, no ledger: LangGraph runs the task again
], ids=["ledger", "repeatable", "no-store"])
def test_a_crash_between_commit_and_result(db: str, emu: VendorEmulator, store: bool,
                                           repeatable: bool, runs: int) -> None:
    thread = "crash"
    settings = job(db, emu, thread, model=f"scenario:single_call@{thread}", store=store,
                   repeatable=repeatable)
    crashed(**settings, crash_in_tool=True, input="write my notes")
    [started] = tool_runs(db)
    assert len(emu.requests) == 1

    resumed = worker(**settings, input=None)  # another process carries on from the checkpoint
    rows = tool_runs(db)
    assert len(rows) == runs and {r["call_id"] for r in rows} == {started["call_id"]}
    [answer] = resumed["tool_messages"]
    assert answer["id"] == started["call_id"]
    if runs == 1:
        assert answer["status"] == "error" and answer["text"].endswith("[not_repeated]")
    else:
        assert answer["status"] == "success" and answer["text"].startswith("wrote ")
    assert_every_request_legal(emu)
    assert len(emu.requests) == 2
    assert list(answers(emu.requests[1].body)) == [started["call_id"]]


def test_failed_turns_stay_bounded_across_workers(db: str, emu: VendorEmulator) -> None:
    """Every turn is cut; worker A dies before its third model call, after two were saved.
    The count lives in the checkpoint, so B makes one more request (max_retries=2: 3 in all)
    where a count kept in memory would start again (5)."""
    emu.queue("openai-chat", *["truncated_length"] * 6)
    settings = job(db, emu, "bounded", model="gpt-4.1", max_retries=2)
    crashed(**settings, crash_before_model_call=2, input="write my notes")
    assert len(emu.requests) == 2

    resumed = worker(**settings, input=None)
    assert len(emu.requests) == 3
    assert tool_runs(db) == []
    assert [m["status"] for m in resumed["tool_messages"]] == ["error"] * 3
    assert_every_request_legal(emu)


def test_the_run_budget_holds_across_workers(db: str, emu: VendorEmulator) -> None:
    """``max_tool_calls_per_run: 2``: worker A runs two turns (two calls) and dies before its
    third model call; B resumes from the checkpoint, where the run's count lives, so the third
    turn's two calls are over the budget: answered with the budget's error, never run."""
    emu.queue("openai-chat", "single_call", "no_args", "parallel_calls", "text")
    settings = job(db, emu, "budget", model="gpt-4.1", config={"max_tool_calls_per_run": 2})
    crashed(**settings, crash_before_model_call=2, input="write my notes")
    assert [r["name"] for r in tool_runs(db)] == ["write_file", "get_time"]
    resumed = worker(**settings, input=None)
    assert [r["name"] for r in tool_runs(db)] == ["write_file", "get_time"]  # 3rd turn over budget
    over = resumed["tool_messages"][2:]
    assert [m["status"] for m in over] == ["error", "error"]
    assert all("[run_budget_exceeded]" in m["text"] for m in over)  # the budget's reason text
    assert_every_request_legal(emu)
    assert len(emu.requests) == 4


def test_four_workers_a_hundred_threads(db: str, emu: VendorEmulator) -> None:
    """4 processes x 25 threads on one Postgres, complete and cut turns mixed (``MIX``)."""
    load = run_load(db, emu.base_url, processes=4, threads=25, gated=True, prefix="load")
    assert len(load.threads) == 100
    assert load_problems(load, emu.requests, emu.statuses, tool_runs(db)) == []
    assert len(emu.requests) == 200  # each thread: its turn, then the answer to its results
