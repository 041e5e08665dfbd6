"""DESIGN §6, structured output: a structured output is an object only from an output proven finished.

The judges (``StructuredOutput.judge_text`` / ``judge_call``, in ``toolstream_core._structured``) read the turn's
decision record, as both shims keep it, so every case here goes through a real ``Turn`` built
from vendor events and its ``turn_record``.
"""

from __future__ import annotations

import pickle
from typing import Any

import builders as b
import pytest
from toolstream_core import Reason, ToolSpec, Turn
from toolstream_core._structured import judge_call, judge_text
from toolstream_core.integration import StructuredOutputError, turn_record
from toolstream_core.testing import _vendor_events as ve

FORECAST = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city", "days"],
    "additionalProperties": False,
}
_BASE = ve.chat_base("chatcmpl-1", "gpt-4.1-mini")


def chat_text(text: str, finish: str | None = "stop") -> list[dict[str, Any]]:
    """A chat stream answering ``text`` in three pieces, then ``finish`` (``None``: none)."""
    pieces = [text[:5], text[5:11], text[11:]]
    events = [ve.chat_chunk(_BASE, ve.chat_role_delta(""))]
    events += [ve.chat_chunk(_BASE, {"content": p}) for p in pieces if p]
    if finish is not None:
        events.append(ve.chat_chunk(_BASE, {}, finish))
    return events


def anthropic_text(text: str, stop: str) -> list[dict[str, Any]]:
    usage = {"input_tokens": 5, "output_tokens": 1}
    return [{"type": "message_start", "message": ve.anthropic_message("msg_1", "claude", usage)},
            ve.anthropic_block_start(0, {"type": "text", "text": ""}),
            ve.anthropic_text_delta(0, text), ve.anthropic_block_stop(0),
            ve.anthropic_message_delta(stop, usage), {"type": "message_stop"}]


def gemini_text(text: str, finish: str) -> list[dict[str, Any]]:
    return [ve.gemini_chunk([{"text": text}], model="gemini-2.5-flash", finish=finish)]


def record(events: list[dict[str, Any]], provider: str, **kwargs: Any) -> Any:
    turn: Turn = b.run(events, provider=provider, **kwargs)
    return turn_record(turn, mode="tap")


COMPLETE = '{"city": "Paris", "days": 10}'
CUT = '{"city": "Paris", "days": 1'


@pytest.mark.parametrize(("provider", "events"), [
    ("openai-chat", chat_text(COMPLETE)),
    ("anthropic", anthropic_text(COMPLETE, "end_turn")),
    ("gemini", gemini_text(COMPLETE, "STOP")),
])
def test_a_finished_json_text_gives_its_object(provider: str, events: list[Any]) -> None:
    assert judge_text(record(events, provider), COMPLETE, schema=FORECAST) == {
        "city": "Paris", "days": 10}


@pytest.mark.parametrize(("provider", "events"), [
    ("openai-chat", chat_text(COMPLETE, "length")),
    ("anthropic", anthropic_text(COMPLETE, "max_tokens")),
    ("gemini", gemini_text(COMPLETE, "MAX_TOKENS")),
])
def test_a_json_text_cut_by_the_token_limit_is_cut_even_where_it_parses(
        provider: str, events: list[Any]) -> None:
    with pytest.raises(StructuredOutputError) as caught:
        judge_text(record(events, provider), COMPLETE, schema=FORECAST)
    assert caught.value.reason is Reason.stream_truncated
    assert caught.value.raw == COMPLETE and caught.value.call_id is None
    assert "stream_truncated" in str(caught.value)


def test_a_text_whose_stream_dropped_is_cut() -> None:
    events = chat_text(CUT, finish=None)
    with pytest.raises(StructuredOutputError) as caught:
        judge_text(record(events, "openai-chat", transport_complete=False), CUT)
    assert caught.value.reason is Reason.stream_truncated


def test_a_vendor_error_finish_is_upstream_error() -> None:
    with pytest.raises(StructuredOutputError) as caught:
        judge_text(record(chat_text(COMPLETE, "content_filter"), "openai-chat"), COMPLETE)
    assert caught.value.reason is Reason.upstream_error


@pytest.mark.parametrize(("text", "reason"), [
    ('{"city": "Paris", "days": 1', Reason.invalid_json),
    ('{"city": "Paris", "city": "Rome", "days": 1}', Reason.invalid_json),  # one strict parse
    ('{"city": "Paris", "days": NaN}', Reason.invalid_json),
    ('{"city": "Paris", "days": "ten"}', Reason.schema_violation),
    ("", Reason.no_output),
    (None, Reason.no_output),
])
def test_a_finished_text_is_parsed_once_strictly_and_checked(text: str | None,
                                                             reason: Reason) -> None:
    rec = record(chat_text("x"), "openai-chat")
    with pytest.raises(StructuredOutputError) as caught:
        judge_text(rec, text, schema=FORECAST)
    assert caught.value.reason is reason and caught.value.raw == text


def test_the_framework_validator_builds_the_object_and_its_errors_are_schema_violations() -> None:
    rec = record(chat_text("x"), "openai-chat")

    def validate(value: Any) -> tuple[str, int]:
        if value["days"] > 7:
            raise ValueError("at most a week")
        return value["city"], value["days"]

    assert judge_text(rec, '{"city": "Oslo", "days": 2}', validate=validate) == ("Oslo", 2)
    with pytest.raises(StructuredOutputError) as caught:
        judge_text(rec, COMPLETE, validate=validate)
    assert caught.value.reason is Reason.schema_violation
    assert "at most a week" in caught.value.detail
    assert isinstance(caught.value.__cause__, ValueError)


