"""Messages out of a gated turn: the final AIMessage and the error ToolMessages that pair it.

The record the gate leaves in ``response_metadata["toolstream"]`` is the source of truth: it
survives chunk aggregation, checkpointing (it is plain JSON) and copying, so pairing can be
done later, by a different process, from the message alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.messages.tool import invalid_tool_call
from toolstream_core import RECORD_KEY, DecisionRecord
from toolstream_core.integration import unanswered_text, ungated_error_text

__all__ = [
    "error_tool_messages",
    "finalize_message",
    "message_with_rejected_calls",
    "pair_orphan_calls",
    "read_record",
    "request_view",
]


def read_record(message: BaseMessage) -> DecisionRecord | None:
    """The gate's decision record on ``message``; ``None`` if it did not pass the gate.

    The record is plain JSON in ``response_metadata["toolstream"]`` (schema:
    ``toolstream_core.DecisionRecord``), so it is read back the same from a message that was
    serialised, checkpointed or rebuilt from a dict.
    """
    record = (getattr(message, "response_metadata", None) or {}).get(RECORD_KEY)
    if not isinstance(record, Mapping) or not isinstance(record.get("rejected"), list):
        return None
    return cast(DecisionRecord, record)


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
    record = read_record(message)
    if record is None or not isinstance(message, AIMessage):
        return message
    rejected = [
        invalid_tool_call(
            name=entry.get("name"),
            args=entry.get("args"),
            id=entry.get("id"),
            error=entry.get("reason"),
        )
        for entry in record.get("rejected") or []
    ]
    known = {entry.get("id") for entry in record.get("rejected") or []}
    kept = [c for c in message.invalid_tool_calls if c.get("id") not in known]
    committed = {entry.get("id") for entry in record.get("committed") or []}
    tool_calls = [c for c in message.tool_calls if c.get("id") in committed]
    if tool_calls == message.tool_calls and kept + rejected == message.invalid_tool_calls:
        return message
    return message.model_copy(
        update={"invalid_tool_calls": kept + rejected, "tool_calls": tool_calls}
    )


#: The 0.1 name of ``message_with_rejected_calls`` (deprecated; kept as an alias).
finalize_message = message_with_rejected_calls


def pair_orphan_calls(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """``messages`` with an error ``ToolMessage`` added for every tool call that has none.

    An interrupted run (cancelled while its tools ran, or a caller that forgot
    ``error_tool_messages``) leaves call ids unanswered, which OpenAI and Anthropic refuse.
    Each such id gets, right after the answers its turn already has, the gate's error result
    when the call was rejected (from the record), and a "cancelled" result otherwise.
    """
    out: list[BaseMessage] = []
    items = list(messages)
    position = 0
    while position < len(items):
        message = items[position]
        out.append(message)
        position += 1
        if not isinstance(message, AIMessage):
            continue
        calls: list[Mapping[str, Any]] = [*message.tool_calls, *message.invalid_tool_calls]
        if not calls:
            continue
        answered: set[str] = set()
        while position < len(items) and isinstance(items[position], ToolMessage):
            answer = items[position]
            assert isinstance(answer, ToolMessage)
            answered.add(answer.tool_call_id)
            out.append(answer)
            position += 1
        errors = {m.tool_call_id: m for m in error_tool_messages(message)}
        for call in calls:
            ident = call.get("id")
            if not ident or ident in answered:
                continue
            answered.add(ident)
            out.append(errors.get(ident) or ToolMessage(
                content=unanswered_text(call.get("name") or "unknown", ident),
                tool_call_id=ident,
                name=call.get("name"),
                status="error",
                artifact={RECORD_KEY: {"reason": "cancelled", "state": "cancelled"}},
            ))
    return out


def request_view(messages: list[BaseMessage], family: str | None) -> list[BaseMessage]:
    """The history as the vendor must see it; the caller's list is not modified.

    Two repairs, both only for messages that passed the gate (they carry the record):

    - a rejected call with no answer after its AIMessage gets its error ``ToolMessage``
      inserted (a caller that forgot ``error_tool_messages`` would otherwise send an
      unanswered call id: a 400 on OpenAI and Anthropic);
    - for Gemini, rejected calls that are answered are shown as function calls:
      ``ChatGoogleGenerativeAI`` sends only ``tool_calls`` and drops every ToolMessage that
      does not match one, so without this the model never sees the error and the request
      ends on a model turn, which Gemini refuses ("multiturn requests end with a user role
      or a function response"). The view is built per request; ``tool_calls`` of the
      messages in the caller's state never include a rejected call.
    """
    out: list[BaseMessage] = []
    changed = False
    position = 0
    while position < len(messages):
        message = messages[position]
        position += 1
        record = read_record(message) if isinstance(message, AIMessage) else None
        if record is None or not record.get("rejected"):
            out.append(message)
            continue
        answers: list[BaseMessage] = []
        while position < len(messages) and isinstance(messages[position], ToolMessage):
            answers.append(messages[position])
            position += 1
        answered = {m.tool_call_id for m in answers if isinstance(m, ToolMessage)}
        missing = [m for m in error_tool_messages(message) if m.tool_call_id not in answered]
        if family == "gemini" and isinstance(message, AIMessage):
            shown = _with_rejected_as_calls(message, record)
            changed = changed or shown is not message
            message = shown
        out.append(message)
        out.extend(answers)
        out.extend(missing)
        changed = changed or bool(missing)
    return out if changed else messages


def _with_rejected_as_calls(message: AIMessage, record: DecisionRecord) -> AIMessage:
    extra = []
    present = {c.get("id") for c in message.tool_calls}
    for entry in record.get("rejected") or []:
        if not entry.get("id") or not entry.get("name") or entry["id"] in present:
            continue
        try:
            args = json.loads(entry.get("args") or "{}")
        except ValueError:
            args = {}
        extra.append({"name": entry["name"], "args": args if isinstance(args, dict) else {},
                      "id": entry["id"], "type": "tool_call"})
    if not extra:
        return message
    return message.model_copy(update={"tool_calls": [*message.tool_calls, *extra]})


def error_tool_messages(ai_message: BaseMessage) -> list[ToolMessage]:
    """One ``ToolMessage(status="error")`` per rejected call of ``ai_message``, in order.

    Append them right after the AIMessage and the history is legal again for every vendor:
    each ``tool_call_id`` the model emitted is answered, and the content tells the model what
    went wrong so it can retry. For a message that did not pass the gate, the
    ``invalid_tool_calls`` LangChain itself found are paired the same way.
    """
    record = read_record(ai_message)
    if record is not None:
        return [
            ToolMessage(
                content=entry.get("content") or "",
                tool_call_id=entry["id"],
                name=entry.get("name"),
                status="error",
                artifact={RECORD_KEY: {"reason": entry.get("reason"), "state": entry.get("state")}},
            )
            for entry in record.get("rejected") or []
            if entry.get("id")
        ]
    messages = []
    for call in getattr(ai_message, "invalid_tool_calls", None) or []:
        if not call.get("id"):
            continue
        messages.append(
            ToolMessage(
                content=ungated_error_text(call.get("name") or "unknown", call["id"],
                                           call.get("error") or "invalid arguments"),
                tool_call_id=call["id"],
                name=call.get("name"),
                status="error",
                artifact={RECORD_KEY: {"reason": call.get("error"), "state": "failed"}},
            )
        )
    return messages
