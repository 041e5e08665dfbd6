"""Arguments bound to the commit (``_binding``): the record's digest, reviews, old records."""

from __future__ import annotations

from typing import Any

from toolstream_core import AssembleConfig, Assembler, ToolSpec
from toolstream_core._binding import arguments_digest, binding_refusal, edit_problem
from toolstream_core.integration import RunPolicy, turn_record

WEATHER = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
           "additionalProperties": False}


def committed_entry(arguments: str = '{"city": "Paris", "days": 2.0}', **spec: Any) -> dict[str, Any]:
    """The record entry of one call the core committed from an Anthropic stream."""
    assembler = Assembler(tools=[ToolSpec("get_weather", None, **spec)], config=AssembleConfig())
    for event in [
        {"type": "message_start", "message": {"id": "m", "usage": {}}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": arguments}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
        {"type": "message_stop"},
    ]:
        assembler.feed(event)
    [entry] = turn_record(assembler.finish(), mode="tap")["committed"]
    return dict(entry)


def test_the_vendors_arguments_run_and_no_others() -> None:
    entry = committed_entry()
    assert binding_refusal(entry, "get_weather", {"days": 2, "city": "Paris"}) is None
    for name, arguments in [("get_weather", {"city": "Tokyo", "days": 2}),
                            ("get_weather", {"city": "Paris"}),
                            ("get_time", {"city": "Paris", "days": 2})]:
        refused = binding_refusal(entry, name, arguments)
        assert refused is not None and refused.reason == "arguments_changed"
        assert refused.content.endswith("[arguments_changed]")


def test_a_record_from_before_digests_is_checked_by_id_alone() -> None:
    entry = {"id": "toolu_1", "name": "get_weather"}
    assert binding_refusal(entry, "get_weather", {"city": "anything"}) is None


def test_a_sensitive_tool_keeps_its_masked_values_out_of_the_digest() -> None:
    entry = committed_entry('{"city": "Paris", "days": 2}', sensitive=("city",))
    assert entry["masked"] == ["city"]
    assert entry["digest"] == arguments_digest("get_weather", {"city": "***", "days": 2}, ("city",))
    assert binding_refusal(entry, "get_weather", {"city": "Oslo", "days": 2}) is None
    assert binding_refusal(entry, "get_weather", {"city": "Paris", "days": 3}) is not None


def test_an_edit_is_recorded_beside_the_vendors_call_and_the_first_review_stays() -> None:
    record = {"committed": [committed_entry()]}
    edit = ("get_weather", {"city": "Rome"})
    reviewed = RunPolicy.with_reviews(record, edits={"toolu_1": edit}, answered=())
    assert reviewed is not None
    [entry] = reviewed["committed"]
    assert entry["digest"] == record["committed"][0]["digest"]
    assert entry["review"] == {"decision": "edit", "name": "get_weather",
                               "digest": arguments_digest(*edit)}
    assert binding_refusal(entry, *edit) is None
    assert binding_refusal(entry, "get_weather", {"city": "Paris", "days": 2}) is None
    assert binding_refusal(entry, "get_weather", {"city": "Oslo"}) is not None
    # an edit the framework will substitute further in must be the recorded one
    assert binding_refusal(entry, "get_weather", {"city": "Paris", "days": 2},
                           pending_edit=edit) is None
    refused = binding_refusal(entry, "get_weather", {"city": "Paris", "days": 2},
                              pending_edit=("get_weather", {"city": "Oslo"}))
    assert refused is not None and refused.reason == "arguments_changed"
    assert RunPolicy.with_reviews(reviewed, edits={"toolu_1": ("get_weather", {"city": "Oslo"})},
                        answered=["toolu_1"]) is None


def test_an_unrecorded_edit_never_runs() -> None:
    entry = committed_entry()
    refused = binding_refusal(entry, "get_weather", {"city": "Paris", "days": 2},
                              pending_edit=("get_weather", {"city": "Paris", "days": 2}))
    assert refused is not None and refused.reason == "arguments_changed"


def test_a_rejected_call_never_runs_whatever_its_arguments() -> None:
    reviewed = RunPolicy.with_reviews({"committed": [committed_entry()]}, edits={}, answered=["toolu_1"])
    assert reviewed is not None
    [entry] = reviewed["committed"]
    assert entry["review"] == {"decision": "reject"}
    refused = binding_refusal(entry, "get_weather", {"city": "Paris", "days": 2})
    assert refused is not None and refused.reason == "human_rejected"
    assert refused.content.endswith("[human_rejected]")


def test_an_edit_is_judged_as_strictly_as_the_vendors_arguments() -> None:
    tools = {"get_weather": WEATHER}
    assert edit_problem("get_weather", {"city": "Rome"}, tools) is None
    for name, arguments, reason in [("get_weather", {"city": 5}, "schema_violation"),
                                    ("get_weather", {"town": "Rome"}, "schema_violation"),
                                    ("get_weather", ["Rome"], "arguments_not_object"),
                                    ("get_weather", {"city": float("nan")}, "invalid_json"),
                                    ("get_time", {}, "unknown_tool")]:
        refused = edit_problem(name, arguments, tools, call_id="c1")
        assert refused is not None and refused.reason == reason, (name, arguments)
        assert refused.content.endswith(f"[{reason}]")
