"""The last of the outgoing-message rules: what a request says beyond the planned history (§6).

The history is planned in ``_history``; what is left is written here, once for both shims:

- what the tap adds to an intercepted request on its way to the SDK that the framework could
  not say itself (`sent_request`; today one rule: Anthropic's ``is_error: true`` on the gate's
  own error results, which LlamaIndex's ``Anthropic`` has no field for). The tap
  (``vendors._tap``) only hands the request here; the rule is this module's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._results import is_gate_error

__all__ = ["REQUESTS", "rewrites_requests", "sent_request"]


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
