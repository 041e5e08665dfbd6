"""Every rule of docs/DESIGN.md §4-§5 on Bedrock ConverseStream (provider "bedrock-converse")."""

from __future__ import annotations

import json
from typing import Any

import pytest
from new_family_rules import PIPELINE, commit_points, outcome, run
from new_family_streams import bedrock
from toolstream_core import AssembleConfig

P = "bedrock-converse"
WEATHER = ["{\"city\": \"Zü", "rich\"}"]
TWO = [("tooluse_1", "get_weather", WEATHER), ("tooluse_2", "get_time", ["{}"])]


def test_rule1_calls_are_keyed_by_content_block_index() -> None:
    turn = run(bedrock(TWO), P)
    assert [(c.id, c.name, c.index, c.raw_arguments) for c in turn.committed] == [
        ("tooluse_1", "get_weather", 1, "{\"city\": \"Zürich\"}"), ("tooluse_2", "get_time", 2, "{}")]
    assert turn.complete and turn.finish_reason == "tool_use"


@pytest.mark.parametrize("form", ["boto3", "envelope", "auto-boto3", "auto-envelope"])
def test_rule1_boto3_events_and_the_raw_frame_envelope_read_the_same(form: str) -> None:
    events: list[Any] = bedrock(TWO)
    if form.endswith("envelope"):
        events = [{"event": name, "data": body} for e in events for name, body in e.items()]
    turn = run(events, None if form.startswith("auto") else P)
    assert turn.provider == P
    assert outcome(turn) == [("get_weather", "committed", None), ("get_time", "committed", None)]


@pytest.mark.parametrize(("stop", "reason"), [
    ("tool_use", None), ("end_turn", None), ("stop_sequence", None),
    ("max_tokens", "stream_truncated"), ("model_context_window_exceeded", "stream_truncated"),
    ("guardrail_intervened", "upstream_error"), ("content_filtered", "upstream_error"),
    ("malformed_tool_use", "upstream_error"), ("a_stop_nobody_knows", "upstream_error"),
])
def test_rule4_stop_reason_table(stop: str, reason: str | None) -> None:
    turn = run(bedrock(TWO, stop), P)
    assert {c.reason.value if c.reason else None for c in turn.calls} == {reason}


def test_rule4_a_stream_without_message_stop_is_truncated() -> None:
    turn = run(bedrock(TWO, None, usage=None), P)
    assert {c.reason.value for c in turn.rejected} == {"stream_truncated"} and len(turn.rejected) == 2


def test_rule4_a_message_stop_with_no_reason_proves_nothing() -> None:
    events = [*bedrock(TWO, None, usage=None), {"messageStop": {}}]
    assert {c.reason.value for c in run(events, P).rejected} == {"stream_truncated"}


def test_rule4_dropped_transport_is_truncated() -> None:
    turn = run(bedrock(TWO), P, transport_complete=False)
    assert [c.reason.value for c in turn.rejected] == ["stream_truncated"] * 2


@pytest.mark.parametrize("name", ["modelStreamErrorException", "internalServerException",
                                  "throttlingException", "validationException",
                                  "serviceUnavailableException"])
def test_rule4_exception_events_are_upstream_errors(name: str) -> None:
    events = bedrock(TWO)
    events.insert(-2, {name: {"message": "boom"}})
    turn = run(events, P)
    assert [c.reason.value for c in turn.rejected] == ["upstream_error"] * 2


def test_rule4_botocore_event_stream_error_is_an_upstream_error() -> None:
    exceptions = pytest.importorskip("botocore.exceptions")
    error = exceptions.EventStreamError(
        {"Error": {"Code": "throttlingException", "Message": "slow down"}}, "ConverseStream")
    turn = run(bedrock(TWO, None, usage=None), P, transport_complete=False, error=error)
    assert [c.reason.value for c in turn.rejected] == ["upstream_error"] * 2


def test_rule4_backstop_output_tokens_at_the_limit_is_a_cut() -> None:
    turn = run(bedrock(TWO, usage=64), P, max_output_tokens=64)
    assert [c.reason.value for c in turn.rejected] == ["stream_truncated"] * 2


def test_rule6_half_json_is_never_repaired() -> None:
    turn = run(bedrock([("t1", "get_weather", ["{\"city\": \"Par"])]), P)
    assert outcome(turn) == [("get_weather", "failed", "invalid_json")]


def test_rule7_a_block_sent_again_with_the_same_id_commits_once() -> None:
    events = bedrock([("t1", "get_weather", WEATHER)])
    again = [e for e in events if "contentBlockStart" in e or "toolUse" in str(e) or "contentBlockStop" in e]
    again = [e for e in again if json.dumps(e).find("\"contentBlockIndex\": 1") != -1]
    turn = run(events[:-2] + again + events[-2:], P)
    assert outcome(turn) == [("get_weather", "committed", None)]


