"""`toolstream demo`: the bundled cassettes, replayed through every engine, side by side.

The point of the demo is one table a user can read in a terminal: for each
recorded fault, what LangChain, LlamaIndex and the vendor SDK helper would hand
to the tool runner, and what toolstream commits or rejects. The outcomes come
from `_peers`, which runs the real code; this module picks the scenarios,
collects the outcomes into one JSON-ready document, and lays the table out.
"""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolstream_core._peers import (
    COMMIT,
    DROP,
    ENGINE_TITLES,
    ENGINES,
    INVALID,
    REJECT,
    RUN,
    Outcome,
    make_target,
    new_workdir,
    run_engine,
)
from toolstream_core._replay import PROVIDERS, SourceError, read_cassette, response_body

CASSETTES_ENV = "TOOLSTREAM_CASSETTES"

SHOWCASE: tuple[str, ...] = (
    "truncated_length",
    "no_finish",
    "dropped_connection",
    "error_event",
    "resent_duplicate",
    "missing_index",
    "single_call",
)
"""The scenarios shown by default: the faults that matter, then the happy path."""


class DemoError(Exception):
    """The demo cannot run: no cassettes where they should be (exit code 3)."""


@dataclass(frozen=True)
class Case:
    """One cassette the demo replays."""

    api: str
    scenario: str
    path: Path


def find_cassette_dir(explicit: str | None = None) -> Path:
    """Where the bundled cassettes are.

    In order: ``--cassettes``, ``$TOOLSTREAM_CASSETTES``, a copy shipped inside
    the package (``toolstream_core/_cassettes``), the repository's ``cassettes/``.
    """
    here = Path(__file__).resolve().parent
    candidates = [
        Path(explicit) if explicit else None,
        Path(os.environ[CASSETTES_ENV]) if os.environ.get(CASSETTES_ENV) else None,
        here / "_cassettes",
        here.parent.parent / "cassettes",
    ]
    for candidate in candidates:
        if candidate is not None and candidate.is_dir():
            return candidate
        if candidate is not None and candidate is candidates[0]:
            raise DemoError(f"{candidate}: no such cassette directory")
    raise DemoError(
        f"no cassette directory found: pass --cassettes DIR or set ${CASSETTES_ENV}"
    )


def find_cases(
    root: Path,
    *,
    apis: Sequence[str] | None = None,
    scenarios: Sequence[str] | None = None,
    everything: bool = False,
) -> list[Case]:
    """The cassettes to show, ordered by scenario (showcase order first), then API."""
    cases = [
        Case(api=path.parent.name, scenario=path.stem, path=path)
        for path in sorted(root.glob("*/*.yaml"))
        if path.parent.name in PROVIDERS
    ]
    if apis:
        cases = [c for c in cases if c.api in apis]
    if scenarios:
        cases = [c for c in cases if c.scenario in scenarios]
    elif not everything:
        cases = [c for c in cases if c.scenario in SHOWCASE]
    order = {name: i for i, name in enumerate(scenarios or SHOWCASE)}
    api_order = {api: i for i, api in enumerate(PROVIDERS)}
    return sorted(
        cases, key=lambda c: (order.get(c.scenario, len(order)), c.scenario, api_order[c.api])
    )


def _stream_interaction(path: Path) -> tuple[int, dict[str, Any]]:
    """The first successful streamed exchange of a cassette (later ones may be a 400 probe)."""
    interactions = read_cassette(path)
    for index, interaction in enumerate(interactions):
        status = (interaction.get("response") or {}).get("status") or {}
        if isinstance(status, dict) and isinstance(status.get("code"), int):
            if status["code"] >= 400:
                continue
        body = response_body(interaction.get("response") or {})
        if body.strip():
            return index, interaction
    raise SourceError(f"{path}: no successful streamed response in this cassette")


def scenario_description(name: str) -> str | None:
    """The emulator's one-line description of a scenario, when the testing kit is there."""
    try:
        from toolstream_core.testing._scenarios import SCENARIOS
    except ImportError:
        return None
    scenario = SCENARIOS.get(name)
    return scenario.description if scenario is not None else None


def run_demo(
    cases: Iterable[Case],
    *,
    engines: Sequence[str] = ENGINES,
    progress: Callable[[Case], None] | None = None,
) -> dict[str, Any]:
    """Replay every case through every engine; the demo's JSON document."""
    rows: list[dict[str, Any]] = []
    with new_workdir() as work:
        for case in cases:
            if progress is not None:
                progress(case)
            index, interaction = _stream_interaction(case.path)
            target = make_target(case.path, interaction, index, Path(work))
            outcomes = {engine: run_engine(engine, target) for engine in engines}
            rows.append(_row(case, index, outcomes))
    return {
        "toolstream": "demo",
        "version": 1,
        "engines": {e: ENGINE_TITLES[e] for e in engines},
        "rows": rows,
        "summary": _summary(rows),
    }


def _row(case: Case, index: int, outcomes: dict[str, Outcome]) -> dict[str, Any]:
    ts = outcomes.get("toolstream")
    rejected = [c for c in ts.calls if c.verdict in (REJECT, DROP)] if ts else []
    flagged = {
        engine: [c.name or "?" for c in outcome.calls if c.verdict == RUN
                 and _matches_any(c, rejected)]
        for engine, outcome in outcomes.items()
        if engine != "toolstream"
    }
    return {
        "api": case.api,
        "scenario": case.scenario,
        "description": scenario_description(case.scenario),
        "cassette": str(case.path),
        "interaction": index,
        "finish_reason": ts.extra.get("finish_reason") if ts else None,
        "raw_arguments": ts.extra.get("raw_arguments") if ts else None,
        "engines": {engine: outcome.as_dict() for engine, outcome in outcomes.items()},
        "runs_what_toolstream_rejects": flagged,
    }


