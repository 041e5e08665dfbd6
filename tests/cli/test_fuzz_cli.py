"""``toolstream fuzz``: the real entry point over cassettes and corpus streams."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from cli_util import REPO, RunCli
from toolstream_core import Assembler, CallState
from toolstream_core.app.cli import EXIT_INPUT, EXIT_OK, EXIT_REJECTED, main

GEMINI_STREAM = REPO / "tests" / "streams" / "gemini" / "google__google-stream-tool-call-arguments__0.jsonl"


def test_fuzz_bundled_cassettes_text_report(run_cli: RunCli, cassettes: Path) -> None:
    done = run_cli("fuzz", str(cassettes / "gemini"), "--cases", "400")
    assert done.returncode == EXIT_OK, done.stdout + done.stderr
    assert "400 case(s) over" in done.stdout and ": 0 violating" in done.stdout
    rows = {line.split()[0]: line.split()[1:] for line in done.stdout.splitlines()
            if line and line.split()[0] in ("gemini", "truncate", "rechunk")}
    assert rows["gemini"][0] == "400"
    assert int(rows["truncate"][0]) > 0 and rows["truncate"][1] == "0"


def test_fuzz_json_report(run_cli: RunCli, cassettes: Path) -> None:
    done = run_cli("fuzz", str(cassettes / "openai-chat"), str(GEMINI_STREAM), "--cases", "300",
                   "--seed", "7", "--json")
    assert done.returncode == EXIT_OK, done.stderr
    doc = json.loads(done.stdout)
    assert doc["toolstream"] == "fuzz" and doc["seed"] == 7 and doc["cases"] == 300
    assert set(doc["by_api"]) == {"openai-chat", "gemini"}
    assert sum(t["cases"] for t in doc["by_mutation"].values()) == 300
    assert doc["violations"] == [] and doc["violating_cases"] == 0


def test_fuzz_missing_path_is_an_input_error(run_cli: RunCli, tmp_path: Path) -> None:
    done = run_cli("fuzz", str(tmp_path / "nope"))
    assert done.returncode == EXIT_INPUT
    assert "no such file" in done.stderr


def test_fuzz_one_case(run_cli: RunCli) -> None:
    done = run_cli("fuzz", str(GEMINI_STREAM), "--case", "12", "--json")
    doc = json.loads(done.stdout)
    assert done.returncode == EXIT_OK and doc["cases"] == 1


class _CommitsCutStreams:
    """An assembler that treats a dropped connection as a clean end: it commits truncated calls."""

    def __init__(self, *, provider: Any, on_event: Any) -> None:
        self.inner = Assembler(provider=provider, on_event=on_event)

    def feed(self, chunk: Any) -> None:
        self.inner.feed(chunk)

    def finish(self, *, transport_complete: bool = True) -> Any:
        turn = self.inner.finish(transport_complete=transport_complete)
        if transport_complete:
            return turn
        calls = tuple(dataclasses.replace(c, state=CallState.committed, reason=None, arguments={})
                      for c in turn.calls)
        return dataclasses.replace(turn, calls=calls, _results=())


def test_fuzz_exits_nonzero_and_prints_a_reproduction_per_violation(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import toolstream_core.testing.fuzz as fuzz

    monkeypatch.setattr(fuzz, "default_factory", _CommitsCutStreams)
    code = main(["fuzz", str(GEMINI_STREAM), "--cases", "200", "--seed", "5"])
    out = capsys.readouterr().out
    assert code == EXIT_REJECTED
    lines = [line for line in out.splitlines() if line.startswith("toolstream fuzz ")]
    assert lines and all(f"{GEMINI_STREAM} --seed 5 --case " in line for line in lines)
    assert any("cut_commits_nothing" in line for line in lines)
    case = int(lines[0].split("--case ")[1].split()[0])
    again = main(["fuzz", str(GEMINI_STREAM), "--seed", "5", "--case", str(case)])
    assert again == EXIT_REJECTED
    assert lines[0] in capsys.readouterr().out


def test_fuzz_help(run_cli: RunCli) -> None:
    proc = run_cli("fuzz", "--help")
    assert proc.returncode == EXIT_OK, proc.stderr
    assert proc.stdout.startswith("usage: toolstream fuzz")
    assert "--cases" in proc.stdout and "--case N" in proc.stdout and "exit codes:" in proc.stdout
    assert "fuzz: at least one case broke a safety invariant" in proc.stdout
    assert max(len(line) for line in proc.stdout.splitlines()) <= 100
