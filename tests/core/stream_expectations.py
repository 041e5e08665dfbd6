"""What DESIGN.md §4 says each real stream must produce, written down before any code ran.

The ``*.expected.json`` files beside the streams are *facts* (what the vendor sent); they do
not say which calls a strict assembler may commit. This table (``stream_expectations.toml``,
data beside this module) is the policy half: for every stream of the families toolstream
reads, the outcome the contract implies in the default config (``mode: strict``, no tool
registry), with a one-line reason naming the deciding event and rule. ``lenient`` is filled
only where ``mode: lenient`` changes the outcome (rule 4: a clean end of stream without a
finish reason counts as complete in lenient mode).

Every entry was derived from the stream's finish signal, error events and call shapes (and
the corpus MANIFEST quirks column), never from the implementation's output. Counts are of
*client* calls; server-side blocks (Anthropic ``server_tool_use`` / ``mcp_tool_use``,
Responses built-in items) are checked separately against ``Turn.server_calls`` (rule 11).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomllib

__all__ = ["BONUS_NEAREST_FAMILY", "EXPECTATIONS", "Outcome"]


@dataclass(frozen=True)
class Outcome:
    """The decided shape of one stream's Turn.

    ``rejected`` counts FAILED/CANCELLED client calls; ``reasons`` is the set of their
    ``Reason`` values; ``complete`` is ``Turn.complete``.
    """

    committed: int
    rejected: int
    why: str
    reasons: Collection[str] = field(default_factory=frozenset)
    complete: bool = True
    lenient: Outcome | None = None

    def __post_init__(self) -> None:
        # Accept a plain set literal in the table but keep the value hashable and immutable.
        object.__setattr__(self, "reasons", frozenset(self.reasons))
        if self.rejected and not self.reasons:
            raise ValueError(f"a rejecting outcome needs its reasons: {self.why}")


def _outcome(entry: dict[str, Any]) -> Outcome:
    """One ``[stream]`` table of ``stream_expectations.toml`` (its ``lenient`` sub-table too)."""
    lenient = entry.get("lenient")
    return Outcome(entry["committed"], entry["rejected"], entry["why"],
                   reasons=entry.get("reasons", ()), complete=entry.get("complete", True),
                   lenient=_outcome(lenient) if lenient is not None else None)


# Each key is "<api folder>/<file stem>"; the table is data, kept beside this module.
EXPECTATIONS: dict[str, Outcome] = {
    key: _outcome(entry)
    for key, entry in tomllib.loads(
        Path(__file__).with_name("stream_expectations.toml").read_text(encoding="utf-8")).items()
}

# Bonus folders are not target families: the test only forces the nearest family on them
# and checks that feeding never raises and nothing commits.
BONUS_NEAREST_FAMILY: dict[str, str] = {
    # The Interactions API is Google's; its events are not generateContent chunks.
    "gemini-interactions": "gemini",
}
