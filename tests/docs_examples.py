"""Run the examples of ``docs/observability.md`` as they are written, each in a fresh process.

A fresh interpreter because each example sets the global tracer provider or instruments a
framework, which a process allows once. The examples start their own emulator.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "observability.md"
_BLOCK = re.compile(r"<!-- example: ([\w-]+) -->\n```python\n(.*?)\n```", re.S)


def example(name: str) -> str:
    blocks = dict(_BLOCK.findall(DOC.read_text(encoding="utf-8")))
    assert name in blocks, f"no example {name!r} in {DOC.name}"
    return blocks[name]


def run_example(name: str) -> list[str]:
    """The lines the example prints; it must exit cleanly."""
    done = subprocess.run([sys.executable, "-c", example(name)], capture_output=True, text=True,
                          timeout=300, cwd=DOC.parent.parent)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()
