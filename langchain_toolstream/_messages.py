"""LangChain messages as the core reads them: the gate's record, the calls, the history.

The record the gate leaves in ``response_metadata["toolstream"]`` is the source of truth: it
survives chunk aggregation, checkpointing (it is plain JSON) and copying, so pairing can be
done later, by a different process, from the message alone. What is decided from it (whether
a turn is paused, each call's error result, the history the next request sends) is the core's
``MessageKit``; this module only says where a LangChain message keeps each thing (the roles,
each AIMessage's call ids in the model's order and which of them the class sends, the id each
ToolMessage answers, where the vendor's reasoning sits: Anthropic ``thinking`` blocks,
Responses ``reasoning`` items, Gemini thought signatures) and builds LangChain's messages:
``MESSAGES``, the one instance every module of the shim asks.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.tool import invalid_tool_call
from toolstream_core.integration import RECORD_KEY, HistoryCall, HistoryEntry, MessageKit

if TYPE_CHECKING:  # annotations only
    from toolstream_core.integration import DecisionRecord, HistoryProblem, RecordView

__all__ = ["MESSAGES", "call_order", "check_history", "error_tool_messages", "message_with_rejected_calls",
           "pair_orphan_calls", "read_record"]

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


# -- public: the decision record, the answers, the history ------------------------------------------------


def read_record(message: BaseMessage) -> DecisionRecord | None:
    """The gate's decision record on ``message``; ``None`` if it did not pass the gate.

    The record is plain JSON in ``response_metadata["toolstream"]`` (schema:
    ``toolstream_core.integration.DecisionRecord``), so it is read back the same from a message that was
    serialised, checkpointed or rebuilt from a dict.
    """
    return MESSAGES.record(message)


def error_tool_messages(ai_message: BaseMessage) -> list[ToolMessage]:
    """One ``ToolMessage(status="error")`` per rejected call of ``ai_message``, in order.

    Append them right after the AIMessage and the history is legal again for every vendor:
    each ``tool_call_id`` the model emitted is answered, and the content tells the model what
    went wrong so it can retry. For a message that did not pass the gate, the
    ``invalid_tool_calls`` LangChain itself found are paired the same way.
    """
    return MESSAGES.error_results(ai_message)


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
    view = MESSAGES.view(message)
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
    view = view if view is not None else MESSAGES.view(message)
    if view is not None:
        ids += [i for i in view.rejected if i not in ids]
        first = [i for i in view.order if i in ids]
    else:
        first = [i for i in _content_ids(message) if i in ids]
    return list(dict.fromkeys([*first, *ids]))


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
    return MESSAGES.check(messages, provider, reasoning=reasoning, stored=stored)


def pair_orphan_calls(messages: Sequence[BaseMessage], provider: str | None = None) -> list[BaseMessage]:
    """``messages`` with an error ``ToolMessage`` added for every tool call that has none.

    An interrupted run (cancelled while its tools ran, or a caller that forgot
    ``error_tool_messages``) leaves call ids unanswered, which OpenAI and Anthropic refuse.
    Each such id gets, right after the answers its turn already has, the gate's error result
    when the call was rejected (from the record), and a "no result" error otherwise; the
    results of each turn follow its calls' order, and a second answer to one id is left out.
    The gated model does this itself before every request; this is for a history you send
    some other way. ``provider``: the wire it goes to, when known (the words leave out an id
    the model never saw, as on Gemini), the same argument as the LlamaIndex shim's.
    """
    return MESSAGES.pair_orphans(messages, provider)


# -- where a LangChain message keeps what the core reads -------------------------------------


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


def _metadata_record(message: BaseMessage) -> Any:
    metadata = getattr(message, "response_metadata", None)
    return metadata.get(RECORD_KEY) if metadata else None


def _metadata_stop_reason(message: BaseMessage) -> Any:
    metadata = getattr(message, "response_metadata", None)
    return metadata.get("stop_reason") if metadata else None


def _blocks(message: BaseMessage) -> list[Mapping[str, Any]]:
    content = message.content
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, Mapping)]


def _signatures(message: AIMessage) -> Mapping[str, Any]:
    value = message.additional_kwargs.get(_GEMINI_SIGNATURES)
    return value if isinstance(value, Mapping) else {}


def _lc_entry(message: BaseMessage, view: RecordView | None, family: str | None) -> HistoryEntry:
    """``message`` as LangChain shows it: its role, the id a ToolMessage answers, an
    AIMessage's calls in the model's order (``shown``: the class of ``family`` sends it) and
    the reasoning beside them."""
    if isinstance(message, ToolMessage):
        return HistoryEntry("tool", answers=message.tool_call_id)
    if not isinstance(message, AIMessage):
        return HistoryEntry("user" if isinstance(message, HumanMessage) else "system")
    blocks = _blocks(message)
    signatures = _signatures(message)
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
    return HistoryEntry("assistant", calls, reasoning=reasoning,
                        reasoning_first=HistoryEntry.signed_before_calls(
                            kind == "redacted_thinking" or bool(b.get("signature"))
                            if kind in _THINKING else None
                            for b in blocks if (kind := b.get("type")) in _THINKING | _CALL_BLOCKS))


def _invalid_tool_calls(message: BaseMessage) -> Iterator[tuple[str | None, str | None, str | None]]:
    for call in getattr(message, "invalid_tool_calls", None) or []:
        yield call.get("id"), call.get("name"), call.get("error")


def _error_tool_message(call_id: str, name: str | None, content: str, reason: str | None,
                  state: str | None) -> ToolMessage:
    return ToolMessage(content=content, tool_call_id=call_id, name=name, status="error",
                       artifact={RECORD_KEY: {"reason": reason, "state": state}})


def _without_client_calls(message: BaseMessage) -> BaseMessage:
    """``message`` as it goes back to continue the paused turn: without client tool calls.

    A client call inside a paused turn runs only once the turn has ended: it is neither run
    nor answered now (an answer would end the assistant turn the vendor is continuing), so it
    leaves the message; the vendor makes it again in the continued turn if it still wants it.
    Server tool blocks and text stay: they are what the vendor continues from.
    """
    if not isinstance(message, AIMessage):
        return message
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


def _with_calls_shown(message: BaseMessage, view: RecordView | None,
                      shown: Sequence[str]) -> BaseMessage:
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


#: LangChain's messages for the core: where each keeps what the core reads, its constructors,
#: and what its classes repair themselves (``thinking``: ``ChatAnthropic``'s setting).
MESSAGES: MessageKit[BaseMessage, BaseMessage, ToolMessage] = MessageKit(
    record_of=_metadata_record, stop_reason_of=_metadata_stop_reason,
    entry_of=_lc_entry, invalid_calls_of=_invalid_tool_calls, error_result=_error_tool_message,
    continued=_without_client_calls, shown=_with_calls_shown, thinking_field="thinking",
    log=logging.getLogger(__name__), exempt=_INTEGRATION_REPAIRS)
