"""The output-token limit a LlamaIndex LLM will send, for the core's backstop (DESIGN 5.5).

How each SDK request spells the limit is shared knowledge
(``toolstream_core.integration.settings_limit``). What is LlamaIndex's is here: where a class
keeps the settings it will send. The LLM classes merge their settings with the call's keyword
arguments in their own order (``OpenAI`` lets ``max_tokens`` override the call's, then
``additional_kwargs`` override both), so the class's own request builder is asked when it has
one, and its settings are read only when it has none. A tapped stream replaces this with the
limit its SDK request really carried (``GateSession.begin``); whole answers and streams
read from ``ChatResponse.raw`` keep it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from toolstream_core.integration import settings_limit

__all__ = ["llm_output_limit"]

logger = logging.getLogger(__name__)


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


def llm_output_limit(llm: Any, kwargs: Mapping[str, Any]) -> int | None:
    """The output-token limit of ``llm``'s next request with ``kwargs``; ``None`` if unknown.
    Where the class keeps its settings is LlamaIndex's (its request builder, else
    ``additional_kwargs``, the call's, its fields); reading a limit from them is the core's."""
    try:
        settings = _request_settings(llm, kwargs)
    except Exception:  # an LLM class built differently: no backstop rather than a failure
        logger.debug("toolstream: cannot read %s's output limit", type(llm).__name__,
                     exc_info=True)
        return None
    if settings is not None:
        return settings_limit(settings)
    extra = getattr(llm, "additional_kwargs", None)
    return settings_limit(extra if isinstance(extra, Mapping) else None, kwargs, llm)
