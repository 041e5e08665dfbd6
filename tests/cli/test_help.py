"""`--help` on every command, the documented exit codes, usage errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_util import RunCli

COMMANDS = ("replay", "record", "demo", "emulate")


def test_top_level_help_lists_commands_and_exit_codes(run_cli: RunCli) -> None:
    proc = run_cli("--help")
    assert proc.returncode == 0, proc.stderr
    for command in COMMANDS:
        assert command in proc.stdout
    assert "exit codes:" in proc.stdout
    for line in ("0  success", "1  replay --strict-exit", "2  usage error", "3  input error",
                 "4  network or vendor error"):
        assert line in proc.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_help(run_cli: RunCli, command: str) -> None:
    proc = run_cli(command, "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"usage: toolstream {command}")
    assert "exit codes:" in proc.stdout
    assert max(len(line) for line in proc.stdout.splitlines()) <= 100


def test_no_command_is_a_usage_error(run_cli: RunCli) -> None:
    proc = run_cli()
    assert proc.returncode == 2
    assert "usage:" in proc.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("replay",),  # PATH is required
        ("replay", "--provider", "mistral", "x.jsonl"),
        ("record", "--api", "openai-chat"),  # --model/--prompt/--tools/-o missing
        ("demo", "--api", "bedrock"),
        ("frobnicate",),
        ("emulate", "--port", "not-a-number"),
    ],
)
def test_bad_arguments_exit_2(run_cli: RunCli, args: tuple[str, ...]) -> None:
    proc = run_cli(*args)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "error:" in proc.stderr
    assert proc.stdout == ""


def test_version(run_cli: RunCli) -> None:
    proc = run_cli("--version")
    assert proc.returncode == 0
    assert proc.stdout.startswith("toolstream ")


def test_installed_console_script_runs() -> None:
    """The `toolstream` script from pyproject's [project.scripts] reaches the same main()."""
    script = Path(sys.executable).with_name("toolstream")
    if not script.exists():
        pytest.skip(f"package not installed in this environment ({script} absent)")
    proc = subprocess.run([str(script), "replay", "--help"], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: toolstream replay")
