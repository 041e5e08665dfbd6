"""Timing: best of N with ``time.perf_counter``, a wall-clock cap, and checked outcomes.

Only a contender's own work is on the clock: input preparation (decoding wire text into the
dicts or SDK objects it takes) happens between timed sections, batch by batch. The garbage
collector is off inside a run (as ``timeit`` does); the young generation, which holds all a run
allocated, is collected before the next run, so one run's garbage is never billed to the next.

The cap is enforced with ``SIGALRM`` while a timed section runs, so a quadratic peer that would
need minutes is stopped at the cap and reported as "> cap" instead of stalling the suite.
"""

from __future__ import annotations

import gc
import math
import signal
import statistics
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from benchmarks.peers import PREPARERS, Contender, Outcome
from benchmarks.workloads import STEPS, Workload, synthetic


class BudgetExceeded(Exception):
    """A run went past the cap."""


@dataclass(frozen=True)
class Budget:
    """How hard to try for a stable number, and when to give up on a slow contender."""

    cap_s: float = 20.0
    min_total_s: float = 0.6
    max_repeats: int = 25
    batch: int = 4096


@dataclass
class Measurement:
    """One contender on one workload. ``seconds`` is the best run; ``None`` unless ok."""

    contender: str
    workload: str
    nbytes: int
    n_chunks: int
    status: str  # ok | capped | skipped | error | wrong | unavailable
    seconds: float | None = None
    repeats: int = 0
    cap_s: float | None = None
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@contextmanager
def alarm(seconds: float) -> Iterator[None]:
    """Raise ``BudgetExceeded`` in this thread after ``seconds`` (main thread only)."""
    usable = threading.current_thread() is threading.main_thread() and hasattr(signal, "SIGALRM")
    if not usable or math.isinf(seconds):
        yield
        return

    def _expire(signum: int, frame: Any) -> None:
        raise BudgetExceeded

    previous = signal.signal(signal.SIGALRM, _expire)
    signal.setitimer(signal.ITIMER_REAL, max(seconds, 1e-3))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def quartiles(values: Sequence[float]) -> tuple[float, float]:
    """First and third quartile (inclusive method: defined from two values up)."""
    if len(values) < 2:
        return values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def run_once(contender: Contender, workload: Workload, budget: Budget) -> tuple[float, Outcome]:
    """One full pass; returns (seconds on the clock, what the contender reassembled)."""
    source, prepare = PREPARERS[contender.input_kind]
    # Everything the previous run allocated is still in generation 0 (the collector was off),
    # so a young-generation pass clears its cyclic garbage without walking the whole heap
    # (a full pass over the imported frameworks costs tens of ms, more than a small run).
    gc.collect(0)
    was_enabled = gc.isenabled()
    gc.disable()
    elapsed = 0.0
    try:
        with alarm(budget.cap_s):
            start = time.perf_counter()
            session = contender.start(workload)
            elapsed += time.perf_counter() - start
        for raw_batch in workload.batches(source, budget.batch):
            batch = prepare(raw_batch)
            del raw_batch
            with alarm(budget.cap_s - elapsed):
                start = time.perf_counter()
                session.feed(batch)
                elapsed += time.perf_counter() - start
            del batch
        with alarm(budget.cap_s - elapsed):
            start = time.perf_counter()
            outcome = session.finish()
            elapsed += time.perf_counter() - start
    finally:
        if was_enabled:
            gc.enable()
    if elapsed > budget.cap_s:
        raise BudgetExceeded
    return elapsed, outcome


def check(outcome: Outcome, workload: Workload) -> str:
    """Empty when the contender reassembled exactly the workload's calls, else what differs."""
    if outcome is None:
        return ""
    expected = [(call.name, call.args) for call in workload.calls]
    if len(outcome) != len(expected):
        return f"{len(outcome)} calls reassembled, {len(expected)} sent"
    for i, (got, want) in enumerate(zip(outcome, expected, strict=True)):
        if got[0] != want[0]:
            return f"call {i}: name {got[0]!r}, sent {want[0]!r}"
        if got[1] != want[1]:
            return f"call {i} ({want[0]}): arguments differ from those sent"
    return ""


_WARM: set[tuple[str, str]] = set()


def warm_up(contender: Contender, api: str) -> None:
    """One untimed, uncapped pass on a tiny input: imports, cached clients and pydantic
    schemas are built here, never on the clock (and never cut by the cap mid-import)."""
    if (contender.key, api) in _WARM:
        return
    _WARM.add((contender.key, api))
    if api not in STEPS:
        return
    tiny = synthetic("write_file", api, 512, 16)
    try:
        run_once(contender, tiny, Budget(cap_s=math.inf, batch=1 << 20))
    except Exception:  # the real run will report it
        return


def measure(contender: Contender, workload: Workload, budget: Budget, *, verify: bool = True) -> Measurement:
    """Best of up to ``max_repeats`` runs, stopping once ``min_total_s`` has been spent."""
    warm_up(contender, workload.api)
    result = Measurement(contender.key, workload.label, workload.nbytes, workload.n_chunks, "ok")
    times: list[float] = []
    try:
        seconds, outcome = run_once(contender, workload, budget)
    except BudgetExceeded:
        result.status, result.cap_s = "capped", budget.cap_s
        result.detail = f"> {budget.cap_s:g} s"
        return result
    except Exception as exc:  # a peer failing on an input is a result, not a crash
        result.status, result.detail = "error", f"{type(exc).__name__}: {exc}"[:300]
        return result
    problem = check(outcome, workload) if verify else ""
    if problem:
        result.status, result.detail = "wrong", problem
    times.append(seconds)
    del outcome
    # the core and the floor are what every ratio divides by: never trust one run of them
    floor_runs = 3 if contender.role in ("core", "floor") and workload.n_chunks <= 300_000 else 1
    while len(times) < budget.max_repeats and (sum(times) < budget.min_total_s or len(times) < floor_runs):
        try:
            times.append(run_once(contender, workload, budget)[0])
        except BudgetExceeded:
            break
    result.seconds = min(times)
    result.repeats = len(times)
    return result
