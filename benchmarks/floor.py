"""Issue 12, targets 1 and 2: the core against the cheapest loop any consumer could run.

The *minimal loop* indexes each OpenAI chat chunk dict down to its argument fragment, appends
it to a list and ``json.loads`` the join once at the end: no id, name, index, limit or order
checks, nothing a safe assembler must do. It is the floor the core is measured against
(target 1: core within 1.5x of it on 1 MiB of ``write_file`` arguments in 4-byte fragments).
Target 2 compares the core fed SDK objects with ``json.loads`` of every chunk's wire text
(<= 0.5x at every size) and the core on real Gemini streams with the same (<= 1x).

Everything runs in one process, in one call of :func:`run`, through the harness's
``measure`` (best of several runs, gc off on the clock, outcomes checked).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from benchmarks.peers import BY_KEY, Contender, Outcome, core_available
from benchmarks.timing import Budget, measure
from benchmarks.workloads import KiB, MiB, Workload, real_streams, size_label, synthetic

log = logging.getLogger("benchmarks")

TARGET_1 = 1.5
TARGET_2_OBJECTS = 0.5
TARGET_2_GEMINI = 1.0


class _MinimalLoop:
    """index -> list append -> one ``json.loads``: what a consumer with no safety at all pays."""

    def __init__(self, workload: Workload) -> None:
        self.parts: list[str] = []
        self.name = ""

    def feed(self, batch: list[dict[str, Any]]) -> None:
        append = self.parts.append
        for chunk in batch:
            choices = chunk["choices"]
            if choices:
                calls = choices[0]["delta"].get("tool_calls")
                if calls:
                    function = calls[0]["function"]
                    arguments = function.get("arguments")
                    if arguments:
                        append(arguments)
                    elif function.get("name"):
                        self.name = function["name"]

    def finish(self) -> Outcome:
        return [(self.name, json.loads("".join(self.parts)))]


MINIMAL = Contender("minimal", "minimal unsafe loop", ("openai-chat",), "dict", _MinimalLoop, "floor")


def _seconds(contender: Contender, workload: Workload, budget: Budget) -> dict[str, Any]:
    m = measure(contender, workload, budget)
    log.info("  %-22s %-28s %s", contender.key, workload.label, f"{m.seconds:.3f} s" if m.seconds else m.status)
    return m.as_dict()


def run(budget: Budget, sizes: list[int] | None = None, *, smoke: bool = False) -> dict[str, Any]:
    """Targets 1 and 2 measured side by side (``smoke``: 16 KiB and one Gemini stream, to test the wiring)."""
    if not core_available():
        return {"skipped": "toolstream_core not importable"}
    out: dict[str, Any] = {"headline": {}, "objects": [], "gemini": None}
    size = 16 * KiB if smoke else MiB
    chat = synthetic("write_file", "openai-chat", size, 4)
    anth = synthetic("write_file", "anthropic", size, 4)
    head = out["headline"]
    head["workload"] = chat.label
    head["chunks"] = chat.n_chunks
    head["minimal"] = _seconds(MINIMAL, chat, budget)
    for key in ("core_dict", "floor", "lc_merge_only"):
        head[key] = _seconds(BY_KEY[key], chat, budget)
    head["anthropic_sdk"] = _seconds(BY_KEY["anthropic_sdk"], anth, budget)
    for nbytes in sizes or [4 * KiB, 64 * KiB, MiB]:
        for api, key in (("openai-chat", "core_openai_obj"), ("anthropic", "core_anthropic_obj")):
            w = synthetic("write_file", api, nbytes, 4)
            core, floor = _seconds(BY_KEY[key], w, budget), _seconds(BY_KEY["floor"], w, budget)
            out["objects"].append({"workload": w.label, "key": key, "core": core, "floor": floor})
    gemini = [w for w in real_streams() if w.api == "gemini"][: 1 if smoke else None]
    if gemini:
        core_s = floor_s = 0.0
        chunks = 0
        for w in gemini:
            c, f = _seconds(BY_KEY["core_dict"], w, budget), _seconds(BY_KEY["floor"], w, budget)
            if c["seconds"] and f["seconds"]:
                core_s, floor_s, chunks = core_s + c["seconds"], floor_s + f["seconds"], chunks + w.n_chunks
        out["gemini"] = {"streams": len(gemini), "chunks": chunks, "core_s": core_s, "floor_s": floor_s}
    return out


def _ratio(a: dict[str, Any] | None, b: dict[str, Any] | None) -> float | None:
    if a and b and a.get("seconds") and b.get("seconds"):
        return float(a["seconds"]) / float(b["seconds"])
    return None


def _shown(m: dict[str, Any], base: dict[str, Any]) -> str:
    """``m``'s time over ``base``'s; a lower bound when ``m`` was stopped at the cap."""
    r = _ratio(m, base)
    if r is not None:
        return f"{r:.2f}x"
    if m.get("status") == "capped" and m.get("cap_s") and base.get("seconds"):
        return f"> {float(m['cap_s']) / float(base['seconds']):.1f}x"
    return "-"


def render(data: dict[str, Any]) -> str:
    """The tables and the plain verdicts for targets 1 and 2."""
    if "skipped" in data:
        return f"Targets 1-2 not run: {data['skipped']}."
    head = data["headline"]
    core = head["core_dict"]
    rows = [
        f"`{head['workload']}`: `write_file` arguments in 4-byte OpenAI chat fragments "
        f"({head['chunks']:,} chunks), one process:",
        "",
        "| contender | best time | / minimal loop | / toolstream core |",
        "|---|---|---|---|",
    ]
    names = {
        "minimal": "minimal unsafe loop (index, append, one json.loads; dicts)",
        "core_dict": "toolstream core (dicts)",
        "floor": "`json.loads` of every chunk (wire text)",
        "lc_merge_only": "LangChain `generate_from_stream` (pre-built AIMessageChunks)",
        "anthropic_sdk": "Anthropic SDK `accumulate_event` (same size, Anthropic events)",
    }
    for key, name in names.items():
        m = head[key]
        secs = f"{m['seconds']:.3f} s" if m.get("seconds") else m.get("detail") or m.get("status")
        rows.append(f"| {name} | {secs} | {_shown(m, head['minimal'])} | {_shown(m, core)} |")
    r1 = _ratio(core, head["minimal"])
    lines = ["## Targets 1 and 2 (issue 12)", "", *rows, ""]
    if not head["workload"].endswith("/1 MiB"):
        lines.append(f"**Target 1: not decided** (set at 1 MiB; this run used `{head['workload']}`).")
    elif r1 is None:
        lines.append("**Target 1 (core within 1.5x of the minimal loop): not decided** (a measurement failed).")
    else:
        verdict = "HOLDS" if r1 <= TARGET_1 else "DOES NOT HOLD"
        lines.append(
            f"**Target 1 (core within {TARGET_1}x of the minimal loop): {verdict}** — "
            f"core is {r1:.2f}x the minimal loop."
        )
    lines += ["", "| SDK objects | core µs/chunk | json.loads µs/chunk | ratio |", "|---|---|---|---|"]
    ratios = []
    for row in data["objects"]:
        c, f = row["core"], row["floor"]
        r = _ratio(c, f)
        if r is not None:
            ratios.append(r)
            us = [m["seconds"] / c["n_chunks"] * 1e6 for m in (c, f)]
            lines.append(f"| {row['workload']} ({row['key']}) | {us[0]:.2f} | {us[1]:.2f} | {r:.2f}x |")
    g = data.get("gemini")
    g_ratio = g["core_s"] / g["floor_s"] if g and g["floor_s"] else None
    if g_ratio is not None:
        what = f"real Gemini streams ({g['streams']}, {g['chunks']:,} chunks, dicts)"
        lines.append(f"| {what} | - | - | {g_ratio:.2f}x |")
    holds_obj = bool(ratios) and max(ratios) <= TARGET_2_OBJECTS
    holds_gem = g_ratio is not None and g_ratio <= TARGET_2_GEMINI
    worst = f"{max(ratios):.2f}x" if ratios else "n/a"
    gem = f"{g_ratio:.2f}x" if g_ratio is not None else "n/a"
    lines += [
        "",
        f"**Target 2 (SDK objects <= {TARGET_2_OBJECTS}x json.loads per chunk at every size measured; "
        f"Gemini real streams <= {TARGET_2_GEMINI}x): "
        f"{'HOLDS' if holds_obj and holds_gem else 'DOES NOT HOLD'}** — worst SDK-object ratio {worst} "
        f"({'holds' if holds_obj else 'does not hold'}), Gemini {gem} ({'holds' if holds_gem else 'does not hold'}).",
        f"Sizes measured: {', '.join(sorted({r['workload'].split('/')[-1] for r in data['objects']}, key=len))}"
        f" ({size_label(MiB)} is the largest).",
    ]
    return "\n".join(lines)
