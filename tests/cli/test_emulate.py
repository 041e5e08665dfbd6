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


def _banner(proc: subprocess.Popen[str], deadline: float = 120) -> tuple[str, str]:
    """The emulator's base URL and its whole start-up banner."""
    assert proc.stdout is not None
    end = time.monotonic() + deadline
    lines: list[str] = []
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line)
        if line.startswith("Ctrl-C to stop"):
            text = "".join(lines)
            match = re.search(r"listening on (http://127\.0\.0\.1:\d+)", text)
            assert match, text
            return match.group(1), text
    proc.kill()
    raise AssertionError(f"no banner; stderr: {proc.stderr.read() if proc.stderr else ''}")


def _banner_url(proc: subprocess.Popen[str]) -> str:
    return _banner(proc)[0]


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


def _stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return out


def test_create_agent_on_single_call_runs_the_tool_once_and_finishes() -> None:
    """The issue's bar: the CLI emulator serves a real agent loop to its end."""
    pytest.importorskip("langchain.agents")
    pytest.importorskip("langchain_openai")
    from langchain.agents import create_agent
    from langchain_core.messages import HumanMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    from langchain_toolstream import ToolstreamMiddleware

    runs: list[dict[str, str]] = []

    @tool
    def write_file(path: str, content: str) -> str:
        """Write a text file."""
        runs.append({"path": path, "content": content})
        return f"wrote {len(content)} characters to {path}"

    proc = _start("--port", "0")
    try:
        url, banner = _banner(proc)
        model = ChatOpenAI(model="scenario:single_call", base_url=url + "/v1", api_key="x",
                           max_retries=0)
        agent = create_agent(model, tools=[write_file], middleware=[ToolstreamMiddleware()])
        state = agent.invoke({"messages": [HumanMessage("write my notes")]},
                             {"recursion_limit": 10})
    finally:
        _stop(proc)
    assert [r["path"] for r in runs] == ["/tmp/notes.txt"]
    ai = [m for m in state["messages"] if m.type == "ai"]
    assert len(ai) <= 3
    final = ai[-1]
    assert not final.tool_calls
    assert "All done" in final.text and "write_file returned" in final.text
    assert f"wrote {len(runs[0]['content'])} characters" in final.text
    assert "create_agent" in banner and "FunctionAgent" in banner and "raw SDK" in banner


def _chat(url: str, model: str, messages: list[dict[str, object]]) -> str:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=url + "/v1", api_key="x", max_retries=0)
    reply = client.chat.completions.create(model=model, messages=messages)  # type: ignore[arg-type]
    message = reply.choices[0].message
    if message.tool_calls:
        return "calls:" + ",".join(c.function.name for c in message.tool_calls)  # type: ignore[union-attr]
    return message.content or ""


def test_script_plays_in_order_and_the_final_answer_reports_errors() -> None:
    proc = _start("--port", "0", "--script", "parallel_calls", "--scenario", "text")
    try:
        url = _banner_url(proc)
        first = _chat(url, "gpt-4o-mini", [{"role": "user", "content": "weather?"}])
        history: list[dict[str, object]] = [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "a", "type": "function",
                 "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}},
                {"id": "b", "type": "function",
                 "function": {"name": "get_weather", "arguments": '{"city":"Tok'}}]},
            {"role": "tool", "tool_call_id": "a", "content": "sunny"},
            {"role": "tool", "tool_call_id": "b",
             "content": "Error: get_weather was not run [stream_truncated]"},
        ]
        second = _chat(url, "gpt-4o-mini", history)
        plain = _chat(url, "gpt-4o-mini", [{"role": "user", "content": "hi"}])
    finally:
        _stop(proc)
    assert first == "calls:get_weather,get_weather"
    assert second.startswith("Partly done: 2 tool result(s) came back, 1 of them errors")
    assert "get_weather returned 'sunny'" in second and "get_weather failed" in second
    assert "no tool ran" in plain and "All done" not in plain


def test_emulate_rejects_an_unknown_script_scenario(run_cli) -> None:  # type: ignore[no-untyped-def]
    done = run_cli("emulate", "--script", "single_call,bogus")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "unknown scenario 'bogus'" in done.stderr
    assert "single_call" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("port", ["99999", "-1"])
def test_emulate_on_an_impossible_port_is_one_line(run_cli, port: str) -> None:  # type: ignore[no-untyped-def]
    done = run_cli("emulate", "--port", port)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    assert f"--port {port} is not a TCP port" in done.stderr
