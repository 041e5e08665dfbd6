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
from collections.abc import Callable
from typing import Any

from langchain_core.language_models import BaseChatModel
from toolstream_core.integration import RawSink, ollama_tap_kwargs, tap_client

__all__ = ["RawSink", "tap_model", "tappable"]

_log = logging.getLogger(__name__)


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
    # client once on the user's model; the copy's tapped ones shadow them.
    return {
        "_client": tap_client(model._client, sink, "anthropic"),
        "_async_client": tap_client(model._async_client, sink, "anthropic"),
    }


def _gemini_fields(model: Any, sink: RawSink) -> dict[str, Any] | None:
    client = getattr(model, "client", None)
    if client is None:
        return None
    return {"client": tap_client(client, sink, "gemini")}


def _bedrock_fields(model: Any, sink: RawSink) -> dict[str, Any] | None:
    # ``ChatBedrockConverse.client``: boto3 ``bedrock-runtime``; its async paths run the sync
    # ones in an executor, so the one client carries both.
    client = getattr(model, "client", None)
    return None if client is None else {"client": tap_client(client, sink, "bedrock")}


def _ollama_host(model: Any) -> tuple[Any, dict[str, Any]]:
    """``ChatOllama``'s host and the client keyword arguments it builds its clients with
    (credentials in the URL become headers, as ``ChatOllama`` itself does when it can)."""
    kwargs = dict(model.client_kwargs or {})
    try:
        from langchain_ollama._utils import merge_auth_headers, parse_url_with_auth
    except ImportError:  # another langchain-ollama: the URL as given
        return model.base_url, kwargs
    host, auth = parse_url_with_auth(model.base_url)
    merge_auth_headers(kwargs, auth)
    return host, kwargs


def _ollama_fields(model: Any, sink: RawSink) -> dict[str, Any] | None:
    # ``ChatOllama`` keeps its ``ollama`` clients as private attributes. The copy gets clients
    # of its own, built with the same settings plus the hook that tees the server's lines (the
    # client's objects drop each call's id and index); the original keeps its own.
    import ollama

    host, kwargs = _ollama_host(model)
    sync = {**kwargs, **(model.sync_client_kwargs or {})}
    async_ = {**kwargs, **(model.async_client_kwargs or {})}
    return {
        "_client": ollama.Client(host=host, **ollama_tap_kwargs(sync, sink)),
        "_async_client": ollama.AsyncClient(
            host=host, **ollama_tap_kwargs(async_, sink, asynchronous=True)),
    }


def _cohere_fields(model: Any, sink: RawSink) -> dict[str, Any] | None:
    # ``ChatCohere`` calls ``client.v2.chat_stream`` / ``client.v2.chat``.
    return {
        "client": tap_client(model.client, sink, "cohere"),
        "async_client": tap_client(model.async_client, sink, "cohere"),
    }


def _bedrock_converse_switch_fields(model: Any, sink: RawSink) -> dict[str, Any] | None:
    # ``ChatBedrock(beta_use_converse_api=True)`` builds a ``ChatBedrockConverse`` around its
    # own boto3 ``client`` for every call: the copy's tapped client is the one it hands over.
    # Over InvokeModel (the switch off) it is read through LangChain's chunks.
    if not getattr(model, "beta_use_converse_api", False):
        return None
    return _bedrock_fields(model, sink)


def _litellm_fields(model: Any, sink: RawSink) -> dict[str, Any] | None:
    # ``ChatLiteLLM.client`` is the ``litellm`` module; ``completion_with_retry`` calls its
    # ``completion`` / ``acompletion``. ``ChatLiteLLMRouter`` calls its router instead.
    if getattr(model, "router", None) is not None or model.client is None:
        return None
    return {"client": tap_client(model.client, sink, "litellm")}


_Fields = Callable[[Any, RawSink], "dict[str, Any] | None"]

# (package, class in its MRO, family, how its clients are tapped, provider if the class decides)
_CLASSES: tuple[tuple[str, str, str, _Fields, str | None], ...] = (
    ("langchain_openai", "BaseChatOpenAI", "openai", _openai_fields, None),
    ("langchain_anthropic", "ChatAnthropic", "anthropic", _anthropic_fields, "anthropic"),
    ("langchain_google_genai", "ChatGoogleGenerativeAI", "gemini", _gemini_fields, "gemini"),
    ("langchain_aws", "ChatBedrockConverse", "bedrock", _bedrock_fields, "bedrock-converse"),
    ("langchain_ollama", "ChatOllama", "ollama", _ollama_fields, "ollama"),
    ("langchain_cohere", "ChatCohere", "cohere", _cohere_fields, "cohere"),
    ("langchain_litellm", "ChatLiteLLM", "litellm", _litellm_fields, "openai-chat"),
    ("langchain_aws", "ChatBedrock", "bedrock", _bedrock_converse_switch_fields, None),
)


def _entry(model: BaseChatModel) -> tuple[str, str, str, _Fields, str | None] | None:
    for cls in type(model).__mro__:
        package = cls.__module__.partition(".")[0]
        for entry in _CLASSES:
            if package == entry[0] and cls.__name__ == entry[1]:
                return entry
    return None


def tappable(model: BaseChatModel) -> str | None:
    """The SDK family whose raw stream the gate can see under ``model``, or ``None``."""
    entry = _entry(model)
    return None if entry is None else entry[2]


def static_provider(model: BaseChatModel) -> str | None:
    """The provider when the class alone decides it (OpenAI needs the request to tell)."""
    entry = _entry(model)
    return None if entry is None else entry[4]


def tap_model(model: BaseChatModel, sink: RawSink) -> BaseChatModel | None:
    """A shallow copy of ``model`` whose SDK client feeds ``sink``; ``None`` if not supported.

    The copy is made by ``model_copy(update=...)``: the user's model keeps its own clients.
    """
    entry = _entry(model)
    if entry is None:
        return None
    try:
        update = entry[3](model, sink)
    except Exception:  # an integration version we do not know: fall back, never break the call
        _log.warning("toolstream: cannot tap %s; using LangChain chunks", type(model).__name__,
                     exc_info=True)
        return None
    if not update:
        return None
    return model.model_copy(update=update)
