"""DESIGN §5 invariants, by hypothesis: re-chunking, interleaving, and mutated streams.

* Re-chunking the argument text anywhere — between any two code points, inside ``\\uXXXX``
  escapes, between the two UTF-16 halves of a character a JS server split — never changes
  the Turn.
* Interleaving parallel calls (OpenAI chat by index, Anthropic blocks with every start first,
  Responses items) never changes the Turn.
* Mutated streams (drop, duplicate, reorder, truncate, wrong types, garbage dicts and
  non-dicts), synthetic and real: ``feed`` never raises, every call ends in one terminal
  state, every rejected id gets exactly one result, a committed call's arguments are what
  its raw text says, and a stream whose finish signal was removed never commits anything.

Runs derandomized (fixed seeds) so CI is stable; the whole file stays well under a minute.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from dataclasses import replace
from typing import Any

import builders as b
from builders import run, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streams_util import MAIN_APIS, load_stream, stream_paths
from toolstream_core import AssembleConfig, Assembler, CallState, Reason
from toolstream_core.testing._fuzz_check import _top_level_texts

SETTINGS = settings(max_examples=150, derandomize=True, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
MUTATION_SETTINGS = settings(max_examples=300, derandomize=True, deadline=None,
                             suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
TEXT_VENDORS = ("openai-chat", "openai-responses", "anthropic")

# -- argument text ---------------------------------------------------------------------------

# Multi-byte, non-BMP, quotes, backslashes and control characters: everything a cut can split.
_CHARS = st.sampled_from(list('ab "\\/\n\t\u00e9\u00fc\u4e2d\u20ac\U0001f600\U0001f9d1\u200d\u0000\x7f'))
_STRINGS = st.text(_CHARS, max_size=8)
_SCALARS = (st.none() | st.booleans() | st.integers(-10**12, 10**12)
            | st.floats(allow_nan=False, allow_infinity=False) | _STRINGS)
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(_STRINGS, inner, max_size=3), max_leaves=8)
_OBJECTS = st.dictionaries(_STRINGS, _VALUES, max_size=4)


def utf16_units(text: str) -> str:
    """The same text with every non-BMP character as two surrogate code points (a JS string)."""
    out = []
    for ch in text:
        code = ord(ch)
        if code > 0xFFFF:
            code -= 0x10000
            out.append(chr(0xD800 + (code >> 10)) + chr(0xDC00 + (code & 0x3FF)))
        else:
            out.append(ch)
    return "".join(out)


@st.composite
def argument_texts(draw: st.DrawFn) -> str:
    """A JSON object as some vendor would print it, sometimes cut short (then invalid)."""
    value = draw(_OBJECTS)
    style = draw(st.sampled_from(["ascii_escapes", "raw", "spaced", "utf16_units"]))
    if style == "ascii_escapes":
        text = json.dumps(value)  # every non-ASCII character as \\uXXXX, pairs for non-BMP
    elif style == "spaced":
        text = json.dumps(value, ensure_ascii=False, indent=1)
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        if style == "utf16_units":
            text = utf16_units(text)
    if draw(st.integers(0, 5)) == 0:
        text = text[: draw(st.integers(0, len(text)))]
    return text


def cut_points(text: str) -> st.SearchStrategy[tuple[int, ...]]:
    return st.lists(st.integers(0, max(len(text), 1)), max_size=12).map(lambda c: tuple(sorted(set(c))))


@st.composite
def call_sets(draw: st.DrawFn, *, max_calls: int = 3) -> tuple[list[b.Call], list[tuple[int, ...]]]:
    count = draw(st.integers(1, max_calls))
    calls = [b.Call(id=f"call_{n}", name=draw(st.sampled_from(["search", "add", "write"])),
                    arguments=draw(argument_texts()))
             for n in range(count)]
    cuts = [draw(cut_points(call.arguments)) for call in calls]
    return calls, cuts


# -- re-chunking -----------------------------------------------------------------------------


@SETTINGS
@given(data=st.data(), provider=st.sampled_from(TEXT_VENDORS),
       ending=st.sampled_from(["finish", "truncated", "none"]), mode=st.sampled_from(["strict", "lenient"]))
def test_property_rechunking_never_changes_the_turn(data: st.DataObject, provider: str, ending: str,
                                                    mode: str) -> None:
    calls, cuts = data.draw(call_sets())
    config = AssembleConfig(mode=mode)  # type: ignore[arg-type]
    whole = run(b.build(provider, calls, ending=ending), provider=provider, config=config)
    cut = [replace(call, cuts=c) for call, c in zip(calls, cuts, strict=True)]
    pieces = run(b.build(provider, cut, ending=ending), provider=provider, config=config)
    assert snapshot(pieces) == snapshot(whole)
    for call, spec in zip(whole.calls, calls, strict=True):
        assert call.raw_arguments == spec.arguments


def test_rechunking_inside_escapes_and_utf16_pairs_commits_the_same_value() -> None:
    """Deterministic companion: every single cut position of an escape-heavy text."""
    value = {"s": "\U0001f600 \u00e9 \\ \" \n", "k\u4e2d": [1, "\U0001f9d1"]}
    for text in (json.dumps(value), utf16_units(json.dumps(value, ensure_ascii=False))):
        for provider in TEXT_VENDORS:
            for point in range(len(text) + 1):
                turn = run(b.build(provider, [b.Call(id="c1", name="f", arguments=text, cuts=(point,))]),
                           provider=provider)
                assert (turn.calls[0].state, turn.calls[0].arguments) == (CallState.committed, value), (
                    provider, point)


_GEMINI_KEYS = st.from_regex(r"[a-z_][a-z0-9_]{0,5}", fullmatch=True)
_GEMINI_LEAVES = st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(_CHARS, min_size=1, max_size=10)
_GEMINI_VALUES = st.recursive(_GEMINI_LEAVES, lambda inner: st.lists(inner, min_size=1, max_size=3)
                              | st.dictionaries(_GEMINI_KEYS, inner, min_size=1, max_size=3), max_leaves=6)


@SETTINGS
@given(args=st.dictionaries(_GEMINI_KEYS, _GEMINI_VALUES, min_size=1, max_size=4),
       cuts=st.lists(st.integers(0, 10), max_size=5), terminator=st.sampled_from(["empty", "last"]))
def test_property_gemini_partial_args_rechunking_never_changes_the_turn(args: dict[str, Any], cuts: list[int],
                                                                        terminator: str) -> None:
    text = json.dumps(args)
    whole = run(b.gemini([
        b.Call(id="g1", name="f", arguments=text),
    ], mode="partial", terminator=terminator, with_ids=True),  # type: ignore[arg-type]
                provider="gemini")
    pieces = run(b.gemini([
        b.Call(id="g1", name="f", arguments=text, cuts=tuple(cuts)),
    ], mode="partial", terminator=terminator,  # type: ignore[arg-type]
                          with_ids=True), provider="gemini")
    assert snapshot(pieces) == snapshot(whole)
    assert whole.calls[0].arguments == args
    # the same value sent whole as structured args is the same call
    structured = run(b.gemini([b.Call(id="g1", name="f", arguments=text)], with_ids=True), provider="gemini")
    assert structured.calls[0].arguments == whole.calls[0].arguments


# -- the run budget --------------------------------------------------------------------------


@SETTINGS
@given(data=st.data(), provider=st.sampled_from(TEXT_VENDORS), ending=st.sampled_from(["finish", "none"]),
       budget=st.integers(0, 4), pipelined=st.booleans())
def test_property_a_run_budget_only_fails_the_calls_past_it(data: st.DataObject, provider: str, ending: str,
                                                            budget: int, pipelined: bool) -> None:
    """Seed gate step 5: a turn never commits more than its budget, and the budget changes
    nothing else: the calls it stops are calls the unbudgeted turn committed, each now failed
    ``run_budget_exceeded`` and answered. Without pipelining they are the last in queue order."""
    calls, _ = data.draw(call_sets(max_calls=4))
    config = b.PIPELINE if pipelined else AssembleConfig()
    events = b.build(provider, calls, ending=ending)
    free = run(events, provider=provider, config=config)
    limited = run(events, provider=provider, config=config, run_budget=budget)
    allowed = [c.id for c in free.committed]
    got = [c.id for c in limited.committed]
    assert len(got) == min(budget, len(allowed)) and set(got) <= set(allowed)
    if not pipelined:
        assert got == allowed[:budget]
    for before, after in zip(free.calls, limited.calls, strict=True):
        if before.committed and not after.committed:
            assert (after.state, after.reason) == (CallState.failed, Reason.run_budget_exceeded)
            assert limited.result_for(after) is not None
        else:
            assert (after.id, after.state, after.reason, after.arguments) == (
                before.id, before.state, before.reason, before.arguments)
    assert limited.run_budget_left == budget - len(got)
    assert len(limited.error_results()) == len(limited.rejected)


# -- interleaving ----------------------------------------------------------------------------


def _step_counts(provider: str, calls: list[b.Call]) -> list[int]:
    counts = []
    for call in calls:
        fragments = len(call.fragments())
        counts.append({"openai-chat": 1 + fragments, "anthropic": 2 + fragments,
                       "openai-responses": 2 + fragments}[provider])
    return counts


@SETTINGS
@given(data=st.data(), provider=st.sampled_from(TEXT_VENDORS))
def test_property_interleaving_parallel_calls_never_changes_the_turn(data: st.DataObject, provider: str) -> None:
    calls, cuts = data.draw(call_sets(max_calls=4))
    cut = [replace(call, cuts=c) for call, c in zip(calls, cuts, strict=True)]
    counts = _step_counts(provider, cut)
    if provider == "anthropic":  # Anthropic: every block start first, then anything goes
        rest = [p for p, n in enumerate(counts) for _ in range(n - 1)]
        schedule = list(range(len(counts))) + data.draw(st.permutations(rest))
    else:
        schedule = data.draw(st.permutations([p for p, n in enumerate(counts) for _ in range(n)]))
    sequential = run(b.build(provider, cut), provider=provider)
    interleaved = run(b.build(provider, cut, schedule=schedule), provider=provider)
    assert snapshot(interleaved) == snapshot(sequential)


# -- mutations -------------------------------------------------------------------------------

_WRONG = st.sampled_from([None, 0, -1, 1.5, "", "x", [], {}, True, ["a"], {"a": 1}, [{"index": "0"}], "\udcff"])
_GARBAGE_KEYS = st.sampled_from(["type", "choices", "delta", "index", "data", "candidates", "content_block",
                                 "tool_calls", "item", "x", "error", "partial_json", "functionCall"])
_GARBAGE = st.recursive(
    _WRONG | st.text("ab", max_size=3) | st.binary(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_GARBAGE_KEYS, inner, max_size=3),
    max_leaves=6,
) | st.builds(object)


def _paths(event: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found: list[tuple[Any, ...]] = []
    if isinstance(event, dict):
        for key, value in event.items():
            found.append((*prefix, key))
            found.extend(_paths(value, (*prefix, key)))
    elif isinstance(event, list):
        for position, value in enumerate(event):
            found.append((*prefix, position))
            found.extend(_paths(value, (*prefix, position)))
    return found


def _set(event: Any, path: tuple[Any, ...], value: Any) -> None:
    for step in path[:-1]:
        event = event[step]
    event[path[-1]] = value


@st.composite
def mutated(draw: st.DrawFn, events: list[Any]) -> list[Any]:
    events = copy.deepcopy(events)
    for _ in range(draw(st.integers(0, 6))):
        op = draw(st.sampled_from(["drop", "duplicate", "swap", "truncate", "wrong_type", "garbage", "move"]))
        if not events and op != "garbage":
            continue
        at = draw(st.integers(0, max(len(events) - 1, 0)))
        if op == "drop":
            del events[at]
        elif op == "duplicate":
            events.insert(at, copy.deepcopy(events[at]))
        elif op == "swap":
            other = draw(st.integers(0, len(events) - 1))
            events[at], events[other] = events[other], events[at]
        elif op == "move":
            events.insert(draw(st.integers(0, len(events))), events.pop(at))
        elif op == "truncate":
            events = events[:at]
        elif op == "wrong_type":
            paths = _paths(events[at])
            if paths:
                _set(events[at], draw(st.sampled_from(paths)), draw(_WRONG))
        else:
            events.insert(at, draw(_GARBAGE))
    return events


def _synthetic_bases() -> list[tuple[str, list[Any]]]:
    calls = [b.Call(id="call_1", name="search", arguments='{"query":"a","limit":10}', cuts=(3, 9)),
             b.Call(id="call_2", name="add", arguments='{"a":2,"b":3}', cuts=(4,)),
             b.Call(id="call_1", name="search", arguments='{"query":"a","limit":10}')]
    bases: list[tuple[str, list[Any]]] = []
    for provider in b.PROVIDERS:
        kwargs: dict[str, Any] = {"with_ids": True} if provider == "gemini" else {}
        bases.append((provider, b.build(provider, calls, **kwargs)))
        bases.append((provider, b.build(provider, calls[:2], schedule=[0, 1, 0, 1, 0, 1], **kwargs)))
    bases.append(("openai-chat", b.openai_chat([
        b.Call(id="c", name="f", arguments='{"a":1}{"a":1}', cuts=(7,)),
    ], omit_index=True,
                                               identity="blank")))
    bases.append(("openai-responses", b.openai_responses([
        b.Call(id="c", name="sql", arguments="SELECT 1", cuts=(3,)),
        b.Call(id="d", name="f", arguments="{}"),
    ], kinds=["custom", "function"])))
    bases.append(("anthropic", b.anthropic([
        b.Call(id="s", name="web", arguments='{"q":"x"}'),
        b.Call(id="t", name="f", arguments="{}"),
    ], block_types=["server_tool_use", "tool_use"], text_block=True)))
    bases.append(("gemini", b.gemini([
        b.Call(id="g", name="f", arguments='{"x":"yz","n":[1,2]}', cuts=(1,)),
        b.Call(id="h", name="f", arguments='{"k":"v"}'),
    ], mode="partial", with_ids=True)))
    return bases


def _real_bases() -> list[tuple[str, list[Any]]]:
    """Real recorded streams with tool calls (in-repo corpus plus ``$TOOLSTREAM_STREAMS``)."""
    bases = []
    for path in stream_paths(apis=MAIN_APIS):
        case = load_stream(path)
        if case.expected and case.expected.get("tool_calls") and len(case.events) < 400:
            bases.append((case.api, [e for e in case.data_events() if isinstance(e, dict)]))
    return bases


BASES = _synthetic_bases() + _real_bases()


def _explains(call: Any) -> bool:
    """A committed call's arguments are what its raw text says (DESIGN §5), allowing for the
    documented cases: empty text is ``{}``, custom tools wrap the text, and a re-sent call's
    raw text is several exact copies of the committed value's text."""
    raw = call.raw_arguments
    if call.kind == "custom":
        return bool(call.arguments == {"input": raw or ""})
    if raw is None or not raw.strip():
        return bool(call.arguments == {})
    try:
        return bool(json.loads(raw) == call.arguments)
    except ValueError:
        pass
    # Several whole JSON texts back to back (the fuzz checker splits them the same way).
    pieces = [json.loads(text) for text in _top_level_texts(raw)]
    return len(pieces) >= 2 and all(p == call.arguments for p in pieces)


