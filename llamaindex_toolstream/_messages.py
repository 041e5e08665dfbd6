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

import json
from collections.abc import Mapping
from typing import Any

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    MessageRole,
    TextBlock,
    ToolCallBlock,
)
from toolstream_core import CallState, ToolCall, Turn
from toolstream_core.integration import RECORD_KEY, DecisionRecord, RecordView, RunPolicy

__all__ = [
    "FALLBACK_NAME",
    "call_id",
    "call_name",
    "error_tool_messages",
    "errors_by_id",
    "is_paused",
    "message_with_rejected_calls",
    "paused_message",
    "read_record",
    "rebuild_message",
    "record_view",
    "ungated_error_ids",
]

#: Used where a call arrived without a name, so the call and its error result still agree.
FALLBACK_NAME = "unknown_tool"


def call_name(call: ToolCall) -> str:
    return call.name or FALLBACK_NAME


def call_id(call: ToolCall, turn: Turn) -> str:
    """The id the history uses for ``call``: the vendor's, else the core's synthesized one."""
    if call.id:
        return call.id
    result = turn.result_for(call)
    if result is not None:
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
    if turn.provider == "cohere" and ours:
        additional["tool_calls"] = _cohere_tool_calls(ours)
    return ChatMessage(role=message.role, blocks=blocks, additional_kwargs=additional)


def _cohere_tool_calls(blocks: list[ToolCallBlock]) -> list[Any]:
    """LlamaIndex's ``Cohere`` reads a turn's calls from ``additional_kwargs["tool_calls"]``
    (``cohere.ToolCall`` objects: v1 calls have no ids) to pair its tool results with them;
    the kept calls go there, in block order."""
    from cohere import ToolCall as CohereToolCall

    return [CohereToolCall(name=b.tool_name, parameters=b.tool_kwargs
                           if isinstance(b.tool_kwargs, dict) else {}) for b in blocks]


# -- public: the decision record and the history ------------------------------------------------


def read_record(response: ChatResponse | ChatMessage) -> DecisionRecord | None:
    """The gate's decision record on ``response`` (or its message); ``None`` if ungated.

    Plain JSON in ``additional_kwargs["toolstream"]`` (schema: ``toolstream_core.integration.DecisionRecord``,
    the same as the LangChain shim's), kept on the ``ChatResponse`` and on the assistant
    message, so it survives ``model_dump_json``, memory and chat stores.
    """
    view = record_view(response)
    return view.record if view is not None else None


def record_view(response: ChatResponse | ChatMessage) -> RecordView | None:
    """The record on ``response`` (or its message) read once (``RecordView``); ``None`` if
    ungated. Callers that ask several things of one message read it once here."""
    for holder in (response, getattr(response, "message", None)):
        extra = getattr(holder, "additional_kwargs", None)
        view = RecordView.read(extra.get(RECORD_KEY)) if isinstance(extra, Mapping) else None
        if view is not None:
            return view
    return None


def _message_of(response: ChatResponse | ChatMessage) -> ChatMessage:
    return response.message if isinstance(response, ChatResponse) else response


def _unusable(kwargs: Any) -> str | None:
    """Why LlamaIndex's own arguments for a call cannot be used, or ``None`` if they can."""
    if isinstance(kwargs, dict):
        return None
    if isinstance(kwargs, str):
        try:
            return None if isinstance(json.loads(kwargs), dict) else "not a JSON object"
        except (ValueError, RecursionError):
            return "invalid JSON"
    return "invalid arguments"


def error_tool_messages(response: ChatResponse | ChatMessage) -> list[ChatMessage]:
    """``role="tool"`` messages answering every rejected call of ``response``, in order.

    They pair the ids of ``message_with_rejected_calls(response)`` (not ``response.message``,
    which holds committed calls only); add the results of the committed calls you run. Read
    from the record, so a response loaded from JSON gives the same answers. For a response that
    did not pass the gate, the calls whose arguments LlamaIndex itself could not parse are
    paired the same way (as the LangChain shim does with ``invalid_tool_calls``).
    """
    return list(errors_by_id(response).values())


