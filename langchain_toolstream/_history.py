"""The outgoing history: LangChain messages in the core's neutral form, planned and checked.

The rules live in ``toolstream_core`` (``plan_history`` lays out each call's answer,
``check_entries`` lists what the vendor would refuse), shared with the LlamaIndex shim. This
module reads what they need off LangChain messages (the roles, each AIMessage's call ids in
the model's order and which of them the class sends, the id each ToolMessage answers, the
gate's record, where the vendor's reasoning sits: Anthropic ``thinking`` blocks, Responses
``reasoning`` items, Gemini thought signatures) and applies the plan with LangChain's own
message constructors.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from toolstream_core.integration import (
    RECORD_KEY,
    HistoryCall,
    HistoryEdit,
    HistoryEntry,
    HistoryPolicy,
    HistoryProblem,
    MessageKit,
)

from ._messages import call_order, errors_by_id, is_paused, paused_message, record_view

__all__ = ["HistoryPolicy", "check_history", "history_entries", "pair_orphan_calls", "prepare_history"]

_log = logging.getLogger(__name__)

_GEMINI_SIGNATURES = "__gemini_function_call_thought_signatures__"

#: What the LangChain integration repairs itself before sending: ``ChatGoogleGenerativeAI``
#: gives a function call that lost its signature Google's documented bypass value
#: (``skip_thought_signature_validator``), which the API accepts; raising for it would stop
#: a request the vendor takes. ``check_history`` still lists it: the model has lost its
#: reasoning for that step.
_INTEGRATION_REPAIRS = frozenset({"missing_thought_signature"})
#: The SDK families whose LangChain class sends an AIMessage's ``tool_calls`` and nothing of
#: its ``invalid_tool_calls`` (found by the parity suite, tests/llamaindex/test_parity.py).
_TOOL_CALLS_ONLY = frozenset({"gemini", "ollama"})
_THINKING = frozenset({"thinking", "redacted_thinking"})
_REASONING = frozenset({"thinking", "redacted_thinking", "reasoning"})
_CALL_BLOCKS = frozenset({"tool_use", "function_call"})


def _blocks(message: BaseMessage) -> list[Mapping[str, Any]]:
    content = message.content
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, Mapping)]


def _signatures(message: AIMessage) -> Mapping[str, Any]:
    value = message.additional_kwargs.get(_GEMINI_SIGNATURES)
    return value if isinstance(value, Mapping) else {}


def _assistant(message: AIMessage, family: str | None) -> HistoryEntry:
    blocks = _blocks(message)
    signatures = _signatures(message)
    view = record_view(message)  # read once for this message
    names: dict[str | None, str | None] = {
        c.get("id"): c.get("name") for c in [*message.tool_calls, *message.invalid_tool_calls]}
    if view is not None:
        for ident, name in view.names().items():
            names.setdefault(ident, name)
    # ``ChatGoogleGenerativeAI`` and ``ChatOllama`` send ``tool_calls`` only: a rejected call
    # is not on the wire, and its answer would have no call.
    sent = {c.get("id") for c in message.tool_calls} if family in _TOOL_CALLS_ONLY else None
    calls = tuple(HistoryCall(ident, names.get(ident), bool(signatures.get(ident)),
                              shown=sent is None or ident in sent)
                  for ident in call_order(message, view))
    reasoning = (any(b.get("type") in _REASONING for b in blocks)
                 or bool(message.additional_kwargs.get("reasoning")) or bool(signatures))
    errors = view.error_ids if view is not None else tuple(
        str(c["id"]) for c in message.invalid_tool_calls if c.get("id"))
    return HistoryEntry("assistant", calls, reasoning=reasoning,
                        reasoning_first=HistoryEntry.signed_before_calls(
                            kind == "redacted_thinking" or bool(b.get("signature"))
                            if kind in _THINKING else None
                            for b in blocks if (kind := b.get("type")) in _THINKING | _CALL_BLOCKS),
                        paused=is_paused(message, view),
                        gated=view is not None and view.gated, errors=errors)


def history_entries(messages: Sequence[BaseMessage], family: str | None = None) -> list[HistoryEntry]:
    """``messages`` in the core's neutral form (one entry per message, same positions);
    ``family``: the SDK family the model class sends them to (what it leaves off the wire)."""
    out: list[HistoryEntry] = []
    for message in messages:
        if isinstance(message, AIMessage):
            out.append(_assistant(message, family))
        elif isinstance(message, ToolMessage):
            out.append(HistoryEntry("tool", answers=message.tool_call_id))
        elif isinstance(message, SystemMessage):
            out.append(HistoryEntry("system"))
        else:
            out.append(HistoryEntry("user" if isinstance(message, HumanMessage) else "system"))
    return out


def check_history(messages: Sequence[BaseMessage], provider: str | None, *,
                  reasoning: bool | None = None, stored: bool = True) -> list[HistoryProblem]:
    """What ``provider`` would reject in ``messages``, before the request goes out.

    ``provider``: ``"openai-chat"``, ``"openai-responses"``, ``"anthropic"`` or ``"gemini"``.
    Lists unanswered call ids; with thinking on (``reasoning``, inferred from the history
    when ``None``): an Anthropic ``tool_use`` not preceded by its signed thinking block, a
    Responses function call without its reasoning item when nothing is stored
    (``stored=False``), a Gemini function call that lost its ``thoughtSignature``. Empty:
    the vendor would accept it. Only ``unanswered`` problems are ``repairable``.
    """
    return _KIT.check(messages, provider, reasoning=reasoning, stored=stored)


def prepare_history(messages: list[BaseMessage], family: str | None, policy: HistoryPolicy,
                    model: Any) -> list[BaseMessage]:
    """The history the request sends under ``policy`` (see ``HistoryPolicy``); the caller's
    list is returned as it is when nothing changes."""
    return _KIT.prepare(messages, family, policy, log=_log, thinking=getattr(model, "thinking", None),
                        stored=getattr(model, "store", None) is not False,
                        entries=history_entries(messages, family))


def pair_orphan_calls(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """``messages`` with an error ``ToolMessage`` added for every tool call that has none.

    An interrupted run (cancelled while its tools ran, or a caller that forgot
    ``error_tool_messages``) leaves call ids unanswered, which OpenAI and Anthropic refuse.
    Each such id gets, right after the answers its turn already has, the gate's error result
    when the call was rejected (from the record), and a "no result" error otherwise; the
    results of each turn follow its calls' order, and a second answer to one id is left out.
    The gated model does this itself before every request; this is for a history you send
    some other way.
    """
    return _KIT.pair_orphans(messages)


def _no_result(edit: HistoryEdit) -> ToolMessage:
    return ToolMessage(
        content=edit.content or "",
        tool_call_id=edit.call_id or "",
        name=edit.name,
        status="error",
        artifact={RECORD_KEY: {"reason": "cancelled", "state": "cancelled"}},
    )


def _with_calls_shown(message: BaseMessage, shown: Sequence[str]) -> BaseMessage:
    """``message`` with the ``shown`` calls (rejected ones, which the class would leave off
    the wire) in ``tool_calls`` too, in the calls' order: ``ChatGoogleGenerativeAI`` sends only
    ``tool_calls`` and drops every ToolMessage that does not match one, so without this the
    model never sees the error and the request ends on a model turn, which Gemini refuses;
    ``ChatOllama`` would send the error with no call before it. ``tool_calls`` of the
    messages in the caller's state never include a rejected call."""
    if not isinstance(message, AIMessage):
        return message
    sources: dict[str, tuple[Any, Any]] = {
        str(c["id"]): (c.get("name"), c.get("args")) for c in message.invalid_tool_calls if c.get("id")}
    view = record_view(message)
    for ident, entry in view.rejected.items() if view is not None else ():
        sources[ident] = (entry.get("name"), entry.get("args"))
    extra = []
    for ident in shown:
        name, text = sources.get(ident, (None, None))
        if not name:
            continue
        try:
            args = json.loads(text or "{}")
        except ValueError:
            args = {}
        extra.append({"name": name, "args": args if isinstance(args, dict) else {}, "id": ident,
                      "type": "tool_call"})
    if not extra:
        return message
    rank = {ident: n for n, ident in enumerate(call_order(message, view))}
    calls = sorted([*message.tool_calls, *extra],
                   key=lambda c: rank.get(str(c.get("id") or ""), len(rank)))
    return message.model_copy(update={"tool_calls": calls})


def _paused(message: BaseMessage) -> BaseMessage:
    return paused_message(message) if isinstance(message, AIMessage) else message


#: LangChain's constructors for the core's history plan, and what its classes repair themselves.
_KIT: MessageKit[BaseMessage] = MessageKit(
    entries=history_entries, paused=_paused, show=_with_calls_shown, errors=errors_by_id,
    no_result=_no_result, exempt=_INTEGRATION_REPAIRS)
