"""docs/code-map.md names every module of the three packages, and only modules that exist.

The map is the page a newcomer reads to find where a rule lives; a module added without a
line there, or a line left behind by a move, makes it lie. Modules are named by their path
from the repository root (``core/toolstream_core/_table.py``); shorter mentions in the
"where each rule lives" table (``_table.py``, ``testing/_eventstream.py``) must each end a
real module's path.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAP = ROOT / "docs" / "code-map.md"
PACKAGES = ("core/toolstream_core", "langchain_toolstream", "llamaindex_toolstream")
_PY = re.compile(r"`([\w./<>]+\.py)")  # a backticked module path (a table cell may add more)


def _modules() -> set[str]:
    return {
        path.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for path in (ROOT / package).rglob("*.py")
    }


def _named() -> list[str]:
    return _PY.findall(MAP.read_text(encoding="utf-8"))


def test_every_module_is_on_the_map() -> None:
    named = set(_named())
    assert sorted(_modules() - named) == []


def test_the_map_names_only_modules_that_exist() -> None:
    modules = _modules()
    full = [name for name in _named() if name.startswith(PACKAGES)]
    assert sorted(set(full) - modules) == []


def test_every_short_mention_is_a_real_module() -> None:
    modules = _modules()
    short = [n for n in _named() if not n.startswith(PACKAGES) and not n.startswith("tests/")]
    short = [n for n in short if "<" not in n]  # a pattern such as `_adapters/<vendor>.py`
    stale = [n for n in short if not any(m.endswith("/" + n) for m in modules)]
    assert stale == []


def test_every_named_test_file_exists() -> None:
    tests = [n for n in _named() if n.startswith("tests/") and "<" not in n]
    assert tests, "the map names the rule tests"
    assert [n for n in tests if not (ROOT / n).is_file()] == []
