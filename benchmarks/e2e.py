"""End to end (issue 12, target 3): the same framework call with and without the toolstream shim.

Both sides run the whole stack in-process: the real ``openai`` client parses SSE served by an
``httpx.MockTransport`` (an emulator of ``POST /v1/chat/completions``: no socket, so the
numbers are not drowned in network noise), then the framework does what its users run.

*Overhead* cases (target 3: the shim costs at most 3 %):

- LangChain: ``ChatOpenAI(streaming=True).bind_tools([write_file]).invoke(...)`` against
  ``with_toolstream(ChatOpenAI(...)).bind_tools([write_file]).invoke(...)``.
- LlamaIndex: ``OpenAI.stream_chat_with_tools(...)`` read to its end, then one
  ``get_tool_calls_from_response``, against the same through ``ToolstreamLLM(OpenAI)``.

*Speed-up* cases, where the gate removes work the framework did:

- LangChain ``for chunk in model.stream(...): full = full + chunk`` (the documented way to
  aggregate a stream): every ``+`` re-parses the growing arguments with ``parse_partial_json``,
  quadratic in the call's size; the gate withholds the tool-call parts, so ``+`` has none to
  re-parse. (``invoke`` itself is not quadratic in langchain-core 1.x: ``generate_from_stream``
  merges all chunks in one pass, which is why it is an overhead case.)
- LlamaIndex ``FunctionAgent``'s loop: ``get_tool_calls_from_response`` on every streamed
  response, a ``parse_partial_json`` of everything so far without the gate, an O(1) answer
  with it.

How a number is made resolvable on a shared, noisy machine:

- pairs: each pair runs base and shim back to back, in a random order drawn per pair (so
  neither side always runs first, into a warm or a cold cache); the statistic is the median of
  the per-pair ratios shim/base, which cancels drift slower than one pair;
- CPU time of the process (``time.process_time``), not wall time, is what is compared: the
  work is single-threaded and CPU-bound (no socket), and other jobs on the machine lengthen
  the wall time of whichever call they preempt, not its CPU time. The wall-time overhead is
  reported beside it;
- the spread: the interquartile range of the per-pair ratios, and a bootstrap 95 % confidence
  interval of their median (seeded, so a rerun on the same samples gives the same interval).
  A verdict is *holds* when the whole interval is at or under 3 %, *does not hold* when it is
  wholly above, and *not resolved* when it straddles 3 %;
- the garbage collector is off inside each call and its young generation collected between
  calls (as everywhere in this harness); one untimed call of each side first (imports,
  pydantic schemas, client caches).
"""

from __future__ import annotations

import gc
import logging
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from benchmarks.markdown import table_head
from benchmarks.timing import BudgetExceeded, alarm, quartiles
from benchmarks.workloads import KiB, Workload, size_label, synthetic

log = logging.getLogger("benchmarks")

#: Target 3: a shim costs at most this much of the framework call it wraps, at these sizes.
TARGET_PCT = 3.0
TARGET_SIZES = (4 * KiB, 64 * KiB)
#: Fewer pairs than this give no verdict: a bootstrap interval of the median of a handful of
#: ratios is only their range.
MIN_PAIRS_FOR_VERDICT = 10
#: Bootstrap resamples for the confidence interval of the median ratio.
BOOTSTRAP = 4000
CONFIDENCE = 0.95

WRITE_FILE_SCHEMA = {
    "type": "function",
    "function": {
        "name": "write_file",
        "description": "Write a text file, replacing it when overwrite is true.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "content": {"type": "string"},
                "overwrite": {"type": "boolean"},
            },
            "required": ["path", "content"],
        },
    },
}

Call = Callable[[], Any]
Pair = tuple[Call, Call]


