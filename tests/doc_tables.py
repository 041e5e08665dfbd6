"""The classes the framework pages' tables list, read from the pages themselves.

``docs/langchain.md`` ("Model class") and ``docs/llamaindex.md`` ("LLM class") each promise,
row by row, how the gate reads a class. ``tests/langchain/test_lc_wires.py`` and
``tests/llamaindex/test_li_wires.py`` read those rows and fail for a class that has no test
over its real wire, so a class cannot drop out of the tests while the page still lists it.
"""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"

_CODE = re.compile(r"`([^`]+)`")
_CLASS = re.compile(r"[A-Z]\w*")
_CLASS_WITH_ARGS = re.compile(r"[A-Z]\w*\(\w+=[^()]*\)")
_SETTING = re.compile(r"[a-z_]+=\S+")


def table_classes(page: str, first_header: str) -> list[str]:
    """Each class the first column of ``page``'s table names, in order, once.

    The table is the one whose header row's first cell is ``first_header``. A class named with
    a setting (```ChatBedrock(beta_use_converse_api=True)```) is its own entry, and so is a
    setting named after a class in the same cell (```ChatOpenAI``` ... ```use_responses_api=True```
    gives ``ChatOpenAI(use_responses_api=True)``); other code in the cell (a method's name)
    is not a class.
    """
    rows = _table(page, first_header)
    found: dict[str, None] = {}
    for row in rows:
        current: str | None = None
        for code in _CODE.findall(row.split("|")[1]):
            if _CLASS.fullmatch(code):
                current = code
                found[code] = None
            elif _CLASS_WITH_ARGS.fullmatch(code):
                found[code] = None
            elif _SETTING.fullmatch(code) and current is not None:
                found[f"{current}({code})"] = None
    return list(found)


def _table(page: str, first_header: str) -> list[str]:
    lines = (DOCS / page).read_text(encoding="utf-8").splitlines()
    for start, line in enumerate(lines):
        cells = [c.strip() for c in line.split("|")]
        if line.startswith("|") and len(cells) > 1 and cells[1] == first_header:
            rows = []
            for row in lines[start + 2:]:  # past the header and its |---| line
                if not row.startswith("|"):
                    break
                rows.append(row)
            return rows
    raise AssertionError(f"docs/{page} has no table headed {first_header!r}")
