"""``max_tool_calls_per_run`` inside ``create_agent`` + ``ToolstreamMiddleware`` (issue 26.2).

The run's count of committed calls lives in the agent state (``toolstream_run_calls``), so a
LangGraph checkpointer keeps it: a run resumed from its checkpoint goes on from the count it
had, and a new invocation starts again at zero. Real ``ChatOpenAI`` over HTTP against the
emulator, real tools that record what ran, LangGraph's SQLite saver; the request bodies read
back are the ones the class really sent.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from lc_util import Recorder, assert_history_paired, make_model, recording_tools, tool_messages
from toolstream_core.testing import VendorEmulator

from benchmarks.scale_out import pairing_problems
from langchain_toolstream import ToolstreamMiddleware

BUDGET = {"max_tool_calls_per_run": 2}
THREAD = {"configurable": {"thread_id": "t1"}}


@contextmanager
def saver_at(path: Path) -> Iterator[SqliteSaver]:
    """LangGraph's SQLite checkpointer on ``path``, its connection closed after."""
    with closing(sqlite3.connect(path, check_same_thread=False)) as connection:
        yield SqliteSaver(connection)


def assert_every_request_legal(emu: VendorEmulator) -> None:
    assert emu.statuses and set(emu.statuses) == {200}
    assert [pairing_problems(r.body) for r in emu.requests] == [[]] * len(emu.requests)


class _CrashBeforeModel(AgentMiddleware[Any, Any, Any]):
    """Lets ``after`` model calls through, then fails the next one (the checkpoint of the
    steps before it is saved), as a worker that dies there would."""

    def __init__(self, after: int) -> None:
        super().__init__()
        self.after = after
        self.calls = 0

    def wrap_model_call(self, request: Any, handler: Any) -> Any:
        self.calls += 1
        if self.calls > self.after:
            raise RuntimeError("the worker died")
        return handler(request)


def budget_agent(emu: VendorEmulator, recorder: Recorder, saver: Any,
                 *before: AgentMiddleware[Any, Any, Any], config: Any = None) -> Any:
    middleware = [*before, ToolstreamMiddleware(config=BUDGET if config is None else config)]
    return create_agent(make_model("openai-chat", emu), tools=recording_tools(recorder),
                        middleware=middleware, checkpointer=saver)


def over_budget_texts(messages: list[Any]) -> list[str]:
    return [m.text for m in tool_messages(messages) if "[run_budget_exceeded]" in m.text]


def test_a_third_call_across_turns_is_answered_and_never_runs(emu: VendorEmulator,
                                                              tmp_path: Path) -> None:
    recorder = Recorder()
    emu.queue("openai-chat", "single_call", "no_args", "parallel_calls", "text")
    with saver_at(tmp_path / "cp.db") as saver:
        agent = budget_agent(emu, recorder, saver)
        messages = agent.invoke({"messages": [HumanMessage("write my notes")]}, THREAD)["messages"]
    assert recorder.names == ["write_file", "get_time"]
    over = over_budget_texts(messages)
    assert len(over) == 2 and all(t.startswith("Tool call 'get_weather'") for t in over)
    assert all(m.status == "error" for m in tool_messages(messages)[2:])
    assert_history_paired(messages)
    assert len(emu.requests) == 4
    assert_every_request_legal(emu)
    # what the model read: the third turn's calls answered with the budget's text
    sent = [m["content"] for m in emu.requests[3].body["messages"] if m.get("role") == "tool"]
    assert sent[2:] == over


def test_the_count_survives_a_resume_from_the_checkpoint(emu: VendorEmulator,
                                                         tmp_path: Path) -> None:
    recorder = Recorder()
    emu.queue("openai-chat", "single_call", "no_args", "parallel_calls", "text")
    path = tmp_path / "cp.db"
    with saver_at(path) as saver:
        first = budget_agent(emu, recorder, saver, _CrashBeforeModel(after=2))
        with pytest.raises(RuntimeError, match="the worker died"):
            first.invoke({"messages": [HumanMessage("write my notes")]}, THREAD)
    assert recorder.names == ["write_file", "get_time"] and len(emu.requests) == 2
    with saver_at(path) as saver:
        # A new process: a new agent and a new middleware, the same checkpoint.
        resumed = budget_agent(emu, recorder, saver)
        messages = resumed.invoke(None, THREAD)["messages"]
    assert recorder.names == ["write_file", "get_time"]  # the third turn was over the budget
    assert len(over_budget_texts(messages)) == 2
    assert len(emu.requests) == 4
    assert_every_request_legal(emu)


def test_a_new_invocation_is_a_new_run(emu: VendorEmulator, tmp_path: Path) -> None:
    recorder = Recorder()
    emu.queue("openai-chat", "single_call", "no_args", "text", "single_call", "text")
    with saver_at(tmp_path / "cp.db") as saver:
        agent = budget_agent(emu, recorder, saver)
        agent.invoke({"messages": [HumanMessage("one")]}, THREAD)
        assert agent.get_state(THREAD).values["toolstream_run_calls"] == 2
        messages = agent.invoke({"messages": [HumanMessage("two")]}, THREAD)["messages"]
    assert recorder.names == ["write_file", "get_time", "write_file"]
    assert over_budget_texts(messages) == []
    assert_every_request_legal(emu)


class _SpendBudget(AgentMiddleware[Any, Any, Any]):
    """Spends one call of the run's budget between the model's turn and its tools (as another
    branch of the run would): the check again before the calls are queued sees it."""

    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        last = state["messages"][-1]
        if isinstance(last, AIMessage) and last.tool_calls:
            return {"toolstream_run_calls": state["toolstream_run_calls"] + 1}
        return None


def test_the_budget_is_checked_again_before_a_call_is_queued(emu: VendorEmulator,
                                                             tmp_path: Path) -> None:
    recorder = Recorder()
    emu.queue("openai-chat", "parallel_calls", "text")
    with saver_at(tmp_path / "cp.db") as saver:
        agent = budget_agent(emu, recorder, saver, _SpendBudget())
        messages = agent.invoke({"messages": [HumanMessage("weather")]}, THREAD)["messages"]
    # both calls committed (2 fit); one of the two no longer fits when they are queued
    assert [m.status for m in tool_messages(messages)] == ["success", "error"]
    assert len(recorder.names) == 1
    [over] = over_budget_texts(messages)
    assert over.startswith("Tool call 'get_weather'")
    assert_every_request_legal(emu)


def test_without_a_budget_every_call_runs(emu: VendorEmulator, tmp_path: Path) -> None:
    recorder = Recorder()
    emu.queue("openai-chat", "single_call", "no_args", "parallel_calls", "text")
    with saver_at(tmp_path / "cp.db") as saver:
        agent = budget_agent(emu, recorder, saver, config={})
        messages = agent.invoke({"messages": [HumanMessage("go")]}, THREAD)["messages"]
        # counted all the same, so a budget set later on the thread starts from the truth
        assert agent.get_state(THREAD).values["toolstream_run_calls"] == 4
    assert len(recorder.names) == 4 and over_budget_texts(messages) == []