# --- what each profile runs -----------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """How many pairs each case gets. A case runs ``min_pairs`` pairs, then more while its
    wall time is under ``budget_s`` (up to ``max_pairs``): cheap cases get many pairs."""

    overhead_sizes: tuple[int, ...]
    speedup_sizes: tuple[int, ...]
    min_pairs: dict[int, int]  # per size; sizes not listed: ``default_min_pairs``
    default_min_pairs: int
    max_pairs: int
    budget_s: float
    speedup_pairs: dict[int, int]
    cap_s: float  # one call past this is stopped (speed-up cases: a lower bound is reported)


PLANS: dict[str, Plan] = {
    "smoke": Plan((KiB,), (KiB,), {}, 2, 2, 0.0, {}, 30.0),
    "quick": Plan((4 * KiB,), (4 * KiB,), {}, 15, 40, 6.0, {4 * KiB: 3}, 20.0),
    # about three minutes on 2 cores: a 64 KiB call takes 2-3 s a side, so 64 KiB gets fewer
    # pairs here than in --full
    "default": Plan(
        (4 * KiB, 64 * KiB), (4 * KiB, 16 * KiB), {64 * KiB: 12}, 30, 120, 15.0, {4 * KiB: 8, 16 * KiB: 2}, 20.0
    ),
    "full": Plan(
        (4 * KiB, 64 * KiB),
        (4 * KiB, 16 * KiB, 64 * KiB),
        {64 * KiB: 40},
        40,
        200,
        40.0,
        {4 * KiB: 15, 16 * KiB: 5, 64 * KiB: 1},
        120.0,
    ),
}


# --- the stack under test -------------------------------------------------------------------


def sse_body(workload: Workload) -> bytes:
    """The workload as the HTTP body OpenAI streams: ``data:`` lines, then ``[DONE]``."""
    lines = [f"data: {event}\n\n" for event in workload.iter_events("wire")]
    lines.append("data: [DONE]\n\n")
    return "".join(lines).encode("utf-8")


def _http_client(body: bytes) -> Any:
    import httpx

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    return httpx.Client(transport=httpx.MockTransport(handler))


def _expected(workload: Workload) -> list[tuple[str, Any]]:
    return [(c.name, c.args) for c in workload.calls]


def _langchain_pair(workload: Workload, aggregate: bool = False) -> Pair | str:
    """``invoke`` (or ``stream`` summed with ``+`` when ``aggregate``) without and with the gate."""
    try:
        from langchain_openai import ChatOpenAI

        from langchain_toolstream import with_toolstream
    except ImportError as exc:
        return f"langchain_toolstream not importable: {exc}"
    from langchain_core.messages import HumanMessage

    body = sse_body(workload)
    messages = [HumanMessage("Write src/orders/service.py")]

    def model() -> Any:
        return ChatOpenAI(
            model="gpt-4.1", api_key="sk-bench", streaming=True, max_retries=0, http_client=_http_client(body)
        )

    def run(runnable: Any) -> Call:
        def call() -> Any:
            if aggregate:
                message = None
                for chunk in runnable.stream(messages):
                    message = chunk if message is None else message + chunk
            else:
                message = runnable.invoke(messages)
            return [(tc["name"], tc["args"]) for tc in message.tool_calls]

        return call

    return run(model().bind_tools([WRITE_FILE_SCHEMA])), run(with_toolstream(model()).bind_tools([WRITE_FILE_SCHEMA]))


def _llamaindex_pair(workload: Workload, per_chunk: bool) -> Pair | str:
    try:
        from llama_index.llms.openai import OpenAI

        from llamaindex_toolstream import ToolstreamLLM
    except ImportError as exc:
        return f"llamaindex_toolstream not importable: {exc}"
    from llama_index.core.llms import ChatMessage
    from llama_index.core.tools import FunctionTool

    def write_file(path: str, content: str, overwrite: bool = False) -> str:
        """Write a text file, replacing it when overwrite is true."""
        return path

    tool = FunctionTool.from_defaults(fn=write_file)
    body = sse_body(workload)
    history = [ChatMessage(role="user", content="Write src/orders/service.py")]

    def llm() -> Any:
        return OpenAI(model="gpt-4.1", api_key="sk-bench", max_retries=0, http_client=_http_client(body))

    def run(model: Any) -> Call:
        def call() -> Any:
            last = None
            for last in model.stream_chat_with_tools([tool], chat_history=history):
                if per_chunk:
                    model.get_tool_calls_from_response(last, error_on_no_tool_call=False)
            calls = model.get_tool_calls_from_response(last, error_on_no_tool_call=False)
            return [(c.tool_name, c.tool_kwargs) for c in calls]

        return call

    return run(llm()), run(ToolstreamLLM(llm()))


@dataclass(frozen=True)
class Case:
    framework: str  # the row's name (the smoke test and report.targets key on it)
    kind: str  # "overhead" | "speedup"
    build: Callable[[Workload], Pair | str]


OVERHEAD_CASES = (
    Case("LangChain ChatOpenAI.invoke", "overhead", _langchain_pair),
    Case("LlamaIndex OpenAI, read to end", "overhead", lambda w: _llamaindex_pair(w, per_chunk=False)),
)
SPEEDUP_CASES = (
    Case("LangChain ChatOpenAI.stream, full = full + chunk", "speedup", lambda w: _langchain_pair(w, aggregate=True)),
    Case("LlamaIndex OpenAI, FunctionAgent loop", "speedup", lambda w: _llamaindex_pair(w, per_chunk=True)),
)


# --- timing ---------------------------------------------------------------------------------


@dataclass
class Samples:
    """CPU and wall seconds of each side, one entry per pair (index i: the same pair)."""

    base_cpu: list[float]
    shim_cpu: list[float]
    base_wall: list[float]
    shim_wall: list[float]
    outcomes: tuple[Any, Any]
    capped: str = ""  # which side hit the cap, if one did


def _timed(fn: Call, cap_s: float) -> tuple[float, float, Any]:
    """(CPU s, wall s, outcome) of one call, the collector off on the clock."""
    gc.collect(0)
    gc.disable()  # a full collection here walks every imported module (~0.4 s): noise
    try:
        with alarm(cap_s):
            wall, cpu = time.perf_counter(), time.process_time()
            outcome = fn()
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    finally:
        gc.enable()
    return cpu, wall, outcome


def run_pairs(pair: Pair, *, min_pairs: int, max_pairs: int, budget_s: float, cap_s: float, seed: int) -> Samples:
    """Interleaved A/B: pairs in a random order per pair until ``min_pairs`` are done and
    either ``budget_s`` of wall time is spent or ``max_pairs`` are done."""
    rng = random.Random(seed)
    base, shim = pair
    outcomes: list[Any] = [None, None]
    for i, fn in enumerate(pair):  # untimed, uncapped: imports and caches are not on the clock
        outcomes[i] = fn()
    s = Samples([], [], [], [], (outcomes[0], outcomes[1]))
    started = time.perf_counter()
    while len(s.base_cpu) < max_pairs:
        if len(s.base_cpu) >= min_pairs and time.perf_counter() - started >= budget_s:
            break
        order = [(0, base), (1, shim)]
        if rng.random() < 0.5:
            order.reverse()
        got: dict[int, tuple[float, float]] = {}
        for side, fn in order:
            try:
                cpu, wall, _ = _timed(fn, cap_s)
            except BudgetExceeded:
                s.capped = ("framework alone", "with the gate")[side]
                return s
            got[side] = (cpu, wall)
        s.base_cpu.append(got[0][0])
        s.shim_cpu.append(got[1][0])
        s.base_wall.append(got[0][1])
        s.shim_wall.append(got[1][1])
    return s


# --- statistics -----------------------------------------------------------------------------


def bootstrap_ci(values: Sequence[float], seed: int, resamples: int = BOOTSTRAP) -> tuple[float, float]:
    """Percentile-bootstrap ``CONFIDENCE`` interval of the median of ``values``."""
    if len(values) < 2:
        return values[0], values[0]
    rng = random.Random(seed)
    n = len(values)
    medians = sorted(statistics.median(rng.choices(values, k=n)) for _ in range(resamples))
    tail = (1 - CONFIDENCE) / 2
    return medians[int(tail * resamples)], medians[min(int((1 - tail) * resamples), resamples - 1)]


def verdict(ci_pct: tuple[float, float], pairs: int = MIN_PAIRS_FOR_VERDICT, target_pct: float = TARGET_PCT) -> str:
    """``holds`` / ``does not hold`` / ``not resolved`` for an overhead interval in %."""
    if pairs < MIN_PAIRS_FOR_VERDICT:
        return "not resolved"
    if ci_pct[1] <= target_pct:
        return "holds"
    if ci_pct[0] > target_pct:
        return "does not hold"
    return "not resolved"


def overhead_stats(s: Samples, seed: int) -> dict[str, Any]:
    """Medians of each side and the per-pair overhead (shim/base - 1) in %, with its spread."""
    ratios = [sh / b for sh, b in zip(s.shim_cpu, s.base_cpu, strict=True)]
    walls = [sh / b for sh, b in zip(s.shim_wall, s.base_wall, strict=True)]
    q1, q3 = quartiles(ratios)
    lo, hi = bootstrap_ci(ratios, seed)
    ci = ((lo - 1) * 100, (hi - 1) * 100)
    return {
        "pairs": len(ratios),
        "base_s": statistics.median(s.base_cpu),
        "shim_s": statistics.median(s.shim_cpu),
        "overhead_pct": (statistics.median(ratios) - 1) * 100,
        "iqr_pct": [(q1 - 1) * 100, (q3 - 1) * 100],
        "ci_pct": list(ci),
        "wall_overhead_pct": (statistics.median(walls) - 1) * 100,
        "verdict": verdict(ci, len(ratios)),
    }


def speedup_stats(s: Samples, seed: int) -> dict[str, Any]:
    """How many times faster the gated path is: median and spread of per-pair base/shim."""
    ratios = [b / sh for sh, b in zip(s.shim_cpu, s.base_cpu, strict=True)]
    q1, q3 = quartiles(ratios)
    return {
        "pairs": len(ratios),
        "base_s": statistics.median(s.base_cpu),
        "shim_s": statistics.median(s.shim_cpu),
        "speedup": statistics.median(ratios),
        "speedup_iqr": [q1, q3],
        "speedup_ci": list(bootstrap_ci(ratios, seed)),
    }


# --- the section ----------------------------------------------------------------------------


def _measure(case: Case, workload: Workload, plan: Plan, seed: int) -> dict[str, Any]:
    row: dict[str, Any] = {"framework": case.framework, "kind": case.kind, "workload": workload.label}
    row["nbytes"], row["chunks"] = workload.nbytes, workload.n_chunks
    try:
        pair = case.build(workload)
        if isinstance(pair, str):
            row["note"] = pair
            return row
        if case.kind == "overhead":
            n = plan.min_pairs.get(workload.nbytes, plan.default_min_pairs)
            s = run_pairs(pair, min_pairs=n, max_pairs=max(n, plan.max_pairs), budget_s=plan.budget_s,
                          cap_s=plan.cap_s, seed=seed)
        else:
            n = plan.speedup_pairs.get(workload.nbytes, plan.default_min_pairs)
            s = _speedup_samples(pair, n, plan.cap_s, seed)
    except BudgetExceeded:
        row["note"] = f"a call exceeded the {plan.cap_s:g} s cap"
        return row
    except Exception as exc:  # a broken shim is a finding to report, not a crash
        row["note"] = f"{type(exc).__name__}: {exc}"[:300]
        return row
    if s.base_cpu:
        row.update(overhead_stats(s, seed) if case.kind == "overhead" else speedup_stats(s, seed))
    elif s.capped == "framework alone" and case.kind == "speedup":
        row["speedup_bound"] = plan.cap_s / statistics.median(s.shim_cpu) if s.shim_cpu else None
    want = _expected(workload)
    notes = []
    if s.capped:
        notes.append(f"{s.capped} exceeded the {plan.cap_s:g} s cap")
    if s.outcomes[0] != want:
        notes.append("framework alone did not reassemble the call")
    if s.outcomes[1] != want:
        notes.append("shim did not reassemble the call")
    row["note"] = "; ".join(notes)
    return row


def _speedup_samples(pair: Pair, n: int, cap_s: float, seed: int) -> Samples:
    """Speed-up pairs; when the framework alone passes the cap, the gated side is still timed
    (a few calls) so the lower bound cap / gated time can be given."""
    s = run_pairs(pair, min_pairs=n, max_pairs=n, budget_s=0.0, cap_s=cap_s, seed=seed)
    if s.capped == "framework alone" and not s.base_cpu:
        for _ in range(max(n, 3)):
            cpu, wall, _ = _timed(pair[1], cap_s)
            s.shim_cpu.append(cpu)
            s.shim_wall.append(wall)
    return s


def _log_row(row: dict[str, Any]) -> None:
    if "overhead_pct" in row:
        lo, hi = row["ci_pct"]
        shown = f"{row['overhead_pct']:+.1f} % (95 % CI {lo:+.1f}..{hi:+.1f}, {row['pairs']} pairs) {row['verdict']}"
    elif "speedup" in row:
        shown = f"gated {row['speedup']:.2f}x faster ({row['pairs']} pairs)"
    elif row.get("speedup_bound"):
        shown = f"gated > {row['speedup_bound']:.1f}x faster"
    else:
        shown = row["note"]
    log.info("  e2e %-48s %-24s %s", row["framework"], row["workload"].split("/")[-1], shown)


def run(profile: Any) -> list[dict[str, Any]]:
    """Target-3 rows (overhead cases), then the speed-up rows, for the profile's plan."""
    plan = PLANS.get(profile.name, PLANS["default"])
    out: list[dict[str, Any]] = []
    gc.collect()  # once: a full pass costs ~0.4 s with the frameworks imported
    jobs = [(c, n) for n in plan.overhead_sizes for c in OVERHEAD_CASES]
    jobs += [(c, n) for n in plan.speedup_sizes for c in SPEEDUP_CASES]
    for seed, (case, nbytes) in enumerate(jobs):
        row = _measure(case, synthetic("write_file", "openai-chat", nbytes, 4), plan, seed)
        _log_row(row)
        out.append(row)
    return out


