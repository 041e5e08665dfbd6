"""`toolstream record` against a live local emulator: real SDKs, real HTTP, scrubbed output."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from cli_util import CANARY, RunCli
from toolstream_core.app.replay import replay_source
from toolstream_core.testing import SCENARIOS, TOOLS, VendorEmulator, load_sources

APIS = ("openai-chat", "openai-responses", "anthropic", "gemini")


def base_url(recording_emulator: VendorEmulator, api: str) -> str:
    """The base URL as each SDK takes it (what a user passes to --base-url)."""
    return recording_emulator.base_url + ("/v1" if api.startswith("openai") else "")


@pytest.fixture(scope="module")
def tools_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tools") / "tools.json"
    path.write_text(json.dumps(TOOLS), encoding="utf-8")
    return path


def record(run_cli: RunCli, recording_emulator: VendorEmulator, tools_file: Path, api: str,
           scenario: str, out: Path, *extra: str) -> dict[str, object]:
    out.parent.mkdir(parents=True, exist_ok=True)  # record writes into an existing directory
    proc = run_cli(
        "record", "--json", "--api", api, "--model", f"scenario:{scenario}",
        "--prompt", "Write the notes file.", "--tools", str(tools_file),
        "--base-url", base_url(recording_emulator, api), "-o", str(out), *extra,
        env=CANARY,
    )
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, object] = json.loads(proc.stdout)
    return doc


@pytest.mark.parametrize(
    "api, scenario",
    [*((api, "truncated_length") for api in APIS), ("anthropic", "dropped_connection")],
)
def test_record_writes_a_scrubbed_cassette_that_replays(
    run_cli: RunCli, recording_emulator: VendorEmulator, tools_file: Path, tmp_path: Path, api: str,
    scenario: str,
) -> None:
    out = tmp_path / api / f"{scenario}.yaml"
    doc = record(run_cli, recording_emulator, tools_file, api, scenario, out)
    assert doc["cassette"] == str(out)
    assert doc["interactions"] == 1
    data = out.read_bytes()
    for secret in CANARY.values():
        assert secret.encode() not in data
        assert secret[:12].encode() not in data  # not even a prefix of the key
    assert b"127.0.0.1" not in data  # emulator host rewritten to the vendor's

    # The emulator saw the real SDK's request: the key was sent, and only scrubbed on disk.
    received = [r for r in recording_emulator.requests if r.api == api]
    assert received, "the emulator received no request"

    expect = SCENARIOS[scenario].expect
    (stream,) = doc["streams"]  # type: ignore[misc]
    committed = tuple(c["name"] for c in stream["calls"] if c["state"] == "committed")
    rejected = tuple(c["name"] for c in stream["calls"] if c["state"] == "failed")
    assert (committed, rejected) == (expect.committed, expect.rejected)

    # What `record` reports is what `replay` will read from the file (same code path,
    # checked in-process here to keep the suite fast; `replay` itself is tested on its own).
    replayed = [replay_source(s, tools=TOOLS) for s in load_sources(out)]
    assert json.loads(json.dumps(replayed)) == doc["streams"]


def test_record_text_output_and_refusal_to_overwrite(
    run_cli: RunCli, recording_emulator: VendorEmulator, tools_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "c.yaml"
    args = ("record", "--api", "anthropic", "--model", "scenario:truncated_length",
            "--prompt", "p", "--tools", str(tools_file), "--base-url", recording_emulator.base_url,
            "-o", str(out))
    first = run_cli(*args, env=CANARY)
    assert first.returncode == 0, first.stderr
    assert f"to {out}" in first.stdout
    assert "stream_truncated" in first.stdout
    assert f"toolstream replay {out}" in first.stdout
    before = out.read_bytes()

    again = run_cli(*args, env=CANARY)
    assert again.returncode == 2
    assert "--force" in again.stderr
    assert out.read_bytes() == before

    forced = run_cli(*args, "--force", env=CANARY)
    assert forced.returncode == 0, forced.stderr


def test_record_without_a_key_is_a_usage_error(
    run_cli: RunCli, recording_emulator: VendorEmulator, tools_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "c.yaml"
    proc = run_cli("record", "--api", "gemini", "--model", "scenario:single_call", "--prompt",
                   "p", "--tools", str(tools_file), "--base-url", recording_emulator.base_url,
                   "-o", str(out))
    assert proc.returncode == 2
    assert "GEMINI_API_KEY or GOOGLE_API_KEY" in proc.stderr
    assert not out.exists()


def test_record_with_a_missing_tools_file_is_an_input_error(
    run_cli: RunCli, recording_emulator: VendorEmulator, tmp_path: Path
) -> None:
    proc = run_cli("record", "--api", "openai-chat", "--model", "scenario:single_call",
                   "--prompt", "p", "--tools", str(tmp_path / "none.json"), "--base-url",
                   base_url(recording_emulator, "openai-chat"), "-o", str(tmp_path / "c.yaml"),
                   env=CANARY)
    assert proc.returncode == 3
    assert "none.json" in proc.stderr


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_record_network_failure_exits_4(run_cli: RunCli, tools_file: Path,
                                        tmp_path: Path) -> None:
    api = "openai-chat"
    url = f"http://127.0.0.1:{_closed_port()}" + ("/v1" if api.startswith("openai") else "")
    proc = run_cli("record", "--api", api, "--model", "m", "--prompt", "p", "--tools",
                   str(tools_file), "--base-url", url, "-o", str(tmp_path / "c.yaml"),
                   env=CANARY)
    assert proc.returncode == 4, (proc.stdout, proc.stderr)
    assert "vendor request failed" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_record_vendor_rejection_exits_4(run_cli: RunCli, recording_emulator: VendorEmulator,
                                         tools_file: Path, tmp_path: Path) -> None:
    """A scenario that does not exist on an API is answered with an HTTP error."""
    proc = run_cli("record", "--api", "anthropic", "--model", "scenario:missing_index",
                   "--prompt", "p", "--tools", str(tools_file), "--base-url", recording_emulator.base_url,
                   "-o", str(tmp_path / "c.yaml"), env=CANARY)
    assert proc.returncode == 4, (proc.stdout, proc.stderr)
    assert "HTTP 4" in proc.stderr or "HTTP 5" in proc.stderr
    assert not (tmp_path / "c.yaml").exists()