def check_invariants(turn: Any) -> None:
    terminal = (CallState.committed, CallState.failed, CallState.cancelled)
    for call in turn.calls:
        assert call.state in terminal, f"call left {call.state}"
        assert (call.state is CallState.committed) == (call.reason is None), call
        assert call.kind in ("function", "custom")
        if call.state is CallState.committed:
            assert _explains(call), f"committed arguments {call.arguments!r} from raw {call.raw_arguments!r}"
            assert isinstance(call.arguments, dict)
        else:
            assert call.arguments is None
    assert len(turn.committed) + len(turn.rejected) == len(turn.calls)
    results = turn.error_results()
    assert [r.tool_call_id for r in results] == [c.id for c in turn.rejected]
    ids = Counter(r.tool_call_id for r in results)
    assert all(isinstance(i, str) and i for i in ids)
    assert max(ids.values(), default=1) == 1, f"an id got more than one result: {ids}"
    committed_ids = [c.id for c in turn.committed]
    assert len(set(committed_ids)) == len(committed_ids), f"an id committed twice: {committed_ids}"
    assert not set(committed_ids) & set(ids), "an id both committed and answered with an error"
    assert all(c.kind == "server" for c in turn.server_calls)


@MUTATION_SETTINGS
@given(data=st.data(), base=st.sampled_from(BASES), detect=st.booleans(), transport=st.booleans(),
       mode=st.sampled_from(["strict", "lenient"]), pipelined=st.booleans())
