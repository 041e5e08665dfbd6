"""LlamaIndex on DBOS (issue 38): a worker killed with SIGKILL, the run recovered elsewhere.

Each test starts a worker process (``li_dbos_worker.py``: DBOS on a SQLite system database, a
``ToolstreamFunctionAgent`` built inside ``DBOSRuntime().registering()``) against the
emulator, kills it (SIGKILL) at a point, and starts a second process, whose DBOS launch
recovers the run. Executions are counted across both processes (the tool logs each start to
a file), and the requests are read from the emulator: the user's message is in every one,
every call id is answered, and each was accepted.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from li_helpers import THIRD_PARTY_WARNINGS
from test_parity import assert_legal, gate_texts
from toolstream_core.testing import VendorEmulator

pytest.importorskip("llama_agents.dbos", reason="the dbos extra")  # in dev-llamaindex

pytestmark = THIRD_PARTY_WARNINGS

WORKER = Path(__file__).with_name("li_dbos_worker.py")
BOUND_S = 90.0  # against a hang, never a speed claim


def _worker(emu: VendorEmulator, work: Path, role: str) -> subprocess.Popen[str]:
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), str(root / "core"),
                                                         os.environ.get("PYTHONPATH", "")])}
    return subprocess.Popen([sys.executable, str(WORKER), emu.base_url, str(work), role],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def _kill_when(first: subprocess.Popen[str], reached: object) -> None:
    deadline = time.monotonic() + BOUND_S
    while not reached() and first.poll() is None and time.monotonic() < deadline:  # type: ignore[operator]
        time.sleep(0.05)
    assert first.poll() is None, "the first worker ended before the kill point"
    first.send_signal(signal.SIGKILL)
    first.wait()


def _recover(emu: VendorEmulator, work: Path) -> str:
    second = _worker(emu, work, "recover")
    out, _ = second.communicate(timeout=BOUND_S)
    return out.strip().splitlines()[-1] if out.strip() else ""


def _executions(work: Path) -> list[str]:
    log = work / "executions.log"
    return log.read_text().splitlines() if log.exists() else []


def test_a_tool_killed_after_it_started_runs_once(emu: VendorEmulator, tmp_path: Path) -> None:
    emu.queue("openai-chat", "single_call", "text")
    first = _worker(emu, tmp_path, "first")
    _kill_when(first, lambda: bool(_executions(tmp_path)))

    assert _recover(emu, tmp_path) == "SUCCESS"
    assert len(_executions(tmp_path)) == 1  # the recovered step did not run it again
    assert len(emu.requests) == 2 and emu.statuses == [200, 200]
    after = emu.requests[1].body
    assert_legal("openai-chat", after)
    assert [m["content"] for m in after["messages"] if m["role"] == "user"] == ["go"]
    [text] = gate_texts("openai-chat", after)
    assert text.endswith("[not_repeated]") and "started" in text


def test_a_run_killed_mid_stream_runs_the_cut_call_never(emu: VendorEmulator,
                                                        tmp_path: Path) -> None:
    stall = emu.queue_stall("openai-chat")  # the call's first chunks, then nothing
    emu.queue("openai-chat", "text")
    first = _worker(emu, tmp_path, "first")
    _kill_when(first, lambda: bool(emu.stalls))

    assert _recover(emu, tmp_path) == "SUCCESS"
    assert stall.api == "openai-chat"
    assert _executions(tmp_path) == []
    assert len(emu.requests) == 2 and emu.statuses[1] == 200
    after = emu.requests[1].body  # the model call made again by the recovered step
    assert_legal("openai-chat", after)
    assert [m["content"] for m in after["messages"] if m["role"] == "user"] == ["go"]
