"""Issue 12, targets 1 and 2: the core against the cheapest loop any consumer could run.

The *minimal loop* indexes each OpenAI chat chunk dict down to its argument fragment, appends
it to a list and ``json.loads`` the join once at the end: no id, name, index, limit or order
checks, nothing a safe assembler must do. It is the floor the core is measured against
(target 1: core within 1.5x of it on 1 MiB of ``write_file`` arguments in 4-byte fragments).

Two floors, side by side (issue 30): :func:`minimal_loop`, the loop exactly as a consumer
writes it (one function over the whole list of chunk dicts, against a ``for`` loop feeding the
same list to an ``Assembler``), which decides target 1; and ``MINIMAL``, the same loop as a
contender of the batch harness, beside the peers. Beside target 1, the floor of a *safe*
loop, paired with the minimal loop the same way: :func:`checks_loop` (the minimal loop plus
exactly the checks the core's chat fast path makes, inline) and :func:`one_call_loop` (those
checks in one function called per chunk, as any ``feed(chunk)`` must be). They say how much of
target 1's gap is the contract's checks and the one call a chunk, which no layering removes.
Target 2 compares the core fed SDK objects with ``json.loads`` of every chunk's wire text
(<= 0.5x at every size) and the core on real Gemini streams with the same (<= 1x).

Everything runs in one process, in one call of :func:`run`. The two sides of each target
ratio run as interleaved A/B pairs (``run_once``: gc off on the clock, input prepared off the
clock), and the verdict uses the median of the per-pair ratios with its interquartile range:
on a shared machine one run can take twice another, and best-of-N of each side apart does not
resolve a 1.5x line. The peers (LangChain, the Anthropic SDK) keep the harness's ``measure``.
"""

from __future__ import annotations

import gc
import json
import logging
import statistics
import time
from typing import Any

from benchmarks.peers import BY_KEY, Contender, Outcome, core_available
from benchmarks.timing import Budget, BudgetExceeded, check, measure, quartiles, run_once
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


def minimal_loop(chunks: list[dict[str, Any]]) -> Any:
    """Issue 30's loop, exactly: dict chunks, index to the fragment, append, one ``json.loads``."""
    parts: list[str] = []
    append = parts.append
    for chunk in chunks:
        choices = chunk["choices"]
        if choices:
            calls = choices[0]["delta"].get("tool_calls")
            if calls:
                arguments = calls[0]["function"].get("arguments")
                if arguments:
                    append(arguments)
    return json.loads("".join(parts))


_NOT_HOT = (LookupError, TypeError, ValueError, AttributeError)


def safe_fragment(chunk: Any, hot_choice: object, hot_index: object) -> Any:
    """The fragment of a chat chunk dict that continues the call in slot (``hot_choice``,
    ``hot_index``), or None: exactly the checks of the core's chat fast path (DESIGN §9), no
    more (``tests/benchmarks/test_floor.py`` holds it to the core's answers on every stream)."""
    try:
        [choice] = chunk["choices"]
        if ("error" in chunk or choice["finish_reason"] is not None or "error" in choice
                or choice["index"] is not hot_choice):
            return None
        delta = choice["delta"]
        [tc] = delta["tool_calls"]
        if "function_call" in delta or len(tc) != 2 or tc["index"] is not hot_index:
            return None
        function = tc["function"]
        if len(function) != 1:
            return None
        fragment = function["arguments"]
    except _NOT_HOT:
        return None
    return fragment if fragment.__class__ is str else None


