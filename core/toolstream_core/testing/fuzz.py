"""Mutation fuzzing of recorded streams: does the promise hold on streams nobody recorded?

The promise: a tool runs only on a call the vendor really finished, with exactly the
arguments the vendor sent. `run_fuzz` takes recordings (JSONL streams of the corpus format,
vcrpy cassettes, directories of either), mutates each one case by case and checks, on every
case, that the assembler

* never raises from ``feed`` / ``finish`` and ends every call in exactly one terminal state;
* answers every rejected call with exactly one error result (ids one to one, none twice);
* commits only arguments that are the strict parse of the call's ``raw_arguments``;
* commits, after a mutation that only removes information (truncate, drop, a garbage or
  mistyped event, a cut of the raw bytes), only calls the unmutated stream committed;
* commits nothing on a stream whose transport did not complete;
* gives exactly the unmutated outcome when argument fragments are re-chunked, when Gemini
  keep-alive parts or well-formed events of unknown kinds are inserted, or when the raw bytes
  are fed in other pieces;
* commits no call that a garbage or mistyped event could have touched (the calls live when it
  arrived, and any call it opened);
* under a run budget smaller than what a case committed, commits no more than the budget and
  changes nothing but the calls past it, which fail ``run_budget_exceeded``.

Mutations: truncate (``transport_complete`` true and false), drop / duplicate / swap events,
re-chunk one argument fragment (all four fragment fields, cut inside escapes and next to
multi-byte text), Gemini keep-alive parts, garbage events, a retyped field the adapter reads,
one changed character in a fragment or structured argument, raw bytes cut anywhere, raw bytes
re-chunked, a well-formed event of an unknown kind inserted (it must change nothing). Each
case is one stream, one mutation and parameters drawn from
``random.Random(f"toolstream-fuzz:{seed}:{case}")``: the same seed and case number replay the
same case, which is what the one-line reproduction printed for a failing case relies on.

A lost or repeated argument fragment on an API with neither sequence numbers nor a final copy
of the arguments (OpenAI chat, Anthropic, Gemini) can yield different arguments that still
parse; no one can detect that, so such cases are counted as ``undetectable``, not violations.

Every case runs without a tool registry (``tools=None``) and with the default config: a
registry only rejects more calls, so running without one gives unsafe commits the most room
to show.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from ._fuzz_check import AssemblerFactory, budget_violations, case_rng, run_mutant, run_stream, violations_of
from ._fuzz_mutations import KINDS, StreamShape, make_mutant
from ._fuzz_sources import FuzzStream, SourceError, collect_streams

__all__ = ["DEFAULT_CASES", "FuzzReport", "SourceError", "Violation", "run_fuzz"]

DEFAULT_CASES = 20_000
UNDETECTABLE_KEPT = 200  # examples kept; every one is counted


@dataclass(frozen=True)
class Violation:
    """One broken invariant on one case, with everything needed to replay it."""

    stream: str
    origin: str
    api: str
    case: int
    seed: int
    mutation: str
    detail: str
    invariant: str
    message: str

    @property
    def reproduction(self) -> str:
        """One line: the command that replays the case, then what it broke."""
        return (f"toolstream fuzz {shlex.quote(self.origin)} --seed {self.seed} --case {self.case}"
                f"  # {self.stream} {self.mutation}: {self.detail} -> {self.invariant}: {self.message}")


@dataclass
class Tally:
    cases: int = 0
    violations: int = 0
    undetectable: int = 0


@dataclass
class FuzzReport:
    """Counts per API and per mutation, every violation, and the undetectable cases."""

    seed: int
    streams: int = 0
    cases: int = 0
    seconds: float = 0.0
    by_api: dict[str, Tally] = field(default_factory=dict)
    by_mutation: dict[str, Tally] = field(default_factory=dict)
    violations: list[Violation] = field(default_factory=list)
    undetectable: list[Violation] = field(default_factory=list)  # the first UNDETECTABLE_KEPT
    skipped: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations

    @property
    def violating_cases(self) -> int:
        return sum(t.violations for t in self.by_api.values())

    @property
    def undetectable_cases(self) -> int:
        return sum(t.undetectable for t in self.by_api.values())

    def to_json(self) -> dict[str, Any]:
        """The report as plain JSON data (``toolstream fuzz --json``)."""
        return {
            "seed": self.seed,
            "streams": self.streams,
            "cases": self.cases,
            "seconds": round(self.seconds, 3),
            "violating_cases": self.violating_cases,
            "undetectable_cases": self.undetectable_cases,
            "by_api": {k: asdict(v) for k, v in sorted(self.by_api.items())},
            "by_mutation": {k: asdict(v) for k, v in sorted(self.by_mutation.items())},
            "violations": [dict(asdict(v), reproduction=v.reproduction) for v in self.violations],
            "undetectable": [dict(asdict(v), reproduction=v.reproduction) for v in self.undetectable],
            "skipped": self.skipped,
        }


def default_factory(*, provider: Any, on_event: Any, run_budget: int | None = None) -> Any:
    """The real assembler, default config, no tool registry."""
    from toolstream_core import Assembler

    return Assembler(provider=provider, on_event=on_event, run_budget=run_budget)


def run_fuzz(
    paths: Iterable[str],
    *,
    cases: int = DEFAULT_CASES,
    seed: int = 0,
    case: int | None = None,
    assembler_factory: AssemblerFactory | None = None,
) -> FuzzReport:
    """Fuzz every stream under ``paths`` with about ``cases`` cases in all.

    The budget is shared evenly: each stream runs its cases ``0 .. k-1``. With ``case`` set,
    only that case number runs, on every stream (the reproduction of a printed violation).
    ``assembler_factory(provider=..., on_event=..., run_budget=...)`` replaces the real
    `Assembler` (tests use it to prove each check can fail; ``run_budget`` is passed only by the
    budget check). Raises `SourceError` for a path that cannot be read.
    """
    started = time.perf_counter()
    factory = assembler_factory or default_factory
    streams, skipped = collect_streams(paths)
    report = FuzzReport(seed=seed, streams=len(streams), skipped=skipped)
    for number, stream in enumerate(streams):
        if case is not None:
            numbers: Iterable[int] = [case]
        else:
            share = cases // len(streams) + (1 if number < cases % len(streams) else 0)
            numbers = range(share)
        _fuzz_stream(stream, numbers, seed, factory, report)
    report.seconds = time.perf_counter() - started
    return report


def _fuzz_stream(stream: FuzzStream, numbers: Iterable[int], seed: int, factory: AssemblerFactory,
                 report: FuzzReport) -> None:
    shape = StreamShape(stream)
    kinds = [k for k in KINDS if shape.applicable(k)]
    if not kinds:
        report.skipped.append(f"{stream.label}: no events to mutate")
        return
    baseline = run_stream(factory, stream.provider, stream.events, stream.transport_complete)
    base_broken = violations_of(baseline, None, None)
    if base_broken:
        _record(report, stream, -1, seed, "none", "the unmutated stream", base_broken, blind=False)
        return
    for number in numbers:
        rng = case_rng(seed, number)
        kind = kinds[number % len(kinds)]
        mutant = make_mutant(shape, kind, rng)
        outcome = run_mutant(factory, stream.provider, mutant)
        broken = violations_of(outcome, mutant, baseline)
        broken += budget_violations(factory, stream.provider, mutant, outcome, rng)
        _record(report, stream, number, seed, kind, mutant.detail, broken, blind=mutant.blind)


def _printable(text: str) -> str:
    """Lone surrogates (a mutation's own doing) as escapes, so a report line always prints."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _record(report: FuzzReport, stream: FuzzStream, number: int, seed: int, kind: str, detail: str,
            broken: list[tuple[str, str]], *, blind: bool) -> None:
    api = report.by_api.setdefault(stream.api, Tally())
    mutation = report.by_mutation.setdefault(kind, Tally())
    report.cases += 1
    api.cases += 1
    mutation.cases += 1
    if not broken:
        return
    found = [Violation(stream.label, stream.origin, stream.api, number, seed, kind, _printable(detail),
                       inv, _printable(msg)) for inv, msg in broken]
    if blind and all(v.invariant == "commits_subset_of_unmutated" for v in found):
        api.undetectable += 1
        mutation.undetectable += 1
        if len(report.undetectable) < UNDETECTABLE_KEPT:
            report.undetectable.append(found[0])
        return
    api.violations += 1
    mutation.violations += 1
    report.violations.extend(found)
