"""Which LangChain chat models the gate can tap, and where each keeps its SDK client.

Why this exists: LangChain integrations turn vendor events into ``tool_call_chunks`` and lose
what the gate needs to prove a call complete, so the gate reads the events the vendor SDK
parsed from the wire instead (``toolstream_core.integration.tap_client``: the SDK knowledge).
What is LangChain's is here: which integration classes hold which SDK client in which field.
The gate gets a private copy of the model with those clients wrapped.

The copy is made per call, so nothing global is patched, the user's model object is never
touched, and concurrent calls (``batch``, threads, tasks) never share a sink.
"""

from __future__ import annotations

import logging
from typing import Any

from langchain_core.language_models import BaseChatModel
from toolstream_core.integration import RawSink, tap_client

__all__ = ["RawSink", "tap_model", "tappable"]

_log = logging.getLogger("langchain_toolstream")


# -- which integrations can be tapped, and how -------------------------------------------------


def _openai_fields(model: Any, sink: RawSink) -> dict[str, Any] | None:
    update: dict[str, Any] = {}
    for name in ("client", "async_client"):
        value = getattr(model, name, None)
        if value is not None:
            update[name] = tap_client(value, sink, "openai", ("chat", "completions"))
    for name in ("root_client", "root_async_client"):
        value = getattr(model, name, None)
        if value is not None:
            update[name] = tap_client(value, sink, "openai")
    return update or None


def _anthropic_fields(model: Any, sink: RawSink) -> dict[str, Any] | None:
    # ``_client`` / ``_async_client`` are cached properties: reading them builds the SDK
    # client once on the user's model, and the copy gets the tapped one in its ``__dict__``.
    return {
        "_client": tap_client(model._client, sink, "anthropic"),
        "_async_client": tap_client(model._async_client, sink, "anthropic"),
    }


def _gemini_fields(model: Any, sink: RawSink) -> dict[str, Any] | None:
    client = getattr(model, "client", None)
    if client is None:
        return None
    return {"client": tap_client(client, sink, "gemini")}


def _kind(model: BaseChatModel) -> str | None:
    for cls in type(model).__mro__:
        module = cls.__module__
        if module.startswith("langchain_openai.") and cls.__name__ == "BaseChatOpenAI":
            return "openai"
        if module.startswith("langchain_anthropic.") and cls.__name__ == "ChatAnthropic":
            return "anthropic"
        if module.startswith("langchain_google_genai.") and cls.__name__ == "ChatGoogleGenerativeAI":
            return "gemini"
    return None


def tappable(model: BaseChatModel) -> str | None:
    """The SDK family whose raw stream the gate can see under ``model``, or ``None``."""
    return _kind(model)


def static_provider(model: BaseChatModel) -> str | None:
    """The provider when the class alone decides it (OpenAI needs the request to tell)."""
    kind = _kind(model)
    return {"anthropic": "anthropic", "gemini": "gemini"}.get(kind or "")


def tap_model(model: BaseChatModel, sink: RawSink) -> BaseChatModel | None:
    """A shallow copy of ``model`` whose SDK client feeds ``sink``; ``None`` if not supported."""
    kind = _kind(model)
    if kind is None:
        return None
    builders = {"openai": _openai_fields, "anthropic": _anthropic_fields, "gemini": _gemini_fields}
    try:
        update = builders[kind](model, sink)
    except Exception:  # an integration version we do not know: fall back, never break the call
        _log.warning("toolstream: cannot tap %s; using LangChain chunks", type(model).__name__,
                     exc_info=True)
        return None
    if not update:
        return None
    copy = model.model_copy()
    for name, value in update.items():
        # Fields go through the instance dict too: ``model_copy(update=...)`` would validate
        # nothing either, and cached properties live there.
        copy.__dict__[name] = value
    return copy
