"""``check_history``: LangChain messages in the core's neutral form, checked before they leave.

The rules live in ``toolstream_core`` (``check_entries``), shared with the LlamaIndex shim;
this module only reads what they need off LangChain messages: the roles, each AIMessage's
call ids in the model's order, the id each ToolMessage answers, and where the vendor's
reasoning sits (Anthropic ``thinking`` blocks, Responses ``reasoning`` items, Gemini thought
signatures).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from toolstream_core import HistoryCall, HistoryEntry, HistoryProblem, check_entries
from toolstream_core.integration import refuse_history, thinking_enabled

from ._messages import call_order, request_view

__all__ = ["HistoryPolicy", "check_history", "history_entries", "prepare_history"]

_log = logging.getLogger(__name__)

#: What the gated model does with the history before each request: ``"repair"`` answers
#: every unanswered call id; ``"check"`` repairs, then raises ``HistoryError`` for what only
#: the model could fix; ``"off"`` answers only the calls the gate itself rejected.
HistoryPolicy = Literal["repair", "check", "off"]

_GEMINI_SIGNATURES = "__gemini_function_call_thought_signatures__"

#: What the LangChain integration repairs itself before sending: ``ChatGoogleGenerativeAI``
#: gives a function call that lost its signature Google's documented bypass value
#: (``skip_thought_signature_validator``), which the API accepts; raising for it would stop
#: a request the vendor takes. ``check_history`` still lists it: the model has lost its
#: reasoning for that step.
_INTEGRATION_REPAIRS = frozenset({"missing_thought_signature"})
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


def _reasoning_first(blocks: list[Mapping[str, Any]]) -> bool:
    """A signed thinking block comes before the first tool_use (Anthropic's order)."""
    for block in blocks:
        kind = block.get("type")
        if kind in _THINKING:
            return kind == "redacted_thinking" or bool(block.get("signature"))
        if kind in _CALL_BLOCKS:
            return False
    return False


def _assistant(message: AIMessage) -> HistoryEntry:
    blocks = _blocks(message)
    signatures = _signatures(message)
    names = {c.get("id"): c.get("name") for c in [*message.tool_calls, *message.invalid_tool_calls]}
    calls = tuple(HistoryCall(ident, names.get(ident), bool(signatures.get(ident)))
                  for ident in call_order(message))
    reasoning = (any(b.get("type") in _REASONING for b in blocks)
                 or bool(message.additional_kwargs.get("reasoning")) or bool(signatures))
    return HistoryEntry("assistant", calls, reasoning=reasoning,
                        reasoning_first=_reasoning_first(blocks))


def history_entries(messages: Sequence[BaseMessage]) -> list[HistoryEntry]:
    """``messages`` in the core's neutral form (one entry per message, same positions)."""
    out: list[HistoryEntry] = []
    for message in messages:
        if isinstance(message, AIMessage):
            out.append(_assistant(message))
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
    return check_entries(history_entries(messages), provider, reasoning=reasoning, stored=stored)


def prepare_history(messages: list[BaseMessage], family: str | None, policy: HistoryPolicy,
                    model: Any) -> list[BaseMessage]:
    """The history the request sends under ``policy`` (see ``HistoryPolicy``)."""
    view = request_view(messages, family, repair=policy != "off")
    if policy != "check":
        return view
    problems = check_history(view, family, reasoning=thinking_enabled(getattr(model, "thinking", None)),
                             stored=getattr(model, "store", None) is not False)
    refuse_history(problems, family, exempt=_INTEGRATION_REPAIRS, log=_log)
    return view