def errors_by_id(response: ChatResponse | ChatMessage) -> dict[str, ChatMessage]:
    """``error_tool_messages(response)`` by the id each answers."""
    view = record_view(response)
    if view is not None:
        return {ident: ChatMessage(
            role=MessageRole.TOOL, content=entry.get("content") or "",
            additional_kwargs={"tool_call_id": ident, "name": entry.get("name") or FALLBACK_NAME,
                               "is_error": True, "toolstream_reason": entry.get("reason")})
            for ident, entry in view.rejected.items()}
    out: dict[str, ChatMessage] = {}
    for block in _message_of(response).blocks:
        if not isinstance(block, ToolCallBlock) or not block.tool_call_id:
            continue
        error = _unusable(block.tool_kwargs)
        if error is None or block.tool_call_id in out:
            continue
        out[block.tool_call_id] = ChatMessage(
            role=MessageRole.TOOL,
            content=RunPolicy.ungated_error_text(block.tool_name, block.tool_call_id, error),
            additional_kwargs={"tool_call_id": block.tool_call_id, "name": block.tool_name,
                               "is_error": True, "toolstream_reason": error})
    return out


def ungated_error_ids(message: ChatMessage) -> tuple[str, ...]:
    """The ids of the calls whose arguments LlamaIndex could not use, on a message the gate
    did not decide (what ``errors_by_id`` answers there), without building the messages."""
    return tuple(block.tool_call_id for block in message.blocks
                 if isinstance(block, ToolCallBlock) and block.tool_call_id
                 and _unusable(block.tool_kwargs) is not None)


def message_with_rejected_calls(response: ChatResponse | ChatMessage) -> ChatMessage:
    """The assistant message of ``response`` with every call, rejected ones included.

    ``response.message`` holds committed calls only, so a runner that answers just the calls
    it runs keeps a legal history. A caller that wants the model to learn why a call did not
    run puts this message in the history instead, followed by ``error_tool_messages``. In the
    process that streamed it, the message is rebuilt from the stream (text and Gemini thought
    signatures kept); from a loaded response, the rejected calls are added from the record
    with ``{}`` arguments (their error result explains why).
    """
    from ._session import stream_of  # the session module imports this one

    if isinstance(response, ChatResponse):
        session = stream_of(response)
        full = session.message_with_rejected() if session is not None else None
        if full is not None:
            return full
    message = _message_of(response)
    view = record_view(response)
    if view is None:
        return message
    present = {b.tool_call_id for b in message.blocks if isinstance(b, ToolCallBlock)}
    extra = [ToolCallBlock(tool_call_id=ident, tool_name=entry.get("name") or FALLBACK_NAME,
                           tool_kwargs={})
             for ident, entry in view.rejected.items() if ident not in present]
    if not extra:
        return message
    additional = {**message.additional_kwargs, RECORD_KEY: view.record}
    return ChatMessage(role=message.role, blocks=[*message.blocks, *extra],
                       additional_kwargs=additional)


def is_paused(response: ChatResponse | ChatMessage, view: RecordView | None = None) -> bool:
    """Whether the vendor paused this turn (Anthropic ``stop_reason: "pause_turn"``, a long
    server-tool turn): the client sends it back to continue it (``view``: its record, already
    read)."""
    view = view if view is not None else record_view(response)
    if view is not None:
        return view.paused
    return RecordView.paused_stop(_message_of(response).additional_kwargs.get("stop_reason"))


def paused_message(message: ChatMessage) -> ChatMessage:
    """``message`` as it goes back to continue a paused turn: without its tool-call blocks.

    A client call inside a paused turn runs only once the turn has ended: it is neither run
    nor answered now (an answer would end the assistant turn the vendor is continuing); the
    vendor makes it again in the continued turn if it still wants it.
    """
    if not any(isinstance(b, ToolCallBlock) for b in message.blocks):
        return message
    keep = [i for i, b in enumerate(message.blocks) if not isinstance(b, ToolCallBlock)]
    additional = {k: v for k, v in message.additional_kwargs.items() if k != "tool_calls"}
    signatures = additional.get("thought_signatures")
    if isinstance(signatures, list):
        additional["thought_signatures"] = [signatures[i] for i in keep if i < len(signatures)]
    return ChatMessage(role=message.role, blocks=[message.blocks[i] for i in keep],
                       additional_kwargs=additional)
