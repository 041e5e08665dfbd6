"""The request's output-token limit, for the core's backstop against lying finish signals.

vLLM's streaming path reports ``finish_reason: "tool_calls"`` for a call that ``max_tokens``
cut; when the cut lands where the JSON happens to parse, only the limit tells the truth. The
core ends such a turn ``stream_truncated`` when the reported output tokens reach the limit it
was given (``Assembler(max_output_tokens=N)``), so each session hands it the limit the LLM
will send, without the user repeating it. The LLM classes merge their settings with the
call's keyword arguments in their own order (``OpenAI`` lets ``max_tokens`` override the
call's, then ``additional_kwargs`` override both), so the class's own request builder is asked
when it has one, and its settings are read only when it has none.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

__all__ = ["assembler_limit", "output_limit"]

logger = logging.getLogger(__name__)

# OpenAI chat (both spellings), OpenAI Responses and Gemini, Anthropic.
_KEYS = ("max_completion_tokens", "max_output_tokens", "max_tokens")


def _limit_in(source: Mapping[str, Any] | None) -> int | None:
    for key in _KEYS:
        value = (source or {}).get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def _request_settings(llm: Any, kwargs: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The generation settings ``llm`` will send for a call with ``kwargs``."""
    generation = getattr(llm, "_generation_config", None)
    if isinstance(generation, Mapping):  # GoogleGenAI: its config, then the call's
        return {**generation, **dict(kwargs.get("generation_config") or {})}
    for builder in ("_get_model_kwargs", "_get_all_kwargs"):  # OpenAI(Responses), Anthropic
        build = getattr(llm, builder, None)
        if callable(build):
            built = build(**kwargs)
            return built if isinstance(built, Mapping) else None
    return None


def output_limit(llm: Any, kwargs: Mapping[str, Any]) -> int | None:
    """The output-token limit of ``llm``'s next request with ``kwargs``; ``None`` if unknown."""
    try:
        settings = _request_settings(llm, kwargs)
        if settings is not None:
            return _limit_in(settings)
        extra = getattr(llm, "additional_kwargs", None)
        for source in (extra if isinstance(extra, Mapping) else None, kwargs):
            found = _limit_in(source)
            if found is not None:
                return found
        return _limit_in({key: getattr(llm, key, None) for key in _KEYS})
    except Exception:  # an LLM class built differently: no backstop rather than a failure
        logger.debug("toolstream: cannot read %s's output limit", type(llm).__name__,
                     exc_info=True)
        return None


def assembler_limit(limit: int | None) -> dict[str, Any]:
    """The ``Assembler`` keyword for ``limit``: the one place the shim spells it."""
    return {} if limit is None else {"max_output_tokens": limit}