def test_property_mutated_streams_keep_the_invariants(data: st.DataObject, base: tuple[str, list[Any]],
                                                      detect: bool, transport: bool, mode: str,
                                                      pipelined: bool) -> None:
    provider, events = base
    events = data.draw(mutated(events))
    config = AssembleConfig(mode=mode, execute_before_stream_end=pipelined,  # type: ignore[arg-type]
                            allow_pipelined_execute=["search", "add", "f"] if pipelined else [])
    assembler = Assembler(provider=None if detect else provider, config=config)  # type: ignore[arg-type]
    for event in events:
        assembler.feed(event)  # never raises
    if data.draw(st.booleans()):
        assembler.cancel("mutation test")
    check_invariants(assembler.finish(transport_complete=transport))


def strip_finish(provider: str, events: list[Any]) -> list[Any]:
    """The same stream with every vendor finish signal removed."""
    out = []
    for event in copy.deepcopy(events):
        if provider == "openai-chat":
            for choice in event.get("choices") or []:
                if isinstance(choice, dict):
                    choice.pop("finish_reason", None)
        elif provider == "openai-responses":
            if event.get("type") in ("response.completed", "response.incomplete", "response.failed"):
                continue
        elif provider == "anthropic":
            if event.get("type") == "message_stop":
                continue
        elif provider == "gemini":
            for candidate in event.get("candidates") or []:
                if isinstance(candidate, dict):
                    candidate.pop("finishReason", None)
        out.append(event)
    return out