def test_no_record_proves_nothing() -> None:
    with pytest.raises(StructuredOutputError) as caught:
        judge_text(None, COMPLETE)
    assert caught.value.reason is Reason.stream_truncated
    with pytest.raises(StructuredOutputError):
        judge_call(None, [("c1", "Forecast", {"city": "Paris", "days": 1})])


TOOLS = {"Forecast": ToolSpec("Forecast", FORECAST)}


def call_stream(arguments: str, ending: str = "finish") -> list[dict[str, Any]]:
    return b.openai_chat([b.Call(id="call_f", name="Forecast", arguments=arguments,
                                 cuts=(4, 9))], ending=ending)  # type: ignore[arg-type]


def test_a_committed_call_gives_its_object() -> None:
    turn = b.run(call_stream(COMPLETE), provider="openai-chat", tools=TOOLS)
    rec = turn_record(turn, mode="tap")
    committed = [(c.id, c.name, c.arguments) for c in turn.committed]
    assert judge_call(rec, committed, name="Forecast") == {"city": "Paris", "days": 10}


def test_a_cut_call_names_its_reason_id_and_raw_text() -> None:
    turn = b.run(call_stream(CUT, "truncated"), provider="openai-chat", tools=TOOLS)
    rec = turn_record(turn, mode="tap")
    raw = {"call_f": turn.calls[0].raw_arguments or ""}
    with pytest.raises(StructuredOutputError) as caught:
        judge_call(rec, [], name="Forecast", raw=raw)
    error = caught.value
    assert (error.reason, error.call_id, error.raw) == (Reason.stream_truncated, "call_f", CUT)
    with pytest.raises(StructuredOutputError) as without_raw:
        judge_call(rec, [], name="Forecast")
    assert without_raw.value.raw == "{}"  # what the history keeps of a cut call


def test_a_call_not_in_the_records_committed_list_does_not_count() -> None:
    turn = b.run(call_stream(CUT, "truncated"), provider="openai-chat", tools=TOOLS)
    repaired = [("call_f", "Forecast", {"city": "Paris", "days": 1})]  # what a repair makes
    with pytest.raises(StructuredOutputError) as caught:
        judge_call(turn_record(turn, mode="tap"), repaired, name="Forecast")
    assert caught.value.reason is Reason.stream_truncated


def test_a_turn_cut_before_any_call_and_a_turn_without_one() -> None:
    cut = record(chat_text("I will call", "length"), "openai-chat")
    with pytest.raises(StructuredOutputError) as caught:
        judge_call(cut, [], name="Forecast")
    assert caught.value.reason is Reason.stream_truncated and caught.value.call_id is None
    answered = record(chat_text("No call today."), "openai-chat")
    with pytest.raises(StructuredOutputError) as none:
        judge_call(answered, [], name="Forecast")
    assert none.value.reason is Reason.no_output and "'Forecast'" in none.value.detail


def test_the_error_survives_pickling() -> None:
    error = StructuredOutputError(Reason.invalid_json, "bad", call_id="c", raw="{")
    back = pickle.loads(pickle.dumps(error))
    assert (back.reason, back.detail, back.call_id, back.raw) == (Reason.invalid_json, "bad", "c", "{")
    assert str(back) == str(error)


def test_the_turn_and_record_say_why_a_turn_ended_early() -> None:
    turn = b.run(chat_text(CUT, "length"), provider="openai-chat")
    assert (turn.complete, turn.end_reason) == (False, Reason.stream_truncated)
    assert "length" in (turn.end_detail or "")
    rec = turn_record(turn, mode="tap")
    assert rec["end_reason"] == "stream_truncated"
    finished = b.run(chat_text(COMPLETE), provider="openai-chat")
    assert (finished.end_reason, finished.end_detail) == (None, None)
    assert turn_record(finished, mode="tap")["end_reason"] is None


def test_a_cancelled_turn_ends_cancelled() -> None:
    from toolstream_core import Assembler

    assembler = Assembler(provider="openai-chat")
    for event in chat_text(CUT, finish=None):
        assembler.feed(event)
    assembler.cancel("the user pressed stop")
    turn = assembler.finish(transport_complete=False)
    assert (turn.end_reason, turn.end_detail) == (Reason.cancelled, "the user pressed stop")


def test_judge_finished_asks_only_whether_the_turn_ended_normally() -> None:
    from toolstream_core._structured import judge_finished

    judge_finished(record(chat_text("Action: x"), "openai-chat"))  # ended normally: no error
    with pytest.raises(StructuredOutputError) as caught:
        judge_finished(record(chat_text("Action: x", "length"), "openai-chat"), raw="Action: x")
    assert (caught.value.reason, caught.value.raw) == (Reason.stream_truncated, "Action: x")


def test_rejected_arguments_are_keyed_by_the_id_their_result_answers() -> None:
    from toolstream_core._structured import rejected_arguments

    turn = b.run(call_stream(CUT, "truncated"), provider="openai-chat", tools=TOOLS)
    assert rejected_arguments(turn) == {"call_f": CUT}
    assert rejected_arguments(None) == {}
    whole = b.run(call_stream(COMPLETE), provider="openai-chat", tools=TOOLS)
    assert rejected_arguments(whole) == {}
