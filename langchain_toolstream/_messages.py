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
    when the call was rejected (from the record), and a "no result" error otherwise; the
    results of each turn follow its calls' order. The gated model does this itself before
    every request; this is for a history you send some other way.
    """
    return list(request_view(list(messages), None))


def request_view(messages: list[BaseMessage], family: str | None, *,
                 repair: bool = True) -> list[BaseMessage]:
    """The history as the vendor must see it; the caller's list is not modified.

    For every AIMessage with tool calls, its results are laid out right after it, one per
    call id, in the calls' order (Gemini pairs results by position, not by id):

    - ``repair``: a call id with no result gets one error ``ToolMessage``, whatever left it
      unanswered (a tool that raised, a denied approval, an interrupt, a resumed checkpoint):
      the gate's own error for a call it rejected, a "no result" error otherwise. Without
      ``repair`` only the gate's own rejected calls are answered (its promise either way);
    - a second result for the same id is left out (exactly one answer per id);
    - for Gemini, rejected calls that are answered are shown as function calls:
      ``ChatGoogleGenerativeAI`` sends only ``tool_calls`` and drops every ToolMessage that
      does not match one, so without this the model never sees the error and the request
      ends on a model turn, which Gemini refuses ("multiturn requests end with a user role
      or a function response"). ``tool_calls`` of the messages in the caller's state never
      include a rejected call.
    """
    out: list[BaseMessage] = []
    changed = False
    position = 0
    while position < len(messages):
        message = messages[position]
        position += 1
        if not _needs_view(message, repair):
            out.append(message)
            continue
        assert isinstance(message, AIMessage)
        answers: list[ToolMessage] = []
        while position < len(messages) and isinstance(messages[position], ToolMessage):
            answers.append(cast(ToolMessage, messages[position]))
            position += 1
        shown, results = _turn_view(message, answers, family, repair)
        changed = changed or shown is not message or _differ(results, answers)
        out.append(shown)
        out.extend(results)
    return out if changed else messages


def _needs_view(message: BaseMessage, repair: bool) -> bool:
    if not isinstance(message, AIMessage) or is_paused(message):
        return False  # a paused turn goes back as it is, to be continued: nothing to answer
    record = read_record(message)
    if record is not None and (record.get("rejected") or record.get("committed")):
        return True
    return repair and bool(message.tool_calls or message.invalid_tool_calls)


def _differ(a: Sequence[BaseMessage], b: Sequence[BaseMessage]) -> bool:
    return len(a) != len(b) or any(x is not y for x, y in zip(a, b, strict=True))


def call_order(message: AIMessage) -> list[str]:
    """Every call id of ``message`` (committed and rejected) in the order the model made them.

    From the gate's record when there is one; otherwise from the vendor content blocks
    (Anthropic ``tool_use``, Responses ``function_call``), which keep the model's order that
    ``tool_calls`` / ``invalid_tool_calls`` split apart.
    """
    ids = [str(c["id"]) for c in [*message.tool_calls, *message.invalid_tool_calls]
           if c.get("id")]
    record = read_record(message)
    if record is not None:
        rejected = [e["tool_call_id"] for e in record.get("rejected") or [] if e.get("tool_call_id")]
        ids += [i for i in rejected if i not in ids]
        first = [i for i in record.get("order") or [] if i in ids]
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


def _turn_view(message: AIMessage, answers: list[ToolMessage], family: str | None,
               repair: bool) -> tuple[AIMessage, list[BaseMessage]]:
    """``message`` as shown to ``family`` and its results: one per call id, in call order."""
    order = call_order(message)
    mine: dict[str, ToolMessage] = {}
    others: list[BaseMessage] = []
    for answer in answers:
        if answer.tool_call_id not in order:
            others.append(answer)  # not this message's: left where it was
        elif answer.tool_call_id not in mine:
            mine[answer.tool_call_id] = answer
    errors = {m.tool_call_id: m for m in error_tool_messages(message)}
    names = {c.get("id"): c.get("name") for c in [*message.tool_calls, *message.invalid_tool_calls]}
    results: list[BaseMessage] = []
    for ident in order:
        found = mine.get(ident) or errors.get(ident)
        if found is None and repair:
            found = _no_result(ident, names.get(ident), quote_id=False if family == "gemini" else None)
        if found is not None:
            results.append(found)
    record = read_record(message)
    if family == "gemini" and record is not None and record.get("rejected"):
        message = _with_rejected_as_calls(message, record, order)
    return message, [*results, *others]


def _no_result(ident: str, name: str | None, *, quote_id: bool | None = None) -> ToolMessage:
    """The "no result" answer; Gemini never sees call ids, so its text quotes none."""
    return ToolMessage(
        content=unanswered_text(name or "unknown", ident, quote_id=quote_id),
        tool_call_id=ident,
        name=name,
        status="error",
        artifact={RECORD_KEY: {"reason": "cancelled", "state": "cancelled"}},
    )


def _with_rejected_as_calls(message: AIMessage, record: DecisionRecord,
                            order: list[str]) -> AIMessage:
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
    rank = {ident: n for n, ident in enumerate(order)}
    calls = sorted([*message.tool_calls, *extra],
                   key=lambda c: rank.get(str(c.get("id") or ""), len(rank)))
    return message.model_copy(update={"tool_calls": calls})


PAUSE_TURN = "pause_turn"


def is_paused(message: BaseMessage) -> bool:
    """Whether ``message`` is an Anthropic turn the vendor paused (``stop_reason:
    "pause_turn"``, a long server-tool turn): the client sends it back to continue it."""
    metadata = getattr(message, "response_metadata", None) or {}
    record = read_record(message)
    return (metadata.get("stop_reason") == PAUSE_TURN
            or (record is not None and record.get("finish_reason") == PAUSE_TURN))


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