# --- the report -----------------------------------------------------------------------------


def _pct(value: float) -> str:
    return f"{value:+.1f} %"


def overall(rows: list[dict[str, Any]]) -> tuple[str, str]:
    """(HOLDS | DOES NOT HOLD | NOT RESOLVED | NOT DECIDED, why) for target 3 over the rows.

    Only the overhead cases at the target's sizes decide; any of them wholly above the target
    is enough for DOES NOT HOLD, all of them measured and wholly at or under it for HOLDS.
    """
    cases = [r for r in rows if r.get("kind", "overhead") == "overhead" and r.get("nbytes") in TARGET_SIZES]
    measured = [r for r in cases if "verdict" in r]

    def named(rs: list[dict[str, Any]]) -> str:
        return ", ".join(f"{r['framework']} at {size_label(r['nbytes'])} ({_pct(r['overhead_pct'])})" for r in rs)

    failing = [r for r in measured if r["verdict"] == "does not hold"]
    if failing:
        return "DOES NOT HOLD", f"above {TARGET_PCT:g} % with 95 % confidence: {named(failing)}"
    sizes = {r["nbytes"] for r in measured}
    if sizes != set(TARGET_SIZES) or len(measured) < len(cases):
        missing = [f"{r['framework']} at {size_label(r['nbytes'])}" for r in cases if "verdict" not in r]
        missing += [f"{size_label(n)}" for n in TARGET_SIZES if n not in {r["nbytes"] for r in cases}]
        return "NOT DECIDED", "set at 4 KiB and 64 KiB, not measured here: " + ", ".join(missing)
    open_ = [r for r in measured if r["verdict"] == "not resolved"]
    if open_:
        return "NOT RESOLVED", f"the 95 % interval straddles {TARGET_PCT:g} % (or too few pairs): {named(open_)}"
    worst = max(measured, key=lambda r: r["ci_pct"][1])
    return "HOLDS", (
        f"every case's 95 % interval is at or under {TARGET_PCT:g} % "
        f"(highest upper bound {_pct(worst['ci_pct'][1])}: {worst['framework']} at {size_label(worst['nbytes'])})"
    )


