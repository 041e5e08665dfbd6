"""The request's output-token limit, for the core's backstop against lying finish signals.

vLLM's streaming path reports ``finish_reason: "tool_calls"`` for a call that ``max_tokens``
cut; when the cut lands where the JSON happens to parse, only the limit tells the truth. The
core ends such a turn ``stream_truncated`` when the reported output tokens reach the limit it
was given (``Assembler(max_output_tokens=N)``), so the gate hands it the limit without the
user repeating it: preferably read from the request the SDK is actually asked to send (the tap
sees its keyword arguments, whatever set them: the model's field, ``model_kwargs``,
``bind(max_tokens=...)``), else from the model's settings and the call's keyword arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["assembler_limit", "output_limit", "request_limit"]

# Request keys that carry the output limit: OpenAI chat (both spellings), OpenAI Responses
# and google-genai's config (``max_output_tokens``), Anthropic (``max_tokens``); camelCase is
# how a Gemini config dict may spell it.
_KEYS = ("max_completion_tokens", "max_tokens", "max_output_tokens", "maxOutputTokens")
# Where a request nests its generation settings (google-genai ``config``, older wrappers).
_NESTED = ("config", "generation_config")


def _positive_int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def _get(source: Any, key: str) -> Any:
    if isinstance(source, Mapping):
        return source.get(key)
    return getattr(source, key, None)


def _limit_in(source: Any) -> int | None:
    if source is None:
        return None
    for key in _KEYS:
        found = _positive_int(_get(source, key))
        if found is not None:
            return found
    for key in _NESTED:
        nested = _get(source, key)
        if nested is not None and nested is not source:
            found = _limit_in(nested)
            if found is not None:
                return found
    return None


def request_limit(request: Mapping[str, Any]) -> int | None:
    """The limit in an SDK streaming call's keyword arguments (``None``: the request has none)."""
    try:
        return _limit_in(request)
    except Exception:  # an SDK object with odd attributes: no backstop rather than a failure
        return None


def output_limit(model: Any, kwargs: Mapping[str, Any]) -> int | None:
    """The limit a model call will use when the request itself is not visible: the call's
    keyword arguments (``bind``, ``invoke(..., max_tokens=)``) first, then the model's
    ``model_kwargs``, then its fields (``max_tokens`` / ``max_output_tokens``)."""
    try:
        for source in (kwargs, getattr(model, "model_kwargs", None), model):
            found = _limit_in(source)
            if found is not None:
                return found
    except Exception:  # a model class with odd attributes: no backstop rather than a failure
        return None
    return None


def assembler_limit(limit: int | None) -> dict[str, Any]:
    """The ``Assembler`` keyword for ``limit``: the one place the gate spells it."""
    return {} if limit is None else {"max_output_tokens": limit}
