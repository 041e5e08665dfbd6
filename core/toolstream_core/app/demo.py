"""`toolstream demo`: the bundled cassettes, replayed through every engine, side by side.

The point of the demo is one table a user can read in a terminal: for each
recorded fault, what LangChain, LlamaIndex and the vendor SDK helper would hand
to the tool runner, and what toolstream commits or rejects. The outcomes come
from `_peers`, which runs the real code; this module picks the scenarios,
collects the outcomes into one JSON-ready document, and lays the table out.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolstream_core import PROVIDERS
from toolstream_core.app._peers import (
    COMMIT,
    DROP,
    ENGINE_TITLES,
    ENGINES,
    INVALID,
    REJECT,
    RUN,
    Outcome,
    make_target,
    missing_pieces,
    new_workdir,
    run_engine,
)
from toolstream_core.testing import SourceError, read_cassette, response_body

CASSETTES_ENV = "TOOLSTREAM_CASSETTES"

SHOWCASE: tuple[str, ...] = (
    "truncated_length",
    "structured_call_truncated",
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


class DemoUnavailable(Exception):
    """The demo cannot run here: a package toolstream's own column needs is missing.

    Its message is the one line the CLI prints: what is missing and the extra
    that brings it.
    """


@dataclass(frozen=True)
class Case:
    """One cassette the demo replays."""

    api: str
    scenario: str
    path: Path


def find_cassette_dir(explicit: str | None = None) -> Path:
    """Where the cassettes are: ``--cassettes``, else the project's default lookup.

    The default (`toolstream_core.testing.default_cassette_dir`) is
    ``$TOOLSTREAM_CASSETTES``, a copy shipped inside the package, then the
    repository's ``cassettes/``.
    """
    if explicit:
        root = Path(explicit)
    else:
        from toolstream_core.testing import default_cassette_dir

        root = default_cassette_dir()
    if not root.is_dir():
        raise DemoError(
            f"{root}: no cassette directory (pass --cassettes DIR or set ${CASSETTES_ENV})"
        )
    return root


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
        known = sorted({c.scenario for c in cases})
        unknown = [name for name in scenarios if name not in known]
        if unknown:
            raise DemoError(f"{root}: no cassette for scenario {unknown[0]!r}; choose from: "
                            f"{', '.join(known)}")
        cases = [c for c in cases if c.scenario in scenarios]
    elif not everything:
        cases = [c for c in cases if c.scenario in SHOWCASE]
    order = {name: i for i, name in enumerate(scenarios or SHOWCASE)}
    api_order: dict[str, int] = {api: i for i, api in enumerate(PROVIDERS)}
    return sorted(
        cases, key=lambda c: (order.get(c.scenario, len(order)), c.scenario, api_order[c.api])
    )


def _stream_interaction(path: Path) -> tuple[int, dict[str, Any]]:
    """The first successful streamed exchange of a cassette (later ones may be a 400 probe)."""
    interactions = read_cassette(path)
    for index, interaction in enumerate(interactions):
        status = (interaction.get("response") or {}).get("status") or {}
        code = status.get("code") if isinstance(status, dict) else None
        if isinstance(code, int) and code >= 400:
            continue
        body = response_body(interaction.get("response") or {})
        if body.strip():
            return index, interaction
    raise SourceError(f"{path}: no successful streamed response in this cassette")


def scenario_description(name: str) -> str | None:
    """The emulator's one-line description of a scenario, when the testing kit is there."""
    try:
        from toolstream_core.testing import SCENARIOS
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
    """Replay every case through every engine; the demo's JSON document.

    Raises `DemoUnavailable` before replaying anything when toolstream itself
    cannot replay the cases: a table of "n/a" that exits 0 would read as a run.
    """
    cases = list(cases)
    missing = missing_pieces(sorted({case.api for case in cases}))
    if missing:
        raise DemoUnavailable(
            f"cannot run: {', '.join(missing)} not installed "
            "(pip install 'toolstream-gate[langchain]' or 'toolstream-gate[llamaindex]')"
        )
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
    known_ids = {c.id for c in ts.calls if c.id} if ts else set()
    flagged = {
        engine: [c.name or "?" for c in outcome.calls if c.verdict == RUN
                 and _matches_any(c, rejected, known_ids)]
        for engine, outcome in outcomes.items()
        if engine != "toolstream"
    }
    committed = sum(1 for c in ts.calls if c.verdict == COMMIT) if ts else 0
    extra = {
        engine: max(0, sum(1 for c in outcome.calls if c.verdict == RUN)
                    - committed - len(flagged[engine]))
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
        "runs_beyond_toolstream": extra,
    }


