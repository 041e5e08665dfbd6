"""The deliberate differences between a stock LangChain agent and one with the gate added.

Each entry: the upstream test id (``distribution:path::name``), what differs, why it must, and
the rule of docs/DESIGN.md it follows; ``test`` names this project's test of the difference.
At most 15 entries (issue 36). docs/langchain.md's "differences from the stock agent" table
is this list (``tests/langchain/test_lc_differences.py`` checks that they are equal).
"""

from __future__ import annotations

from typing import NamedTuple


class Difference(NamedTuple):
    test_id: str
    differs: str
    why: str
    rule: str
    test: str


DELIBERATE: tuple[Difference, ...] = ()
