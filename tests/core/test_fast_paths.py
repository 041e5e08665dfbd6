"""The adapters' fast paths (issue 12) decide nothing the full paths would decide differently.

Each fast path takes only the chunk shape it can prove (a continuation fragment for the call
fed last) and leaves everything else to the full path. These tests feed every corpus stream,
and fuzz mutants of each (truncated, re-chunked, retyped, garbage, ...), twice: as recorded,
and with each event made ineligible for the fast path by a change the full path ignores. The
two runs must end in the same Turn, call by call, and count the same anomalies.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from toolstream_core import Assembler
from toolstream_core.testing._fuzz_check import case_rng, run_stream
from toolstream_core.testing._fuzz_mutations import KINDS, StreamShape, make_mutant
from toolstream_core.testing._fuzz_sources import FuzzStream, collect_streams

MUTANTS_PER_STREAM = 40


class _Text(str):
    """A fragment no fast path takes (they take exact ``str`` only) and the full path keeps
    as the plain text it holds."""


def _chat_slow(event: Any) -> Any:
    """Every tool-call delta given a ``type`` key (the full path reads no ``type``; the dict fast
    path proves its shape by key count and declines) and a ``_Text`` fragment."""
    if event.__class__ is not dict:
        return _texts(event)
    event = copy.deepcopy(event)
    data = event.get("data") if set(event) <= {"data", "event"} else event
    choices = data.get("choices") if isinstance(data, dict) else None
    for choice in choices if isinstance(choices, list) else ():
        delta = choice.get("delta") if isinstance(choice, dict) else None
        calls = delta.get("tool_calls") if isinstance(delta, dict) else None
        for tc in calls if isinstance(calls, list) else ():
            if isinstance(tc, dict) and "type" not in tc:
                tc["type"] = "function"
    return _texts(event)


# Where each API's argument fragments are: a path of field names, "*" for every list item.
_FRAGMENTS = {
    "openai-chat": ("choices", "*", "delta", "tool_calls", "*", "function", "arguments"),
    "anthropic": ("delta", "partial_json"),
}


def _texts(event: Any, path: tuple[str, ...] | None = None) -> Any:
    """A copy of ``event`` (dict or SDK object) whose argument fragments are ``_Text``."""
    if path is None:
        event = copy.deepcopy(event)
        for fragment_path in _FRAGMENTS.values():
            _texts(event, fragment_path)
        return event
    if not path:
        return event
    head, rest = path[0], path[1:]
    if head == "*":
        for item in event if isinstance(event, list) else ():
            _texts(item, rest)
        return event
    fields = event if isinstance(event, dict) else getattr(event, "__dict__", None)
    if not isinstance(fields, dict) or head not in fields:
        return event
    if not rest:
        if fields[head].__class__ is str:
            fields[head] = _Text(fields[head])
    else:
        _texts(fields[head], rest)
    return event


def _sdk_objects(api: str, events: list[Any]) -> list[Any]:
    """The events as the SDK's stream yields them (its own ``construct_type``)."""
    if api == "openai-chat":
        from openai._models import construct_type as openai_construct
        from openai.types.chat import ChatCompletionChunk

        return [openai_construct(type_=ChatCompletionChunk, value=e) if isinstance(e, dict) else e
                for e in events]
    from anthropic._models import construct_type as anthropic_construct
    from anthropic.types import RawMessageStreamEvent

    return [anthropic_construct(type_=RawMessageStreamEvent, value=e) if isinstance(e, dict) else e
            for e in events]


SLOW: dict[tuple[str, str], Callable[[Any], Any]] = {
    ("openai-chat", "dict"): _chat_slow,
    ("openai-chat", "sdk"): _texts,
    ("anthropic", "dict"): _texts,
    ("anthropic", "sdk"): _texts,
}


def _factory(*, provider: Any, on_event: Any) -> Any:
    return Assembler(provider=provider, on_event=on_event)


