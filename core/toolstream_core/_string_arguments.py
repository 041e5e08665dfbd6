"""The copy of an OpenAI chat chunk that a framework can digest: object arguments as text.

Some OpenAI-compatible servers (Ollama behind LiteLLM) send a tool call's ``arguments`` as a
JSON object instead of a string. The core judges that object as structured arguments (DESIGN
§5.3), but the frameworks break on it before any gate can help: ``langchain_openai`` puts the
dict into ``tool_call_chunks.args`` and pydantic rejects it, LlamaIndex's OpenAI stream merge
does ``dict += dict``. So a shim's tap, after the core has seen the original event, hands the
framework this copy instead, with each object serialised as compact JSON. The gate still
decides from the original; the framework's own merge and models only see strings.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["with_string_arguments"]


def _get(obj: Any, name: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _replace(obj: Any, name: str, value: Any) -> Any:
    """A shallow copy of ``obj`` (an SDK pydantic object or a wire dict) with one field set."""
    if isinstance(obj, dict):
        return {**obj, name: value}
    return obj.model_copy(update={name: value})


def _text(value: Any) -> str:
    # ``default=str``: the framework only needs a string; what the value means is the core's
    # verdict on the original, which this copy never reaches.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def _call(tc: Any) -> Any:
    function = _get(tc, "function")
    if function is None:
        return tc
    arguments = _get(function, "arguments")
    if arguments is None or arguments.__class__ is str:
        return tc
    return _replace(tc, "function", _replace(function, "arguments", _text(arguments)))


def _has_object(calls: list[Any]) -> bool:
    for tc in calls:
        function = tc.get("function") if tc.__class__ is dict else getattr(tc, "function", None)
        if function is None:
            continue
        arguments = (function.get("arguments") if function.__class__ is dict
                     else getattr(function, "arguments", None))
        if arguments is not None and arguments.__class__ is not str:
            return True
    return False


def with_string_arguments(chunk: Any) -> Any:
    """``chunk`` itself, or a copy whose tool-call ``arguments`` objects are compact JSON text.

    The taps call this on every chat chunk, so the common cases stay cheap: a chunk without
    tool-call deltas costs a few attribute reads, a tool-call delta with string arguments one
    type check more, and nothing is copied. Only objects on the path to a changed value are.
    """
    choices = chunk.get("choices") if chunk.__class__ is dict else getattr(chunk, "choices", None)
    if not choices or choices.__class__ is not list:
        return chunk
    copied: list[Any] | None = None
    for ci, choice in enumerate(choices):
        delta = _get(choice, "delta")
        calls = _get(delta, "tool_calls") if delta is not None else None
        if not calls or calls.__class__ is not list or not _has_object(calls):
            continue
        if copied is None:
            copied = list(choices)
        new_calls = [_call(tc) for tc in calls]
        copied[ci] = _replace(choice, "delta", _replace(delta, "tool_calls", new_calls))
    return chunk if copied is None else _replace(chunk, "choices", copied)
