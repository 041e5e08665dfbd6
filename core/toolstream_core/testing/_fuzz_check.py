"""Run one (mutated) stream through an assembler and check the invariants on what it decided.

The checks are written against the public contract (DESIGN §4-§5) and do not reuse the core's
own parser: a committed call's arguments are compared with an independent strict parse of its
``raw_arguments``, so a bug shared by the core's parse and its finalize step cannot hide.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from toolstream_core._models import ArgumentsDelta, CallCommitted, CallOpened, CallRejected, CallState, Reason
from toolstream_core.sse import EventDecoder, format_for

from ._fuzz_mutations import Mutant

__all__ = ["AssemblerFactory", "Outcome", "budget_violations", "run_mutant", "run_stream", "violations_of"]

#: ``factory(provider=..., on_event=...)`` -> an object with ``feed(chunk)`` and ``finish(...)``;
#: the budget check also passes ``run_budget=`` (the ``Assembler`` keyword).
AssemblerFactory = Callable[..., Any]

_TERMINAL = frozenset({CallState.committed, CallState.failed, CallState.cancelled})
_MAX_DEPTH = 256
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass
class Outcome:
    """What one run produced: the Turn (or the exception), and the facts the checks need."""

    turn: Any = None
    raised: str | None = None
    transport_complete: bool = True
    live_before: list[Hashable] = field(default_factory=list)  # live when the poison arrived
    last_touched: Hashable = None  # the live call opened or extended last before the poison
    opened_during: list[Hashable] = field(default_factory=list)  # opened by the poison event
    commits: frozenset[str] = frozenset()
    signature: Any = None


def run_stream(factory: AssemblerFactory, provider: Any, events: list[Any], transport_complete: bool,
               poison: int | None = None, run_budget: int | None = None) -> Outcome:
    """Feed ``events`` to a fresh assembler; track which calls the ``poison`` event could touch."""
    live: dict[Hashable, None] = {}  # re-inserted when touched: the last one is the latest
    outcome = Outcome(transport_complete=transport_complete)
    feeding_poison = False

    def on_event(event: Any) -> None:
        if isinstance(event, (CallOpened, ArgumentsDelta)) and not feeding_poison:
            live.pop(event.key, None)
            live[event.key] = None
        if isinstance(event, CallOpened) and feeding_poison:
            outcome.opened_during.append(event.key)
        elif isinstance(event, (CallCommitted, CallRejected)):
            live.pop(event.call.key, None)

    stage = "construct"
    try:
        budget = {} if run_budget is None else {"run_budget": run_budget}
        assembler = factory(provider=provider, on_event=on_event, **budget)
        for position, event in enumerate(events):
            stage = f"feed(event {position})"
            if position == poison:
                outcome.live_before = list(live)
                outcome.last_touched = outcome.live_before[-1] if live else None
                feeding_poison = True
            assembler.feed(event)
            feeding_poison = False
        stage = "finish"
        outcome.turn = assembler.finish(transport_complete=transport_complete)
    except Exception as exc:  # the first invariant: nothing raises; report it, never propagate
        outcome.raised = f"{stage} raised {type(exc).__name__}: {exc}"[:300]
        return outcome
    _summarise(outcome)
    return outcome


def run_mutant(factory: AssemblerFactory, provider: Any, mutant: Mutant, run_budget: int | None = None) -> Outcome:
    """Run a mutant: its events, or its body bytes decoded by `toolstream_core.sse` piece by piece."""
    if mutant.events is not None:
        return run_stream(factory, provider, mutant.events, mutant.transport_complete, mutant.poison,
                          run_budget)
    assert mutant.body is not None
    decoder = EventDecoder(format_for(mutant.content_type))
    events: list[Any] = []
    pos = 0
    try:
        for size in mutant.pieces:
            events.extend(decoder.feed(mutant.body[pos:pos + size]))
            pos += size
        events.extend(decoder.close())
    except Exception as exc:
        return Outcome(raised=f"toolstream_core.sse raised {type(exc).__name__}: {exc}"[:300])
    complete = mutant.transport_complete and not decoder.truncated
    return run_stream(factory, provider, events, complete, run_budget=run_budget)


def _canonical(value: Any, *, sort: bool) -> str:
    try:
        return json.dumps(value, sort_keys=sort, ensure_ascii=False, allow_nan=False,
                          separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return f"<not JSON: {value!r:.80}>"


def _summarise(outcome: Outcome) -> None:
    turn = outcome.turn
    calls = list(getattr(turn, "calls", ()))
    outcome.commits = frozenset(
        f"{c.name}\x00{_canonical(c.arguments, sort=True)}" for c in calls if c.state is CallState.committed
    )
    outcome.signature = (
        bool(getattr(turn, "complete", False)),
        getattr(turn, "finish_reason", None),
        _summarise_calls(calls),
        tuple((c.id, c.name, str(c.state), c.raw_arguments) for c in getattr(turn, "server_calls", ())),
    )


def _summarise_calls(calls: list[Any]) -> tuple[Any, ...]:
    """What the outcome checks compare of each call, in ``Turn.calls`` order."""
    return tuple((c.id, c.name, c.kind, str(c.state), str(c.reason), c.raw_arguments,
                  _canonical(c.arguments, sort=False)) for c in calls)


# --------------------------------------------------------------------------- strict parse


class _NotStrict(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise _NotStrict("duplicate key")
    return dict(pairs)


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _NotStrict("overflowing number")
    return value


def _constant(name: str) -> Any:
    raise _NotStrict(f"{name} is not JSON")


def strict_parse(text: str) -> Any:
    """One strictly valid JSON value (DESIGN §4.5), or `ValueError`.

    A UTF-16 pair split over two fragments is one character (decoding, not repair); a lone
    half anywhere, as a character or an escape, is not JSON text.
    """
    if _SURROGATE.search(text):
        text = text.encode("utf-16", "surrogatepass").decode("utf-16")  # UnicodeDecodeError: lone
    if text.startswith("\ufeff"):
        raise _NotStrict("byte order mark")
    value = json.loads(text, object_pairs_hook=_no_duplicates, parse_float=_finite,
                       parse_constant=_constant)
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)) and depth > _MAX_DEPTH:
            raise _NotStrict("too deep")
        items = list(node.items()) if isinstance(node, dict) else (
            [(None, v) for v in node] if isinstance(node, list) else [(None, node)])
        for key, item in items:
            for text_value in (key, item):
                if isinstance(text_value, str) and _SURROGATE.search(text_value):
                    raise _NotStrict("lone surrogate")
            if isinstance(item, (dict, list)):
                stack.append((item, depth + 1))
    return value


def _parses(text: str) -> tuple[bool, Any]:
    try:
        return True, strict_parse(text)
    except (ValueError, RecursionError):
        return False, None


def _top_level_texts(text: str) -> list[str]:
    decoder = json.JSONDecoder()
    texts: list[str] = []
    pos = 0
    try:
        while pos < len(text):
            while pos < len(text) and text[pos] in " \t\r\n":
                pos += 1
            if pos == len(text):
                break
            _, end = decoder.raw_decode(text, pos)
            texts.append(text[pos:end])
            pos = end
    except (ValueError, RecursionError):
        return []
    return texts


def expected_arguments(call: Any) -> list[Any]:
    """The values a committed call may carry given its ``raw_arguments`` (rules 3, 5, 7, 11)."""
    raw = call.raw_arguments
    if call.kind == "custom":
        return [{"input": raw or ""}]
    if raw is None or not raw.strip():
        return [{}]
    ok, value = _parses(raw)
    if ok:
        return [value]
    texts = _top_level_texts(raw)  # re-sent copies kept in raw: `{..}{..}` or `{..}"{..}"`
    if len(texts) < 2:
        return []
    ok, value = _parses(texts[0])
    if not ok or not isinstance(value, dict):
        return []
    for other in texts[1:]:
        if other == texts[0]:
            continue
        ok_other, inner = _parses(other)
        if not (ok_other and isinstance(inner, str) and (inner == texts[0] or _parses(inner) == (True, value))):
            return []
    return [value]


# --------------------------------------------------------------------------- invariants


def violations_of(outcome: Outcome, mutant: Mutant | None, baseline: Outcome | None) -> list[tuple[str, str]]:
    """``(invariant, message)`` for every invariant the run broke; empty when it held."""
    if outcome.raised is not None:
        return [("no_raise", outcome.raised)]
    calls = list(outcome.turn.calls)
    found = _terminal_states(calls)
    found.extend(_pairing(outcome.turn, calls))
    found.extend(_raw_parses(calls))
    if mutant is None or baseline is None:
        return found
    return found + _mutant_violations(outcome, mutant, baseline, calls)


def budget_violations(factory: AssemblerFactory, provider: Any, mutant: Mutant, outcome: Outcome,
                      rng: random.Random) -> list[tuple[str, str]]:
    """Invariant 9: the same mutant under a run budget smaller than what it committed commits
    no more than the budget and changes nothing else: exactly the calls past it, in the order
    they were committed, fail ``run_budget_exceeded`` (with their results). Runs only on
    cases that committed something, with the budget drawn from the case's ``rng``."""
    if outcome.raised is not None:
        return []
    calls = list(outcome.turn.calls)
    committed = [c.key for c in calls if c.state is CallState.committed]
    if not committed:
        return []
    budget = rng.randrange(len(committed))
    limited = run_mutant(factory, provider, mutant, run_budget=budget)
    if limited.raised is not None:
        return [("no_raise", f"with run_budget={budget}: {limited.raised}")]
    found = violations_of(limited, None, None)
    got = [c.key for c in limited.turn.calls if c.state is CallState.committed]
    if len(got) > budget:
        found.append(("budget_holds", f"{len(got)} call(s) committed with run_budget={budget}"))
    over = set(committed[budget:])
    want = _summarise_calls([_past_budget(c) if c.key in over else c for c in calls])
    have = _summarise_calls(list(limited.turn.calls))
    if have != want:
        first = next((f"{h} != {w}" for h, w in zip(have, want, strict=False) if h != w),
                     f"{len(have)} calls != {len(want)}")
        found.append(("budget_holds", f"run_budget={budget} changed more than the calls past it: {first[:240]}"))
    return found


