"""LlamaIndex on DBOS (issue 38): a worker killed with SIGKILL, its runs recovered elsewhere.

Per wire the LlamaIndex shim reads through the emulator, one worker process
(``li_dbos_worker.py``: DBOS on a SQLite system database, the agents built inside
``DBOSRuntime().registering()``, the LLM the wire's real LlamaIndex class) starts two runs:
one whose tool is running, one whose model stream has stalled after a call's first chunks.
The test kills it (SIGKILL) once both have reached their point, and starts a second process,
whose DBOS launch recovers both: one kill per wire, two processes per wire. One wire runs
again on a PostgreSQL system database (``dbos_postgres``).

Executions are counted across both processes (each tool logs its start to a file), and the
request each recovered run sent next is read from the emulator that served it, as the real
class sent it: accepted (the emulator refuses an unanswered call), every call answered right
after it (``history_pairing``), the user's message in it once and first (Anthropic, Bedrock
and Gemini refuse a conversation that does not open with the user), the killed call answered
``not_repeated`` and never run again, the cut call never run at all.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from li_helpers import THIRD_PARTY_WARNINGS
from toolstream_core.testing import VendorEmulator, history_pairing

pytest.importorskip("llama_agents.dbos", reason="the dbos extra")  # in dev-llamaindex

pytestmark = THIRD_PARTY_WARNINGS

WORKER = Path(__file__).with_name("li_dbos_worker.py")
BOUND_S = 150.0  # against a hang, never a speed claim

#: Each wire by its real LlamaIndex class -> the emulator API it is served on; ``mistral`` is
#: ``MistralAI``, on Mistral's dialect of OpenAI chat (the emulator's ``mistral`` profile).
WIRES = {"openai-chat": "openai-chat", "openai-responses": "openai-responses",
         "anthropic": "anthropic", "gemini": "gemini", "bedrock-converse": "bedrock-converse",
         "ollama": "ollama", "cohere": "cohere", "mistral": "openai-chat"}
KINDS = ("tool", "stream")
NOT_REPEATED = "[not_repeated]"


def _worker(work: Path, role: str) -> subprocess.Popen[str]:
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(root / "core"),
                                                         os.environ.get("PYTHONPATH", "")]),
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}  # offline: no fetch and retries at import
    return subprocess.Popen([sys.executable, str(WORKER), str(work), role], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def _kill_when(first: subprocess.Popen[str], reached: Callable[[], bool]) -> None:
    deadline = time.monotonic() + BOUND_S
    while not reached() and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert first.poll() is None, "the first worker ended before the kill point"
    assert reached(), "the runs did not reach their kill point"
    first.send_signal(signal.SIGKILL)
    first.wait()


def _executions(work: Path) -> list[str]:
    log = work / "executions.log"
    return [line.split()[0] for line in log.read_text().splitlines()] if log.exists() else []


def user_texts(api: str, body: dict[str, Any]) -> list[str]:
    """The texts of the user's own messages in a request body, in order (tool results, which
    some wires carry in user messages, are not the user's)."""
    if api == "cohere":  # v1: the history, then the message of this turn
        history = [m.get("message") for m in body.get("chat_history") or []
                   if str(m.get("role")).upper() == "USER"]
        return [str(t) for t in [*history, body.get("message")] if t]
    if api == "gemini":
        return [p["text"] for c in body.get("contents") or [] if c.get("role") == "user"
                for p in c.get("parts") or [] if "text" in p]
    if api == "openai-responses":
        items = body["input"] if isinstance(body.get("input"), list) else [
            {"role": "user", "content": body.get("input")}]
        return [text for i in items if i.get("role") == "user" for text in _texts(i.get("content"))]
    return [text for m in body.get("messages") or [] if m.get("role") == "user"
            for text in _texts(m.get("content"))]


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [b["text"] for b in content or [] if isinstance(b, dict) and isinstance(b.get("text"), str)
            and b.get("type", "text") in ("text", "input_text")]


def _opens_with_user(api: str, body: dict[str, Any]) -> bool:
    """The conversation's first message is the user's (the system prompt aside)."""
    if api == "cohere":
        history = body.get("chat_history") or []
        return not history or str(history[0].get("role")).upper() == "USER"
    if api == "gemini":
        return (body.get("contents") or [{}])[0].get("role") == "user"
    if api == "openai-responses":
        items = body["input"] if isinstance(body.get("input"), list) else [{"role": "user"}]
        return items[0].get("role") == "user"
    turns = [m for m in body.get("messages") or [] if m.get("role") != "system"]
    return bool(turns) and turns[0].get("role") == "user"


