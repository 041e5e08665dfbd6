"""``plan_history`` / ``plan_request``: the outgoing history both shims send, planned once over
neutral entries (DESIGN §6). The shims only convert their messages and apply the edits; these
tests pin the plan itself, and a property test checks that a repaired plan always passes the
``unanswered`` rule of ``check_entries``."""

from __future__ import annotations

import logging

import pytest
from hypothesis import given
from hypothesis import strategies as st
from toolstream_core._history import check_entries, plan_history, plan_request
from toolstream_core._results import unanswered_text
from toolstream_core.integration import HistoryCall, HistoryEntry, HistoryError

LOG = logging.getLogger("test")
USER = HistoryEntry("user")


def assistant(*ids: str, errors: tuple[str, ...] = (), hidden: tuple[str, ...] = (),
              signed: bool = False, **kw: bool) -> HistoryEntry:
    calls = tuple(HistoryCall(i, f"tool_{i}", signed, shown=i not in hidden) for i in ids)
    return HistoryEntry("assistant", calls, errors=errors, **kw)


def tool(ident: str) -> HistoryEntry:
    return HistoryEntry("tool", answers=ident)


def ops(entries: list[HistoryEntry], provider: str | None = "openai-chat",
        repair: bool = True) -> list[tuple[str, int, str | None]]:
    plan = plan_history(entries, provider, repair=repair)
    return [(e.op, e.index, e.call_id) for e in plan.edits]


def test_a_legal_history_is_kept_as_it_is() -> None:
    entries = [USER, assistant("a", "b"), tool("a"), tool("b"), HistoryEntry("assistant")]
    plan = plan_history(entries, "openai-chat")
    assert not plan.changed and plan.entries == tuple(entries)
    assert [(e.op, e.index) for e in plan.edits] == [("keep", n) for n in range(5)]


def test_results_follow_the_calls_order_and_a_second_answer_is_left_out() -> None:
    entries = [USER, assistant("a", "b"), tool("b"), tool("a"), tool("b")]
    assert ops(entries) == [("keep", 0, None), ("keep", 1, None), ("keep", 3, None),
                            ("keep", 2, None)]
    assert plan_history(entries, "openai-chat").changed


def test_each_unanswered_id_gets_its_own_error_else_no_result() -> None:
    entries = [USER, assistant("a", "b", "c", errors=("b",)), tool("c")]
    plan = plan_history(entries, "anthropic")
    assert [(e.op, e.call_id) for e in plan.edits[2:]] == [
        ("no_result", "a"), ("error", "b"), ("keep", None)]
    no_result = plan.edits[2]
    assert no_result.index == 1 and no_result.name == "tool_a"
    assert no_result.content == unanswered_text("tool_a", "a")
    assert check_entries(plan.entries, "anthropic") == []


def test_gemini_never_sees_ids_so_no_text_quotes_one() -> None:
    plan = plan_history([USER, assistant("a")], "gemini")
    assert plan.edits[-1].content == unanswered_text("tool_a", "a", quote_id=False)
    assert "(id a)" not in (plan.edits[-1].content or "")


def test_without_repair_only_the_gates_own_errors_are_added() -> None:
    entries = [USER, assistant("a", "b", errors=("b",), gated=True), assistant("c")]
    assert ops(entries, repair=False) == [("keep", 0, None), ("keep", 1, None),
                                          ("error", 1, "b"), ("keep", 2, None)]


def test_answers_to_other_messages_stay_after_the_results() -> None:
    entries = [USER, assistant("a"), tool("x"), tool("a")]
    assert ops(entries) == [("keep", 0, None), ("keep", 1, None), ("keep", 3, None),
                            ("keep", 2, None)]


def test_an_answered_call_the_class_does_not_send_is_shown() -> None:
    entries = [USER, assistant("a", "b", errors=("b",), hidden=("b",))]
    plan = plan_history(entries, "gemini")
    assert (plan.edits[1].op, plan.edits[1].shown) == ("show", ("b",))
    assert all(call.shown for call in plan.entries[1].calls)


def test_a_paused_turn_goes_back_without_its_client_calls_and_unanswered() -> None:
    entries = [USER, assistant("a", paused=True)]
    plan = plan_history(entries, "anthropic")
    assert [(e.op, e.index) for e in plan.edits] == [("keep", 0), ("paused", 1)]
    assert plan.entries[1].calls == () and check_entries(plan.entries, "anthropic") == []


def test_check_raises_for_what_only_the_model_could_fix() -> None:
    entries = [USER, assistant("a", reasoning=True, reasoning_first=True), tool("a"),
               assistant("b")]
    with pytest.raises(HistoryError, match="thinking"):
        plan_request(entries, "anthropic", "check", log=LOG)
    plan = plan_request(entries, "anthropic", "repair", log=LOG)  # repaired, not refused
    assert plan.edits[-1].op == "no_result"
    assert plan_request(entries, "anthropic", "check", log=LOG,
                        exempt={"missing_thinking"}).edits == plan.edits


def test_an_appended_user_message_is_checked_not_planned() -> None:
    entries = [USER, assistant("a", signed=True), tool("a"), assistant("b"), tool("b")]
    plan_request(entries, "gemini", "check", log=LOG, appended=[USER])  # a new turn: fine
    with pytest.raises(HistoryError):
        plan_request(entries, "gemini", "check", log=LOG)


def test_an_unknown_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="history must be"):
        plan_request([USER], None, "fix", log=LOG)  # type: ignore[arg-type]


_ids = st.sampled_from(["a", "b", "c", "d"])
_entries = st.lists(st.one_of(
    st.just(USER),
    st.builds(lambda ids, errs, gated, paused: HistoryEntry(
        "assistant", tuple(HistoryCall(i) for i in dict.fromkeys(ids)),
        errors=tuple(errs), gated=gated, paused=paused),
        st.lists(_ids, max_size=3), st.lists(_ids, max_size=2), st.booleans(), st.booleans()),
    st.builds(tool, _ids),
), max_size=12)


@given(_entries, st.sampled_from(["openai-chat", "anthropic", "gemini", None]))
def test_a_repaired_plan_answers_every_call_once_right_after_it(
        entries: list[HistoryEntry], provider: str | None) -> None:
    plan = plan_history(entries, provider)
    assert check_entries(plan.entries, provider, reasoning=False) == []
    for index, entry in enumerate(plan.entries):
        if entry.role == "assistant" and entry.calls:
            answers = []
            for later in plan.entries[index + 1:]:
                if later.role != "tool":
                    break
                answers.append(later.answers)
            ids = [c.id for c in entry.calls]
            assert answers[:len(ids)] == ids  # one each, in the calls' order, first
    assert not plan_history(plan.entries, provider).changed  # a planned history stays as it is
