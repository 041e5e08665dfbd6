"""``view_record``: the decision record read once, the one reading every shim and the run
policy share (entries by the id each error answers, order, paused and gated flags)."""

from __future__ import annotations

from typing import Any

from toolstream_core import Assembler
from toolstream_core._decision import view_record
from toolstream_core.integration import RecordView, turn_record
from toolstream_core.testing import TOOLS


def _record(**changes: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "version": 1, "mode": "tap", "provider": "anthropic", "complete": True,
        "finish_reason": "tool_use", "error": None,
        "committed": [{"id": "a", "name": "get_time"}, {"id": None, "name": "ghost"}],
        "rejected": [{"id": None, "name": "write_file", "tool_call_id": "toolstream_1",
                      "kind": "function", "output_type": None, "reason": "cancelled",
                      "detail": None, "args": "{}", "content": "x", "state": "cancelled"}],
        "dropped": [], "server_calls": [], "anomalies": 0, "order": ["a", "toolstream_1"],
    }
    record.update(changes)
    return record


def test_the_view_indexes_what_the_record_says() -> None:
    view = view_record(_record())
    assert isinstance(view, RecordView)
    assert view.committed == ("a",)  # an id-less committed call cannot run
    assert view.error_ids == ("toolstream_1",)  # keyed on the id the error answers
    assert view.order == ("a", "toolstream_1")
    assert view.gated and not view.paused and view.cancelled
    assert view.names() == {"a": "get_time", "toolstream_1": "write_file"}
    assert view.provider == "anthropic"


def test_a_paused_turn_and_an_old_record_read_as_such() -> None:
    paused = view_record(_record(finish_reason="pause_turn", committed=[], rejected=[]))
    assert paused is not None and paused.paused and not paused.gated and not paused.cancelled
    old = _record()
    del old["order"]
    view = view_record(old)
    assert view is not None and view.order == ()


def test_anything_else_is_no_record() -> None:
    assert view_record(None) is None
    assert view_record({"committed": []}) is None
    assert view_record("toolstream") is None


def test_a_turn_decided_by_the_core_reads_back_through_the_view() -> None:
    """A real turn: one call committed, one cut off, the record built by ``turn_record``."""
    assembler = Assembler(provider="openai-chat", tools=TOOLS)
    for chunk in _chat_chunks():
        assembler.feed(chunk)
    turn = assembler.finish()
    view = view_record(turn_record(turn, mode="chunks"))
    assert view is not None
    assert view.committed == tuple(c.id for c in turn.committed if c.id)
    assert view.error_ids == tuple(r.tool_call_id for r in turn.error_results())
    assert set(view.order) == {*view.committed, *view.error_ids}


def _chat_chunks() -> list[dict[str, Any]]:
    def delta(index: int, **call: Any) -> dict[str, Any]:
        return {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": index, **call}]},
                             "finish_reason": None}]}
    return [
        delta(0, id="c1", type="function", function={"name": "get_time", "arguments": "{}"}),
        delta(1, id="c2", type="function", function={"name": "write_file", "arguments": '{"pa'}),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]


def _rejected(ident: str, reason: str) -> dict[str, Any]:
    return {"id": ident, "name": "get_weather", "tool_call_id": ident, "kind": "function",
            "output_type": None, "reason": reason, "detail": None, "args": "{}",
            "content": "x", "state": "failed"}


def test_malformed_calls_are_those_the_model_malformed_in_a_finished_turn() -> None:
    """What a framework already holds as an invalid call (issue 36): arguments that are not a
    JSON object, no id or name, in a turn the vendor finished; never a cut or a schema miss."""
    rejected = [_rejected("j", "invalid_json"), _rejected("o", "arguments_not_object"),
                _rejected("m", "missing_id_or_name"), _rejected("s", "schema_violation"),
                _rejected("u", "unknown_tool")]
    finished = view_record(_record(committed=[], rejected=rejected))
    assert finished is not None and finished.malformed == ("j", "o", "m")
    cut = view_record(_record(committed=[], rejected=rejected, complete=False,
                              finish_reason="length", end_reason="stream_truncated"))
    assert cut is not None and cut.malformed == ()


def test_a_turn_is_cut_short_unless_the_vendor_ended_it() -> None:
    """The gate judges a structured output only from a turn cut short; one the vendor ended
    itself (a refusal, a content filter) is whole, whatever it says."""
    def cut(**changes: Any) -> bool:
        view = view_record(_record(**changes))
        assert view is not None
        return view.cut_short

    assert not cut()
    assert not cut(complete=False, finish_reason="content_filter", end_reason="upstream_error")
    assert not cut(complete=False, finish_reason="content_filter", end_reason="upstream_error",
                   error="ContentFilterFinishReasonError: rejected")
    assert cut(complete=False, finish_reason="length", end_reason="stream_truncated")
    assert cut(complete=False, finish_reason=None, end_reason="stream_truncated")
    assert cut(complete=False, finish_reason=None, end_reason="upstream_error",
               error="RemoteProtocolError: peer closed")
    assert cut(complete=False, finish_reason=None, end_reason="idle_timeout")