def checks_loop(chunks: list[dict[str, Any]]) -> Any:
    """The minimal loop with :func:`safe_fragment`'s checks written into its body: what the
    checks that prove a fragment continues the call cost, with no function call a chunk.
    (The body is a copy on purpose: a call is what this loop leaves out.)"""
    parts: list[str] = []
    append = parts.append
    hot_choice = hot_index = 0
    for chunk in chunks:
        try:
            [choice] = chunk["choices"]
            if ("error" in chunk or choice["finish_reason"] is not None or "error" in choice
                    or choice["index"] is not hot_choice):
                continue
            delta = choice["delta"]
            [tc] = delta["tool_calls"]
            if "function_call" in delta or len(tc) != 2 or tc["index"] is not hot_index:
                continue
            function = tc["function"]
            if len(function) != 1:
                continue
            fragment = function["arguments"]
        except _NOT_HOT:
            continue
        if fragment.__class__ is str:
            append(fragment)
    return json.loads("".join(parts))


def one_call_loop(chunks: list[dict[str, Any]]) -> Any:
    """One function call a chunk, making :func:`safe_fragment`'s checks and nothing else: the
    floor of any ``feed(chunk)`` that checks what the core's fast path checks (no byte count,
    no events, no layers)."""
    parts: list[str] = []
    append = parts.append
    for chunk in chunks:
        fragment = safe_fragment(chunk, 0, 0)
        if fragment is not None:
            append(fragment)
    return json.loads("".join(parts))


def core_loop(chunks: list[dict[str, Any]]) -> Any:
    """The same list fed to the core the way the README does (no listener), decided at the end."""
    from toolstream_core import Assembler

    from benchmarks.peers import core_config

    assembler = Assembler(config=core_config(), provider="openai-chat")
    feed = assembler.feed
    for chunk in chunks:
        feed(chunk)
    return assembler.finish()


# The loops paired with the minimal loop over one list, and what each row is called.
LIST_LOOPS: dict[str, Any] = {"core": core_loop, "one_call": one_call_loop, "checks": checks_loop}


def _reassembled(result: Any) -> list[Any]:
    committed = getattr(result, "committed", None)
    return [call.arguments for call in committed] if committed is not None else [result]


def list_pairs(workload: Workload, n: int, key: str = "core") -> dict[str, Any]:
    """``n`` interleaved rounds of ``LIST_LOOPS[key]`` and :func:`minimal_loop` over one list
    of the workload's chunk dicts, built once off the clock; gc off on the clock, as ``timeit``.
    The median of the per-round ratios and its quartiles, as :func:`pairs`."""
    chunks = list(workload.iter_events("dict"))
    want = workload.calls[0].args
    loop = LIST_LOOPS[key]
    if _reassembled(loop(chunks)) != [want] or minimal_loop(chunks) != want:
        return {"status": "wrong", "detail": "a loop did not reassemble the call that was sent"}
    times: dict[str, list[float]] = {key: [], "minimal": []}
    ratios: list[float] = []
    for i in range(n):
        for side, run in ((key, loop), ("minimal", minimal_loop))[:: 1 if i % 2 == 0 else -1]:
            gc.collect()
            gc.disable()
            try:
                start = time.perf_counter()
                run(chunks)
                times[side].append(time.perf_counter() - start)
            finally:
                gc.enable()
        ratios.append(times[key][-1] / times["minimal"][-1])
    q1, q3 = quartiles(ratios)
    out = {"status": "ok", "pairs": n, "a": key, "b": "minimal_loop", "streams": 1, "chunks": len(chunks),
           "median": statistics.median(ratios), "q1": q1, "q3": q3,
           "a_median_s": statistics.median(times[key]), "b_median_s": statistics.median(times["minimal"])}
    log.info("  %s / minimal_loop on one list of %s: median %.2fx (IQR %.2f-%.2f, %d pairs)", key,
             workload.label, out["median"], q1, q3, n)
    return out


def _seconds(contender: Contender, workload: Workload, budget: Budget) -> dict[str, Any]:
    m = measure(contender, workload, budget)
    log.info("  %-22s %-28s %s", contender.key, workload.label, f"{m.seconds:.3f} s" if m.seconds else m.status)
    return m.as_dict()


