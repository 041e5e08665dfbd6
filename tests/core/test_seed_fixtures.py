"""The five seed fixture classes, every vendor, from wire dicts and from the SDKs' own objects.

Single call, two parallel calls, a no-argument call, oversized arguments and a cancel
mid-stream: the core API of docs/DESIGN.md §3 end to end, before the rule-by-rule files
(§4.1-§4.12) take each rule apart.
"""

from __future__ import annotations

import json
from typing import Any

import builders as b
import pytest
from builders import ADD, PROVIDERS, SEARCH, make, run
from toolstream_core import AssembleConfig, Assembler, CallState, Reason

FORMS = ("dict", "sdk")


def _form(provider: str, events: list[dict[str, Any]], form: str) -> list[Any]:
    return b.to_sdk(provider, events) if form == "sdk" else events


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_seed_single_call(provider: str, form: str) -> None:
    events = _form(provider, make(provider, [b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(1, 9, 20))]),
                   form)
    turn = run(events)  # provider detected from the first event
    assert turn.provider == provider
    assert turn.complete is True
    [call] = turn.calls
    assert (call.id, call.name, call.state, call.kind) == ("call_1", "search", CallState.committed, "function")
    assert call.arguments == json.loads(SEARCH)
    assert turn.error_results() == []


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_seed_two_parallel_calls(provider: str, form: str) -> None:
    calls = [
        b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(2, 7, 15)),
        b.Call(id="call_2", name="search", arguments='{"query":"rome"}', cuts=(4, 9)),
    ]
    schedule = b.round_robin([4, 4])
    events = _form(provider, make(provider, calls, schedule=schedule), form)
    turn = run(events, provider=provider)
    assert [(c.id, c.name, c.state) for c in turn.calls] == [
        ("call_1", "search", CallState.committed), ("call_2", "search", CallState.committed)]
    assert [c.arguments for c in turn.committed] == [json.loads(SEARCH), {"query": "rome"}]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_seed_no_argument_call(provider: str, form: str) -> None:
    events = _form(provider, make(provider, [b.Call(id="call_1", name="now", arguments="")]), form)
    turn = run(events, provider=provider)
    [call] = turn.calls
    assert call.state is CallState.committed
    assert call.arguments == {}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_seed_oversized_arguments(provider: str, form: str) -> None:
    big = json.dumps({"blob": "x" * 5000})
    calls = [
        b.Call(id="call_1", name="write", arguments=big, cuts=tuple(range(100, 5000, 100))),
        b.Call(id="call_2", name="add", arguments=ADD),
    ]
    events = _form(provider, make(provider, calls), form)
    turn = run(events, provider=provider, config=AssembleConfig(max_tool_argument_bytes=1024))
    first, second = turn.calls
    assert (first.state, first.reason) == (CallState.failed, Reason.arguments_exceed_max_bytes)
    assert first.arguments is None
    assert second.state is CallState.committed
    assert [r.tool_call_id for r in turn.error_results()] == ["call_1"]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_seed_cancel_mid_stream(provider: str, form: str) -> None:
    calls = [
        b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(3, 8)),
        b.Call(id="call_2", name="add", arguments=ADD, cuts=(2,)),
    ]
    events = _form(provider, make(provider, calls, mode="partial") if provider == "gemini"
                   else make(provider, calls), form)
    assembler = Assembler(provider=provider)
    half = len(events) // 2
    for event in events[:half]:
        assembler.feed(event)
    assembler.cancel("user pressed stop")
    for event in events[half:]:  # absorbed, including the finish signal
        assembler.feed(event)
    turn = assembler.finish()
    assert turn.complete is False
    assert turn.committed == ()
    assert turn.calls, "the calls opened before the cancel are reported"
    for call in turn.calls:
        assert (call.state, call.reason, call.detail) == (CallState.cancelled, Reason.cancelled, "user pressed stop")
    assert [r.tool_call_id for r in turn.error_results()] == [c.id for c in turn.calls]
