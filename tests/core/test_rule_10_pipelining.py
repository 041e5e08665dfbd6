"""Rule 10, pipelining is opt-in (docs/DESIGN.md §4.10).

An early commit needs ``execute_before_stream_end``, a listed tool, and a vendor that closes
calls one by one (never OpenAI chat); once made it stands.
"""

from __future__ import annotations

from typing import Any

import builders as b
import pytest
from builders import ADD, PIPELINE, PROVIDERS, SEARCH, make, record_events, states
from toolstream_core import AssembleConfig, CallCommitted, CallState, Reason, ToolSpec, Turn


def _commit_points(provider: str, events: list[Any], **kwargs: Any) -> tuple[dict[str, int], Turn]:
    """For each call id, the position of the event after which it was committed (-1: at finish)."""
    assembler, seen = record_events(provider=provider, **kwargs)
    points: dict[str, int] = {}
    for position, event in enumerate(events):
        assembler.feed(event)
        for ev in seen:
            if isinstance(ev, CallCommitted) and ev.call.id not in points:
                points[ev.call.id] = position
    turn = assembler.finish()
    for ev in seen:
        if isinstance(ev, CallCommitted) and ev.call.id not in points:
            points[ev.call.id] = -1
    return points, turn


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule10_no_early_commit_without_the_flag(provider: str) -> None:
    config = AssembleConfig(allow_pipelined_execute=["add"])
    points, _ = _commit_points(provider, make(provider, [
        b.Call(id="c1", name="add", arguments=ADD),
        b.Call(id="c2", name="add", arguments=ADD),
    ]), config=config)
    assert points == {"c1": -1, "c2": -1}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule10_no_early_commit_for_unlisted_tools(provider: str) -> None:
    config = AssembleConfig(execute_before_stream_end=True, allow_pipelined_execute=["other"])
    points, _ = _commit_points(provider, make(provider, [
        b.Call(id="c1", name="add", arguments=ADD),
        b.Call(id="c2", name="add", arguments=ADD),
    ]), config=config)
    assert points == {"c1": -1, "c2": -1}


def test_rule10_never_for_openai_chat() -> None:
    points, turn = _commit_points("openai-chat", b.openai_chat([
        b.Call(id="c1", name="add", arguments=ADD),
        b.Call(id="c2", name="add", arguments=ADD),
    ]),
                                  config=PIPELINE, tools=[ToolSpec("add", pipelined=True)])
    assert points == {"c1": -1, "c2": -1}
    assert len(turn.committed) == 2


def test_rule10_anthropic_commits_after_the_next_block_starts_or_stop_reason_tool_use() -> None:
    events = b.anthropic([
        b.Call(id="t1", name="add", arguments=ADD, cuts=(3,)),
        b.Call(id="t2", name="search", arguments=SEARCH, cuts=(4,)),
    ])
    types = [e["type"] for e in events]
    points, turn = _commit_points("anthropic", events, config=PIPELINE)
    first_stop = types.index("content_block_stop")
    assert points["t1"] == first_stop + 1, "not at its own block stop: at the next block start"
    assert events[points["t1"]]["type"] == "content_block_start"
    assert events[points["t2"]]["type"] == "message_delta"  # stop_reason tool_use, before message_stop
    assert len(turn.committed) == 2 and turn.complete


def test_rule10_toolspec_pipelined_is_the_same_as_the_allow_list() -> None:
    events = b.anthropic([b.Call(id="t1", name="add", arguments=ADD), b.Call(id="t2", name="add", arguments=ADD)])
    config = AssembleConfig(execute_before_stream_end=True)
    points, _ = _commit_points("anthropic", events, config=config, tools=[ToolSpec("add", pipelined=True)])
    assert points["t1"] != -1 and points["t2"] != -1


def test_rule10_anthropic_last_block_waits_when_the_stop_is_not_tool_use() -> None:
    events = b.anthropic([b.Call(id="t1", name="add", arguments=ADD)], ending="truncated")
    points, turn = _commit_points("anthropic", events, config=PIPELINE)
    assert points == {}
    assert states(turn) == [("t1", CallState.failed, Reason.stream_truncated)]


def test_rule10_responses_commit_at_the_done_events() -> None:
    events = b.openai_responses([
        b.Call(id="c1", name="add", arguments=ADD, cuts=(3,)),
        b.Call(id="c2", name="search", arguments=SEARCH),
    ])
    points, _ = _commit_points("openai-responses", events, config=PIPELINE)
    assert events[points["c1"]]["type"] == "response.function_call_arguments.done"
    assert points["c1"] < points["c2"] < len(events) - 1


def test_rule10_gemini_commits_at_the_end_of_each_call() -> None:
    events = b.gemini([
        b.Call(id="g1", name="add", arguments=ADD, cuts=(1,)),
        b.Call(id="g2", name="search", arguments=SEARCH, cuts=(2,)),
    ], mode="partial", with_ids=True)
    points, _ = _commit_points("gemini", events, config=PIPELINE)
    assert events[points["g1"]]["candidates"][0]["content"]["parts"][0]["functionCall"] == {}
    assert points["g1"] < points["g2"] < len(events) - 1
    whole = b.gemini([
        b.Call(id="g1", name="add", arguments=ADD),
        b.Call(id="g2", name="add", arguments=ADD),
    ], with_ids=True)
    points, _ = _commit_points("gemini", whole, config=PIPELINE)
    assert (points["g1"], points["g2"]) == (0, 1)


def test_rule10_gemini_no_early_commit_when_its_own_chunk_reports_an_abnormal_stop() -> None:
    """Gemini 2.5 sends the parts and the finishReason in one chunk: the verdict is in hand."""
    events = b.gemini([
        b.Call(id="g1", name="add", arguments=ADD),
    ], together=True, finish_with_calls=True, finish_reason="SAFETY",
                      with_ids=True)
    assert len(events) == 1
    points, turn = _commit_points("gemini", events, config=PIPELINE)
    assert points == {}, "committed a call from a chunk that says SAFETY"
    assert states(turn) == [("g1", CallState.failed, Reason.upstream_error)]


def test_rule10_an_early_commit_stands_when_the_stream_is_cut_later() -> None:
    events = b.anthropic([
        b.Call(id="t1", name="add", arguments=ADD),
        b.Call(id="t2", name="add", arguments=ADD, cuts=(3,)),
    ], ending="none")[:-2]
    _, turn = _commit_points("anthropic", events, config=PIPELINE)
    assert states(turn) == [("t1", CallState.committed, None), ("t2", CallState.failed, Reason.stream_truncated)]
    assert turn.complete is False


def test_rule10_no_early_commit_after_an_error_was_seen() -> None:
    events = b.openai_responses([b.Call(id="c1", name="add", arguments=ADD)])
    events.insert(3, {"type": "error", "code": "server_error", "message": "boom", "param": None,
                      "sequence_number": 99})
    points, turn = _commit_points("openai-responses", events, config=PIPELINE)
    assert points == {}
    assert turn.calls[0].reason is Reason.upstream_error
