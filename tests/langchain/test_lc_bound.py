"""A committed call's arguments are bound to it (issue 38, item 4), on a real PostgreSQL.

``create_agent`` with ``ToolstreamMiddleware`` and ``HumanInTheLoopMiddleware`` on LangGraph's
``PostgresSaver`` (pgserver), ``ChatOpenAI`` streaming from the emulator. The state is changed
the way a client of the thread can change it (``update_state``) between the pause and the
resume: a replaced argument under the same call id, a rejection's answer removed. Tool runs
are counted in the files the tool writes; every request is read from the emulator's log.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain.agents.middleware import human_in_the_loop as hitl
from langchain_core.messages import AIMessage, RemoveMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.types import Command
from toolstream_core._binding import arguments_digest
from toolstream_core.testing import VendorEmulator, history_pairing

from benchmarks.postgres import setup_langgraph_tables
from langchain_toolstream import ToolstreamMiddleware, read_record
from langchain_toolstream._review import HITL_EDITS, HITL_SOURCE

CONFIG: Any = {"configurable": {"thread_id": "bound"}}
REVIEW = "HumanInTheLoopMiddleware.after_model"


def test_the_hitl_names_read_are_langchains() -> None:
    assert hitl._EDITED_TOOL_CALLS_KEY == HITL_EDITS
    decision = {"type": "reject"}
    answer = hitl._answer_message({"name": "t", "args": {}, "id": "1", "type": "tool_call"},
                                  decision)  # type: ignore[arg-type]
    assert answer.additional_kwargs.get("lc_source") == HITL_SOURCE


@pytest.fixture
def saver(pg_url: str) -> Iterator[PostgresSaver]:
    setup_langgraph_tables(pg_url)
    with PostgresSaver.from_conn_string(pg_url) as checkpointer:
        yield checkpointer


def reviewed_agent(emu: VendorEmulator, saver: PostgresSaver, notes: Path) -> Any:
    @tool
    def write_file(path: str, content: str = "") -> str:
        """Write a text file."""
        with (notes / Path(path).name).open("a", encoding="utf-8") as out:
            out.write(content)
        return f"wrote {len(content)} characters to {Path(path).name}"

    model = ChatOpenAI(model="gpt-4.1", api_key="test",  # type: ignore[arg-type]
                       base_url=emu.base_url + "/v1", max_retries=0)
    return create_agent(model, tools=[write_file], checkpointer=saver,
                        middleware=[ToolstreamMiddleware(),
                                    HumanInTheLoopMiddleware(interrupt_on={"write_file": True})])


def paused(agent: Any, emu: VendorEmulator) -> AIMessage:
    """The thread paused for a reviewer on one committed write_file call; its message."""
    emu.queue("openai-chat", "single_call", "text")
    result = agent.invoke({"messages": [("user", "write my notes")]}, CONFIG, durability="sync")
    assert result.get("__interrupt__")
    message = agent.get_state(CONFIG).values["messages"][-1]
    assert isinstance(message, AIMessage) and len(message.tool_calls) == 1
    return message


def written(notes: Path) -> dict[str, str]:
    return {path.name: path.read_text(encoding="utf-8") for path in notes.iterdir()}


def answers(agent: Any) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in agent.get_state(CONFIG).values["messages"]
            if isinstance(m, ToolMessage)}


def assert_every_request_legal(emu: VendorEmulator) -> None:
    assert emu.statuses and set(emu.statuses) == {200}
    assert [history_pairing("openai-chat", r.body) for r in emu.requests] == [[]] * len(emu.requests)


def test_arguments_replaced_in_the_paused_state_never_run(
        emu: VendorEmulator, saver: PostgresSaver, tmp_path: Path) -> None:
    """The issue's case: approved, but the paused message's arguments were replaced first
    (same id, record kept): /tmp/evil.txt is not written."""
    agent = reviewed_agent(emu, saver, tmp_path)
    message = paused(agent, emu)
    [call] = message.tool_calls
    evil = {**call, "args": {"path": "/tmp/evil.txt", "content": "pwned"}}
    agent.update_state(CONFIG, {"messages": [message.model_copy(update={"tool_calls": [evil]})]})
    agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), CONFIG, durability="sync")
    assert written(tmp_path) == {}
    answer = answers(agent)[str(call["id"])]
    assert answer.status == "error" and answer.text.endswith("[arguments_changed]")
    assert answer.artifact == {"toolstream": {"reason": "arguments_changed", "state": "refused"}}
    assert_every_request_legal(emu)


def test_a_human_edit_is_recorded_and_runs_once(
        emu: VendorEmulator, saver: PostgresSaver, tmp_path: Path) -> None:
    agent = reviewed_agent(emu, saver, tmp_path)
    message = paused(agent, emu)
    [call] = message.tool_calls
    edit = {"name": "write_file", "args": {"path": "/tmp/edited.txt", "content": "by hand"}}
    agent.invoke(Command(resume={"decisions": [{"type": "edit", "edited_action": edit}]}), CONFIG,
                 durability="sync")
    assert written(tmp_path) == {"edited.txt": "by hand"}
    [entry] = read_record(agent.get_state(CONFIG).values["messages"][1])["committed"]  # type: ignore[index]
    assert entry["digest"] == arguments_digest("write_file", call["args"])  # the vendor's, kept
    assert entry["review"] == {"decision": "edit", "name": "write_file",
                               "digest": arguments_digest("write_file", edit["args"])}
    assert answers(agent)[str(call["id"])].status == "success"
    assert_every_request_legal(emu)


def test_a_human_edit_that_breaks_the_schema_never_runs(
        emu: VendorEmulator, saver: PostgresSaver, tmp_path: Path) -> None:
    agent = reviewed_agent(emu, saver, tmp_path)
    [call] = paused(agent, emu).tool_calls
    edit = {"name": "write_file", "args": {"path": ["not", "a", "path"]}}
    agent.invoke(Command(resume={"decisions": [{"type": "edit", "edited_action": edit}]}), CONFIG,
                 durability="sync")
    assert written(tmp_path) == {}
    answer = answers(agent)[str(call["id"])]
    assert answer.status == "error" and answer.text.endswith("[schema_violation]")
    assert_every_request_legal(emu)


def test_an_edit_replaced_in_the_state_after_it_was_recorded_never_runs(
        emu: VendorEmulator, saver: PostgresSaver, tmp_path: Path) -> None:
    """The run stops before the tools (as a crash would); the reviewer's edit is then replaced
    in the state: the recorded edit is what may run, not the state's."""
    agent = reviewed_agent(emu, saver, tmp_path)
    [call] = paused(agent, emu).tool_calls
    edit = {"name": "write_file", "args": {"path": "/tmp/edited.txt", "content": "by hand"}}
    agent.invoke(Command(resume={"decisions": [{"type": "edit", "edited_action": edit}]}), CONFIG,
                 durability="sync", interrupt_before=["tools"])
    evil = {"name": "write_file", "args": {"path": "/tmp/evil.txt", "content": "pwned"}}
    agent.update_state(CONFIG, {HITL_EDITS: {call["id"]: evil}})
    agent.invoke(None, CONFIG, durability="sync")
    assert written(tmp_path) == {}
    assert answers(agent)[str(call["id"])].text.endswith("[arguments_changed]")
    assert_every_request_legal(emu)


def test_a_rejected_call_never_runs_after_its_answer_is_removed(
        emu: VendorEmulator, saver: PostgresSaver, tmp_path: Path) -> None:
    agent = reviewed_agent(emu, saver, tmp_path)
    [call] = paused(agent, emu).tool_calls
    decision = {"type": "reject", "message": "not that file"}
    agent.invoke(Command(resume={"decisions": [decision]}), CONFIG, durability="sync")
    assert written(tmp_path) == {}
    messages = agent.get_state(CONFIG).values["messages"]
    [entry] = read_record(messages[1])["committed"]  # type: ignore[index]
    assert entry["review"] == {"decision": "reject"}
    removed = [RemoveMessage(id=str(m.id)) for m in messages[2:]]  # the rejection, the answer after
    agent.update_state(CONFIG, {"messages": removed}, as_node=REVIEW)
    emu.queue("openai-chat", "text")
    agent.invoke(None, CONFIG, durability="sync")
    assert written(tmp_path) == {}
    answer = answers(agent)[str(call["id"])]
    assert answer.status == "error" and answer.text.endswith("[human_rejected]")
    assert_every_request_legal(emu)