#: dbos 2.x's first migration runs ``CREATE EXTENSION IF NOT EXISTS "uuid-ossp"`` (it uses
#: only the built-in ``gen_random_uuid()``), so its PostgreSQL needs the contrib extensions:
#: pgserver's build has none; Debian's ``postgresql`` with ``postgresql-contrib`` has them.
DEBIAN_POSTGRES = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))


@pytest.fixture(scope="module")
def dbos_postgres() -> Iterator[str]:
    """A PostgreSQL server with ``uuid-ossp`` for DBOS, started here (as the ``postgres``
    user when run as root, which PostgreSQL refuses; in a directory of its own, since
    pytest's are closed to other users); its URL."""
    assert DEBIAN_POSTGRES, ("DBOS on PostgreSQL needs Debian's postgresql and "
                             "postgresql-contrib (.ci/run installs them)")
    bin_dir = DEBIAN_POSTGRES[-1].parent
    home = Path(tempfile.mkdtemp(prefix="toolstream-dbos-pg-"))
    as_root = os.geteuid() == 0
    if as_root:
        shutil.chown(home, "postgres")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]

    def run(*args: str) -> None:
        command = [str(bin_dir / args[0]), *args[1:]]
        if as_root:
            command = ["su", "postgres", "-s", "/bin/sh", "-c", shlex.join(command)]
        subprocess.run(command, check=True, capture_output=True, timeout=BOUND_S)

    data = home / "data"
    run("initdb", "-D", str(data), "-A", "trust", "-U", "postgres")
    run("pg_ctl", "-D", str(data), "-w", "-l", str(home / "log"), "-o",
        f"-p {port} -k {home} -c listen_addresses=127.0.0.1", "start")
    try:
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        run("pg_ctl", "-D", str(data), "-w", "-m", "immediate", "stop")
        shutil.rmtree(home, ignore_errors=True)


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[dict[str, VendorEmulator]]:
    """An emulator per run: each run's requests are its emulator's alone."""
    wire = request.node.callspec.params["wire"]
    own = {kind: VendorEmulator(profile="mistral" if wire == "mistral" else None)
           for kind in KINDS}
    for emulator in own.values():
        emulator.start()
    try:
        yield own
    finally:
        for emulator in own.values():
            emulator.stop()


ROWS = [*((wire, "sqlite") for wire in WIRES), ("anthropic", "postgresql")]


@pytest.mark.parametrize(("wire", "database"), ROWS, ids=[f"{w}-{d}" for w, d in ROWS])
def test_a_killed_worker_recovers_legally_on_every_wire(
        wire: str, database: str, served: dict[str, VendorEmulator], tmp_path: Path,
        request: pytest.FixtureRequest) -> None:
    api = WIRES[wire]
    if database == "postgresql":
        (tmp_path / "dbos_url").write_text(request.getfixturevalue("dbos_postgres"))
    served["tool"].queue(api, "single_call", "text")
    served["stream"].queue_stall(api)  # the call's first chunks, then nothing
    served["stream"].queue(api, "text")
    plan = [{"key": f"{wire}-{kind}", "api": wire, "base_url": served[kind].base_url}
            for kind in KINDS]
    (tmp_path / "plan.json").write_text(json.dumps(plan))

    first = _worker(tmp_path, "first")
    _kill_when(first, lambda: _executions(tmp_path) == [f"{wire}-tool"]
               and len(served["stream"].stalls) == 1)
    second = _worker(tmp_path, "recover")
    out, _ = second.communicate(timeout=BOUND_S)
    assert out.split() == ["SUCCESS", "SUCCESS"], out

    assert _executions(tmp_path) == [f"{wire}-tool"]  # ran once; the cut call never
    for kind, emu in served.items():
        requests = [r for r in emu.requests if r.api == api]
        assert len(requests) == 2 and emu.statuses == [200, 200], (kind, emu.statuses)
        after = requests[1]  # what the recovered run sent
        assert history_pairing(after.api, after.body, path=after.path) == [], (kind, after.body)
        assert user_texts(wire if wire == "cohere" else api, after.body) == ["go"], (kind, after.body)
        assert _opens_with_user(api, after.body), (kind, after.body)
        answered = json.dumps(after.body).count(NOT_REPEATED)
        assert answered == (1 if kind == "tool" else 0), (kind, after.body)
