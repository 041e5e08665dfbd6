"""Rule 2, first write wins (docs/DESIGN.md §4.2).

For id and name the first non-empty value sticks: an empty string never overwrites, a
repeated equal value is never concatenated, and a different second value is ignored.
"""

from __future__ import annotations

import builders as b
from builders import SEARCH, run
from toolstream_core import CallState


def test_rule2_chat_empty_id_and_name_on_later_chunks_never_overwrite() -> None:
    turn = run(b.openai_chat([b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(3, 9, 14))], identity="blank"),
               provider="openai-chat")
    assert [(c.id, c.name, c.raw_arguments, c.state) for c in turn.calls] == [
        ("call_1", "search", SEARCH, CallState.committed)]


def test_rule2_chat_id_and_name_repeated_on_every_chunk_are_not_concatenated() -> None:
    turn = run(b.openai_chat([b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(3, 9, 14))], identity="every"),
               provider="openai-chat")
    assert [(c.id, c.name, c.raw_arguments) for c in turn.calls] == [("call_1", "search", SEARCH)]


def test_rule2_chat_a_second_name_for_a_known_call_is_ignored() -> None:
    events = b.openai_chat([b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(5,))])
    events.insert(-1, {**events[0], "choices": [{"index": 0, "finish_reason": None, "delta": {"tool_calls": [
        {"index": 0, "id": "call_1", "function": {"name": "delete_everything", "arguments": ""}}]}}]})
    turn = run(events, provider="openai-chat")
    assert [(c.id, c.name, c.raw_arguments) for c in turn.calls] == [("call_1", "search", SEARCH)]


def test_rule2_responses_done_item_cannot_rename_a_call() -> None:
    events = b.openai_responses([b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(5,))])
    for event in events:
        if event["type"] == "response.output_item.done":
            event["item"] = {**event["item"], "call_id": "call_other", "name": "delete_everything"}
    turn = run(events, provider="openai-responses")
    assert [(c.id, c.name) for c in turn.calls] == [("call_1", "search")]


def test_rule2_responses_empty_name_on_added_then_real_name_fills_it() -> None:
    events = b.openai_responses([b.Call(id="call_1", name="search", arguments=SEARCH)])
    events[2]["item"] = {**events[2]["item"], "name": "", "call_id": ""}
    turn = run(events, provider="openai-responses")
    assert [(c.id, c.name, c.state) for c in turn.calls] == [("call_1", "search", CallState.committed)]
