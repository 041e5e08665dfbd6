"""`toolstream replay` on the real-stream corpus (``tests/streams``) and on the bundled cassettes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from cli_util import ANSI, RunCli
from toolstream_core.testing import SCENARIOS

CALL = {
    "type": "object",
    "required": ["index", "id", "name", "kind", "state", "reason", "detail", "bytes",
                 "raw_arguments", "arguments"],
    "properties": {
        "id": {"type": ["string", "null"]},
        "name": {"type": ["string", "null"]},
        "kind": {"enum": ["function", "custom", "server"]},
        "state": {"enum": ["open", "args_complete", "committed", "failed", "cancelled"]},
        "reason": {"type": ["string", "null"]},
        "bytes": {"type": "integer", "minimum": 0},
        "raw_arguments": {"type": "string"},
    },
}
REPLAY_SCHEMA = {
    "type": "object",
    "required": ["toolstream", "version", "streams", "totals"],
    "properties": {
        "toolstream": {"const": "replay"},
        "version": {"const": 1},
        "streams": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["source", "interaction", "api", "provider", "events",
                             "transport_complete", "complete", "finish_reason", "error",
                             "calls", "server_calls", "dropped", "error_results", "notes"],
                "properties": {
                    "events": {"type": "integer", "minimum": 0},
                    "transport_complete": {"type": "boolean"},
                    "complete": {"type": "boolean"},
                    "calls": {"type": "array", "items": CALL},
                    "server_calls": {"type": "array", "items": CALL},
                    "dropped": {"type": "array", "items": CALL},
                    "error_results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["tool_call_id", "name", "reason", "content",
                                         "is_error"],
                            "properties": {"is_error": {"const": True},
                                           "content": {"type": "string", "minLength": 1}},
                        },
                    },
                    "notes": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
        "totals": {
            "type": "object",
            "required": ["streams", "calls", "committed", "rejected", "server_calls",
                         "dropped", "error_results"],
        },
    },
}


def replay_json(run_cli: RunCli, *args: str) -> dict[str, Any]:
    proc = run_cli("replay", "--json", *args)
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    jsonschema.validate(doc, REPLAY_SCHEMA)
    return doc


# ----------------------------------------------------------------- real streams (JSONL)


def test_jsonl_stream_matches_its_factual_reassembly(run_cli: RunCli, streams_dir: Path) -> None:
    path = streams_dir / "openai-chat" / "alibaba-dashscope__alibaba-tool-call__0.jsonl"
    expected = json.loads(path.with_name(path.name.replace(".jsonl", ".expected.json"))
                          .read_text(encoding="utf-8"))
    doc = replay_json(run_cli, str(path))
    (stream,) = doc["streams"]
    assert stream["provider"] == "openai-chat"
    assert stream["finish_reason"] == expected["finish_reason"]
    got = [(c["id"], c["name"], c["raw_arguments"], c["arguments"]) for c in stream["calls"]]
    want = [(c["id"], c["name"], c["raw_arguments"], c["arguments"])
            for c in expected["tool_calls"]]
    assert got == want
    assert all(c["state"] == "committed" for c in stream["calls"])
    assert stream["calls"][0]["bytes"] == len(expected["tool_calls"][0]["raw_arguments"]
                                              .encode("utf-8"))

    text = run_cli("replay", "--color", "never", str(path))
    assert text.returncode == 0
    assert expected["tool_calls"][0]["id"][:20] in text.stdout
    assert "committed" in text.stdout
    assert "1 stream(s): 1 call(s), 1 committed, 0 rejected" in text.stdout


def test_whole_corpus_replays_and_counts_agree(run_cli: RunCli, streams_dir: Path) -> None:
    """A directory is searched; every stream of the four APIs agrees with its expected.json
    on the number of client and server-side calls (bonus folders need only not crash)."""
    doc = replay_json(run_cli, str(streams_dir))
    by_source = {Path(s["source"]): s for s in doc["streams"]}
    assert len(by_source) == len(list(streams_dir.rglob("*.jsonl")))
    checked = 0
    for path, stream in by_source.items():
        expected_path = path.with_name(path.name.replace(".jsonl", ".expected.json"))
        if not expected_path.exists():
            continue
        expected = json.loads(expected_path.read_text(encoding="utf-8"))
        kinds = [c.get("kind") for c in expected["tool_calls"]]
        client = [k for k in kinds if k in ("function", "tool_use", "custom_tool_call")]
        assert len(stream["calls"]) == len(client), path.name
        assert len(stream["server_calls"]) >= len(kinds) - len(client), path.name
        checked += 1
    assert checked >= 50
    totals = doc["totals"]
    assert totals["error_results"] == totals["rejected"]


# ----------------------------------------------------------------- bundled cassettes


def test_truncated_cassette_is_rejected_and_paired(run_cli: RunCli, cassettes: Path) -> None:
    doc = replay_json(run_cli, str(cassettes / "openai-chat" / "truncated_length.yaml"))
    stream = doc["streams"][0]
    assert stream["api"] == "openai-chat"
    assert stream["finish_reason"] == "length"
    assert stream["complete"] is False
    (call,) = stream["calls"]
    assert call["name"] == "write_file"
    assert call["raw_arguments"] == '{"path":"/tmp/a'
    assert (call["state"], call["reason"], call["arguments"]) == (
        "failed", "stream_truncated", None)
    assert call["bytes"] == len('{"path":"/tmp/a')
    (result,) = stream["error_results"]
    assert result["tool_call_id"] == call["id"]
    assert result["reason"] == "stream_truncated"
    assert doc["totals"]["rejected"] == 1

    text = run_cli("replay", "--color", "never", str(cassettes / "openai-chat" /
                                                     "truncated_length.yaml"))
    assert text.returncode == 0
    assert "stream_truncated" in text.stdout
    assert "error results (one per rejected call):" in text.stdout
    assert call["id"] in text.stdout  # the full id is printed with its error result
    assert not ANSI.search(text.stdout)


@pytest.mark.parametrize("api", ["openai-chat", "openai-responses", "anthropic", "gemini",
                                 "bedrock-converse", "ollama", "cohere"])
def test_every_bundled_cassette_replays_to_its_scenario(run_cli: RunCli, cassettes: Path,
                                                        api: str) -> None:
    """Raw cassette bytes -> EventDecoder -> Assembler gives what each scenario promises."""
    doc = replay_json(run_cli, str(cassettes / api))
    first = {Path(s["source"]).stem: s for s in doc["streams"] if s["interaction"] == 0}
    assert set(first) == {n for n, s in SCENARIOS.items() if api in s.apis}
    for name, stream in first.items():
        expect = SCENARIOS[name].expect
        committed = tuple(c["name"] for c in stream["calls"] if c["state"] == "committed")
        rejected = tuple(c["name"] for c in stream["calls"] if c["state"] == "failed")
        assert (committed, rejected) == (expect.committed, expect.rejected), name
        assert {c["reason"] for c in stream["calls"] if c["reason"]} <= set(expect.reasons), name
        assert stream["complete"] is expect.complete, name
        assert len(stream["error_results"]) == len(rejected), name


def test_dropped_connection_marker_means_transport_cut(run_cli: RunCli, cassettes: Path) -> None:
    doc = replay_json(run_cli, str(cassettes / "anthropic" / "dropped_connection.yaml"))
    stream = doc["streams"][0]
    assert stream["transport_complete"] is False
    assert any("dropped connection" in note for note in stream["notes"])
    assert [c["reason"] for c in stream["calls"]] == ["stream_truncated"]


def test_tools_file_enables_registry_and_schema(run_cli: RunCli, cassettes: Path,
                                                tmp_path: Path) -> None:
    single = str(cassettes / "openai-chat" / "single_call.yaml")
    wrong = tmp_path / "tools.yaml"
    wrong.write_text("write_file:\n  type: object\n  properties:\n    path: {type: integer}\n",
                     encoding="utf-8")
    call = replay_json(run_cli, "--tools", str(wrong), single)["streams"][0]["calls"][0]
    assert (call["state"], call["reason"]) == ("failed", "schema_violation")

    other = tmp_path / "tools.json"
    other.write_text(json.dumps({"get_time": {"type": "object"}}), encoding="utf-8")
    call = replay_json(run_cli, "--tools", str(other), single)["streams"][0]["calls"][0]
    assert (call["state"], call["reason"]) == ("failed", "unknown_tool")

    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps({"write_file": {"type": "object", "required": ["path"]}}),
                  encoding="utf-8")
    call = replay_json(run_cli, "--tools", str(ok), single)["streams"][0]["calls"][0]
    assert call["state"] == "committed"
    assert call["arguments"]["path"] == "/tmp/notes.txt"


def test_config_file_reaches_the_assembler(run_cli: RunCli, cassettes: Path,
                                           tmp_path: Path) -> None:
    """`no_finish` fails in strict mode and commits in lenient mode (DESIGN §4.4)."""
    no_finish = str(cassettes / "openai-chat" / "no_finish.yaml")
    strict = replay_json(run_cli, no_finish)["streams"][0]["calls"][0]
    assert strict["state"] == "failed"
    config = tmp_path / "agent.yaml"
    config.write_text("agent_stream_assemble:\n  mode: lenient\n", encoding="utf-8")
    lenient = replay_json(run_cli, "--config", str(config), no_finish)["streams"][0]["calls"][0]
    assert lenient["state"] == "committed"


def test_provider_override(run_cli: RunCli, cassettes: Path) -> None:
    path = str(cassettes / "openai-chat" / "single_call.yaml")
    stream = replay_json(run_cli, "--provider", "anthropic", path)["streams"][0]
    assert stream["provider"] == "anthropic"
    assert not [c for c in stream["calls"] if c["state"] == "committed"]


# ----------------------------------------------------------------- exit codes


def test_strict_exit(run_cli: RunCli, cassettes: Path) -> None:
    bad = run_cli("replay", "--strict-exit", str(cassettes / "gemini" / "truncated_length.yaml"))
    assert bad.returncode == 1
    good = run_cli("replay", "--strict-exit", str(cassettes / "gemini" / "single_call.yaml"))
    assert good.returncode == 0
    lax = run_cli("replay", str(cassettes / "gemini" / "truncated_length.yaml"))
    assert lax.returncode == 0


@pytest.mark.parametrize(
    "content, name",
    [
        (None, "missing.jsonl"),
        ("not json at all\n", "garbage.jsonl"),
        ('{"data": {}}\n', "no_header.jsonl"),
        ("interactions: 3\n", "not_a_cassette.yaml"),
        (": : :\n  - [", "broken.yaml"),
        ("{}", "wrong_suffix.txt"),
    ],
)
def test_input_errors_exit_3(run_cli: RunCli, tmp_path: Path, content: str | None,
                             name: str) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_text(content, encoding="utf-8")
    proc = run_cli("replay", str(path))
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert proc.stderr.startswith("toolstream replay: ")
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "option, content",
    [
        ("--config", "agent_stream_assemble:\n  mode: bogus\n"),
        ("--config", "other_section: {}\n"),
        ("--tools", "[1, 2, 3]\n"),
        ("--tools", "write_file: 7\n"),
    ],
)
def test_bad_config_or_tools_exit_3(run_cli: RunCli, cassettes: Path, tmp_path: Path,
                                    option: str, content: str) -> None:
    path = tmp_path / "input.yaml"
    path.write_text(content, encoding="utf-8")
    proc = run_cli("replay", option, str(path), str(cassettes / "openai-chat" /
                                                    "single_call.yaml"))
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr


def _on_a_terminal(args: list[str], env: dict[str, str]) -> str:
    """Run the CLI with stdout on a pseudo-terminal; what the terminal received."""
    pty = pytest.importorskip("pty")
    master, slave = pty.openpty()
    try:
        proc = subprocess.run([sys.executable, "-m", "toolstream_core.app.cli", *args],
                              stdout=slave, stderr=subprocess.PIPE, env=env, timeout=120,
                              check=False)
        assert proc.returncode == 0, proc.stderr
    finally:
        os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the other end is closed and drained
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return b"".join(chunks).decode("utf-8")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_colour_on_a_terminal_unless_no_color(cassettes: Path) -> None:
    path = str(cassettes / "anthropic" / "truncated_length.yaml")
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    assert "\x1b[31m" in _on_a_terminal(["replay", path], env)
    plain = _on_a_terminal(["replay", path], {**env, "NO_COLOR": "1"})
    assert "stream_truncated" in plain
    assert not ANSI.search(plain)


def test_colour_only_when_asked_or_on_a_terminal(run_cli: RunCli, cassettes: Path) -> None:
    path = str(cassettes / "anthropic" / "truncated_length.yaml")
    assert not ANSI.search(run_cli("replay", path).stdout)  # a pipe: no colour
    coloured = run_cli("replay", "--color", "always", path).stdout
    assert "\x1b[31m" in coloured  # the failed state in red
    assert ANSI.sub("", coloured) == run_cli("replay", "--color", "never", path).stdout