def _matches_any(call: Any, rejected: Sequence[Any], known_ids: set[str]) -> bool:
    """Is a peer's call one toolstream rejected?

    By id when the vendor sent one both sides kept; a call whose id toolstream never
    saw (a framework-made id, e.g. LangChain's for Gemini) matches by tool name.
    A call without a name is no tool's call and matches nothing.
    """
    if call.id and call.id in known_ids:
        return any(call.id == other.id for other in rejected)
    return bool(call.name) and any(call.name == other.name for other in rejected)


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ts_calls = [c for r in rows for c in r["engines"].get("toolstream", {}).get("calls", [])]
    unsafe = {
        engine: sum(len(r["runs_what_toolstream_rejects"].get(engine, [])) for r in rows)
        for engine in ENGINES
        if engine != "toolstream"
    }
    extra = {
        engine: sum(r["runs_beyond_toolstream"].get(engine, 0) for r in rows)
        for engine in unsafe
    }
    return {
        "scenarios": len(rows),
        "toolstream_committed": sum(1 for c in ts_calls if c["verdict"] == COMMIT),
        "toolstream_rejected": sum(1 for c in ts_calls if c["verdict"] in (REJECT, DROP)),
        "toolstream_error_results": sum(
            len(r["engines"].get("toolstream", {}).get("error_results", [])) for r in rows
        ),
        "peer_runs_of_rejected_calls": unsafe,
        "peer_runs_beyond_committed": extra,
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


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


_MAX_GROUPS = 4  # per cell; the JSON document always has every call


def _wrap2(text: str, width: int) -> list[str]:
    """At most two lines of ``text``, the second clipped."""
    pieces = textwrap.wrap(text, width, break_on_hyphens=False) or [""]
    if len(pieces) > 2:
        pieces = [pieces[0], clip(" ".join(pieces[1:]), width)]
    return pieces


def _call_lines(call: dict[str, Any], count: int, flagged: set[str],
                width: int) -> list[tuple[str, str]]:
    """One call (or ``count`` identical ones): verdict and name, then arguments or reason."""
    name = call["name"] or "(no name)"
    verdict = call["verdict"]
    if verdict == RUN:
        word, colour, detail = "RUNS", "r" if name in flagged else "", compact(call["arguments"])
    elif verdict == INVALID:
        word, colour, detail = "invalid", "y", call["reason"] or "?"
    elif verdict == COMMIT:
        word, colour, detail = "COMMITS", "g", compact(call["arguments"])
    else:
        word, colour, detail = "REJECTS", "y", call["reason"] or "?"
    times = f" x{count}" if count > 1 else ""
    head = f"{word} {name}{times}"
    # A long (e.g. wrongly concatenated) name is the point: wrap it, do not hide it.
    heads = [head] if len(head) <= width else [word + times, *_wrap2(name, width)]
    return [(h, colour) for h in heads] + [(p, colour) for p in _wrap2(detail, width)]


def _cell_lines(engine: str, outcome: dict[str, Any], row: dict[str, Any], width: int,
                style: Style) -> list[str]:
    """One engine's cell: each call's verdict, name and arguments; repeats grouped."""
    if outcome["status"] == "unavailable":
        extra = outcome.get("install_extra", "all")
        return [style.dim(line) for line in ("n/a (install", "toolstream-gate", f"[{extra}])")]
    lines: list[tuple[str, str]] = []  # (text, colour)
    flagged = set(row["runs_what_toolstream_rejects"].get(engine, []))
    if outcome["status"] == "raised":
        lines.append(("raises", "y"))
        lines.append((clip((outcome["error"] or "?").split(":")[0], width), "y"))
    groups: list[tuple[dict[str, Any], int]] = []
    for call in outcome["calls"]:
        if groups and groups[-1][0] == call:
            groups[-1] = (call, groups[-1][1] + 1)
        else:
            groups.append((call, 1))
    for call, count in groups[:_MAX_GROUPS]:
        lines.extend(_call_lines(call, count, flagged, width))
    hidden = sum(count for _, count in groups[_MAX_GROUPS:])
    if hidden:
        lines.append((f"+{hidden} more call(s)", "d"))
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


def _unavailable_extra(rows: list[dict[str, Any]], engine: str) -> str | None:
    """The extra to install when ``engine`` was unavailable on every row, else ``None``."""
    outcomes = [row["engines"].get(engine) for row in rows]
    if not outcomes or any(o is None or o["status"] != "unavailable" for o in outcomes):
        return None
    return str(outcomes[0].get("install_extra", "all"))


#: The words the table uses, printed before it: a reader meets them in the first row.
KEY = (
    "Key: RUNS: handed to the tool runner (for a structured output's call: built into the "
    "object the caller gets). invalid: set aside, its id left unanswered. "
    "raises: the stream ends in an exception; nothing runs and no id is answered. COMMITS / "
    "REJECTS: toolstream's verdict (a rejected call gets one error result with the reason). "
    "SDK helper: OpenAI chat.completions.stream / responses.stream and get_final_*, "
    "Anthropic messages.stream and get_final_message, google-genai chunk.function_calls, "
    "the event loops the boto3 (converse_stream) and Cohere (chat_stream) docs show, "
    "Ollama's chunk.message.tool_calls; argument text read with json.loads."
)

#: The narrowest table the demo draws: a label column and four engine columns of 12.
MIN_WIDTH = 80


def render(doc: dict[str, Any], style: Style, total_width: int = 100) -> str:
    """The demo as a table that fits ``total_width`` columns."""
    engines = list(doc["engines"])
    first = 16
    gap = 2
    col = max(12, (total_width - first - gap * len(engines)) // max(1, len(engines)))
    out: list[str] = [style.dim(line) for line in textwrap.wrap(KEY, total_width)]
    header = _pad("", first) + "".join(
        " " * gap + _pad(style.bold(doc["engines"][e]), col) for e in engines
    )
    rule = "─" * min(total_width, first + (gap + col) * len(engines))
    current: str | None = None
    for row in doc["rows"]:
        if row["scenario"] != current:
            current = row["scenario"]
            out.append("")
            title = current + (" — " + row["description"] if row.get("description") else "")
            wrapped = textwrap.wrap(title, total_width, subsequent_indent="  ")
            out.append(style.bold(current) + wrapped[0][len(current):])
            out.extend(wrapped[1:])
            out.append(header.rstrip())
            out.append(style.dim(rule))
        stop = row["finish_reason"] if row["finish_reason"] is not None else "(none)"
        labels = [row["api"], style.dim(clip(f"stop: {stop}", first))]
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
        f"{summary['toolstream_rejected']} rejected, "
        f"{summary['toolstream_error_results']} error result(s) pairing them."
    )
    for engine, count in summary["peer_runs_of_rejected_calls"].items():
        missing = _unavailable_extra(doc["rows"], engine)
        if engine in doc["engines"] and missing:
            # "would run 0 calls" would read as a result; an absent framework ran nothing.
            out.append(f"{doc['engines'][engine]}: not installed (toolstream-gate[{missing}]).")
        elif engine in doc["engines"]:
            more = summary["peer_runs_beyond_committed"].get(engine, 0)
            out.append(
                f"{doc['engines'][engine]} would run "
                f"{style.red(str(count)) if count else count} call(s) toolstream rejects"
                + (f", and {style.red(str(more))} more (repeats, nameless calls)" if more else "")
                + "."
            )
    return "\n".join(out) + "\n"