def _past_budget(call: Any) -> Any:
    """``call`` as the budget leaves it: failed ``run_budget_exceeded``, no arguments."""
    from dataclasses import replace

    return replace(call, state=CallState.failed, reason=Reason.run_budget_exceeded, arguments=None)


def _terminal_states(calls: list[Any]) -> list[tuple[str, str]]:
    """Every call ends in exactly one terminal state and appears once."""
    found = [("one_terminal_state", f"call {call.id!r} ({call.name}) ended {call.state}")
             for call in calls if call.state not in _TERMINAL]
    keys = [c.key for c in calls]
    if len(set(keys)) != len(keys):
        found.append(("one_terminal_state", "a call appears twice in Turn.calls"))
    return found


def _raw_parses(calls: list[Any]) -> list[tuple[str, str]]:
    """A committed call's arguments are a parse of the raw text it was sent."""
    found: list[tuple[str, str]] = []
    for call in calls:
        if call.state is CallState.committed:
            allowed = [_canonical(v, sort=False) for v in expected_arguments(call)]
            if _canonical(call.arguments, sort=False) not in allowed:
                found.append(("arguments_are_raw_parse",
                              f"{call.name}: arguments {_canonical(call.arguments, sort=False)[:80]} "
                              f"from raw {call.raw_arguments!r:.80}"))
    return found


