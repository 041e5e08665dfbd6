"""The code blocks of README.md and docs/*.md: every one is an example or a marked fragment.

Before each fenced block sits one marker line:

- ``<!-- example: NAME -->``: the block runs as written, in a fresh process (a Python block),
  under pytest (a name starting ``pytest-``), or as the config it shows (a YAML block);
- ``<!-- fragment: see NAME -->``: an excerpt (it needs your model, tools or messages); the
  example ``NAME`` runs the same calls;
- ``<!-- fragment: shell -->``: commands for a shell (installs, the CLI).

A fresh interpreter for each example because an example may set the global tracer provider
or instrument a framework, which a process allows once. The examples start their own emulator.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
_MARKER = re.compile(r"<!-- (example|fragment): ([\w -]+?) -->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language, its marker and its code."""

    page: Path
    line: int
    lang: str
    kind: str  # "example", "fragment" or "" (no marker)
    name: str  # the example's name, "see NAME" or "shell"
    code: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks() -> list[Block]:
    """Every fenced block of every page, with the marker on the line before it."""
    found: list[Block] = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for match in _FENCE.finditer(text):
            before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
            marker = _MARKER.search(before)
            kind, name = (marker.group(1), marker.group(2)) if marker else ("", "")
            line = text.count("\n", 0, match.start()) + 1
            found.append(Block(page, line, match.group(1), kind, name, match.group(2)))
    return found


def examples() -> dict[str, Block]:
    return {b.name: b for b in blocks() if b.kind == "example"}


def example(name: str) -> str:
    found = examples()
    assert name in found, f"no example {name!r} in README.md or docs/"
    return found[name].code


def run_example(name: str) -> list[str]:
    """The lines the example prints; it must exit cleanly."""
    done = subprocess.run([sys.executable, "-c", example(name)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()
