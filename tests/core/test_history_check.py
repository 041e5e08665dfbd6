"""``check_entries``: the outgoing-history rules both shims share (DESIGN §6)."""

from __future__ import annotations

import pytest
from toolstream_core import Assembler
from toolstream_core._history import check_entries
from toolstream_core.integration import HistoryCall, HistoryEntry, HistoryError, turn_record

USER = HistoryEntry("user")


def assistant(*ids: str, **kw: bool) -> HistoryEntry:
    signed = kw.pop("signed", False)
    return HistoryEntry("assistant", tuple(HistoryCall(i, "get_weather", signed) for i in ids), **kw)


def tool(ident: str) -> HistoryEntry:
    return HistoryEntry("tool", answers=ident)


def test_an_answered_history_has_no_problem() -> None:
    entries = [USER, assistant("a", "b"), tool("b"), tool("a"), HistoryEntry("assistant")]
    assert check_entries(entries, "openai-chat") == []


def test_an_unanswered_id_is_the_only_repairable_problem() -> None:
    problems = check_entries([USER, assistant("a", "b"), tool("a"), USER], "anthropic")
    assert [(p.kind, p.index, p.call_id, p.repairable) for p in problems] == [
        ("unanswered", 1, "b", True)]


def test_a_result_after_another_message_does_not_answer() -> None:
    problems = check_entries([USER, assistant("a"), USER, tool("a")], "openai-chat")
    assert [p.call_id for p in problems] == ["a"]


def test_anthropic_thinking_must_precede_the_tool_use_of_the_current_loop() -> None:
    earlier = assistant("a")  # an earlier turn may lose its thinking: Anthropic strips it
    entries = [USER, earlier, tool("a"), USER, assistant("b"), tool("b")]
    assert check_entries(entries, "anthropic") == []  # thinking off: nothing to check
    problems = check_entries(entries, "anthropic", reasoning=True)
    assert [(p.kind, p.index, p.repairable) for p in problems] == [("missing_thinking", 4, False)]
    fixed = [*entries[:4], assistant("b", reasoning=True, reasoning_first=True), tool("b")]
    assert check_entries(fixed, "anthropic", reasoning=True) == []


def test_thinking_is_inferred_from_the_history() -> None:
    entries = [USER, assistant("a", reasoning=True, reasoning_first=True), tool("a"),
               assistant("b"), tool("b")]
    assert [p.index for p in check_entries(entries, "anthropic")] == [3]


def test_responses_reasoning_items_only_matter_when_nothing_is_stored() -> None:
    entries = [USER, assistant("a", reasoning=True), tool("a"), assistant("b"), tool("b")]
    assert check_entries(entries, "openai-responses") == []
    problems = check_entries(entries, "openai-responses", stored=False)
    assert [(p.kind, p.call_id) for p in problems] == [("missing_reasoning", "b")]


def test_gemini_first_call_of_each_step_keeps_its_signature() -> None:
    entries = [USER, assistant("a", "b", signed=True), tool("a"), tool("b"),
               assistant("c"), tool("c")]
    problems = check_entries(entries, "gemini")
    assert [(p.kind, p.index) for p in problems] == [("missing_thought_signature", 4)]
    assert check_entries(entries, "openai-chat") == []  # another vendor: no such rule


def test_history_error_names_every_problem() -> None:
    problems = check_entries([USER, assistant("a"), assistant("b")], "openai-chat")
    error = HistoryError(problems, "openai-chat")
    assert isinstance(error, ValueError) and error.problems == problems
    assert "message 1" in str(error) and "message 2" in str(error) and "openai-chat" in str(error)


@pytest.mark.parametrize("first_cut", [True, False])
def test_the_record_keeps_the_calls_order(first_cut: bool) -> None:
    """Committed and rejected calls are listed apart; ``order`` keeps the model's order."""
    assembler = Assembler(provider="anthropic")
    events = [{"type": "message_start", "message": {"id": "m", "content": []}}]
    for index, ident in enumerate(("toolu_a", "toolu_b")):
        text = '{"city":"Par' if (index == 0) == first_cut else '{"city":"Rome"}'
        events += [
            {"type": "content_block_start", "index": index,
             "content_block": {"type": "tool_use", "id": ident, "name": "get_weather", "input": {}}},
            {"type": "content_block_delta", "index": index,
             "delta": {"type": "input_json_delta", "partial_json": text}},
            {"type": "content_block_stop", "index": index},
        ]
    events += [{"type": "message_delta", "delta": {"stop_reason": "tool_use"}},
               {"type": "message_stop"}]
    for event in events:
        assembler.feed(event)
    record = turn_record(assembler.finish(), mode="tap")
    assert record["order"] == ["toolu_a", "toolu_b"]
    assert len(record["rejected"]) == 1 and len(record["committed"]) == 1
