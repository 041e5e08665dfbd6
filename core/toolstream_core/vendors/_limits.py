"""The output-token limit a vendor request carries, for the core's backstop (DESIGN 5.5).

vLLM's streaming path reports ``finish_reason: "tool_calls"`` for a call that ``max_tokens``
cut; when the cut lands where the JSON happens to parse, only the limit tells the truth. The
core ends such a turn ``stream_truncated`` when the reported output tokens reach the limit it
was given, so a shim hands it the limit without the user repeating it: read from the keyword
arguments of the SDK call the tap saw (whatever set them), else from the model's settings.
This module knows how each SDK's request spells the limit; nothing else does.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

__all__ = ["request_limit", "settings_limit"]

_log = logging.getLogger(__name__)

# Request keys that carry the output limit: OpenAI chat (both spellings), OpenAI Responses
# and google-genai's config (``max_output_tokens``), Anthropic and Cohere (``max_tokens``);
# camelCase is how a Gemini config dict may spell it, and Bedrock's ``inferenceConfig``;
# Ollama's ``options`` call it ``num_predict``.
_KEYS = ("max_completion_tokens", "max_tokens", "max_output_tokens", "maxOutputTokens",
         "maxTokens", "num_predict")
# Where a request nests its generation settings (google-genai ``config``, older wrappers,
# Bedrock Converse ``inferenceConfig``, Ollama ``options``).
_NESTED = ("config", "generation_config", "inferenceConfig", "options")


def _positive_int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return None


def _get(source: Any, key: str) -> Any:
    if isinstance(source, Mapping):
        return source.get(key)
    return getattr(source, key, None)


def _limit_in(source: Any) -> int | None:
    """The limit in one request or settings object (a mapping or attributes), nested included."""
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


def settings_limit(*sources: Any) -> int | None:
    """The limit in the first of ``sources`` that carries one (a request or settings object: a
    mapping or attributes, nested included), in the order a framework lets one override the
    next; ``None`` when none does. An object that cannot be read (a class with odd
    attributes) ends the search with ``None``: no backstop rather than a failure."""
    try:
        for source in sources:
            found = _limit_in(source)
            if found is not None:
                return found
    except Exception:
        _log.debug("toolstream: cannot read an output limit from %s",
                   [type(source).__name__ for source in sources], exc_info=True)
    return None


def request_limit(request: Mapping[str, Any]) -> int | None:
    """The limit in an SDK streaming call's keyword arguments (``None``: the request has none)."""
    return settings_limit(request)
