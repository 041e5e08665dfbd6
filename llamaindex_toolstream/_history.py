"""``check_history``: LlamaIndex chat messages in the core's neutral form, checked before they
leave.

The rules live in ``toolstream_core`` (``check_entries``), shared with the LangChain shim;
this module only reads what they need off ``ChatMessage`` values: the role, each assistant
message's ``ToolCallBlock`` ids in order, the id a tool message answers
(``additional_kwargs["tool_call_id"]``), thinking blocks and their signatures (Anthropic,
``additional_information["signature"]``), Responses reasoning items and Gemini thought
signatures (``additional_kwargs["thought_signatures"]``, one per block).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, ThinkingBlock, ToolCallBlock
from toolstream_core import HistoryCall, HistoryEntry, HistoryProblem, check_entries

__all__ = ["check_history", "history_entries"]


def _signed(block: ThinkingBlock) -> bool:
    info = block.additional_information or {}
    return bool(info.get("signature")) or info.get("type") == "redacted_thinking"


def _reasoning_first(message: ChatMessage) -> bool:
    """A signed thinking block comes before the first tool call (Anthropic's order)."""
    for block in message.blocks:
        if isinstance(block, ThinkingBlock):
            return _signed(block)
        if isinstance(block, ToolCallBlock):
            return False
    return False


def _assistant(message: ChatMessage) -> HistoryEntry:
    raw = message.additional_kwargs.get("thought_signatures")
    signatures: list[Any] = raw if isinstance(raw, list) else []
    calls = tuple(
        HistoryCall(block.tool_call_id, block.tool_name,
                    bool(signatures[i]) if i < len(signatures) else False)
        for i, block in enumerate(message.blocks) if isinstance(block, ToolCallBlock))
    reasoning = (any(isinstance(b, ThinkingBlock) for b in message.blocks)
                 or any(signatures) or bool(message.additional_kwargs.get("reasoning")))
    return HistoryEntry("assistant", calls, reasoning=reasoning,
                        reasoning_first=_reasoning_first(message))


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
    (``pair_orphan_calls`` fixes them).
    """
    return check_entries(history_entries(messages), provider, reasoning=reasoning, stored=stored)
