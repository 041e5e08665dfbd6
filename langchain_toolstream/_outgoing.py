"""The last step before a request leaves: the history as the partner class will serialise it.

Why this exists: the history step (``_messages.MESSAGES.prepare``) makes the history legal in
LangChain's terms (every call id answered once, right after its AIMessage, a rejected call
kept in ``invalid_tool_calls`` with its error ``ToolMessage``). What reaches the vendor is what
each partner class's message converter makes of that, and the converters differ:

- ``ChatCohere``, ``ChatLiteLLM`` and ``ChatOllama`` serialise ``tool_calls`` only: a rejected
  call in ``invalid_tool_calls`` is dropped, and its error result goes out without its call
  (a result without its call, which the vendors refuse);
- ``ChatNVIDIA`` serialises ``additional_kwargs["tool_calls"]`` only, which the gate's
  streamed message never carries: every streamed tool turn would go back with results and no
  calls;
- ``ChatBedrock`` over InvokeModel (Anthropic models) sends a ``ToolMessage`` as a
  ``tool_result`` block without ``is_error``, although it sends a ``tool_result`` block it is
  given whole; ``ChatGoogleGenerativeAI`` sends a result's text as ``{"output": ...}``, and
  a result that is a JSON object as the ``functionResponse.response`` itself, where Gemini
  reads ``{"error": ...}`` as a failure.

So one rule per class rewrites the OUTGOING COPY of the request (never the messages the
agent keeps, never what the tool runner reads: a rejected call never runs) so that the
converter serialises each rejected call in its assistant message, next to its error result,
with history-safe arguments (a JSON object: ``toolstream_core.integration.history_args``), and flags the
error where the vendor's wire has a flag. Classes not in the table serialise both fields
already (``ChatOpenAI`` and the classes built on it, ``ChatAnthropic``,
``ChatBedrockConverse``, ``ChatMistralAI``, ``ChatGroq``, ``ChatFireworks``); the tests read
each class's request body to prove it (``tests/langchain/test_lc_partners.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, InvalidToolCall, ToolCall, ToolMessage
from toolstream_core.integration import history_args
from toolstream_core.integration._private import ClassTable, openai_tool_calls

from ._messages import call_order

__all__ = ["for_partner_converter"]

Rule = Callable[[BaseChatModel, list[BaseMessage]], list[BaseMessage]]


# -- what each rule reads --------------------------------------------------------------------


def _answered_after(messages: list[BaseMessage], position: int) -> set[str]:
    """The ids the ToolMessages right after ``messages[position]`` answer."""
    ids: set[str] = set()
    for message in messages[position + 1:]:
        if not isinstance(message, ToolMessage):
            break
        ids.add(message.tool_call_id)
    return ids


def _as_call(call: InvalidToolCall) -> ToolCall:
    """A rejected call as a ``tool_calls`` entry: its history-safe arguments (a JSON object)."""
    args = json.loads(history_args(call.get("args")))
    return ToolCall(name=call.get("name") or "unknown", args=args, id=call.get("id"),
                    type="tool_call")


def _every_call(message: AIMessage, answered: set[str]) -> list[ToolCall]:
    """Committed and answered rejected calls, in the order the model made them, each id once
    (a message the history plan already completed carries a rejected call in both lists)."""
    listed = {c.get("id") for c in message.tool_calls}
    calls = [*message.tool_calls,
             *(_as_call(c) for c in message.invalid_tool_calls
               if c.get("id") in answered and c.get("id") not in listed)]
    rank = {ident: n for n, ident in enumerate(call_order(message))}
    return sorted(calls, key=lambda c: rank.get(str(c.get("id") or ""), len(rank)))


def _rewrite_turns(messages: list[BaseMessage],
                   rewrite: Callable[[AIMessage, set[str]], AIMessage]) -> list[BaseMessage]:
    out = list(messages)
    for position, message in enumerate(messages):
        if isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls):
            out[position] = rewrite(message, _answered_after(messages, position))
    return out


# -- the rules -------------------------------------------------------------------------------


def calls_in_tool_calls(model: BaseChatModel, messages: list[BaseMessage]) -> list[BaseMessage]:
    """For converters that serialise ``tool_calls`` only: every answered rejected call joins
    ``tool_calls`` in the copy, with history-safe arguments."""

    def rewrite(message: AIMessage, answered: set[str]) -> AIMessage:
        if not any(c.get("id") in answered for c in message.invalid_tool_calls):
            return message
        return message.model_copy(update={"tool_calls": _every_call(message, answered),
                                          "invalid_tool_calls": []})

    return _rewrite_turns(messages, rewrite)


def calls_in_openai_kwargs(model: BaseChatModel, messages: list[BaseMessage]) -> list[BaseMessage]:
    """For converters that serialise ``additional_kwargs["tool_calls"]`` only (the OpenAI
    shape): every call, committed and answered rejected, goes there in the copy."""

    def rewrite(message: AIMessage, answered: set[str]) -> AIMessage:
        calls = [(c.get("id"), c["name"], c["args"]) for c in _every_call(message, answered)]
        kwargs = {**message.additional_kwargs, "tool_calls": openai_tool_calls(calls)}
        return message.model_copy(update={"additional_kwargs": kwargs})

    return _rewrite_turns(messages, rewrite)


def _error_results(messages: list[BaseMessage],
                   content: Callable[[ToolMessage, str], Any]) -> list[BaseMessage]:
    return [message.model_copy(update={"content": content(message, message.content)})
            if isinstance(message, ToolMessage) and message.status == "error"
            and isinstance(message.content, str) else message
            for message in messages]


def anthropic_is_error(model: BaseChatModel, messages: list[BaseMessage]) -> list[BaseMessage]:
    """``ChatBedrock`` over InvokeModel: an error result goes as the ``tool_result`` block the
    converter passes through whole, with Anthropic's ``is_error: true``. With the Converse
    switch on, the class is a ``ChatBedrockConverse`` inside, which sends ``status: "error"``
    itself: nothing to do."""
    if getattr(model, "beta_use_converse_api", False):
        return messages
    return _error_results(messages, lambda m, text: [
        {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": text, "is_error": True}])


def gemini_error(model: BaseChatModel, messages: list[BaseMessage]) -> list[BaseMessage]:
    """``ChatGoogleGenerativeAI`` sends a result that is a JSON object as the
    ``functionResponse.response`` itself: an error result goes as ``{"error": text}``, the key
    Gemini documents for a function's failure (its text would go as ``{"output": text}``)."""
    return _error_results(messages, lambda m, text: json.dumps({"error": text}, ensure_ascii=False))


#: (package, partner class in the model's MRO, the rule): what each partner converter needs,
#: looked up along the model's MRO (``ClassTable``).
_RULES: ClassTable[tuple[str, str, Rule]] = ClassTable((
    ("langchain_cohere", "ChatCohere", calls_in_tool_calls),
    ("langchain_litellm", "ChatLiteLLM", calls_in_tool_calls),
    ("langchain_ollama", "ChatOllama", calls_in_tool_calls),
    ("langchain_nvidia_ai_endpoints", "ChatNVIDIA", calls_in_openai_kwargs),
    ("langchain_aws", "ChatBedrock", anthropic_is_error),
    ("langchain_google_genai", "ChatGoogleGenerativeAI", gemini_error),
))


def for_partner_converter(model: BaseChatModel, messages: list[BaseMessage]) -> list[BaseMessage]:
    """``messages`` as ``model``'s partner converter must receive them (caller's list untouched)."""
    rule: Rule | None = _RULES.get(type(model))
    return messages if rule is None else rule(model, messages)
