"""The mutation fuzz harness (``toolstream_core.testing.fuzz``).

Two halves: the harness run over the whole corpus and the bundled cassettes with a CI-sized
budget must report zero violations; and every invariant check must be able to fail — each is
fed a deliberately broken assembler (a wrapper around the real one, below the public API) and
must name the broken invariant with a reproduction line.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from toolstream_core import AssembleConfig, Assembler, CallState
from toolstream_core.testing import FuzzReport, run_fuzz
from toolstream_core.testing._fuzz_check import case_rng
from toolstream_core.testing._fuzz_mutations import KINDS, StreamShape, make_mutant
from toolstream_core.testing._fuzz_sources import collect_streams

REPO = Path(__file__).resolve().parents[2]
MAIN_APIS = ("openai-chat", "openai-responses", "anthropic", "gemini")
CORPUS_CASES = 24_000  # ~200 per stream; about 8 s of CPU on the 2-core CI machine
CASSETTE_CASES = 6_000


def _summary(report: FuzzReport, limit: int = 15) -> str:
    lines = [v.reproduction[:300] for v in report.violations[:limit]]
    return f"{len(report.violations)} violation(s):\n" + "\n".join(lines)


# --------------------------------------------------------------------------- the corpus


def test_corpus_has_no_violations(streams_dir: Path) -> None:
    report = run_fuzz([str(streams_dir)], cases=CORPUS_CASES, seed=0)
    assert report.cases == CORPUS_CASES
    for api in MAIN_APIS:
        assert report.by_api[api].cases > 1000, api
    assert set(report.by_mutation) == set(KINDS), "every mutation kind ran"
    assert report.violations == [], _summary(report)


def test_bundled_cassettes_have_no_violations() -> None:
    report = run_fuzz([str(REPO / "cassettes")], cases=CASSETTE_CASES, seed=1)
    assert report.streams >= 49
    assert report.violations == [], _summary(report)


# --------------------------------------------------------------------------- hand-built streams


def _chat_chunk(tool_calls: list[dict[str, Any]] | None = None, finish: str | None = None) -> dict[str, Any]:
    delta: dict[str, Any] = {"tool_calls": tool_calls} if tool_calls else {}
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def _chat_fragment(text: str) -> dict[str, Any]:
    return _chat_chunk([{"index": 0, "function": {"arguments": text}}])


CHAT_EVENTS = [
    _chat_chunk([{"index": 0, "id": "call_1", "type": "function",
                  "function": {"name": "get_weather", "arguments": ""}}]),
    _chat_fragment('{"city":'),
    _chat_fragment('"Pa'),
    _chat_fragment("ri"),
    _chat_fragment('s é"}'),
    _chat_chunk(finish="tool_calls"),
]


def _gemini_part(call: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": [{"functionCall": call}]}}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate]}


GEMINI_EVENTS = [
    _gemini_part({"name": "get_weather", "willContinue": True}),
    _gemini_part({"partialArgs": [{"jsonPath": "$.city", "stringValue": "Bos", "willContinue": True}],
                  "willContinue": True}),
    _gemini_part({"partialArgs": [{"jsonPath": "$.city", "stringValue": "ton"}], "willContinue": True}),
    _gemini_part({}),
    {"candidates": [{"content": {"role": "model", "parts": [{"text": ""}]}, "finishReason": "STOP"}]},
]


def _write_stream(folder: Path, api: str, events: list[Any]) -> Path:
    path = folder / api / "hand.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"toolstream_stream": 1, "api": api})]
    lines += [json.dumps({"data": event}, ensure_ascii=False) for event in events]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture()
def chat_stream(tmp_path: Path) -> Path:
    return _write_stream(tmp_path, "openai-chat", CHAT_EVENTS)


@pytest.fixture()
def gemini_stream(tmp_path: Path) -> Path:
    return _write_stream(tmp_path, "gemini", GEMINI_EVENTS)


def test_hand_built_streams_pass_with_the_real_assembler(chat_stream: Path, gemini_stream: Path) -> None:
    report = run_fuzz([str(chat_stream), str(gemini_stream)], cases=3000, seed=0)
    assert report.violations == [], _summary(report)
    assert report.by_mutation["rechunk"].cases > 0 and report.by_mutation["keepalive"].cases > 0


def test_a_lost_middle_fragment_is_counted_undetectable_not_violating(chat_stream: Path) -> None:
    # Dropping "ri" leaves {"city":"Pas é"}: valid JSON nobody can tell from the real thing.
    report = run_fuzz([str(chat_stream)], cases=2000, seed=0)
    assert report.violations == []
    assert any("Pas é" in v.message for v in report.undetectable), report.undetectable[:3]
    assert report.by_api["openai-chat"].undetectable == report.undetectable_cases >= len(report.undetectable)


# --------------------------------------------------------------------------- broken assemblers


class Wrapped:
    """The real Assembler with one behaviour broken by ``feed_hook`` / ``turn_hook``."""

    def __init__(self, *, provider: Any, on_event: Any, lenient: bool = False,
                 feed_hook: Callable[[Wrapped, Any], bool] | None = None,
                 turn_hook: Callable[[Any], Any] | None = None, ignore_cut: bool = False,
                 run_budget: int | None = None, ignore_budget: bool = False) -> None:
        config = AssembleConfig(mode="lenient") if lenient else None
        budget = None if ignore_budget else run_budget
        self.inner = Assembler(provider=provider, on_event=on_event, config=config, run_budget=budget)
        self.feed_hook, self.turn_hook, self.ignore_cut = feed_hook, turn_hook, ignore_cut
        self.fed = 0

    def feed(self, chunk: Any) -> None:
        self.fed += 1
        if self.feed_hook is None or self.feed_hook(self, chunk):
            self.inner.feed(chunk)

    def finish(self, *, transport_complete: bool = True) -> Any:
        turn = self.inner.finish(transport_complete=transport_complete or self.ignore_cut)
        return self.turn_hook(turn) if self.turn_hook else turn


def _replace_calls(turn: Any, change: Callable[[Any], Any]) -> Any:
    return dataclasses.replace(turn, calls=tuple(change(c) for c in turn.calls))


def _commit_everything(turn: Any) -> Any:
    """Trust whatever arrived: every call commits with its text parsed leniently, or {}."""
    def commit(call: Any) -> Any:
        try:
            args = json.loads(call.raw_arguments or "{}")
        except ValueError:
            args = {}
        return dataclasses.replace(call, state=CallState.committed, reason=None, arguments=args)
    return dataclasses.replace(_replace_calls(turn, commit), _results=())


def _raise_on_garbage(self: Wrapped, chunk: Any) -> bool:
    if not isinstance(chunk, dict):
        raise TypeError("not a dict")
    return True


def _swallow_garbage(self: Wrapped, chunk: Any) -> bool:
    """The old bug: events that are not the vendor's shape are dropped without a trace."""
    if not isinstance(chunk, dict):
        return False
    if "choices" in chunk:
        choices = chunk["choices"]
        return isinstance(choices, list) and all(
            isinstance(c, dict) and isinstance(c.get("delta", {}), dict) for c in choices)
    return "candidates" in chunk or "type" in chunk


