"""The decision record: a turn's verdict as plain JSON data, kept on the framework's message.

Both framework shims store this same shape under ``RECORD_KEY`` (LangChain:
``AIMessage.response_metadata``; LlamaIndex: ``ChatResponse.additional_kwargs`` and the
assistant message's ``additional_kwargs``), so pairing, auditing and retrying work from a
message that was serialised, checkpointed or loaded in another process. It is built here, once,
so the two shims cannot drift apart on the schema.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypedDict, cast

from ._binding import Review, bound_fields
from ._models import Reason, Turn

__all__ = [
    "PAUSE_TURN",
    "RECORD_KEY",
    "RECORD_VERSION",
    "CallEntry",
    "CommittedEntry",
    "DecisionRecord",
    "DroppedEntry",
    "RecordMode",
    "RecordView",
    "RejectedEntry",
    "as_record",
    "decides_calls",
    "history_args",
    "is_paused_turn",
    "rejected_ids",
    "turn_record",
    "view_record",
]

#: The key under which a shim keeps the record on a framework message.
RECORD_KEY = "toolstream"
#: Bumped when a field changes meaning or disappears (new fields do not bump it).
RECORD_VERSION = 1

#: How the shim saw the turn: the vendor's own events through an SDK tap (``tap``), the
#: framework's streamed chunks (``chunks``), a framework's raw chunk objects (``raw``), or one
#: complete, non-streamed response (``message``).
RecordMode = Literal["tap", "chunks", "raw", "message"]


class CallEntry(TypedDict):
    """A committed call, or a server-side call the client never runs."""

    id: str | None
    name: str | None


class _Bound(TypedDict, total=False):
    digest: str
    """The digest of the name and arguments the vendor finished (``_binding``): what the call
    may run with. Absent from records written before it existed (checked by id alone)."""
    masked: bool | list[str]
    """A sensitive tool's masked argument paths (``True``: all of them), left out of ``digest``."""
    review: Review
    """A human reviewer's decision on the call: ``edit`` (with the edit's digest) or
    ``reject``; absent when nobody reviewed it, or approved it as sent."""


class CommittedEntry(CallEntry, _Bound):
    """A committed call: what it may run with, and any human decision on it."""


class DroppedEntry(CallEntry):
    """A call the config removed from the history (``drop_with_protocol_repair``)."""

    reason: str | None


class RejectedEntry(CallEntry):
    """A call that must not run, with what the model is told about it."""

    tool_call_id: str
    """The id its error result answers: the vendor's, or the core's synthesized one for a
    call that arrived without an id (``id`` is then ``None``)."""
    kind: str
    """The call's kind: ``function``, ``custom``, or a Responses built-in the client runs
    (``computer``, ``local_shell``, ``shell``, ``apply_patch``, ``tool_search``,
    ``mcp_approval``)."""
    output_type: str | None
    """What answers it (``ErrorResult.output_type``): on Responses the input item type, e.g.
    ``function_call_output`` or ``computer_call_output``."""
    reason: str | None
    detail: str | None
    args: str
    content: str
    state: str


class _Optional(TypedDict, total=False):
    note: str
    """Why the shim could not judge the turn as it should (e.g. a model class whose end of
    turn it cannot read); present only then."""
    order: list[str]
    """Every client call's id (committed and rejected; the synthesized one for an id-less
    call) in the order the vendor made them, so results can follow the calls' order (Gemini
    pairs results by position). Absent from records written before it existed."""
    end_reason: str | None
    """Why the turn did not end normally (``Turn.end_reason``: ``stream_truncated``,
    ``upstream_error``, ...), ``None`` when it did; what a structured output that is not a
    call (a JSON text) is judged on. Absent from records written before it existed."""
    end_detail: str | None


class DecisionRecord(_Optional):
    """One turn's verdict (see ``docs/shims.md``)."""

    version: int
    mode: str
    provider: str | None
    complete: bool
    finish_reason: str | None
    error: str | None
    committed: list[CommittedEntry]
    rejected: list[RejectedEntry]
    dropped: list[DroppedEntry]
    server_calls: list[CallEntry]
    anomalies: int


