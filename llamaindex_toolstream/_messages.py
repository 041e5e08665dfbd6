"""LlamaIndex chat messages as the core reads them, and the assistant message that agrees
with its verdict.

LlamaIndex builds the assistant message from its own accumulation (``parse_partial_json``,
merge-by-last-index, one block per Gemini part), so its tool-call blocks can hold merged,
repaired or phantom calls. The next request sends
that message back to the vendor, and every call id in it must be answered exactly once; so
the tool-call blocks are replaced by the calls the core saw (``rebuild_message``): committed
calls with their strictly parsed arguments, rejected calls (only for a caller that answers
them) with ``{}`` (their error result explains why; the raw text is never echoed back), and
calls the config drops (``drop_with_protocol_repair``) removed.

What is decided from the gate's record (whether a turn is paused, each call's error result,
the history each request sends) is the core's ``MessageKit``; ``MESSAGES`` says where a
``ChatMessage`` keeps each thing (the role, each assistant message's ``ToolCallBlock`` ids
in order, the id a tool message answers (``additional_kwargs["tool_call_id"]``), thinking
blocks and their signatures (Anthropic, ``additional_information["signature"]``), Responses
reasoning items and Gemini thought signatures (``additional_kwargs["thought_signatures"]``,
one per block)) and builds LlamaIndex's messages.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    MessageRole,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
)
from toolstream_core import CallState, ToolCall, Turn
from toolstream_core.integration import RECORD_KEY, HistoryCall, HistoryEntry, MessageKit

if TYPE_CHECKING:  # annotations only
    from toolstream_core.integration import DecisionRecord, HistoryProblem, RecordView

__all__ = ["FALLBACK_NAME", "MESSAGES", "call_id", "call_name", "check_history", "error_tool_messages",
           "message_with_rejected_calls", "pair_orphan_calls", "read_record", "rebuild_message", "sent_after"]

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
    return MESSAGES.record(response)


def error_tool_messages(response: ChatResponse | ChatMessage) -> list[ChatMessage]:
    """``role="tool"`` messages answering every rejected call of ``response``, in order.

    They pair the ids of ``message_with_rejected_calls(response)`` (not ``response.message``,
    which holds committed calls only); add the results of the committed calls you run. Read
    from the record, so a response loaded from JSON gives the same answers. For a response that
    did not pass the gate, the calls whose arguments LlamaIndex itself could not parse are
    paired the same way (as the LangChain shim does with ``invalid_tool_calls``).
    """
    return MESSAGES.error_results(response)


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
    view = MESSAGES.view(response)
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


def sent_after(user_msg: str | ChatMessage | None) -> list[ChatMessage]:
    """What a ``*_chat_with_tools`` call appends after its history (``user_msg``): it is
    checked with the history (it ends the tool loop the Anthropic and Gemini rules look at)
    but never sent by the gate, since the wrapped LLM appends it itself."""
    if user_msg is None:
        return []
    return [user_msg if isinstance(user_msg, ChatMessage) else ChatMessage(role=MessageRole.USER, content=user_msg)]


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
    return MESSAGES.check(messages, provider, reasoning=reasoning, stored=stored)


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
    return MESSAGES.pair_orphans(messages, provider)


# -- where a LlamaIndex message keeps what the core reads -------------------------------------
#: What the LlamaIndex integration's own wire makes acceptable, so raising for it would stop a
#: request the vendor takes: ``OpenAIResponses`` sends a function call by its ``call_id``
#: alone (no ``fc_`` item id, which is what ties a call to its reasoning item) and, with
#: ``store=False``, no reasoning item at all. ``check_history`` still lists it: the model has
#: lost its reasoning for that step. A lost Gemini ``thoughtSignature`` is raised here (unlike
#: LangChain's ``ChatGoogleGenerativeAI``, ``GoogleGenAI`` sends no bypass value for it).
_INTEGRATION_REPAIRS = frozenset({"missing_reasoning"})


def _message_of(response: ChatResponse | ChatMessage) -> ChatMessage:
    return response.message if isinstance(response, ChatResponse) else response


def _record_value(response: ChatResponse | ChatMessage) -> Any:
    """What ``response`` (or its message) keeps under ``RECORD_KEY``: a ``ChatResponse`` and
    its assistant message both carry it."""
    for holder in (response, getattr(response, "message", None)):
        extra = getattr(holder, "additional_kwargs", None)
        value = extra.get(RECORD_KEY) if isinstance(extra, Mapping) else None
        if value is not None:
            return value
    return None


def _signed(block: ThinkingBlock) -> bool:
    info = block.additional_information or {}
    return bool(info.get("signature")) or info.get("type") == "redacted_thinking"


def _li_entry(message: ChatMessage, view: RecordView | None, family: str | None) -> HistoryEntry:
    """``message`` as LlamaIndex shows it: its role, the id a tool message answers
    (``additional_kwargs["tool_call_id"]``), an assistant message's ``ToolCallBlock`` s in order
    (every one is on the wire) with their Gemini signatures (one per block), and its thinking
    blocks (Anthropic's signature in ``additional_information``) or Responses reasoning."""
    role = str(getattr(message.role, "value", message.role))
    if role == "tool":
        ident = message.additional_kwargs.get("tool_call_id")
        return HistoryEntry("tool", answers=str(ident) if ident is not None else None)
    if role != "assistant":
        return HistoryEntry("user" if role == "user" else "system")
    raw = message.additional_kwargs.get("thought_signatures")
    signatures: list[Any] = raw if isinstance(raw, list) else []
    calls = tuple(
        HistoryCall(block.tool_call_id, block.tool_name,
                    bool(signatures[i]) if i < len(signatures) else False)
        for i, block in enumerate(message.blocks) if isinstance(block, ToolCallBlock))
    reasoning = (any(isinstance(b, ThinkingBlock) for b in message.blocks)
                 or any(signatures) or bool(message.additional_kwargs.get("reasoning")))
    return HistoryEntry("assistant", calls, reasoning=reasoning,
                        reasoning_first=HistoryEntry.signed_before_calls(
                            _signed(b) if isinstance(b, ThinkingBlock) else None
                            for b in message.blocks if isinstance(b, ThinkingBlock | ToolCallBlock)))


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


def _unusable_blocks(response: ChatResponse | ChatMessage) -> Iterator[tuple[str | None, str | None, str | None]]:
    for block in _message_of(response).blocks:
        if isinstance(block, ToolCallBlock) and block.tool_call_id:
            error = _unusable(block.tool_kwargs)
            if error is not None:
                yield block.tool_call_id, block.tool_name, error


def _error_chat_message(call_id: str, name: str | None, content: str, reason: str | None,
                  state: str | None) -> ChatMessage:
    """An error result as LlamaIndex's tool message: ``name`` (the agent's ``FALLBACK_NAME``
    where the call had none) and the mark ``_outgoing`` turns into the vendor's error flag."""
    return ChatMessage(role=MessageRole.TOOL, content=content,
                       additional_kwargs={"tool_call_id": call_id, "name": name or FALLBACK_NAME,
                                          "is_error": True, "toolstream_reason": reason})


def _without_call_blocks(message: ChatMessage) -> ChatMessage:
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


def _as_is(message: ChatMessage, view: RecordView | None, shown: Sequence[str]) -> ChatMessage:
    """Every call of a ``ChatMessage`` is on the wire (its blocks): nothing needs showing."""
    return message


#: LlamaIndex's messages for the core: where each keeps what the core reads, its constructors,
#: and what its classes repair themselves (``thinking_dict``: ``Anthropic``'s setting).
MESSAGES: MessageKit[ChatMessage, ChatResponse, ChatMessage] = MessageKit(
    record_of=_record_value, stop_reason_of=lambda m: _message_of(m).additional_kwargs.get("stop_reason"),
    entry_of=_li_entry, invalid_calls_of=_unusable_blocks, error_result=_error_chat_message,
    continued=_without_call_blocks, shown=_as_is, thinking_field="thinking_dict",
    log=logging.getLogger(__name__), exempt=_INTEGRATION_REPAIRS)