def _quiet_factory(*, provider: Any, on_event: Any) -> Any:
    """No ``on_event``: the table's quiet common branch, as shims without a UI run it."""
    return Assembler(provider=provider)


def _signature(events: list[Any], stream: FuzzStream, complete: bool, factory: Any) -> Any:
    outcome = run_stream(factory, stream.provider, events, complete)
    assert outcome.raised is None, outcome.raised
    return outcome.signature, outcome.turn.anomalies


def _streams(streams_dir: Path, api: str) -> list[FuzzStream]:
    streams, _ = collect_streams([str(streams_dir)])
    return [s for s in streams if s.provider == api]


@pytest.mark.parametrize(("api", "form"), sorted(SLOW))
@pytest.mark.parametrize("factory", [_factory, _quiet_factory], ids=["on_event", "quiet"])
def test_fast_path_matches_full_path(streams_dir: Path, api: str, form: str, factory: Any) -> None:
    slow = SLOW[api, form]
    streams = _streams(streams_dir, api)
    assert len(streams) >= 10
    compared = 0
    for stream in streams:
        shape = StreamShape(stream)
        kinds = [k for k in KINDS if shape.applicable(k)]
        cases: list[tuple[list[Any], bool]] = [(stream.events, stream.transport_complete)]
        for number in range(MUTANTS_PER_STREAM if kinds else 0):
            mutant = make_mutant(shape, kinds[number % len(kinds)], case_rng(7, number))
            if mutant.events is not None:
                cases.append((mutant.events, mutant.transport_complete))
        for events, complete in cases:
            if form == "sdk":
                events = _sdk_objects(api, events)
            fast = _signature(events, stream, complete, factory)
            full = _signature([slow(e) for e in events], stream, complete, factory)
            assert fast == full, f"{stream.label}: the fast path decided differently"
            compared += 1
    assert compared > 300


def _chat_tc(event: dict[str, Any]) -> dict[str, Any]:
    tc: dict[str, Any] = event["choices"][0]["delta"]["tool_calls"][0]
    return tc


# Each edit turns a continuation chunk into one the fast path must decline or must treat as
# the full path would: every field the full path reads, in every way it can go wrong.
CHAT_EDITS: dict[str, Callable[[dict[str, Any]], None]] = {
    "chunk error": lambda e: e.__setitem__("error", {"message": "boom"}),
    "choice error": lambda e: e["choices"][0].__setitem__("error", {"message": "boom"}),
    "finish_reason": lambda e: e["choices"][0].__setitem__("finish_reason", "length"),
    "bool choice index": lambda e: e["choices"][0].__setitem__("index", False),
    "other choice": lambda e: e["choices"][0].__setitem__("index", 1),
    "no choice index": lambda e: e["choices"][0].pop("index"),
    "bool index": lambda e: _chat_tc(e).__setitem__("index", _chat_tc(e)["index"] == 1),
    "float index": lambda e: _chat_tc(e).__setitem__("index", float(_chat_tc(e)["index"])),
    "str index": lambda e: _chat_tc(e).__setitem__("index", str(_chat_tc(e)["index"])),
    "next index": lambda e: _chat_tc(e).__setitem__("index", _chat_tc(e)["index"] + 1),
    "new id": lambda e: _chat_tc(e).__setitem__("id", "call_other"),
    "int id": lambda e: _chat_tc(e).__setitem__("id", 7),
    "name": lambda e: _chat_tc(e)["function"].__setitem__("name", "other_tool"),
    "object arguments": lambda e: _chat_tc(e)["function"].__setitem__("arguments", {"a": 1}),
    "int arguments": lambda e: _chat_tc(e)["function"].__setitem__("arguments", 7),
    "legacy function_call": lambda e: e["choices"][0]["delta"].__setitem__(
        "function_call", {"name": "f", "arguments": "{}"}),
    "two choices": lambda e: e["choices"].append(dict(copy.deepcopy(e["choices"][0]), index=1)),
    "two tool calls": lambda e: e["choices"][0]["delta"]["tool_calls"].append(
        dict(copy.deepcopy(_chat_tc(e)), index=_chat_tc(e)["index"] + 1)),
    "choices a dict": lambda e: e.__setitem__("choices", {"0": e["choices"][0]}),
    "tool call a list": lambda e: e["choices"][0]["delta"].__setitem__("tool_calls", [[_chat_tc(e)]]),
    "function a str": lambda e: _chat_tc(e).__setitem__("function", "args"),
}


