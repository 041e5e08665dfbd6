"""The decision log (docs/decisions/) is complete, numbered, indexed and linked from DESIGN.

DESIGN states each decided rule and links its record as "(why: NNNN)"; a record nobody links
is a decision whose rule left the contract, and a gap in the numbers is a record lost in a
merge. Each record keeps the ADR shape a reader expects: title, status, context, decision,
consequences.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "docs" / "decisions"
_NAME = re.compile(r"(\d{4})-[a-z0-9]+(?:-[a-z0-9]+)*\.md")
_SECTIONS = ("## Context", "## Decision", "## Consequences")


def _records() -> list[Path]:
    return sorted(p for p in LOG.glob("*.md") if p.name != "README.md")


def test_names_are_numbered_kebab_slugs_without_gaps() -> None:
    names = [p.name for p in _records()]
    assert [n for n in names if not _NAME.fullmatch(n)] == []
    numbers = [int(n[:4]) for n in names]
    assert numbers == list(range(1, len(numbers) + 1))


def test_each_record_has_the_adr_shape() -> None:
    problems: list[str] = []
    for path in _records():
        text = path.read_text(encoding="utf-8")
        if not text.startswith(f"# {path.name[:4]}. "):
            problems.append(f"{path.name}: the title is not '# {path.name[:4]}. ...'")
        if not re.search(r"^- Status: (Accepted|Superseded by \d{4}|Deprecated)$", text, re.M):
            problems.append(f"{path.name}: no status line")
        problems += [f"{path.name}: no {s}" for s in _SECTIONS if f"\n{s}\n" not in text]
    assert problems == []


def test_the_index_lists_every_record() -> None:
    index = (LOG / "README.md").read_text(encoding="utf-8")
    listed = re.findall(r"\]\((\d{4}-[\w-]+\.md)\)", index)
    assert listed == [p.name for p in _records()]


def test_design_links_every_record() -> None:
    design = (ROOT / "docs" / "DESIGN.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\(decisions/(\d{4}-[\w-]+\.md)\)", design))
    assert sorted({p.name for p in _records()} - linked) == []
