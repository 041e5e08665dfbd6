"""Messages out of a gated turn: the final AIMessage and the error ToolMessages that pair it.

The record the gate leaves in ``response_metadata["toolstream"]`` is the source of truth: it
survives chunk aggregation, checkpointing (it is plain JSON) and copying, so pairing can be
done later, by a different process, from the message alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.messages.tool import invalid_tool_call
from toolstream_core.integration import RECORD_KEY, DecisionRecord, RecordView, RunPolicy

__all__ = [
    "call_order",
    "error_tool_messages",
    "errors_by_id",
    "is_paused",
    "message_with_rejected_calls",
    "paused_message",
    "read_record",
    "record_view",
]


def read_record(message: BaseMessage) -> DecisionRecord | None:
    """The gate's decision record on ``message``; ``None`` if it did not pass the gate.

    The record is plain JSON in ``response_metadata["toolstream"]`` (schema:
    ``toolstream_core.integration.DecisionRecord``), so it is read back the same from a message that was
    serialised, checkpointed or rebuilt from a dict.
    """
    view = record_view(message)
    return view.record if view is not None else None


def record_view(message: BaseMessage) -> RecordView | None:
    """The record on ``message`` read once (``RecordView``); ``None`` if it did not pass the
    gate. Callers that ask several things of one message read it once here."""
    return RecordView.read((getattr(message, "response_metadata", None) or {}).get(RECORD_KEY))


def message_with_rejected_calls(message: BaseMessage) -> BaseMessage:
    """``message`` with every call: committed in ``tool_calls``, rejected in
    ``invalid_tool_calls`` with ``error`` = the reason (put it in the history, then
    ``error_tool_messages(message)``).

    The gated model already returns this form; call it on a message rebuilt from its parts.

    Chunk aggregation cannot carry them (LangChain re-derives ``invalid_tool_calls`` from
    ``tool_call_chunks`` with ``parse_partial_json``, the repair the gate exists to prevent), so
    the streamed chunks never hold rejected calls and this step rebuilds them from the record.
    Idempotent.
    """
    view = record_view(message)
    if view is None or not isinstance(message, AIMessage):
        return message
    rejected = [
        invalid_tool_call(name=entry.get("name"), args=entry.get("args"), id=ident,
                          error=entry.get("reason"))
        for ident, entry in view.rejected.items()
    ]
    kept = [c for c in message.invalid_tool_calls if c.get("id") not in view.rejected]
    tool_calls = [c for c in message.tool_calls if c.get("id") in view.committed]
    if tool_calls == message.tool_calls and kept + rejected == message.invalid_tool_calls:
        return message
    return message.model_copy(
        update={"invalid_tool_calls": kept + rejected, "tool_calls": tool_calls}
    )


def call_order(message: AIMessage, view: RecordView | None = None) -> list[str]:
    """Every call id of ``message`` (committed and rejected) in the order the model made them.

    From the gate's record when there is one (``view``: the message's, already read);
    otherwise from the vendor content blocks (Anthropic ``tool_use``, Responses
    ``function_call``), which keep the model's order that ``tool_calls`` /
    ``invalid_tool_calls`` split apart.
    """
    ids = [str(c["id"]) for c in [*message.tool_calls, *message.invalid_tool_calls]
           if c.get("id")]
    view = view if view is not None else record_view(message)
    if view is not None:
        ids += [i for i in view.rejected if i not in ids]
        first = [i for i in view.order if i in ids]
    else:
        first = [i for i in _content_ids(message) if i in ids]
    return list(dict.fromkeys([*first, *ids]))


def _content_ids(message: AIMessage) -> list[str]:
    if not isinstance(message.content, list):
        return []
    out: list[str] = []
    for block in message.content:
        if isinstance(block, dict):
            for key in ("call_id", "id"):
                value = block.get(key)
                if isinstance(value, str) and value:
                    out.append(value)
    return out


def is_paused(message: BaseMessage, view: RecordView | None = None) -> bool:
    """Whether ``message`` is an Anthropic turn the vendor paused (``stop_reason:
    "pause_turn"``, a long server-tool turn): the client sends it back to continue it
    (``view``: its record, already read)."""
    view = view if view is not None else record_view(message)
    if view is not None:
        return view.paused
    metadata = getattr(message, "response_metadata", None) or {}
    return RecordView.paused_stop(metadata.get("stop_reason"))


def paused_message(message: AIMessage) -> AIMessage:
    """``message`` as it goes back to continue the paused turn: without client tool calls.

    A client call inside a paused turn runs only once the turn has ended: it is neither run
    nor answered now (an answer would end the assistant turn the vendor is continuing), so it
    leaves the message; the vendor makes it again in the continued turn if it still wants it.
    Server tool blocks and text stay: they are what the vendor continues from.
    """
    held = {c.get("id") for c in [*message.tool_calls, *message.invalid_tool_calls]}
    if not held:
        return message
    content: Any = message.content
    if isinstance(content, list):
        content = [b for b in content if not (isinstance(b, dict) and b.get("type") in
                                              ("tool_use", "function_call")
                                              and _block_id(b) in held)]
    return message.model_copy(update={"tool_calls": [], "invalid_tool_calls": [],
                                      "tool_call_chunks": [], "content": content})


def _block_id(block: Mapping[str, Any]) -> str | None:
    value = block.get("id") or block.get("call_id")
    return value if isinstance(value, str) else None


def error_tool_messages(ai_message: BaseMessage) -> list[ToolMessage]:
    """One ``ToolMessage(status="error")`` per rejected call of ``ai_message``, in order.

    Append them right after the AIMessage and the history is legal again for every vendor:
    each ``tool_call_id`` the model emitted is answered, and the content tells the model what
    went wrong so it can retry. For a message that did not pass the gate, the
    ``invalid_tool_calls`` LangChain itself found are paired the same way.
    """
    return list(errors_by_id(ai_message).values())


def errors_by_id(message: BaseMessage) -> dict[str, ToolMessage]:
    """``error_tool_messages(message)`` by the id each answers (the record's ``tool_call_id``:
    the core's synthesized one for a call that arrived without an id)."""
    view = record_view(message)
    if view is not None:
        return {ident: ToolMessage(
            content=entry.get("content") or "", tool_call_id=ident, name=entry.get("name"),
            status="error",
            artifact={RECORD_KEY: {"reason": entry.get("reason"), "state": entry.get("state")}})
            for ident, entry in view.rejected.items()}
    out: dict[str, ToolMessage] = {}
    for call in getattr(message, "invalid_tool_calls", None) or []:
        ident = call.get("id")
        if ident and ident not in out:
            out[ident] = ToolMessage(
                content=RunPolicy.ungated_error_text(call.get("name") or "unknown", ident,
                                           call.get("error") or "invalid arguments"),
                tool_call_id=ident, name=call.get("name"), status="error",
                artifact={RECORD_KEY: {"reason": call.get("error"), "state": "failed"}})
    return out
