"""Every code block of README.md and docs/ runs as written, or is a marked fragment.

A Python example runs in a fresh interpreter against the emulator; when it ends with comment
lines (``# ...``), those are what it must print (``...`` stands for any text). An example
whose name starts ``pytest-`` is a test file and runs under pytest; a YAML example is a
config and must load. Examples another test already runs (``run_example("name")`` in its
source) are not run twice. Fragments point at the example that runs the same calls.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest
from docs_examples import PAGES, ROOT, Block, blocks, examples, run_example
from toolstream_core import AssembleConfig

_IMPORT = re.compile(r"^(?:from|import) (\w+)", re.M)
_RUN_ELSEWHERE = re.compile(r"run_example\(\"([\w-]+)\"\)")
_ISSUE = re.compile(r"\bissues?[ -]?#?\d+|(?<![\w/])#\d{1,4}\b", re.I)
_SHELL = {"bash", "sh", "console"}


def _run_elsewhere() -> set[str]:
    here = Path(__file__).name
    names: set[str] = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        if path.name != here:
            names.update(_RUN_ELSEWHERE.findall(path.read_text(encoding="utf-8")))
    return names


def _needs(code: str) -> None:
    """Skip (as ``importorskip`` would) when a package the example imports is not installed."""
    for module in sorted(set(_IMPORT.findall(code))):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"the example needs {module}, not installed in this environment")


def _expected(code: str) -> list[str]:
    """The trailing ``# ...`` comment lines: what the example prints."""
    lines = code.rstrip("\n").split("\n")
    tail: list[str] = []
    while lines and lines[-1].startswith("# "):
        tail.insert(0, lines.pop()[2:])
    return tail


def _matches(expected: str, printed: str) -> bool:
    pattern = ".*".join(re.escape(part) for part in expected.split("..."))
    return re.fullmatch(pattern, printed) is not None


def test_every_block_is_an_example_or_a_fragment() -> None:
    names = examples()
    problems: list[str] = []
    for block in blocks():
        if block.kind == "example":
            continue
        if block.kind != "fragment":
            problems.append(f"{block.where}: no <!-- example: NAME --> or <!-- fragment: ... -->")
        elif block.name == "shell" and block.lang not in _SHELL:
            problems.append(f"{block.where}: a shell fragment in a {block.lang!r} block")
        elif block.name == "text" and block.lang:
            problems.append(f"{block.where}: a text fragment must be a plain block")
        elif block.name.startswith("see ") and block.name[4:] not in names:
            problems.append(f"{block.where}: its twin {block.name[4:]!r} is not an example")
        elif block.name not in ("shell", "text") and not block.name.startswith("see "):
            problems.append(f"{block.where}: unknown fragment kind {block.name!r}")
    assert problems == []


def test_example_names_are_unique() -> None:
    named = [b.name for b in blocks() if b.kind == "example"]
    assert len(named) == len(set(named))


def test_pages_cite_no_issue_numbers() -> None:
    for page in PAGES:
        hits = _ISSUE.findall(page.read_text(encoding="utf-8"))
        assert hits == [], f"{page.name} cites {hits}"


def test_readme_is_short_and_starts_with_the_two_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) < 300
    first = blocks()[0]
    assert first.page.name == "README.md" and first.kind == "fragment"
    assert 'pip install -e ".[all]" && toolstream demo' in first.code
    assert 'pip install -e ".[dev]" && pytest' in first.code  # what CI runs


def _own() -> list[Block]:
    elsewhere = _run_elsewhere()
    return [b for b in blocks() if b.kind == "example" and b.name not in elsewhere]


def test_every_example_runs_somewhere() -> None:
    elsewhere = _run_elsewhere()
    for name, block in examples().items():
        assert name in elsewhere or block.lang in ("python", "yaml"), block.where


@pytest.mark.parametrize("block", _own(), ids=lambda b: b.name)
def test_example_runs_as_written(block: Block, tmp_path: Path) -> None:
    if block.lang == "yaml":
        config = AssembleConfig.from_yaml(block.code)
        assert config == AssembleConfig()  # the page shows the defaults
        return
    _needs(block.code)
    if block.name.startswith("pytest-"):
        test_file = tmp_path / "test_example.py"
        test_file.write_text(block.code, encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                               str(test_file)], capture_output=True, text=True, timeout=300,
                              cwd=tmp_path)
        assert done.returncode == 0, done.stdout[-3000:]
        assert " passed" in done.stdout and "failed" not in done.stdout
        return
    printed = run_example(block.name)
    expected = _expected(block.code)
    assert len(printed) == len(expected), (printed, expected)
    for want, got in zip(expected, printed, strict=True):
        assert _matches(want, got), (want, got)