def _continuations(events: list[Any]) -> list[int]:
    """Positions of chunks of exactly the shape the chat fast path takes."""
    found = []
    for i, event in enumerate(events):
        try:
            [choice] = event["choices"]
            [tc] = choice["delta"]["tool_calls"]
        except (LookupError, TypeError, ValueError):
            continue
        if set(tc) == {"index", "function"} and set(tc["function"]) == {"arguments"}:
            found.append(i)
    return found


def _edited(api: str, form: str, stream: FuzzStream, edits: dict[str, Callable[[Any], None]], edit: str,
            positions: list[int]) -> int:
    compared = 0
    for position in positions[1:2] + positions[-1:]:  # one mid-call, one last fragment
        events = copy.deepcopy(stream.events)
        edits[edit](events[position])
        if form == "sdk":
            events = _sdk_objects(api, events)
        for factory in (_factory, _quiet_factory):
            fast = _signature(events, stream, stream.transport_complete, factory)
            full = _signature([SLOW[api, form](e) for e in events], stream, stream.transport_complete, factory)
            assert fast == full, f"{stream.label} event {position}: the fast path decided differently"
            compared += 1
    return compared


ANTHROPIC_EDITS: dict[str, Callable[[dict[str, Any]], None]] = {
    "bool index": lambda e: e.__setitem__("index", e["index"] == 1),
    "float index": lambda e: e.__setitem__("index", float(e["index"])),
    "unknown index": lambda e: e.__setitem__("index", e["index"] + 40),
    "text delta": lambda e: e["delta"].__setitem__("type", "text_delta"),
    "int delta type": lambda e: e["delta"].__setitem__("type", 7),
    "no delta type": lambda e: e["delta"].pop("type"),
    "int fragment": lambda e: e["delta"].__setitem__("partial_json", 7),
    "object fragment": lambda e: e["delta"].__setitem__("partial_json", {"a": 1}),
    "no fragment": lambda e: e["delta"].pop("partial_json"),
    "no delta": lambda e: e.pop("delta"),
    "delta a list": lambda e: e.__setitem__("delta", [e["delta"]]),
    "int type": lambda e: e.__setitem__("type", 7),
    "stop instead": lambda e: e.__setitem__("type", "content_block_stop"),
}


def _anthropic_deltas(events: list[Any]) -> list[int]:
    return [i for i, e in enumerate(events) if isinstance(e, dict) and e.get("type") == "content_block_delta"
            and isinstance(e.get("delta"), dict) and e["delta"].get("type") == "input_json_delta"]


EDITS: dict[str, tuple[dict[str, Callable[[Any], None]], Callable[[list[Any]], list[int]]]] = {
    "openai-chat": (CHAT_EDITS, _continuations),
    "anthropic": (ANTHROPIC_EDITS, _anthropic_deltas),
}


@pytest.mark.parametrize("form", ["dict", "sdk"])
@pytest.mark.parametrize(("api", "edit"), [(api, edit) for api, (edits, _) in EDITS.items() for edit in sorted(edits)])
def test_fast_path_declines_what_it_cannot_prove(streams_dir: Path, api: str, edit: str, form: str) -> None:
    edits, positions = EDITS[api]
    compared = sum(_edited(api, form, stream, edits, edit, positions(stream.events))
                   for stream in _streams(streams_dir, api))
    assert compared >= 20
