"""Which LlamaIndex LLM classes the gate can tap, and where each keeps its SDK client.

Why this exists: LlamaIndex's LLM classes turn vendor events into ``ChatResponse`` objects and
lose what the gate needs to prove a call complete (``Anthropic`` never yields
``content_block_start`` or ``message_stop``; ``BedrockConverse`` never yields ``messageStop``;
``OpenAI``'s merge breaks on arguments sent as a JSON object), and some of them write into the
SDK's event objects as they go. So the gate reads the events the SDK parsed from the wire
(``toolstream_core.integration.tap_client``: the SDK knowledge, shared with the LangChain
shim). What is LlamaIndex's is here: which class holds which SDK client in which field.

The gate streams from a private copy of the LLM made per call with ``model_copy(update=...)``,
so nothing global is patched, the user's LLM object is never touched, and concurrent calls
never share a sink. Classes not in the table are read from ``ChatResponse.raw``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from toolstream_core.integration import RawSink, ollama_tap_kwargs, tap_client

__all__ = ["RawSink", "tap_llm", "tappable"]

logger = logging.getLogger(__name__)


def _openai_fields(llm: Any, sink: RawSink) -> dict[str, Any]:
    # ``OpenAI`` (and ``OpenAILike``, ``AzureOpenAI``) fetch their clients through
    # ``_get_client`` / ``_get_aclient``, which return the cached ``_client`` / ``_aclient``
    # when ``reuse_client`` is on: the copy holds tapped ones there.
    return {"_client": tap_client(llm._get_client(), sink, "openai"),
            "_aclient": tap_client(llm._get_aclient(), sink, "openai"),
            "reuse_client": True}


def _anthropic_fields(llm: Any, sink: RawSink) -> dict[str, Any]:
    return {"_client": tap_client(llm._client, sink, "anthropic"),
            "_aclient": tap_client(llm._aclient, sink, "anthropic")}


def _ollama_fields(llm: Any, sink: RawSink) -> dict[str, Any]:
    # The ``ollama`` client's objects drop each tool call's ``id`` and ``function.index``, so
    # a re-sent call would read as a second one: the copy gets clients of its own, built as
    # ``Ollama.client`` / ``async_client`` build theirs, plus the hook that tees the server's
    # ``/api/chat`` lines (``ollama_tap_kwargs``). A client the user handed to ``Ollama`` is
    # not reused for the gated calls (its settings cannot be read back).
    import ollama

    kwargs = {"timeout": llm.request_timeout, "headers": llm.headers or {}}
    return {"_client": ollama.Client(host=llm.base_url, **ollama_tap_kwargs(kwargs, sink)),
            "_async_client": ollama.AsyncClient(
                host=llm.base_url, **ollama_tap_kwargs(kwargs, sink, asynchronous=True))}


def _bedrock_fields(llm: Any, sink: RawSink) -> dict[str, Any]:
    # boto3 ``bedrock-runtime``. Without aioboto3 the async paths run the sync client on a
    # thread, so the one client carries both (the tap then feeds the session from that
    # thread, one event at a time, before LlamaIndex's queue hands the event on). With
    # aioboto3 they open their own session's client, which this cannot reach: refused, so
    # the caller reads ``ChatResponse.raw`` and says so.
    if getattr(llm, "_asession", None) is not None:
        raise TypeError("BedrockConverse streams through aioboto3")
    return {"_client": tap_client(llm._client, sink, "bedrock")}


def _cohere_fields(llm: Any, sink: RawSink) -> dict[str, Any]:
    # ``Cohere`` holds a v1 ``cohere.Client`` / ``AsyncClient``; note that its
    # ``astream_chat`` streams from the sync ``_client`` too.
    return {"_client": tap_client(llm._client, sink, "cohere"),
            "_aclient": tap_client(llm._aclient, sink, "cohere")}


def _mistral_fields(llm: Any, sink: RawSink) -> dict[str, Any]:
    # ``MistralAI`` holds a ``mistralai.Mistral`` (or ``MistralAzure``) and streams with its
    # ``chat.stream`` / ``chat.stream_async``: the SDK's events, before LlamaIndex reads them
    # (its stream keeps a content chunk as ``raw`` where a text delta is a list).
    return {"_client": tap_client(llm._client, sink, "mistral")}


_Fields = Callable[[Any, RawSink], "dict[str, Any]"]

#: provider -> how a class speaking it holds its SDK clients.
_FIELDS: dict[str, _Fields] = {
    "openai-chat": _openai_fields,
    "anthropic": _anthropic_fields,
    "ollama": _ollama_fields,
    "bedrock-converse": _bedrock_fields,
    "cohere": _cohere_fields,
}

#: (module, class name, how it holds its SDK clients; ``None``: read from
#: ``ChatResponse.raw``), before the provider table: classes that speak a provider's wire
#: through another client.
_CLASS_FIELDS: tuple[tuple[str, str, _Fields | None], ...] = (
    ("llama_index.llms.mistralai", "MistralAI", _mistral_fields),
    # ``LiteLLM`` calls the ``litellm`` module's functions, imported inside its own helpers:
    # no client to tap; its ``raw`` is litellm's chunk as litellm made it, unchanged.
    ("llama_index.llms.litellm", "LiteLLM", None),
)

_WARNED: set[str] = set()


def _class_fields(llm: Any, default: _Fields | None) -> _Fields | None:
    for cls in type(llm).__mro__:
        for module, name, fields in _CLASS_FIELDS:
            if cls.__name__ == name and cls.__module__.startswith(module):
                return fields
    return default


def tappable(provider: str) -> bool:
    """Whether streams of ``provider`` are read from the SDK (else ``ChatResponse.raw``)."""
    return provider in _FIELDS


def tap_llm(llm: Any, provider: str, sink: RawSink) -> Any | None:
    """A copy of ``llm`` whose SDK clients feed ``sink``; ``None`` when it cannot be tapped
    (a provider read from ``ChatResponse.raw``, or a class that holds its clients elsewhere:
    a warning, once per class)."""
    fields = _class_fields(llm, _FIELDS.get(provider))
    if fields is None:
        return None
    try:
        update = fields(llm, sink)
    except Exception:  # a class or version we do not know: fall back, never break the call
        name = type(llm).__name__
        if name not in _WARNED:
            _WARNED.add(name)
            logger.warning("toolstream: %s has no %s clients to tap; using ChatResponse.raw",
                           name, provider, exc_info=True)
        return None
    return llm.model_copy(update=update)