def _unmeasured(row: dict[str, Any], size: str, blanks: int) -> str:
    note = row.get("note") or "not run"
    return f"| {row['framework']} | {size} | {row.get('chunks', '—')} |{' — |' * blanks} {note} |"


def render(rows: list[dict[str, Any]]) -> str:
    """The target-3 table, its plain verdict, and the speed-up table."""
    lines = table_head(
        "## Target 3 (issue 12): shims cost <= 3 % end to end",
        "Interleaved pairs (base and shim back to back, order drawn per pair), CPU time of the "
        "process; overhead = median of the per-pair ratios shim/base - 1, with their interquartile "
        "range and a bootstrap 95 % interval of that median.",
        "| shim | size | chunks | pairs | without shim ms (median) | with shim ms (median) "
        "| overhead | IQR | 95 % CI | wall-time overhead | verdict |",
    )
    for r in rows:
        if r.get("kind", "overhead") != "overhead":
            continue
        size = size_label(r["nbytes"]) if "nbytes" in r else r["workload"]
        if "verdict" not in r:
            lines.append(_unmeasured(r, size, 7))
            continue
        iqr, ci = r["iqr_pct"], r["ci_pct"]
        note = f" ({r['note']})" if r.get("note") else ""
        lines.append(
            f"| {r['framework']} | {size} | {r['chunks']:,} | {r['pairs']} | {r['base_s'] * 1e3:,.1f} | "
            f"{r['shim_s'] * 1e3:,.1f} | **{_pct(r['overhead_pct'])}** | {_pct(iqr[0])} .. {_pct(iqr[1])} | "
            f"{_pct(ci[0])} .. {_pct(ci[1])} | {_pct(r['wall_overhead_pct'])} | {r['verdict']}{note} |"
        )
    word, why = overall(rows)
    lines += ["", f"Target 3 (shims <= {TARGET_PCT:g} % end to end): {word} — {why}."]
    speed = [r for r in rows if r.get("kind") == "speedup"]
    if speed:
        lines += [
            "",
            "Where the gate removes work the framework did (quadratic re-parsing of the growing arguments):",
            "",
            "| framework path | size | chunks | pairs | framework alone ms | gated ms "
            "| gated path faster by (median) | IQR |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in speed:
            size = size_label(r["nbytes"])
            if "speedup" in r:
                q1, q3 = r["speedup_iqr"]
                lines.append(
                    f"| {r['framework']} | {size} | {r['chunks']:,} | {r['pairs']} | {r['base_s'] * 1e3:,.1f} | "
                    f"{r['shim_s'] * 1e3:,.1f} | **{r['speedup']:.2f}x** | {q1:.2f}x .. {q3:.2f}x |"
                )
            elif r.get("speedup_bound"):
                lines.append(
                    f"| {r['framework']} | {size} | {r['chunks']:,} | — | > cap | — | **> {r['speedup_bound']:.1f}x** "
                    f"| {r.get('note', '')} |"
                )
            else:
                lines.append(_unmeasured(r, size, 4))
    return "\n".join(lines)
