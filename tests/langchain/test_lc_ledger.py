"""The started-ledger in one process: the async agent, and tools that interrupt.

The crash itself (a worker process that dies inside a tool) is in ``test_lc_scale_out.py``;
here a tool that raises stands in for it, on the async path, and a tool that asks for
approval with ``interrupt()`` shows that LangGraph's own re-run on resume is not refused.
"""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.types import Command, interrupt
from toolstream_core.testing import VendorEmulator

from benchmarks.postgres import setup_langgraph_tables
from langchain_toolstream import ToolstreamMiddleware


def model(emu: VendorEmulator, thread: str) -> ChatOpenAI:
    return ChatOpenAI(model=f"scenario:single_call@{thread}", api_key="test",
                      base_url=emu.base_url + "/v1", max_retries=0)


def last_tool_message(state: dict[str, Any]) -> ToolMessage:
    return [m for m in state["messages"] if isinstance(m, ToolMessage)][-1]


async def test_the_async_agent_does_not_run_a_started_call_again(pg_url: str,
                                                                 emu: VendorEmulator) -> None:
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from langgraph.store.postgres.aio import AsyncPostgresStore

    setup_langgraph_tables(pg_url)
    runs: list[str] = []

    @tool
    async def write_file(path: str, content: str = "") -> str:
        """Write a text file."""
        runs.append(path)
        if len(runs) == 1:
            raise RuntimeError("the worker went away here")
        return "wrote it"

    config: Any = {"configurable": {"thread_id": "async"}}
    async with AsyncPostgresSaver.from_conn_string(pg_url) as saver, \
            AsyncPostgresStore.from_conn_string(pg_url) as store:
        agent = create_agent(model(emu, "async"), tools=[write_file],
                             middleware=[ToolstreamMiddleware()], checkpointer=saver, store=store)
        try:
            await agent.ainvoke({"messages": [("user", "go")]}, config, durability="sync")
        except RuntimeError as exc:
            assert "went away" in str(exc)
        result = await agent.ainvoke(None, config, durability="sync")
    assert len(runs) == 1
    answer = last_tool_message(result)
    assert answer.status == "error" and answer.text.endswith("[not_repeated]")
    assert "started" in answer.text
    assert set(emu.statuses) == {200} and len(emu.requests) == 2


def test_a_tool_that_interrupts_runs_again_on_resume(pg_url: str, emu: VendorEmulator) -> None:
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.store.postgres import PostgresStore

    setup_langgraph_tables(pg_url)
    entered: list[str] = []
    wrote: list[str] = []

    @tool
    def write_file(path: str, content: str = "") -> str:
        """Write a text file."""
        entered.append(path)
        if interrupt({"confirm": path}) != "yes":
            return "not written"
        wrote.append(path)
        return "wrote it"

    config: Any = {"configurable": {"thread_id": "interrupting"}}
    with PostgresSaver.from_conn_string(pg_url) as saver, \
            PostgresStore.from_conn_string(pg_url) as store:
        agent = create_agent(model(emu, "interrupting"), tools=[write_file],
                             middleware=[ToolstreamMiddleware()], checkpointer=saver, store=store)
        first = agent.invoke({"messages": [("user", "go")]}, config, durability="sync")
        assert first.get("__interrupt__") and wrote == []
        result = agent.invoke(Command(resume="yes"), config, durability="sync")
    assert len(entered) == 2 and len(wrote) == 1  # LangGraph re-runs an interrupted tool
    assert last_tool_message(result).text == "wrote it"
    assert set(emu.statuses) == {200} and len(emu.requests) == 2


def test_a_thread_without_a_store_says_once_that_a_resumed_tool_runs_again(
        emu: VendorEmulator, caplog: Any, monkeypatch: Any) -> None:
    """A checkpointer and no store: no ledger, so a tool interrupted by a crash or a cancel runs
    again on resume. The middleware says so, once per process, naming what is lost; an agent
    with a store says nothing."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.memory import InMemoryStore

    from langchain_toolstream import _ledger

    monkeypatch.setattr(_ledger, "_SAID_NO_STORE", [])
    runs: list[str] = []

    @tool
    def write_file(path: str, content: str = "") -> str:
        """Write a text file."""
        runs.append(path)
        return "wrote it"

    def said() -> list[str]:
        return [r.getMessage() for r in caplog.records if "started-ledger is off" in r.getMessage()]

    with_store = create_agent(model(emu, "stored"), tools=[write_file],
                              middleware=[ToolstreamMiddleware()], checkpointer=InMemorySaver(),
                              store=InMemoryStore())
    with_store.invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": "stored"}})
    assert len(runs) == 1 and said() == []

    agent = create_agent(model(emu, "bare"), tools=[write_file],
                         middleware=[ToolstreamMiddleware()], checkpointer=InMemorySaver())
    for thread in ("bare-1", "bare-2"):
        agent.invoke({"messages": [("user", "go")]}, {"configurable": {"thread_id": thread}})
    assert len(runs) == 3
    [text] = said()
    assert "'bare-1'" in text and "runs again when the thread is resumed" in text
    assert "create_agent(store=...)" in text