def _first_six_events_only(self: Wrapped, chunk: Any) -> bool:
    return self.fed <= len(CHAT_EVENTS)  # more events (a re-chunked stream) lose the end


BROKEN: dict[str, tuple[dict[str, Any], str]] = {
    "no_raise": ({"feed_hook": _raise_on_garbage}, "chat"),
    "one_terminal_state": (
        {"turn_hook": lambda t: _replace_calls(t, lambda c: dataclasses.replace(c, state=CallState.open))},
        "chat"),
    "one_result_per_rejected_call": ({"turn_hook": lambda t: dataclasses.replace(t, _results=())}, "chat"),
    "arguments_are_raw_parse": (
        {"turn_hook": lambda t: _replace_calls(
            t, lambda c: dataclasses.replace(c, arguments={**c.arguments, "x": 1}) if c.arguments else c)},
        "chat"),
    "cut_commits_nothing": ({"ignore_cut": True, "lenient": True}, "chat"),
    "commits_subset_of_unmutated": ({"turn_hook": _commit_everything}, "chat"),
    "garbage_fails_touched_calls": ({"feed_hook": _swallow_garbage}, "chat"),
    "same_outcome_as_unmutated": ({"feed_hook": _first_six_events_only}, "chat"),
    "unfinished_call_fails": ({"turn_hook": _commit_everything}, "gemini"),
    "budget_holds": ({"ignore_budget": True}, "chat"),
}


