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


#: A path into the decision log, as any file of the repository may name it.
_CITED = re.compile(r"docs/decisions/[A-Za-z0-9_.*-]*")
#: What is not the project's own text: tools' caches, virtualenvs, build output.
_SKIPPED_DIRS = frozenset({".git", ".nox", ".venv", "venv", "node_modules", "__pycache__",
                           ".mypy_cache", ".ruff_cache", ".pytest_cache", "build", "dist"})


def _texts() -> list[Path]:
    found: list[Path] = []
    for path in ROOT.rglob("*"):
        if _SKIPPED_DIRS.intersection(path.relative_to(ROOT).parts) or not path.is_file():
            continue
        if path.suffix in {".py", ".md", ".toml", ".txt", ".cfg", ".yaml", ".yml", ".ini", ""}:
            found.append(path)
    return found


def cited_records(text: str) -> list[str]:
    """Every ``docs/decisions/...`` path ``text`` names, without trailing sentence punctuation."""
    return [m.rstrip(".") for m in _CITED.findall(text)]


def test_the_citation_pattern_finds_paths_and_broken_ones() -> None:
    text = ("see docs/decisions/0001-extras-version-ranges.md. and "
            "(docs/decisions/agents-run-budget.md), ``docs/decisions/surface-*``")
    assert cited_records(text) == ["docs/decisions/0001-extras-version-ranges.md",
                                   "docs/decisions/agents-run-budget.md",
                                   "docs/decisions/surface-*"]
    assert [c for c in cited_records(text) if not (ROOT / c).exists()] == [
        "docs/decisions/agents-run-budget.md", "docs/decisions/surface-*"]


def test_every_decision_record_a_file_names_exists() -> None:
    """A docstring or page that cites ``docs/decisions/<record>`` cites a file that is there
    (relative links inside the docs are checked by ``test_doc_links``)."""
    texts = _texts()
    assert any(p.suffix == ".py" for p in texts) and any(p.suffix == ".md" for p in texts)
    missing = []
    for path in texts:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if path == Path(__file__):
            text = text.replace(text[text.index("def test_the_citation_pattern"):
                                     text.index("def test_every_decision_record")], "")
        missing += [f"{path.relative_to(ROOT)}: {cited}" for cited in cited_records(text)
                    if not (ROOT / cited).exists()]
    assert missing == []
