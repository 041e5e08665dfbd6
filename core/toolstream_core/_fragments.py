"""Which call a bare argument fragment belongs to, per wire: what a framework need not see.

Once the gate has failed a call mid-stream (its arguments passed the cap, an unreadable event,
DESIGN 4.8), the rest of that call's bytes decide nothing: the gate's verdict is fixed and the
framework's view of the call is never run. A framework still pays for each of them (LlamaIndex's
OpenAI class rebuilds the whole argument string per chunk, quadratic; LangChain keeps a chunk
per fragment until the end). So the SDK tap withholds from the framework every event that is
*only* a fragment of a failed call (issue 37.3): `fragment_slot` says which call that is, by
the vendor's own index (``ToolCall.index``), and nothing for an event that carries anything
else (text, a call's id or name, a finish reason, usage, an error), which always goes on.

Read only after a call failed, so the per-chunk path of a healthy stream never comes here.
Wires without a table entry (Gemini, Bedrock, Cohere, Ollama: whole parts or small streams
per call) are forwarded as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._adapters._access import field

__all__ = ["fragment_slot"]

#: The delta fields of an OpenAI chat chunk that may be present, empty, in a bare fragment.
_CHAT_QUIET = ("content", "refusal", "function_call", "role")


def _bare(obj: Any, allowed: frozenset[str]) -> bool:
    """Whether ``obj`` (a wire dict or an SDK object) sets no field outside ``allowed`` to a
    value: SDK objects by their declared fields and their extras."""
    if obj.__class__ is dict:
        return all(k in allowed or v is None for k, v in obj.items())
    extra = getattr(obj, "model_extra", None)
    return not extra or all(k in allowed or v is None for k, v in extra.items())


_CHUNK = frozenset({"id", "object", "created", "model", "choices", "system_fingerprint",
                    "service_tier", "usage", "obfuscation"})
_CHOICE = frozenset({"index", "delta", "finish_reason", "logprobs"})
_DELTA = frozenset({"tool_calls", *_CHAT_QUIET})
_TOOL = frozenset({"index", "function", "type", "id"})
_FUNCTION = frozenset({"arguments", "name"})


def _openai_chat(event: Any) -> int | None:
    """A chunk of one choice whose delta is one tool call's ``arguments`` and nothing else."""
    choices = field(event, "choices")
    if not isinstance(choices, list) or len(choices) != 1 or field(event, "usage") is not None:
        return None
    choice = choices[0]
    if field(choice, "finish_reason") is not None or not _bare(choice, _CHOICE):
        return None
    delta = field(choice, "delta")
    if delta is None or any(field(delta, name) for name in _CHAT_QUIET) or not _bare(delta, _DELTA):
        return None
    calls = field(delta, "tool_calls")
    if not isinstance(calls, list) or len(calls) != 1:
        return None
    call = calls[0]
    function = field(call, "function")
    if (field(call, "id") is not None or function is None or field(function, "name") is not None
            or not _bare(call, _TOOL) or not _bare(function, _FUNCTION)):
        return None
    index = field(call, "index")
    return index if index.__class__ is int else None


def _anthropic(event: Any) -> int | None:
    """An ``input_json_delta``: the block's index."""
    if field(event, "type") != "content_block_delta":
        return None
    if field(field(event, "delta"), "type") != "input_json_delta":
        return None
    index = field(event, "index")
    return index if index.__class__ is int else None


def _openai_responses(event: Any) -> int | None:
    """A ``response.function_call_arguments.delta`` (or a custom tool's input delta): the
    item's ``output_index``."""
    if field(event, "type") not in ("response.function_call_arguments.delta",
                                    "response.custom_tool_call_input.delta"):
        return None
    index = field(event, "output_index")
    return index if index.__class__ is int else None


_SLOTS: dict[str, Callable[[Any], int | None]] = {
    "openai-chat": _openai_chat,
    "anthropic": _anthropic,
    "openai-responses": _openai_responses,
}


def fragment_slot(provider: str | None, event: Any) -> int | None:
    """The vendor index of the call ``event`` is a bare argument fragment of, or ``None`` when
    it is anything else (or the wire is not one this reads). Never raises on vendor data."""
    read = _SLOTS.get(provider) if provider is not None else None
    if read is None:
        return None
    try:
        return read(event)
    except Exception:  # not the wire's shape: not a bare fragment, so it goes on
        return None
