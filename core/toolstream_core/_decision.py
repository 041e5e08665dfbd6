"""The decision record: a turn's verdict as plain JSON data, kept on the framework's message.

Both framework shims store this same shape under ``RECORD_KEY`` (LangChain:
``AIMessage.response_metadata``; LlamaIndex: ``ChatResponse.additional_kwargs`` and the
assistant message's ``additional_kwargs``), so pairing, auditing and retrying work from a
message that was serialised, checkpointed or loaded in another process. It is built here, once,
so the two shims cannot drift apart on the schema.
"""

from __future__ import annotations

import json
from typing import Literal, TypedDict

from ._models import Turn

__all__ = [
    "RECORD_KEY",
    "RECORD_VERSION",
    "CallEntry",
    "DecisionRecord",
    "DroppedEntry",
    "RecordMode",
    "RejectedEntry",
    "history_args",
    "turn_record",
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


class DroppedEntry(CallEntry):
    """A call the config removed from the history (``drop_with_protocol_repair``)."""

    reason: str | None


class RejectedEntry(CallEntry):
    """A call that must not run, with what the model is told about it."""

    tool_call_id: str
    """The id its error result answers: the vendor's, or the core's synthesized one for a
    call that arrived without an id (``id`` is then ``None``)."""
    reason: str | None
    detail: str | None
    args: str
    content: str
    state: str


class _Optional(TypedDict, total=False):
    order: list[str]
    """Every client call's id (committed and rejected; the synthesized one for an id-less
    call) in the order the vendor made them, so results can follow the calls' order (Gemini
    pairs results by position). Absent from records written before it existed."""


class DecisionRecord(_Optional):
    """One turn's verdict (see ``docs/shims.md``)."""

    version: int
    mode: str
    provider: str | None
    complete: bool
    finish_reason: str | None
    error: str | None
    committed: list[CallEntry]
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


def turn_record(turn: Turn, *, mode: RecordMode, error: BaseException | None = None) -> DecisionRecord:
    """The JSON-safe summary of ``turn``: enough to pair every call id, audit and retry."""
    rejected: list[RejectedEntry] = []
    # ``error_results()`` holds exactly one result per rejected call, in the same order.
    for call, result in zip(turn.rejected, turn.error_results(), strict=True):
        rejected.append({
            "id": call.id,
            "name": call.name,
            "tool_call_id": result.tool_call_id,
            "reason": str(call.reason) if call.reason else None,
            "detail": call.detail,
            "args": history_args(call.raw_arguments),
            "content": result.content,
            "state": str(call.state),
        })
    return {
        "version": RECORD_VERSION,
        "mode": mode,
        "provider": turn.provider,
        "complete": turn.complete,
        "finish_reason": turn.finish_reason,
        "error": f"{type(error).__name__}: {error}" if error is not None else None,
        "committed": [{"id": c.id, "name": c.name} for c in turn.committed],
        "rejected": rejected,
        "dropped": [{"id": c.id, "name": c.name, "reason": str(c.reason) if c.reason else None}
                    for c in turn.dropped],
        "server_calls": [{"id": c.id, "name": c.name} for c in turn.server_calls],
        "anomalies": len(turn.anomalies),
        "order": _call_order(turn, rejected),
    }


def _call_order(turn: Turn, rejected: list[RejectedEntry]) -> list[str]:
    answer_ids = iter(entry["tool_call_id"] for entry in rejected)
    order: list[str] = []
    for call in turn.calls:
        ident = call.id if call.committed else next(answer_ids, call.id)
        if ident:
            order.append(ident)
    return order