@pytest.mark.parametrize("invariant", sorted(BROKEN))
def test_each_invariant_check_can_fail(invariant: str, chat_stream: Path, gemini_stream: Path) -> None:
    options, which = BROKEN[invariant]

    def factory(*, provider: Any, on_event: Any, run_budget: int | None = None) -> Wrapped:
        return Wrapped(provider=provider, on_event=on_event, run_budget=run_budget, **options)

    path = chat_stream if which == "chat" else gemini_stream
    report = run_fuzz([str(path)], cases=1500, seed=0, assembler_factory=factory)
    broken = {v.invariant for v in report.violations}
    assert invariant in broken, broken
    example = next(v for v in report.violations if v.invariant == invariant)
    # The one-line reproduction replays exactly that case and finds the same violation.
    assert example.reproduction.startswith(f"toolstream fuzz {path} --seed 0 --case {example.case}  # ")
    assert "\n" not in example.reproduction
    again = run_fuzz([str(path)], seed=0, case=example.case, assembler_factory=factory)
    assert invariant in {v.invariant for v in again.violations}


def test_same_seed_same_cases_other_seed_other_cases(chat_stream: Path) -> None:
    def details(seed: int) -> list[str]:
        stream = collect_streams([str(chat_stream)])[0][0]
        shape = StreamShape(stream)
        kinds = [k for k in KINDS if shape.applicable(k)]
        return [make_mutant(shape, kinds[n % len(kinds)], case_rng(seed, n)).detail for n in range(60)]

    assert details(3) == details(3)
    assert details(3) != details(4)
    first = run_fuzz([str(chat_stream)], cases=300, seed=3).to_json()
    second = run_fuzz([str(chat_stream)], cases=300, seed=3).to_json()
    first.pop("seconds")
    second.pop("seconds")
    assert first == second


@pytest.mark.parametrize("api", ["openai-chat", "gemini", "anthropic", "openai-responses"])
def test_rechunk_splits_one_fragment_into_several_events(api: str, streams_dir: Path) -> None:
    """Re-chunking turns one event into several, each carrying one piece; the text is unchanged."""
    for path in sorted((streams_dir / api).glob("*.jsonl"))[:6]:
        stream = collect_streams([str(path)])[0][0]
        shape = StreamShape(stream)
        if not shape.applicable("rechunk"):
            continue
        original = "".join(text for _, _, text in shape.fragments)
        for n in range(40):
            mutant = make_mutant(shape, "rechunk", case_rng(0, n))
            assert mutant.events is not None
            split = StreamShape(dataclasses.replace(stream, events=mutant.events))
            assert "".join(text for _, _, text in split.fragments) == original
            assert len(mutant.events) - len(stream.events) == len(split.fragments) - len(shape.fragments) > 0


# ------------------------------------------------- scope of a mistyped field on a reused index

REUSED_INDEX = REPO / "cassettes" / "profiles" / "litellm-ollama" / "parallel_calls.yaml"
REUSED_INDEX_CASE = 33  # seed 11: event 2 (a second call at index 0, new id) gets `function.name = 1.5`


def _mend_names(self: Wrapped, chunk: Any) -> bool:
    """A lenient core: a non-string tool name is read as the tool the stream used before."""
    if isinstance(chunk, dict) and isinstance(chunk.get("choices"), list):
        for choice in chunk["choices"]:
            for call in (choice.get("delta") or {}).get("tool_calls") or []:
                function = call.get("function")
                if isinstance(function, dict) and not isinstance(function.get("name", ""), str):
                    function["name"] = "get_weather"
    return True


def test_a_mistyped_field_of_a_new_call_on_a_reused_index_scopes_to_that_call() -> None:
    # Rule 1: a new id on a known index is a new call, so the mistyped name can touch only it;
    # the first call at that index arrived whole and commits (no false alarm) ...
    clean = run_fuzz([str(REUSED_INDEX)], seed=11, case=REUSED_INDEX_CASE)
    assert clean.by_mutation["retype"].cases == 1  # the case is still the retype described above
    assert clean.violations == [], _summary(clean)

    # ... while a core that commits the mistyped call is still caught.
    def factory(*, provider: Any, on_event: Any, run_budget: int | None = None) -> Wrapped:
        return Wrapped(provider=provider, on_event=on_event, feed_hook=_mend_names, run_budget=run_budget)

    broken = run_fuzz([str(REUSED_INDEX)], seed=11, case=REUSED_INDEX_CASE, assembler_factory=factory)
    assert {v.invariant for v in broken.violations} == {"garbage_fails_touched_calls"}, _summary(broken)
