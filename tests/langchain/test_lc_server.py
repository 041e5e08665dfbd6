"""LangGraph's own server: ``langgraph dev`` serving docs/deploy/langgraph.json, over HTTP.

The real server (langgraph-cli's ``dev`` command with langgraph-api's in-memory runtime) runs
as a subprocess on a free loopback port, loads the graphs the JSON names from their files, and
brings its own checkpointer and store; ``ChatOpenAI`` inside it streams from this test
process's emulator. The tests drive it as a client does, with ``langgraph-sdk``: runs, HITL
resumes, thread state and the store are read back through the API. Offline: no LangSmith
tracing, no browser, no analytics, no version check (the environment below); the server
starts with no network at all.

Executions are counted in the files ``write_file`` writes (it appends its content, so a second
run shows twice); "legal" is read from the request bodies the emulator received.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from docs_examples import ROOT
from langgraph_sdk import get_sync_client
from langgraph_sdk.client import SyncLangGraphClient
from toolstream_core._decision import view_record
from toolstream_core.integration import RECORD_KEY
from toolstream_core.testing import VendorEmulator, history_pairing

DEPLOY = ROOT / "docs" / "deploy"

#: What keeps the server off the network: LangSmith tracing, the CLI's analytics, the
#: server's check for a newer version, and the browser the dev command opens (``--no-browser``).
OFFLINE_ENV = {
    "LANGSMITH_TRACING": "false",
    "LANGCHAIN_TRACING_V2": "false",
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
}
STARTUP_LIMIT_S = 120.0  # a failure bound for a loaded CI machine, not a measurement


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_ready(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    """Poll the server's ``/ok`` until it answers; fail with its log if it exits or never does."""
    deadline = time.monotonic() + STARTUP_LIMIT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"langgraph dev exited {process.returncode}:\n"
                        + log.read_text(encoding="utf-8", errors="replace")[-4000:])
        try:
            if httpx.get(url + "/ok", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    pytest.fail("langgraph dev never answered /ok:\n"
                + log.read_text(encoding="utf-8", errors="replace")[-4000:])


@pytest.fixture(scope="module")
def notes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("notes")


@pytest.fixture(scope="module")
def server(emulator: VendorEmulator, notes: Path,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``langgraph dev`` on docs/deploy/langgraph.json, on a free loopback port; its URL.

    It runs where a user runs it, in the directory of the JSON (the graph paths are relative
    to it): a copy of docs/deploy/, because the runtime saves its state (``.langgraph_api``)
    in its working directory.
    """
    home = tmp_path_factory.mktemp("server")
    for name in ("langgraph.json", "agent.py"):
        shutil.copyfile(DEPLOY / name, home / name)
    log = home / "server.log"
    port = free_port()
    env = {key: value for key, value in os.environ.items() if not key.startswith("LANGSMITH_")}
    env.update(OFFLINE_ENV, OPENAI_API_KEY="test", OPENAI_BASE_URL=emulator.base_url + "/v1",
               NOTES_DIR=str(notes), PYTHONPATH=os.pathsep.join(sys.path))
    command = [sys.executable, "-m", "langgraph_cli", "dev", "--config", "langgraph.json",
               "--host", "127.0.0.1", "--port", str(port), "--no-browser", "--no-reload"]
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=home, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, process, log)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def client(server: str, emu: VendorEmulator, notes: Path) -> SyncLangGraphClient:
    """An SDK client of the server, with an empty request log and no notes written yet."""
    shutil.rmtree(notes)
    notes.mkdir()
    return get_sync_client(url=server)


def record_of(message: dict[str, Any]) -> dict[str, Any] | None:
    """The decision record on a message as the API returns it."""
    view = view_record((message.get("response_metadata") or {}).get(RECORD_KEY))
    return dict(view.record) if view is not None else None


def records(client: SyncLangGraphClient, thread_id: str) -> list[dict[str, Any] | None]:
    """The decision record of every AI message of the thread, read back through the API."""
    state: Any = client.threads.get_state(thread_id)
    return [record_of(m) for m in state["values"]["messages"] if m.get("type") == "ai"]


def verdicts(found: list[dict[str, Any] | None]) -> list[tuple[list[Any], list[Any]]]:
    return [([c["reason"] for c in r["rejected"]], [c["name"] for c in r["committed"]])
            for r in found if r is not None]


def written(notes: Path) -> dict[str, str]:
    return {path.name: path.read_text(encoding="utf-8") for path in notes.iterdir()}


def assert_every_request_legal(emu: VendorEmulator) -> None:
    assert emu.statuses and set(emu.statuses) == {200}
    assert [history_pairing("openai-chat", r.body) for r in emu.requests] == [[]] * len(emu.requests)


def committed_call(client: SyncLangGraphClient, thread_id: str) -> dict[str, Any]:
    """The one call the gate committed in the thread, as the state holds it."""
    state: Any = client.threads.get_state(thread_id)
    [message] = [m for m in state["values"]["messages"]
                 if m.get("type") == "ai" and (record_of(m) or {}).get("committed")]
    [call] = message["tool_calls"]
    return dict(call)


def paused_on_a_write(client: SyncLangGraphClient, emu: VendorEmulator) -> tuple[str, dict[str, Any]]:
    """A thread of ``reviewed`` paused for a human on one committed ``write_file`` call."""
    emu.queue("openai-chat", "single_call", "text")
    thread_id = client.threads.create()["thread_id"]
    client.runs.wait(thread_id, "reviewed", input={"messages": [("user", "write my notes")]},
                     durability="sync")
    return thread_id, committed_call(client, thread_id)


def resume(client: SyncLangGraphClient, thread_id: str, *decisions: dict[str, Any]) -> None:
    client.runs.wait(thread_id, "reviewed", command={"resume": {"decisions": list(decisions)}},
                     durability="sync")


def test_cut_and_unfinished_calls_never_run_the_complete_one_runs_once(
        client: SyncLangGraphClient, emu: VendorEmulator, notes: Path) -> None:
    emu.queue("openai-chat", "truncated_length", "no_finish", "single_call", "text")
    thread = client.threads.create()
    client.runs.wait(thread["thread_id"], "agent", input={"messages": [("user", "write my notes")]},
                     durability="sync", multitask_strategy="reject")
    assert verdicts(records(client, thread["thread_id"])) == [
        (["stream_truncated"], []), (["stream_truncated"], []), ([], ["write_file"]), ([], [])]
    call = committed_call(client, thread["thread_id"])
    assert written(notes) == {Path(call["args"]["path"]).name: call["args"]["content"]}
    ledger = client.store.search_items(("toolstream", "started"))["items"]
    assert [(item["value"]["call_id"], item["value"]["state"]) for item in ledger
            if item["value"]["thread_id"] == thread["thread_id"]] == [(call["id"], "finished")]
    assert_every_request_legal(emu)
    assert len(emu.requests) == 4


def test_an_approval_through_the_api_runs_the_call_once(
        client: SyncLangGraphClient, emu: VendorEmulator, notes: Path) -> None:
    thread_id, call = paused_on_a_write(client, emu)
    paused: Any = client.threads.get_state(thread_id)
    [interrupt] = paused["interrupts"]
    [request] = interrupt["value"]["action_requests"]
    assert (request["name"], request["args"]) == ("write_file", call["args"])
    assert written(notes) == {} and len(emu.requests) == 1

    resume(client, thread_id, {"type": "approve"})
    assert written(notes) == {Path(call["args"]["path"]).name: call["args"]["content"]}
    state: Any = client.threads.get_state(thread_id)
    assert state["interrupts"] == [] and state["next"] == []
    [answer] = [m for m in state["values"]["messages"] if m.get("type") == "tool"]
    assert answer["tool_call_id"] == call["id"] and answer["content"].startswith("wrote ")
    assert verdicts(records(client, thread_id)) == [([], ["write_file"]), ([], [])]
    assert_every_request_legal(emu)
    assert len(emu.requests) == 2


def test_a_rejection_through_the_api_never_runs_the_call(
        client: SyncLangGraphClient, emu: VendorEmulator, notes: Path) -> None:
    thread_id, call = paused_on_a_write(client, emu)
    resume(client, thread_id, {"type": "reject", "message": "not that file"})
    assert written(notes) == {}
    state: Any = client.threads.get_state(thread_id)
    [answer] = [m for m in state["values"]["messages"] if m.get("type") == "tool"]
    assert answer["tool_call_id"] == call["id"] and "not that file" in answer["content"]
    assert_every_request_legal(emu)
    assert len(emu.requests) == 2


def test_arguments_replaced_through_the_api_never_run(
        client: SyncLangGraphClient, emu: VendorEmulator, notes: Path) -> None:
    """Issue 38's case over HTTP: the paused message's arguments replaced with
    ``threads.update_state`` (same id, record kept), then approved: nothing is written."""
    thread_id, call = paused_on_a_write(client, emu)
    state: Any = client.threads.get_state(thread_id)
    message = dict(state["values"]["messages"][-1])
    message["tool_calls"] = [{**call, "args": {"path": "/tmp/evil.txt", "content": "pwned"}}]
    client.threads.update_state(thread_id, {"messages": [message]})
    resume(client, thread_id, {"type": "approve"})
    assert written(notes) == {}
    after: Any = client.threads.get_state(thread_id)
    [answer] = [m for m in after["values"]["messages"] if m.get("type") == "tool"]
    assert answer["tool_call_id"] == call["id"] and answer["content"].endswith("[arguments_changed]")
    assert_every_request_legal(emu)