def test_rule7_a_block_sent_again_differently_is_a_conflict() -> None:
    events = bedrock([("t1", "get_weather", WEATHER)])
    events[-2:-2] = [
        {"contentBlockStart": {"contentBlockIndex": 1,
                               "start": {"toolUse": {"toolUseId": "t1", "name": "get_weather"}}}},
        {"contentBlockDelta": {"contentBlockIndex": 1, "delta": {"toolUse": {"input": "{\"city\": \"Bern\"}"}}}},
        {"contentBlockStop": {"contentBlockIndex": 1}},
    ]
    assert outcome(run(events, P)) == [("get_weather", "failed", "duplicate_conflict")]


def test_rule8_argument_bytes_are_bounded() -> None:
    turn = run(bedrock([("t1", "get_weather", ["{\"city\": \"", "x" * 100, "\"}"])]), P,
               config=AssembleConfig(max_tool_argument_bytes=50))
    assert outcome(turn) == [("get_weather", "failed", "arguments_exceed_max_bytes")]


def test_rule9_every_rejected_call_gets_one_result() -> None:
    turn = run(bedrock(TWO, "max_tokens"), P)
    assert [r.tool_call_id for r in turn.error_results()] == ["tooluse_1", "tooluse_2"]


def test_rule10_a_block_settles_when_the_next_block_starts() -> None:
    events = bedrock([("t1", "get_weather", WEATHER), ("t2", "get_weather", ["{}"])])
    points = commit_points(events, P, config=PIPELINE)
    starts = [i for i, e in enumerate(events) if "contentBlockStart" in e]
    stop = next(i for i, e in enumerate(events) if "messageStop" in e)
    assert points == {"t1": starts[1], "t2": stop}


def test_rule10_nothing_is_pipelined_without_the_flag() -> None:
    events = bedrock([("t1", "get_weather", WEATHER), ("t2", "get_weather", ["{}"])])
    assert commit_points(events, P) == {"t1": -1, "t2": -1}


def test_rule11_server_tool_use_blocks_are_server_calls() -> None:
    events = bedrock([("t1", "web_search", ["{\"q\": \"x\"}"])])
    events[3]["contentBlockStart"]["start"]["toolUse"]["type"] = "server_tool_use"
    turn = run(events, P)
    assert not turn.calls and [s.name for s in turn.server_calls] == ["web_search"]


def test_rule5_1_tool_input_for_a_block_that_started_no_call_fails_every_live_call() -> None:
    events = bedrock(TWO)
    events.insert(5, {"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"toolUse": {"input": "{}"}}}})
    # the first call was live then; the second started later and is not touched
    assert outcome(run(events, P)) == [("get_weather", "failed", "upstream_error"),
                                       ("get_time", "committed", None)]


@pytest.mark.parametrize(("path", "value", "expect"), [
    (("start", "toolUse", "toolUseId"), 7,
     [("get_weather", "failed", "upstream_error"), ("get_time", "committed", None)]),
    (("start", "toolUse", "name"), ["x"], [(None, "failed", "upstream_error"), ("get_time", "committed", None)]),
    (("start",), "x", [("get_time", "committed", None)]),
])
def test_rule5_2_mistyped_identity_fails_the_call_it_names(path: tuple[str, ...], value: Any,
                                                             expect: list[Any]) -> None:
    events = bedrock(TWO)
    node = events[3]["contentBlockStart"]
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    assert outcome(run(events, P)) == expect


def test_rule5_2_mistyped_input_fails_its_call() -> None:
    events = bedrock(TWO)
    events[4]["contentBlockDelta"]["delta"]["toolUse"]["input"] = 42
    assert outcome(run(events, P))[0] == ("get_weather", "failed", "upstream_error")


@pytest.mark.parametrize("garbage", [None, [], "x", 7, {}, b"{}", {"contentBlockStop": {"contentBlockIndex": "1"}},
                                     {"contentBlockDelta": None}])
def test_rule5_2_garbage_never_raises_and_fails_what_it_could_touch(garbage: Any) -> None:
    events = bedrock(TWO)
    events.insert(5, garbage)
    turn = run(events, P)
    assert turn.committed == () or all(c.name == "get_time" for c in turn.committed)
    assert turn.calls[0].reason is not None and turn.calls[0].reason.value == "upstream_error"


def test_rule5_2_an_unknown_event_kind_is_ignored() -> None:
    events = bedrock(TWO)
    events.insert(2, {"newKindOfEvent": {"x": 1}})
    assert outcome(run(events, P)) == outcome(run(bedrock(TWO), P))


def test_metadata_after_message_stop_is_read() -> None:
    turn = run(bedrock(TWO, usage=100), P, max_output_tokens=100)
    assert not turn.committed


def test_rule8_one_byte_fragments_assemble_in_linear_time() -> None:
    """256 KiB of toolUse input in 1-byte deltas; a quadratic buffer misses the deadline."""
    from test_linearity import deadline

    size = 256 * 1024
    events = bedrock([("t1", "write", ["{\"d\": \"", *("x" * size), "\"}"])], text=False)
    with deadline(120):
        turn = run(events, P, config=AssembleConfig(max_tool_argument_bytes=size + 64))
    assert len(turn.committed[0].arguments["d"]) == size