def pairs(a: Contender, b: Contender, workloads: list[Workload], budget: Budget, n: int, *,
          verify: bool = True) -> dict[str, Any]:
    """``n`` interleaved rounds of ``a`` then ``b``: the median of ``a/b`` per round and its
    quartiles. A round times every workload on each side (one for a synthetic call; every
    real Gemini stream, summed, for the short ones).

    The order alternates each round so neither side always runs second (warm caches, turbo).
    One untimed round first keeps imports off the clock; with ``verify`` both sides' outcomes
    are checked against the calls each workload sent.
    """
    for contender in (a, b):
        for w in workloads:
            run_once(contender, w, budget)
    ratios: list[float] = []
    times: dict[str, list[float]] = {a.key: [], b.key: []}
    try:
        for i in range(n):
            for contender in ((a, b) if i % 2 == 0 else (b, a)):
                took = 0.0
                for w in workloads:
                    seconds, outcome = run_once(contender, w, budget)
                    problem = check(outcome, w) if verify else ""
                    if problem:
                        return {"status": "wrong", "detail": f"{contender.key}: {problem}"}
                    took += seconds
                times[contender.key].append(took)
            ratios.append(times[a.key][-1] / times[b.key][-1])
    except BudgetExceeded:
        return {"status": "capped", "detail": f"a run passed the {budget.cap_s:g} s cap"}
    q1, q3 = quartiles(ratios)
    chunks = sum(w.n_chunks for w in workloads)
    out = {
        "status": "ok", "pairs": n, "a": a.key, "b": b.key, "streams": len(workloads), "chunks": chunks,
        "median": statistics.median(ratios), "q1": q1, "q3": q3,
        "a_median_s": statistics.median(times[a.key]), "b_median_s": statistics.median(times[b.key]),
    }
    log.info("  %s / %s on %s: median %.2fx (IQR %.2f-%.2f, %d pairs)", a.key, b.key, workloads[0].label,
             out["median"], q1, q3, n)
    return out


