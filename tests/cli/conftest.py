"""Fixtures for the CLI tests: every test drives the real entry point in a subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from cli_util import CASSETTES, REPO, RunCli
from toolstream_core.testing import VendorEmulator


@pytest.fixture(scope="session")
def run_cli() -> RunCli:
    """Run ``python -m toolstream_core.app.cli ARGS`` and return the finished process.

    The environment is the test's own minus vendor keys (a test that needs one passes it),
    and ``NO_COLOR`` is unset so colour behaviour is decided by the flags under test.
    """

    def run(*args: str, env: Mapping[str, str] | None = None, timeout: float = 300,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        base = {
            k: v
            for k, v in os.environ.items()
            if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY",
                         "GOOGLE_API_KEY", "NO_COLOR")
        }
        base.update(env or {})
        return subprocess.run(
            [sys.executable, "-m", "toolstream_core.app.cli", *args],
            capture_output=True,
            text=True,
            encoding="utf-8",
            env=base,
            timeout=timeout,
            cwd=cwd or REPO,
            check=False,
        )

    return run


@pytest.fixture(scope="session")
def cassettes() -> Path:
    """The bundled cassettes (the project ships them; their absence is a failure, not a skip)."""
    assert CASSETTES.is_dir(), f"bundled cassettes missing at {CASSETTES}"
    return CASSETTES


@pytest.fixture(scope="module")
def recording_emulator() -> Iterator[VendorEmulator]:
    """A second, recording emulator (module): ``soft_drop`` so a dropped connection ends
    cleanly and can be recorded too; the shared ``emulator`` hard-drops."""
    with VendorEmulator(seed=0, soft_drop=True) as emu:
        yield emu
