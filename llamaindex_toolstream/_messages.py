"""The assistant message that goes into memory, made to agree with the core's verdict.

LlamaIndex builds the assistant message from its own accumulation (``parse_partial_json``,
merge-by-last-index, one block per Gemini part), so its tool-call blocks can hold merged,
repaired or phantom calls. The next request sends
that message back to the vendor, and every call id in it must be answered exactly once; so
the tool-call blocks are replaced by the calls the core saw: committed calls with their
strictly parsed arguments, rejected calls (only for a caller that answers them) with ``{}``
(their error result explains why; the raw text is never echoed back), and calls the config
drops (``drop_with_protocol_repair``) removed.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.llms.types import ChatMessage, TextBlock, ToolCallBlock
from toolstream_core import CallState, ToolCall, Turn

__all__ = ["FALLBACK_NAME", "call_id", "call_name", "rebuild_message"]

#: Used where a call arrived without a name, so the call and its error result still agree.
FALLBACK_NAME = "unknown_tool"


def call_name(call: ToolCall) -> str:
    return call.name or FALLBACK_NAME


def call_id(call: ToolCall, turn: Turn) -> str:
    """The id the history uses for ``call``: the vendor's, else the core's synthesized one."""
    if call.id:
        return call.id
    for rejected, result in zip(turn.rejected, turn.error_results(), strict=False):
        if rejected.key == call.key:
            return result.tool_call_id
    return f"toolstream_{call.index if call.index is not None else 0}"


def _blocks_for(turn: Turn, keep_rejected: bool) -> list[ToolCallBlock]:
    blocks: list[ToolCallBlock] = []
    seen: set[str] = set()
    for call in turn.calls:
        if call.state is not CallState.committed and not keep_rejected:
            continue
        ident = call_id(call, turn)
        if ident in seen:  # a re-sent call the core folded into one: one block, one result
            continue
        seen.add(ident)
        kwargs = call.arguments if call.state is CallState.committed else {}
        blocks.append(ToolCallBlock(tool_call_id=ident, tool_name=call_name(call),
                                    tool_kwargs=kwargs if isinstance(kwargs, dict) else {}))
    return blocks


def rebuild_message(message: ChatMessage, turn: Turn, *, text: str = "",
                    keep_rejected: bool = False) -> ChatMessage:
    """``message`` with its tool-call blocks replaced by ``turn``'s calls.

    By default only committed calls stay: any runner that answers the calls it is handed
    (the stock ``FunctionAgent`` included) then leaves a legal history. ``keep_rejected``
    keeps every call, for a caller that answers each rejected id with its error result, so
    the model learns why its call did not run. ``text`` is the streamed text seen so far; it
    is restored where the integration's last chunk carries only that chunk's blocks (the
    Responses class on a cut stream).
    """
    had_calls = any(isinstance(b, ToolCallBlock) for b in message.blocks)
    if not turn.calls and not had_calls and not turn.dropped:
        return message
    ours = _blocks_for(turn, keep_rejected)
    by_id = {b.tool_call_id: b for b in ours}
    # Gemini keeps one thought signature per block position; keep them with their blocks.
    raw_signatures = message.additional_kwargs.get("thought_signatures")
    aligned = isinstance(raw_signatures, list)
    signatures: list[Any] = raw_signatures if isinstance(raw_signatures, list) else []
    blocks: list[Any] = []
    sigs: list[Any] = []
    placed: set[str] = set()
    carried: Any = None  # the signature of a replaced block, for the call that replaces it
    for i, block in enumerate(message.blocks):
        sig = signatures[i] if i < len(signatures) else None
        if isinstance(block, ToolCallBlock):
            mine = by_id.get(block.tool_call_id or "")
            if mine is not None and mine.tool_call_id not in placed:
                placed.add(mine.tool_call_id or "")
                blocks.append(mine)
                sigs.append(sig)
            elif carried is None:
                carried = sig
            continue
        blocks.append(block)
        sigs.append(sig)
    if text and not any(isinstance(b, TextBlock) and b.text for b in blocks):
        keep = [j for j, b in enumerate(blocks) if not isinstance(b, TextBlock)]
        blocks = [TextBlock(text=text), *(blocks[j] for j in keep)]
        sigs = [None, *(sigs[j] for j in keep)]
    for block in ours:
        if block.tool_call_id not in placed:
            blocks.append(block)
            sigs.append(carried)
            carried = None
    additional = {k: v for k, v in message.additional_kwargs.items() if k != "tool_calls"}
    if aligned:
        additional["thought_signatures"] = sigs
    return ChatMessage(role=message.role, blocks=blocks, additional_kwargs=additional)
