"""`toolstream emulate`: a foreground server a real SDK can talk to, stopped by a signal."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest
from cli_util import REPO


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "toolstream_core.app.cli", "emulate", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )


def _banner_url(proc: subprocess.Popen[str], deadline: float = 120) -> str:
    assert proc.stdout is not None
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if not line:
            break
        match = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
        if match:
            return match.group(1)
    proc.kill()
    raise AssertionError(f"no banner; stderr: {proc.stderr.read() if proc.stderr else ''}")


def test_emulate_serves_the_real_sdk_and_stops_on_sigterm() -> None:
    openai = pytest.importorskip("openai")
    proc = _start("--port", "0", "--seed", "3")
    try:
        url = _banner_url(proc)
        client = openai.OpenAI(base_url=url + "/v1", api_key="test", max_retries=0)
        stream = client.chat.completions.create(
            model="scenario:truncated_length",
            messages=[{"role": "user", "content": "hi"}],
            stream=True,
        )
        chunks = list(stream)
        finish = [c.choices[0].finish_reason for c in chunks if c.choices]
        assert "length" in finish
        args = "".join(
            tc.function.arguments or ""
            for c in chunks if c.choices
            for tc in c.choices[0].delta.tool_calls or []
        )
        assert args == '{"path":"/tmp/a'
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "emulator stopped" in out


def test_emulate_on_a_busy_port_exits_4() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        proc = _start("--port", str(port))
        out, err = proc.communicate(timeout=120)
    assert proc.returncode == 4, (out, err)
    assert f"cannot listen on 127.0.0.1:{port}" in err


@pytest.mark.skipif(os.name != "posix", reason="SIGINT delivery to a child is POSIX-only here")
def test_emulate_stops_on_ctrl_c() -> None:
    proc = _start()
    try:
        _banner_url(proc)
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert "emulator stopped" in out
