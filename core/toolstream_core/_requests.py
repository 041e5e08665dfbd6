"""The last of the outgoing-message rules: what a request says beyond the planned history (§6).

The history is planned in ``_history``; what is left is written here, once for both shims:

- what the tap adds to an intercepted request on its way to the SDK that the framework could
  not say itself (`sent_request`; today one rule: Anthropic's ``is_error: true`` on the gate's
  own error results, which LlamaIndex's ``Anthropic`` has no field for). The tap
  (``vendors._tap``) only hands the request here; the rule is this module's;
- the OpenAI chat shape of a turn's calls (`openai_tool_calls`), for the partner converters
  that read a turn's calls from ``additional_kwargs["tool_calls"]`` (LangChain's
  ``ChatNVIDIA``, LlamaIndex's ``LiteLLM``): one entry, one arguments text, in both shims.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ._decision import history_args
from ._results import is_gate_error

__all__ = ["REQUESTS", "openai_tool_calls", "rewrites_requests", "sent_request"]


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text") or "" for b in content if isinstance(b, dict))
    return ""


def _flagged(block: Any) -> Any:
    """An Anthropic ``tool_result`` block that holds the gate's own error for its call, with
    ``is_error: true`` (the block itself otherwise)."""
    if (isinstance(block, dict) and block.get("type") == "tool_result" and "is_error" not in block
            and is_gate_error(_result_text(block.get("content")), str(block.get("tool_use_id")))):
        return {**block, "is_error": True}
    return block


def _anthropic_request(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The request with Anthropic's ``is_error: true`` on every ``tool_result`` that is the
    gate's error for its call: LlamaIndex's ``Anthropic`` builds these blocks itself, with no
    field for the flag, so only the text said the call failed."""
    messages = kwargs.get("messages")
    if not isinstance(messages, list):
        return kwargs
    out = []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            blocks = [_flagged(b) for b in content]
            if any(a is not b for a, b in zip(blocks, content, strict=True)):
                message = {**message, "content": blocks}
        out.append(message)
    changed = any(a is not b for a, b in zip(out, messages, strict=True))
    return {**kwargs, "messages": out} if changed else kwargs


#: provider -> how an intercepted request is sent: what the framework could not say itself.
#: Applied to a whole (non-streamed) request as well, which the tap does not read; the SDK that
#: sends each of these providers bears its name.
REQUESTS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {"anthropic": _anthropic_request}


def rewrites_requests(provider: str) -> bool:
    """Whether the tap changes what a ``provider`` request says (Anthropic: ``is_error`` on the
    gate's error results), so a shim sends even a whole request through its tapped copy."""
    return provider in REQUESTS


def sent_request(provider: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` of an intercepted ``provider`` request as the SDK is to send them (the same
    object when no rule applies). Whole (non-streamed) requests go through it too."""
    rule = REQUESTS.get(provider)
    return kwargs if rule is None else rule(kwargs)


def _arguments_text(args: Any) -> str:
    """A call's arguments as the OpenAI ``arguments`` string: an object as JSON (non-ASCII
    kept as is), anything else as its history-safe text (``history_args``: a JSON object)."""
    if isinstance(args, Mapping):
        return json.dumps(dict(args), ensure_ascii=False)
    return history_args(args if isinstance(args, str) else None)


def openai_tool_calls(calls: Iterable[tuple[Any, str, Any]]) -> list[dict[str, Any]]:
    """``(id, name, arguments)`` of a turn's calls, in order, as OpenAI chat ``tool_calls``
    entries (``{"id", "type": "function", "function": {"name", "arguments"}}``)."""
    return [{"id": ident, "type": "function",
             "function": {"name": name, "arguments": _arguments_text(args)}}
            for ident, name, args in calls]