def run(budget: Budget, sizes: list[int] | None = None, *, smoke: bool = False) -> dict[str, Any]:
    """Targets 1 and 2 measured side by side (``smoke``: 16 KiB, one Gemini stream, two pairs
    each, to test the wiring)."""
    if not core_available():
        return {"skipped": "toolstream_core not importable"}
    out: dict[str, Any] = {"headline": {}, "objects": [], "gemini": None}
    size = 16 * KiB if smoke else MiB
    n = 2 if smoke else 15
    chat = synthetic("write_file", "openai-chat", size, 4)
    anth = synthetic("write_file", "anthropic", size, 4)
    head = out["headline"]
    head["workload"] = chat.label
    head["chunks"] = chat.n_chunks
    head["target_1"] = list_pairs(chat, n)
    head["safe_floors"] = {key: list_pairs(chat, n, key) for key in ("one_call", "checks")}
    head["harness"] = pairs(BY_KEY["core_dict"], MINIMAL, [chat], budget, n)
    head["minimal"] = _seconds(MINIMAL, chat, budget)
    for key in ("core_dict", "floor", "lc_merge_only"):
        head[key] = _seconds(BY_KEY[key], chat, budget)
    head["anthropic_sdk"] = _seconds(BY_KEY["anthropic_sdk"], anth, budget)
    for nbytes in sizes or [4 * KiB, 64 * KiB, MiB]:
        for api, key in (("openai-chat", "core_openai_obj"), ("anthropic", "core_anthropic_obj")):
            w = synthetic("write_file", api, nbytes, 4)
            row = pairs(BY_KEY[key], BY_KEY["floor"], [w], budget, n if nbytes < MiB else max(2, n // 2))
            out["objects"].append({"workload": w.label, "key": key, **row})
    gemini = [w for w in real_streams() if w.api == "gemini"][: 1 if smoke else None]
    if gemini:
        out["gemini"] = pairs(BY_KEY["core_dict"], BY_KEY["floor"], gemini, budget, n, verify=False)
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
    t1 = head.get("target_1") or {}
    lines = ["## Targets 1 and 2 (issue 12)", "", *rows, ""]
    if not head["workload"].endswith("/1 MiB"):
        lines.append(f"**Target 1: not decided** (set at 1 MiB; this run used `{head['workload']}`).")
    elif t1.get("status") != "ok":
        lines.append(f"**Target 1 (core within {TARGET_1}x of the minimal loop): not decided** "
                     f"({t1.get('detail', 'not measured')}).")
    else:
        lines.append(
            f"**Target 1 (core within {TARGET_1}x of the minimal loop): {verdict(t1, TARGET_1)}** — core is "
            f"{_spread(t1)} the minimal loop (one list of chunk dicts, each side one `for` loop over it; "
            f"median of {t1['pairs']} interleaved pairs, interquartile range)."
        )
    floors = head.get("safe_floors") or {}
    shown = [f"{_FLOOR_NAMES[key]} {_spread(row)}" for key, row in floors.items() if row.get("status") == "ok"]
    if shown:
        lines.append("The floor of a safe loop, each paired with the minimal loop the same way: "
                     + "; ".join(shown) + ".")
    harness = head.get("harness") or {}
    if harness.get("status") == "ok":
        lines.append(f"In the batch harness beside the peers, the same loop: core {_spread(harness)} of it.")
    lines += ["", "| SDK objects | core µs/chunk | json.loads µs/chunk | core / json.loads (IQR) |",
              "|---|---|---|---|"]
    worst: dict[str, Any] | None = None
    for row in data["objects"]:
        if row.get("status") != "ok":
            lines.append(f"| {row['workload']} ({row['key']}) | - | - | {row.get('detail', row.get('status'))} |")
            worst = {"median": float("inf"), "q1": float("inf"), "q3": float("inf")}
            continue
        us = [row["a_median_s"] / row["chunks"] * 1e6, row["b_median_s"] / row["chunks"] * 1e6]
        lines.append(f"| {row['workload']} ({row['key']}) | {us[0]:.2f} | {us[1]:.2f} | {_spread(row)} |")
        if worst is None or row["median"] > worst["median"]:
            worst = row
    g = data.get("gemini")
    if g:
        what = f"real Gemini streams ({g['streams']}, {g['chunks']:,} chunks, dicts; sums per round)"
        lines.append(f"| {what} | - | - | {_spread(g)} |")
    v_obj = verdict(worst, TARGET_2_OBJECTS) if worst else "not decided"
    v_gem = verdict(g, TARGET_2_GEMINI) if g else "not decided"
    overall = "HOLDS" if v_obj == v_gem == "HOLDS" else "DOES NOT HOLD" if "DOES NOT HOLD" in (v_obj, v_gem) \
        else "NOT RESOLVED"
    lines += [
        "",
        f"**Target 2 (SDK objects <= {TARGET_2_OBJECTS}x json.loads per chunk at every size measured; "
        f"Gemini real streams <= {TARGET_2_GEMINI}x): {overall}** — worst SDK-object ratio "
        f"{_spread(worst) if worst else 'n/a'} ({v_obj.lower()}), Gemini {_spread(g) if g else 'n/a'} "
        f"({v_gem.lower()}).",
        f"Sizes measured: {', '.join(sorted({r['workload'].split('/')[-1] for r in data['objects']}, key=len))}"
        f" ({size_label(MiB)} is the largest).",
    ]
    return "\n".join(lines)


_FLOOR_NAMES = {
    "one_call": "one function call a chunk making only the fast path's checks (`one_call_loop`)",
    "checks": "the same checks written into the minimal loop, no call (`checks_loop`)",
}


def verdict(row: dict[str, Any], target: float) -> str:
    """HOLDS when the median and the upper quartile are within ``target``; NOT RESOLVED when
    only the median is; DOES NOT HOLD when the median is past it."""
    if row["median"] > target:
        return "DOES NOT HOLD"
    return "HOLDS" if row["q3"] <= target else "NOT RESOLVED"


def _spread(row: dict[str, Any]) -> str:
    return f"{row['median']:.2f}x ({row['q1']:.2f}-{row['q3']:.2f})"
