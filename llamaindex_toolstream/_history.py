"""The outgoing history: LlamaIndex chat messages in the core's neutral form, planned and
checked before they leave.

The rules live in ``toolstream_core`` (``plan_history`` lays out each call's answer,
``check_entries`` lists what the vendor would refuse), shared with the LangChain shim. This
module reads what they need off ``ChatMessage`` values (the role, each assistant message's
``ToolCallBlock`` ids in order, the id a tool message answers
(``additional_kwargs["tool_call_id"]``), the gate's record, thinking blocks and their
signatures (Anthropic, ``additional_information["signature"]``), Responses reasoning items
and Gemini thought signatures (``additional_kwargs["thought_signatures"]``, one per block))
and applies the plan with LlamaIndex's own messages.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, MessageRole, ThinkingBlock, ToolCallBlock
from toolstream_core.integration import (
    HistoryCall,
    HistoryEdit,
    HistoryEntry,
    HistoryPolicy,
    HistoryProblem,
    MessageKit,
)

from ._messages import FALLBACK_NAME, errors_by_id, is_paused, paused_message, record_view, ungated_error_ids

__all__ = ["HistoryPolicy", "check_history", "history_entries", "pair_orphan_calls", "prepare_history"]

_log = logging.getLogger(__name__)

#: What the LlamaIndex integration's own wire makes acceptable, so raising for it would stop a
#: request the vendor takes: ``OpenAIResponses`` sends a function call by its ``call_id``
#: alone (no ``fc_`` item id, which is what ties a call to its reasoning item) and, with
#: ``store=False``, no reasoning item at all. ``check_history`` still lists it: the model has
#: lost its reasoning for that step. A lost Gemini ``thoughtSignature`` is raised here (unlike
#: LangChain's ``ChatGoogleGenerativeAI``, ``GoogleGenAI`` sends no bypass value for it).
_INTEGRATION_REPAIRS = frozenset({"missing_reasoning"})


def _signed(block: ThinkingBlock) -> bool:
    info = block.additional_information or {}
    return bool(info.get("signature")) or info.get("type") == "redacted_thinking"


def _assistant(message: ChatMessage) -> HistoryEntry:
    raw = message.additional_kwargs.get("thought_signatures")
    signatures: list[Any] = raw if isinstance(raw, list) else []
    calls = tuple(
        HistoryCall(block.tool_call_id, block.tool_name,
                    bool(signatures[i]) if i < len(signatures) else False)
        for i, block in enumerate(message.blocks) if isinstance(block, ToolCallBlock))
    reasoning = (any(isinstance(b, ThinkingBlock) for b in message.blocks)
                 or any(signatures) or bool(message.additional_kwargs.get("reasoning")))
    view = record_view(message)  # read once for this message
    return HistoryEntry("assistant", calls, reasoning=reasoning,
                        reasoning_first=HistoryEntry.signed_before_calls(
                            _signed(b) if isinstance(b, ThinkingBlock) else None
                            for b in message.blocks if isinstance(b, ThinkingBlock | ToolCallBlock)),
                        paused=is_paused(message, view),
                        gated=view is not None and view.gated,
                        errors=view.error_ids if view is not None else ungated_error_ids(message))


def history_entries(messages: Sequence[ChatMessage]) -> list[HistoryEntry]:
    """``messages`` in the core's neutral form (one entry per message, same positions)."""
    out: list[HistoryEntry] = []
    for message in messages:
        role = str(getattr(message.role, "value", message.role))
        if role == "assistant":
            out.append(_assistant(message))
        elif role == "tool":
            ident = message.additional_kwargs.get("tool_call_id")
            out.append(HistoryEntry("tool", answers=str(ident) if ident is not None else None))
        elif role == "user":
            out.append(HistoryEntry("user"))
        else:
            out.append(HistoryEntry("system"))
    return out


def check_history(messages: Sequence[ChatMessage], provider: str | None, *,
                  reasoning: bool | None = None, stored: bool = True) -> list[HistoryProblem]:
    """What ``provider`` would reject in ``messages``, before the request goes out.

    The same rules and arguments as the LangChain shim's ``check_history``: unanswered call
    ids; with thinking on (``reasoning``, inferred from the history when ``None``) an
    Anthropic tool call not preceded by its signed thinking block, a Responses function call
    without its reasoning item when nothing is stored (``stored=False``), a Gemini function
    call that lost its thought signature. Only ``unanswered`` problems are ``repairable``
    (``pair_orphan_calls`` fixes them, and the gated LLM does before every request).
    """
    return _KIT.check(messages, provider, reasoning=reasoning, stored=stored)


def _as_message(user_msg: str | ChatMessage) -> ChatMessage:
    if isinstance(user_msg, ChatMessage):
        return user_msg
    return ChatMessage(role=MessageRole.USER, content=user_msg)


def prepare_history(messages: Sequence[ChatMessage], provider: str | None, policy: HistoryPolicy,
                    llm: Any, user_msg: str | ChatMessage | None = None) -> list[ChatMessage]:
    """The history the request sends under ``policy`` (see ``HistoryPolicy``).

    ``user_msg``: the message a ``*_chat_with_tools`` call appends after ``messages``; it is
    checked with them (it ends the tool loop the Anthropic and Gemini rules look at) but not
    returned, since the wrapped LLM appends it itself.
    """
    return _KIT.prepare(list(messages), provider, policy, log=_log,
                        thinking=getattr(llm, "thinking_dict", None),
                        stored=getattr(llm, "store", None) is not False,
                        appended=[_as_message(user_msg)] if user_msg is not None else ())


def pair_orphan_calls(messages: Sequence[ChatMessage],
                      provider: str | None = None) -> list[ChatMessage]:
    """``messages`` with an error result added for every tool call that has none.

    An interrupted run (cancelled while its tools ran, or a caller that forgot
    ``error_tool_messages``) leaves call ids unanswered, which the vendors refuse. Each such id
    gets the gate's error result when the call was rejected (from the record), and a
    "cancelled" result otherwise. Each turn's results follow its calls' order, one per id
    (Gemini pairs results by position; the workflow hands them back in its own order). The
    gated LLM does this itself before every request; this is for a history you send some
    other way. ``provider``: the wire it goes to, when known (the words leave out an id the
    model never saw, as on Gemini, the same as the gated LLM's and LangChain's).
    """
    return _KIT.pair_orphans(messages, provider)


def _no_result(edit: HistoryEdit) -> ChatMessage:
    """An error result, as the LangChain shim's: a call with no result did not succeed."""
    return ChatMessage(role="tool", content=edit.content or "",
                       additional_kwargs={"tool_call_id": edit.call_id, "name": edit.name or FALLBACK_NAME,
                                          "is_error": True, "toolstream_reason": "cancelled"})


def _as_is(message: ChatMessage, shown: tuple[str, ...]) -> ChatMessage:
    """Every call of a ``ChatMessage`` is on the wire (its blocks): nothing needs showing."""
    return message


#: LlamaIndex's constructors for the core's history plan, and what its classes repair themselves.
_KIT: MessageKit[ChatMessage] = MessageKit(
    entries=history_entries, paused=paused_message, show=_as_is, errors=errors_by_id,
    no_result=_no_result, exempt=_INTEGRATION_REPAIRS)
