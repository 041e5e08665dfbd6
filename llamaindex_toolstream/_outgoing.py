"""The last step before a request leaves: the history as the LLM class will serialise it.

Why this exists: the history step (``_messages.MESSAGES.prepare``) makes the history legal in
LlamaIndex's terms (every call a ``ToolCallBlock`` of its assistant message, every call id
answered once by a ``role="tool"`` message right after it, rejected calls with ``{}``
arguments and an ``is_error`` result). What reaches the vendor is what each class's message
converter makes of that, and they differ:

- ``LiteLLM`` converts content blocks only and raises on a ``ToolCallBlock`` ("Unsupported
  content block type"); it sends a turn's calls from ``additional_kwargs["tool_calls"]``
  (OpenAI's shape), and sends *every* ``additional_kwargs`` key as a field of the message,
  the gate's record and error marks included;
- ``BedrockConverse`` sends ``toolResult.status`` from ``additional_kwargs["status"]``: an
  error result goes with Bedrock's ``status: "error"``.

So one rule per class rewrites the OUTGOING COPY of the request (never the memory the agent
keeps, never what the tool runner reads: a rejected call never runs), with a rejected call's
arguments history-safe (a JSON object: ``toolstream_core.integration.history_args``). Classes not in the
table serialise ``ToolCallBlock``s and tool results as they are (``OpenAI`` and its
subclasses, ``OpenAIResponses``, ``Anthropic``, ``GoogleGenAI``, ``Ollama``, ``MistralAI``,
``Cohere``); the tests read each class's request body to prove it
(``tests/llamaindex/test_li_families.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, ToolCallBlock
from toolstream_core.integration import RECORD_KEY
from toolstream_core.integration._private import ClassTable, openai_tool_calls

from ._messages import read_record

__all__ = ["for_llm_converter"]

Rule = Callable[[list[ChatMessage]], list[ChatMessage]]

#: What the gate itself writes into ``additional_kwargs``: read by the shim, never a field of
#: the vendor's message.
_OURS = frozenset({RECORD_KEY, "is_error", "toolstream_reason"})


def litellm_kwargs(messages: list[ChatMessage]) -> list[ChatMessage]:
    """For ``LiteLLM``, which reads a turn's calls from ``additional_kwargs["tool_calls"]``
    (OpenAI's shape, ``openai_tool_calls``) and sends every other key as a message field: the
    blocks move there, in order, and the gate's own keys stay home."""
    out: list[ChatMessage] = []
    for message in messages:
        calls = [b for b in message.blocks if isinstance(b, ToolCallBlock)]
        extra = {k: v for k, v in message.additional_kwargs.items() if k not in _OURS}
        if not calls and len(extra) == len(message.additional_kwargs):
            out.append(message)
            continue
        if calls:
            extra["tool_calls"] = openai_tool_calls(
                (b.tool_call_id, b.tool_name, b.tool_kwargs) for b in calls)
        blocks = [b for b in message.blocks if not isinstance(b, ToolCallBlock)]
        out.append(ChatMessage(role=message.role, blocks=blocks, additional_kwargs=extra))
    return out


def _is_error(message: ChatMessage, rejected: set[str]) -> bool:
    """An error result: marked so (``error_tool_messages``), or the answer to a call the gate
    rejected (the record of its assistant message: the agent's tool step adds no mark)."""
    kwargs = message.additional_kwargs
    return bool(kwargs.get("is_error")) or str(kwargs.get("tool_call_id")) in rejected


def status_error(messages: list[ChatMessage]) -> list[ChatMessage]:
    """``BedrockConverse``: an error result goes with ``toolResult.status: "error"``."""
    records = [read_record(m) for m in messages if m.role == "assistant"]
    rejected = {str(entry["tool_call_id"]) for record in records if record is not None
                for entry in record["rejected"]}
    return [message.model_copy(update={"additional_kwargs": {**message.additional_kwargs,
                                                             "status": "error"}})
            if message.role == "tool" and _is_error(message, rejected)
            and "status" not in message.additional_kwargs else message
            for message in messages]


def _calls_of(message: ChatMessage) -> int:
    calls = message.additional_kwargs.get("tool_calls")
    return len(calls) if isinstance(calls, list) else 0


def one_result_per_turn(messages: list[ChatMessage]) -> list[ChatMessage]:
    """``Cohere`` (v1) pairs *every* tool message after a turn with *every* call of that turn
    (N calls, N results: N x N ``tool_results``, each call answered N times, with the other
    calls' outputs). Sent as one message, a turn's results pair with each call once: the
    results of a turn with several calls go as one tool message holding them all, in order,
    each under its call's name."""
    out: list[ChatMessage] = []
    i = 0
    while i < len(messages):
        message = messages[i]
        out.append(message)
        i += 1
        if message.role != "assistant" or _calls_of(message) < 2:
            continue
        results: list[ChatMessage] = []
        while i < len(messages) and messages[i].role == "tool":
            results.append(messages[i])
            i += 1
        if len(results) < 2:
            out.extend(results)
            continue
        calls = message.additional_kwargs["tool_calls"]
        names = [getattr(c, "name", None) or "result" for c in calls] if len(calls) == len(results) \
            else ["result"] * len(results)
        text = "\n".join(f"{name} (call {n}): {m.content}"
                          for n, (name, m) in enumerate(zip(names, results, strict=True), 1))
        out.append(ChatMessage(role="tool", content=text,
                               additional_kwargs={"tool_call_id": results[0].additional_kwargs.get("tool_call_id")}))
    return out


def cohere_calls_as_objects(messages: list[ChatMessage]) -> list[ChatMessage]:
    """``Cohere`` (v1) reads a turn's calls as ``cohere.ToolCall`` objects (their
    ``__dict__``); a history that went through JSON (a saved ``Context``, a run a durable
    runtime recovered) holds them as plain dicts, on which the class raises
    ``AttributeError``. Each dict goes back to the object it was."""
    from cohere import ToolCall as CohereToolCall

    out: list[ChatMessage] = []
    for message in messages:
        calls = message.additional_kwargs.get("tool_calls")
        if not isinstance(calls, list) or not any(isinstance(c, dict) for c in calls):
            out.append(message)
            continue
        objects = [CohereToolCall.model_validate(c) if isinstance(c, dict) else c for c in calls]
        out.append(message.model_copy(update={"additional_kwargs": {
            **message.additional_kwargs, "tool_calls": objects}}))
    return out


def cohere_v1(messages: list[ChatMessage]) -> list[ChatMessage]:
    """``Cohere`` (v1): calls as the SDK's objects, then one result message per turn."""
    return one_result_per_turn(cohere_calls_as_objects(messages))


#: (module, class name, the rule): what each class's converter needs, looked up along the
#: LLM's MRO (``ClassTable``).
_RULES: ClassTable[tuple[str, str, Rule]] = ClassTable((
    ("llama_index.llms.litellm", "LiteLLM", litellm_kwargs),
    ("llama_index.llms.bedrock_converse", "BedrockConverse", status_error),
    ("llama_index.llms.cohere", "Cohere", cohere_v1),
))


def for_llm_converter(llm: Any, messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """``messages`` as ``llm``'s message converter must receive them (the caller's list
    untouched)."""
    rule: Rule | None = _RULES.get(type(llm))
    return list(messages) if rule is None else rule(list(messages))