@MUTATION_SETTINGS
@given(data=st.data(), base=st.sampled_from(BASES), transport=st.booleans())
def test_property_truncated_streams_never_commit(data: st.DataObject, base: tuple[str, list[Any]],
                                                 transport: bool) -> None:
    provider, events = base
    events = data.draw(mutated(strip_finish(provider, events)))
    assembler = Assembler(provider=provider)  # type: ignore[arg-type]
    for event in events:
        assembler.feed(event)
    turn = assembler.finish(transport_complete=transport)
    assert turn.committed == (), [(c.id, c.raw_arguments) for c in turn.committed]
    assert turn.complete is False
    assert {c.reason for c in turn.rejected} <= {
        Reason.stream_truncated, Reason.upstream_error, Reason.arguments_exceed_max_bytes,
        Reason.too_many_tool_calls}
    check_invariants(turn)


@SETTINGS
@given(data=st.data(), base=st.sampled_from(BASES))
def test_property_finished_streams_survive_sdk_shapes_of_garbage(data: st.DataObject,
                                                                 base: tuple[str, list[Any]]) -> None:
    """Unmutated bases decide every call; the same with garbage sprinkled in keeps invariants."""
    provider, events = base
    check_invariants(run(events, provider=provider))
    noisy = list(events)
    for _ in range(data.draw(st.integers(1, 4))):
        noisy.insert(data.draw(st.integers(0, len(noisy))), data.draw(_GARBAGE))
    check_invariants(run(noisy, provider=provider))
