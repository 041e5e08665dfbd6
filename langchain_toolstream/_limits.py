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

from toolstream_core.integration import settings_limit

__all__ = ["chat_model_output_limit"]


def chat_model_output_limit(model: Any, kwargs: Mapping[str, Any]) -> int | None:
    """The limit a chat model's call will use when the request itself is not visible: where
    LangChain keeps the settings it sends, in the order one overrides the next (the call's
    keyword arguments from ``bind`` / ``invoke(..., max_tokens=)``, then the model's
    ``model_kwargs``, then its fields ``max_tokens`` / ``max_output_tokens``). Reading them is
    the core's (``settings_limit``)."""
    return settings_limit(kwargs, getattr(model, "model_kwargs", None), model)