def _mutant_violations(outcome: Outcome, mutant: Mutant, baseline: Outcome,
                       calls: list[Any]) -> list[tuple[str, str]]:
    """The invariants that compare a mutated run with its unmutated baseline."""
    found: list[tuple[str, str]] = []
    committed = [c for c in calls if c.state is CallState.committed]
    if committed and not outcome.transport_complete:
        found.append(("cut_commits_nothing",
                      f"{len(committed)} call(s) committed on a cut stream: {committed[0].name}"))
    if mutant.poison is not None:
        found.extend(("garbage_fails_touched_calls",
                      f"{call.name}({_canonical(call.arguments, sort=True)[:80]}) committed "
                      "though a garbage or mistyped event could have touched it")
                     for call in committed if _touchable(call, outcome, mutant))
    for position, name in mutant.interrupted:
        found.extend(("unfinished_call_fails",
                      f"{name} (call {position}) committed though the stream never ended it "
                      "(a new functionCall began, or the stream ended, while it continued)")
                     for call in committed if call.index == position and call.name == name)
    extra = sorted(outcome.commits - baseline.commits) if mutant.removes_info else []
    if extra:
        name, _, args = extra[0].partition("\x00")
        found.append(("commits_subset_of_unmutated",
                      f"{name}({args[:80]}) was never committed by the unmutated stream"))
    if mutant.exact and outcome.signature != baseline.signature:
        found.append(("same_outcome_as_unmutated", _difference(outcome.signature, baseline.signature)))
    return found