def _matches_any(call: Any, rejected: Sequence[Any]) -> bool:
    """Is a peer's call one toolstream rejected? By id when both have one, else by name."""
    for other in rejected:
        if call.id and other.id:
            if call.id == other.id:
                return True
        elif call.name == other.name:
            return True
    return False


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ts_calls = [c for r in rows for c in r["engines"].get("toolstream", {}).get("calls", [])]
    unsafe = {
        engine: sum(len(r["runs_what_toolstream_rejects"].get(engine, [])) for r in rows)
        for engine in ENGINES
        if engine != "toolstream"
    }
    return {
        "scenarios": len(rows),
        "toolstream_committed": sum(1 for c in ts_calls if c["verdict"] == COMMIT),
        "toolstream_rejected": sum(1 for c in ts_calls if c["verdict"] in (REJECT, DROP)),
        "peer_runs_of_rejected_calls": unsafe,
    }


# --------------------------------------------------------------------------- layout


class Style:
    """Plain ANSI styling, or none: the CLI decides (tty and ``NO_COLOR``)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def _wrap(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled and text else text

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)

    def red(self, text: str) -> str:
        return self._wrap("31", text)

    def green(self, text: str) -> str:
        return self._wrap("32", text)

    def yellow(self, text: str) -> str:
        return self._wrap("33", text)


def compact(value: Any) -> str:
    """Arguments as one line of JSON, the way a log line would show them."""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError):
        return repr(value)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def _cell_lines(engine: str, outcome: dict[str, Any], row: dict[str, Any], width: int,
                style: Style) -> list[str]:
    """One engine's cell: a line per call (verdict + name), then its arguments, clipped."""
    if outcome["status"] == "unavailable":
        return [(style.dim(line)) for line in textwrap.wrap(outcome["error"] or "n/a", width)]
    lines: list[tuple[str, str]] = []  # (text, colour)
    flagged = set(row["runs_what_toolstream_rejects"].get(engine, []))
    if outcome["status"] == "raised":
        lines.append((_clip("raises " + (outcome["error"] or "?").split(":")[0], width), "y"))
    for call in outcome["calls"]:
        name = call["name"] or "?"
        verdict = call["verdict"]
        if verdict == RUN:
            colour = "r" if name in flagged else ""
            lines.append((_clip(f"RUNS {name}", width), colour))
            args = _clip(compact(call["arguments"]), 3 * width)
            lines.extend((piece, colour) for piece in textwrap.wrap(args, width)[:2])
        elif verdict == INVALID:
            lines.append((_clip(f"invalid {name}", width), "y"))
        elif verdict == COMMIT:
            lines.append((_clip(f"COMMITS {name}", width), "g"))
            args = _clip(compact(call["arguments"]), 2 * width)
            lines.extend((piece, "g") for piece in textwrap.wrap(args, width)[:2])
        else:
            lines.append((_clip(f"REJECTS {name}", width), "y"))
            lines.append((_clip(call["reason"] or "?", width), "y"))
    if not lines:
        lines.append(("no tool call", "d"))
    paint = {"r": style.red, "g": style.green, "y": style.yellow, "d": style.dim}
    return [paint[c](t) if c else t for t, c in lines]


def _visible_len(text: str) -> int:
    out, skipping = 0, False
    for ch in text:
        if ch == "\x1b":
            skipping = True
        elif skipping and ch == "m":
            skipping = False
        elif not skipping:
            out += 1
    return out


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - _visible_len(text))


def render(doc: dict[str, Any], style: Style, total_width: int = 100) -> str:
    """The demo as a table that fits ``total_width`` columns."""
    engines = list(doc["engines"])
    first = 17
    gap = 2
    col = max(12, (total_width - first - gap * len(engines)) // max(1, len(engines)))
    out: list[str] = []
    header = _pad("", first) + "".join(
        " " * gap + _pad(style.bold(doc["engines"][e]), col) for e in engines
    )
    rule = "─" * min(total_width, first + (gap + col) * len(engines))
    current: str | None = None
    for row in doc["rows"]:
        if row["scenario"] != current:
            current = row["scenario"]
            out.append("")
            title = style.bold(current)
            if row.get("description"):
                title += " — " + _clip(row["description"], total_width - len(current) - 3)
            out.append(title)
            out.append(header)
            out.append(style.dim(rule))
        labels = [row["api"], style.dim(_clip(f"finish: {row['finish_reason']}", first))]
        cells = [
            _cell_lines(e, row["engines"][e], row, col, style) for e in engines
        ]
        height = max(len(labels), *(len(c) for c in cells))
        for i in range(height):
            label = labels[i] if i < len(labels) else ""
            line = _pad(label, first) + "".join(
                " " * gap + _pad(cell[i] if i < len(cell) else "", col) for cell in cells
            )
            out.append(line.rstrip())
    summary = doc["summary"]
    out.append("")
    out.append(
        f"toolstream: {summary['toolstream_committed']} committed, "
        f"{summary['toolstream_rejected']} rejected (each answered by one error result)."
    )
    for engine, count in summary["peer_runs_of_rejected_calls"].items():
        if engine in doc["engines"]:
            mark = style.red(str(count)) if count else str(count)
            out.append(f"{doc['engines'][engine]} would run {mark} of the calls toolstream "
                       f"rejects.")
    out.append(style.dim("RUNS = handed to the tool runner; invalid = set aside, its id left "
                         "unanswered."))
    return "\n".join(out) + "\n"
