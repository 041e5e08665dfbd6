"""Shared bits of the CLI tests (a module, not conftest, so tests can import it by name)."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CASSETTES = REPO / "cassettes"
ANSI = re.compile(r"\x1b\[[0-9;]*m")

RunCli = Callable[..., subprocess.CompletedProcess[str]]

# A key shape every scrubbing rule must catch wherever it lands.
CANARY = {
    "OPENAI_API_KEY": "sk-canaryOPENAIcanary0123456789abcdef",
    "ANTHROPIC_API_KEY": "sk-ant-canaryANTHROPIC0123456789abcdef",
    "GEMINI_API_KEY": "AIzaCanaryGEMINIcanary0123456789abcdef",
}