def history_args(raw: str | None) -> str:
    """The argument text a rejected call keeps in the conversation history.

    The raw text when it is a JSON object (the model's own words, useful to it on retry);
    ``"{}"`` otherwise, because OpenAI-compatible servers (vLLM, SGLang, proxies) parse
    historical ``arguments`` and answer 400 to a truncated string, poisoning every retry.
    """
    if raw:
        try:
            if isinstance(json.loads(raw), dict):
                return raw
        except (ValueError, RecursionError):
            pass
    return "{}"


def _told(detail: str | None, reason: Reason | None, content: str) -> str | None:
    """The record's detail says no more than the model was told: a JSON parse message (it can
    quote the arguments) only where the error text carries it (DESIGN 4.9: not when argument
    text is private, never for a sensitive tool)."""
    if detail and reason is Reason.invalid_json and detail not in content:
        return None
    return detail


def turn_record(turn: Turn, *, mode: RecordMode, error: BaseException | None = None,
                note: str | None = None) -> DecisionRecord:
    """The JSON-safe summary of ``turn``: enough to pair every call id, audit and retry."""
    rejected: list[RejectedEntry] = []
    for call in turn.rejected:
        result = turn.result_for(call)
        assert result is not None  # exactly one result per rejected call (DESIGN §4.9)
        rejected.append({
            "id": call.id,
            "name": call.name,
            "tool_call_id": result.tool_call_id,
            "kind": call.kind,
            "output_type": result.output_type,
            "reason": str(call.reason) if call.reason else None,
            "detail": _told(call.detail, call.reason, result.content),
            "args": history_args(call.raw_arguments),
            "content": result.content,
            "state": str(call.state),
        })
    record: DecisionRecord = {
        "version": RECORD_VERSION,
        "mode": mode,
        "provider": turn.provider,
        "complete": turn.complete,
        "finish_reason": turn.finish_reason,
        "error": f"{type(error).__name__}: {error}" if error is not None else None,
        "committed": [cast(CommittedEntry, {"id": c.id, "name": c.name, **bound_fields(c)})
                      for c in turn.committed],
        "rejected": rejected,
        "dropped": [{"id": c.id, "name": c.name, "reason": str(c.reason) if c.reason else None}
                    for c in turn.dropped],
        "server_calls": [{"id": c.id, "name": c.name} for c in turn.server_calls],
        "anomalies": len(turn.anomalies),
        "order": _call_order(turn),
        "end_reason": str(turn.end_reason) if turn.end_reason is not None else None,
        "end_detail": turn.end_detail,
    }
    if note:
        record["note"] = note
    return record


def _call_order(turn: Turn) -> list[str]:
    """Every client call's answer id, in the vendor's order (the result's id for a rejected
    call: it may be the core's synthesized one)."""
    order: list[str] = []
    for call in turn.calls:
        result = turn.result_for(call)
        ident = result.tool_call_id if result is not None else call.id
        if ident:
            order.append(ident)
    return order


def as_record(value: Any) -> DecisionRecord | None:
    """``value`` (what a framework message holds under ``RECORD_KEY``) as a decision record, or
    ``None`` when it is not one: the one test both shims' ``read_record`` apply."""
    if isinstance(value, Mapping) and isinstance(value.get("rejected"), list):
        return cast(DecisionRecord, value)
    return None


#: The reasons of a call the model malformed (``RecordView.malformed``).
_MALFORMED = frozenset({Reason.invalid_json.value, Reason.arguments_not_object.value,
                        Reason.missing_id_or_name.value})

#: Anthropic's stop reason for a long server-tool turn it paused: the client sends the
#: assistant message back and the vendor continues the turn (DESIGN 6).
PAUSE_TURN = "pause_turn"


def is_paused_turn(record: DecisionRecord | None, stop_reason: Any = None) -> bool:
    """Whether a message is a turn the vendor paused: from its decision record when it has
    one, else from the stop reason the framework kept on it."""
    if record is not None:
        return record.get("finish_reason") == PAUSE_TURN
    return bool(stop_reason == PAUSE_TURN)


def decides_calls(record: DecisionRecord | None) -> bool:
    """Whether the gate decided calls of the message holding ``record`` (committed or not)."""
    return record is not None and bool(record.get("rejected") or record.get("committed"))


def rejected_ids(record: DecisionRecord) -> tuple[str, ...]:
    """The ids the record's error results answer, in its order (``tool_call_id``: the core's
    synthesized one for a call without an id)."""
    return tuple(str(entry.get("tool_call_id") or entry.get("id")) for entry in record["rejected"]
                 if entry.get("tool_call_id") or entry.get("id"))