def _touchable(call: Any, outcome: Outcome, mutant: Mutant) -> bool:
    """Could the mutant's garbage or mistyped event have touched this call (see `Mutant.scope`)?"""
    kind, value = mutant.scope
    if kind == "index":  # the event still names its call: only that call
        return bool(call.index == value) and (call.key in outcome.live_before
                                              or call.key in outcome.opened_during)
    if kind == "nth":  # the n-th named Gemini part of the event: only the call it opened
        opened = outcome.opened_during
        return isinstance(value, int) and value < len(opened) and call.key == opened[value]
    if kind == "key":  # a Responses argument event, attributed by its item_id
        return bool(call.key == value) and (call.key in outcome.live_before
                                            or call.key in outcome.opened_during)
    if kind == "id":  # a chat fragment attributed by its id (rule 1), or the call that id opens
        return call.id == value and (call.key in outcome.live_before or call.key in outcome.opened_during)
    if kind == "last":  # a Gemini continuation part, a bare chat fragment: the latest call
        return outcome.last_touched is not None and call.key == outcome.last_touched
    return call.key in outcome.live_before or (kind == "all+opened" and call.key in outcome.opened_during)


def _pairing(turn: Any, calls: list[Any]) -> list[tuple[str, str]]:
    rejected = [c for c in calls if c.state in (CallState.failed, CallState.cancelled)]
    results = list(turn.error_results())
    result_ids = [r.tool_call_id for r in results]
    problems: list[tuple[str, str]] = []
    if len(results) != len(rejected) or result_ids != [c.id for c in rejected]:
        problems.append(("one_result_per_rejected_call",
                         f"rejected ids {[c.id for c in rejected]} vs result ids {result_ids}"))
    if len(set(result_ids)) != len(result_ids):
        problems.append(("one_result_per_rejected_call", f"an id is answered twice: {result_ids}"))
    committed_ids = {c.id for c in calls if c.state is CallState.committed}
    if committed_ids & set(result_ids):
        problems.append(("one_result_per_rejected_call", "a committed call's id also has an error result"))
    if any(not isinstance(i, str) or not i for i in result_ids):
        problems.append(("one_result_per_rejected_call", "an error result without a call id"))
    return problems


def _difference(got: Any, want: Any) -> str:
    for label, a, b in zip(("complete", "finish_reason", "calls", "server_calls"), got, want, strict=False):
        if a != b:
            return f"{label}: {str(a)[:120]} != unmutated {str(b)[:120]}"
    return "outcomes differ"


def case_rng(seed: int, case: int) -> random.Random:
    """The one source of every choice a case makes: same seed and number, same case."""
    return random.Random(f"toolstream-fuzz:{seed}:{case}")
