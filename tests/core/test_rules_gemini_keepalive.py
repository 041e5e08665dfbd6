"""DESIGN §4.1 and §5 for Gemini streaming calls (``willContinue`` + ``partialArgs``).

Vertex sends ``{"functionCall": {"willContinue": true}}`` parts between argument groups: a
keep-alive inside the open call. A streaming call that never got its end marker did not
finish, and a ``partialArgs`` entry without a value is lost data, never JSON ``null``.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import builders as b
import pytest
from builders import run, snapshot
from streams_util import find_streams_dir, load_stream
from toolstream_core import CallState, Reason

KEEP_ALIVE = {"functionCall": {"willContinue": True}}
RECIPE = json.dumps({"title": "soup", "ingredients": ["leek", "potato", "salt"], "serves": 4})


def partial_stream(**kwargs: Any) -> list[dict[str, Any]]:
    return b.gemini([b.Call(id="g1", name="recipe", arguments=RECIPE, cuts=(2, 5))], mode="partial", **kwargs)


@pytest.mark.parametrize("position", range(1, 12))
def test_keepalive_part_between_argument_groups_changes_nothing(position: int) -> None:
    events = partial_stream()
    expected = snapshot(run(events, provider="gemini"))
    assert expected[0][0][4] is CallState.committed
    mutated = copy.deepcopy(events)
    mutated.insert(position, b.gemini_chunk([KEEP_ALIVE]))
    assert snapshot(run(mutated, provider="gemini")) == expected


def test_keepalive_part_in_the_same_chunk_as_arguments_changes_nothing() -> None:
    events = partial_stream()
    expected = snapshot(run(events, provider="gemini"))
    mutated = copy.deepcopy(events)
    for event in mutated[1:-2]:
        event["candidates"][0]["content"]["parts"].append(copy.deepcopy(KEEP_ALIVE))
    assert snapshot(run(mutated, provider="gemini")) == expected


def test_keepalive_in_the_recorded_vertex_stream_keeps_the_whole_arguments() -> None:
    """The issue-9 reproduction: the core committed getWeather({}) instead of Boston."""
    case = load_stream(find_streams_dir() / "gemini" / "google__google-stream-tool-call-arguments__0.jsonl")
    events = copy.deepcopy(case.events)
    events.insert(1, b.gemini_chunk([KEEP_ALIVE]))
    turn = run(events, provider="gemini")
    assert [(c.name, c.state, c.arguments) for c in turn.calls] == [
        ("getWeather", CallState.committed, {"location": "Boston"}),
        ("getWeather", CallState.committed, {"location": "San Francisco"}),
    ]
    assert turn.error_results() == []


def test_keepalive_with_no_open_call_opens_nothing() -> None:
    events = b.gemini([b.Call(id="g1", name="f", arguments='{"a":1}')], with_ids=True)
    events.insert(0, b.gemini_chunk([KEEP_ALIVE]))
    turn = run(events, provider="gemini")
    assert [(c.id, c.state) for c in turn.calls] == [("g1", CallState.committed)]


def test_new_named_call_while_a_streaming_call_is_open_fails_the_open_one() -> None:
    first = b.gemini([b.Call(id="g1", name="recipe", arguments=RECIPE, cuts=(2,))], mode="partial", ending="none")
    first = [e for e in first if e["candidates"][0]["content"]["parts"] != [{"functionCall": {}}]]
    second = b.gemini([b.Call(id="g2", name="add", arguments='{"a":1,"b":2}')])
    turn = run(first + second, provider="gemini")
    assert [(c.name, c.state, c.reason) for c in turn.calls] == [
        ("recipe", CallState.failed, Reason.stream_truncated),
        ("add", CallState.committed, None),
    ]
    assert len(turn.error_results()) == 1


@pytest.mark.parametrize("entry", [{"jsonPath": "$.serves"}, {"jsonPath": "$.serves", "stringValue": None},
                                   {"jsonPath": "$.serves", "willContinue": False}])
def test_partial_args_entry_without_a_value_fails_the_call(entry: dict[str, Any]) -> None:
    events = partial_stream()
    events.insert(2, b.gemini_chunk([{"functionCall": {"partialArgs": [entry], "willContinue": True}}]))
    turn = run(events, provider="gemini")
    assert [(c.state, c.reason) for c in turn.calls] == [(CallState.failed, Reason.upstream_error)]
    assert any("no value" in a for a in turn.anomalies)


@pytest.mark.parametrize("null", [{"nullValue": "NULL_VALUE"}, {"nullValue": None}])
def test_partial_args_null_value_is_json_null(null: dict[str, Any]) -> None:
    events = b.gemini([b.Call(id="g1", name="f", arguments='{"a":"x"}')], mode="partial")
    events.insert(2, b.gemini_chunk([{"functionCall": {"partialArgs": [{"jsonPath": "$.b", **null}],
                                                       "willContinue": True}}]))
    turn = run(events, provider="gemini")
    assert [(c.state, c.arguments) for c in turn.calls] == [(CallState.committed, {"a": "x", "b": None})]


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_a_call_still_declared_to_continue_when_the_stream_finishes_fails(mode: str) -> None:
    from toolstream_core import AssembleConfig

    events = partial_stream()
    events = [e for e in events if e["candidates"][0]["content"]["parts"] != [{"functionCall": {}}]]
    if mode == "lenient":
        events = events[:-1]  # no finish reason either: lenient would otherwise commit it
    turn = run(events, provider="gemini", config=AssembleConfig(mode=mode))  # type: ignore[arg-type]
    assert [(c.state, c.reason) for c in turn.calls] == [(CallState.failed, Reason.stream_truncated)]