@dataclass(frozen=True, slots=True)
class RecordView:
    """A decision record read once: what pairing, the history plan and the run policy ask of
    it, indexed, so no caller walks the record's lists again (and none keys a rejected call on
    its vendor ``id``, which is ``None`` for a call that arrived without one: its error answers
    ``tool_call_id``).

    ``committed``: the committed calls' ids in the vendor's order (an id-less committed call
    cannot run and is left out). ``rejected``: each rejected call's entry by the id its error
    result answers, in order. ``order``: every client call's answer id in the vendor's order
    (empty for a record written before ``order`` existed). ``paused``: Anthropic paused the
    turn (``pause_turn``). ``gated``: the gate decided calls of this message.
    """

    record: DecisionRecord
    committed: tuple[str, ...]
    rejected: Mapping[str, RejectedEntry]
    order: tuple[str, ...]
    paused: bool
    gated: bool

    @staticmethod
    def read(value: Any) -> RecordView | None:
        """``value`` (what a framework message holds under ``RECORD_KEY``) read once
        (``view_record``); ``None`` when it is not a record."""
        return view_record(value)

    @staticmethod
    def paused_stop(stop_reason: Any) -> bool:
        """Whether a message the gate did not decide (no record) is a turn the vendor paused,
        from the stop reason the framework kept on it (``is_paused_turn``)."""
        return is_paused_turn(None, stop_reason)

    @property
    def provider(self) -> str | None:
        return self.record.get("provider")

    def entry(self, call_id: str) -> CommittedEntry:
        """The committed entry of ``call_id`` (empty when it has none)."""
        found = next((e for e in self.record.get("committed") or [] if e.get("id") == call_id),
                     None)
        return found if found is not None else cast(CommittedEntry, {})

    @property
    def error_ids(self) -> tuple[str, ...]:
        """The ids the record's error results answer, in its order."""
        return tuple(self.rejected)

    @property
    def cancelled(self) -> bool:
        """Every call of the turn was rejected as cancelled: the user stopped it."""
        return bool(self.rejected) and all(e.get("reason") == "cancelled"
                                           for e in self.rejected.values())

    @property
    def malformed(self) -> tuple[str, ...]:
        """The rejected calls the model itself malformed, in a turn the vendor finished
        normally (arguments that are not a JSON object, no id or name): the calls a framework
        already holds as invalid, never as runnable ones. A cut, a schema violation, an
        unknown tool are not among them."""
        if not self.record.get("complete"):
            return ()
        return tuple(ident for ident, entry in self.rejected.items()
                     if entry.get("reason") in _MALFORMED)

    @property
    def cut_short(self) -> bool:
        """The turn's output was cut short: the vendor did not end the turn itself (the stream
        stopped early or at the token limit, broke, timed out or was cancelled). A turn the
        vendor ended itself, normally or not (a refusal, a content filter), is whole, whatever
        it says."""
        record = self.record
        if record.get("complete"):
            return False
        # the vendor's own stop that is not a normal end; an error the SDK raises after it
        # (OpenAI's ``ContentFilterFinishReasonError``) is about that stop, not a cut
        ended_by_vendor = (record.get("finish_reason") is not None
                           and record.get("end_reason") == Reason.upstream_error.value)
        return not ended_by_vendor

    def names(self) -> dict[str, str | None]:
        """Each call id's tool name (committed and rejected)."""
        out = {str(e["id"]): e.get("name") for e in self.record.get("committed") or [] if e.get("id")}
        out.update((ident, entry.get("name")) for ident, entry in self.rejected.items())
        return out


def view_record(value: Any) -> RecordView | None:
    """``value`` (what a framework message holds under ``RECORD_KEY``) read once as a
    ``RecordView``; ``None`` when it is not a record (``as_record``)."""
    record = as_record(value)
    if record is None:
        return None
    committed = tuple(str(e["id"]) for e in record.get("committed") or [] if e.get("id"))
    rejected: dict[str, RejectedEntry] = {}
    for entry in record["rejected"]:
        ident = entry.get("tool_call_id") or entry.get("id")
        if ident and str(ident) not in rejected:
            rejected[str(ident)] = entry
    return RecordView(record, committed, rejected, tuple(record.get("order") or ()),
                      paused=record.get("finish_reason") == PAUSE_TURN,
                      gated=decides_calls(record))
