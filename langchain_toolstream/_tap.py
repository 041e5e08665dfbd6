"""Which LangChain chat models the gate can tap, and where each keeps its SDK client.

Why this exists: LangChain integrations turn vendor events into ``tool_call_chunks`` and lose
what the gate needs to prove a call complete, so the gate reads the events the vendor SDK
parsed from the wire instead (``toolstream_core.integration.tap_client``: the SDK knowledge).
What is LangChain's is here: which integration classes hold which SDK client in which field.
The gate gets a private copy of the model with those clients wrapped.

The copy is made per call, so nothing global is patched, the user's model object is never
touched, and concurrent calls (``batch``, threads, tasks) never share a sink. It is made
through public API wherever the class has one: ``model_copy(update=...)`` of public client
fields, or the class's constructor with the tapped client settings (``ChatOllama``). Only
``ChatAnthropic`` keeps its client where no public argument reaches it; those names are in
the table of private contact points (``toolstream_core.integration._private.PRIVATE_CONTACTS``).

A class in the table below that cannot be tapped (an integration release that moved where it
keeps its client) raises ``TapUnavailableError`` before the request is sent (DESIGN §6):
judging its LangChain chunks instead would lose the proof the tap is there for. A class the
table reads through LangChain's chunks on purpose (``ChatBedrock`` over InvokeModel,
``ChatLiteLLMRouter``) says so with ``CHUNKS``, a value of its own: "no client found" and
"read the chunks" are opposite answers, and one ``None`` for both once refused those classes.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from toolstream_core.integration import RawSink, ollama_tap_kwargs, tap_client
from toolstream_core.integration._private import ClassTable, private_copy, rebuilt, tap_unavailable

__all__ = ["CHUNKS", "RawSink", "static_provider", "tap_family", "tap_model"]

_HERE = ("langchain_toolstream/_tap.py",)  # where the private contacts of a tap are listed


class _Chunks(enum.Enum):
    CHUNKS = "chunks"


CHUNKS: Literal[_Chunks.CHUNKS] = _Chunks.CHUNKS
"""A tap function's answer for a model of its class that the gate reads through LangChain's
chunks on purpose (no SDK client of its own to wrap), as opposed to a client it cannot find."""


# -- which integrations can be tapped, and how -------------------------------------------------


def _chat_openai_clients(model: Any, sink: RawSink) -> dict[str, Any] | None:
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


def _chat_anthropic_clients(model: Any, sink: RawSink) -> BaseChatModel:
    # ``_client`` / ``_async_client`` are cached properties (private contact points): reading
    # them builds the SDK client once on the user's model; the copy's tapped ones shadow them.
    tapped = {"_client": tap_client(model._client, sink, "anthropic"),
              "_async_client": tap_client(model._async_client, sink, "anthropic")}
    copy: BaseChatModel = private_copy(model, tapped)
    return copy


def _chat_google_clients(model: Any, sink: RawSink) -> dict[str, Any] | None:
    client = getattr(model, "client", None)
    if client is None:
        return None
    return {"client": tap_client(client, sink, "gemini")}


def _chat_bedrock_converse_clients(model: Any, sink: RawSink) -> dict[str, Any] | None:
    # ``ChatBedrockConverse.client``: boto3 ``bedrock-runtime``; its async paths run the sync
    # ones in an executor, so the one client carries both.
    client = getattr(model, "client", None)
    return None if client is None else {"client": tap_client(client, sink, "bedrock")}


def _with_hook(model: Any, own: str, sink: RawSink, asynchronous: bool) -> dict[str, Any]:
    """``ChatOllama``'s ``sync_client_kwargs`` / ``async_client_kwargs`` (``own``) plus the
    hook that tees the server's lines, added to the event hooks the client would have."""
    shared, mine = dict(model.client_kwargs or {}), dict(getattr(model, own) or {})
    hooks = mine.get("event_hooks", shared.get("event_hooks"))
    hooked = ollama_tap_kwargs({"event_hooks": hooks}, sink, asynchronous=asynchronous)
    return {**mine, **hooked}


def _chat_ollama_clients(model: Any, sink: RawSink) -> BaseChatModel:
    # ``ChatOllama`` builds its ``ollama`` clients from public fields (``base_url``,
    # ``client_kwargs`` and the per-client ``sync_client_kwargs`` / ``async_client_kwargs``,
    # which go to httpx). The copy is built by its constructor with the hook that tees the
    # server's lines (the client's objects drop each call's id and index) in those fields, so
    # it makes its own clients as the user's model did, credentials in the URL included; the
    # original keeps its own. No model check on the copy: the user's model made it if asked.
    copy: BaseChatModel = rebuilt(model, {
        "sync_client_kwargs": _with_hook(model, "sync_client_kwargs", sink, False),
        "async_client_kwargs": _with_hook(model, "async_client_kwargs", sink, True),
        "validate_model_on_init": False,
    }, restore=("validate_model_on_init",))
    return copy


def _chat_cohere_clients(model: Any, sink: RawSink) -> dict[str, Any] | None:
    # ``ChatCohere`` calls ``client.v2.chat_stream`` / ``client.v2.chat``.
    return {
        "client": tap_client(model.client, sink, "cohere"),
        "async_client": tap_client(model.async_client, sink, "cohere"),
    }


def _chat_bedrock_clients(model: Any, sink: RawSink) -> dict[str, Any] | _Chunks | None:
    # ``ChatBedrock(beta_use_converse_api=True)`` builds a ``ChatBedrockConverse`` around its
    # own boto3 ``client`` for every call: the copy's tapped client is the one it hands over.
    # Over InvokeModel (the switch off) it is read through LangChain's chunks: its boto3
    # events are Anthropic's, base64 inside ``chunk.bytes``, which no tap of ours reads.
    if not getattr(model, "beta_use_converse_api", False):
        return CHUNKS
    return _chat_bedrock_converse_clients(model, sink)


def _chat_litellm_clients(model: Any, sink: RawSink) -> dict[str, Any] | _Chunks | None:
    # ``ChatLiteLLM.client`` is the ``litellm`` module; ``completion_with_retry`` calls its
    # ``completion`` / ``acompletion``. ``ChatLiteLLMRouter`` calls its router instead, which
    # calls the module's functions from inside: it is read through LangChain's chunks.
    if getattr(model, "router", None) is not None:
        return CHUNKS
    if model.client is None:
        return None
    return {"client": tap_client(model.client, sink, "litellm")}


_Fields = Callable[[Any, RawSink], "Mapping[str, Any] | BaseChatModel | _Chunks | None"]
"""How a class is tapped: its public client fields to replace (``model_copy(update=...)``), or
the tapped copy itself when it takes the class's constructor or a listed private name;
``CHUNKS`` for a model of the class read through LangChain's chunks; ``None`` or nothing when
the client is not where the class kept it (``TapUnavailableError``)."""

#: (package, partner class in the model's MRO, family, how its clients are tapped, provider
#: if the class decides), looked up along the model's MRO (``ClassTable``).
_CLASSES: ClassTable[tuple[str, str, str, _Fields, str | None]] = ClassTable((
    ("langchain_openai", "BaseChatOpenAI", "openai", _chat_openai_clients, None),
    ("langchain_anthropic", "ChatAnthropic", "anthropic", _chat_anthropic_clients, "anthropic"),
    ("langchain_google_genai", "ChatGoogleGenerativeAI", "gemini", _chat_google_clients, "gemini"),
    ("langchain_aws", "ChatBedrockConverse", "bedrock", _chat_bedrock_converse_clients,
     "bedrock-converse"),
    ("langchain_ollama", "ChatOllama", "ollama", _chat_ollama_clients, "ollama"),
    ("langchain_cohere", "ChatCohere", "cohere", _chat_cohere_clients, "cohere"),
    ("langchain_litellm", "ChatLiteLLM", "litellm", _chat_litellm_clients, "openai-chat"),
    ("langchain_aws", "ChatBedrock", "bedrock", _chat_bedrock_clients, None),
))


def tap_family(model: BaseChatModel) -> str | None:
    """The SDK family whose raw stream the gate can see under ``model``, or ``None``."""
    family: str | None = _CLASSES.get(type(model))
    return family


def static_provider(model: BaseChatModel) -> str | None:
    """The provider when the class alone decides it (OpenAI needs the request to tell)."""
    provider: str | None = _CLASSES.get(type(model), 4)
    return provider


def tap_model(model: BaseChatModel, sink: RawSink) -> BaseChatModel | None:
    """A copy of ``model`` whose SDK client feeds ``sink``; ``None`` for a model the gate reads
    through LangChain's chunks (a class outside the table, or one its row answers ``CHUNKS``
    for). The user's model keeps its own clients.

    Raises ``TapUnavailableError`` for a class in the table whose client cannot be tapped.
    """
    entry = _CLASSES.row(type(model))
    if entry is None:
        return None
    try:
        tapped = entry[3](model, sink)
    except Exception as exc:  # an integration release that keeps its client elsewhere
        raise tap_unavailable(type(model), exc, files=_HERE) from exc
    if tapped is CHUNKS:
        return None
    if isinstance(tapped, BaseChatModel):
        return tapped
    if not tapped:
        raise tap_unavailable(type(model), "it holds no SDK client to tap", files=_HERE)
    private = [name for name in tapped if name.startswith("_")]
    if private:  # a public field update only: private names go through ``private_copy``
        raise tap_unavailable(type(model), f"not public fields: {', '.join(private)}", files=_HERE)
    return model.model_copy(update=dict(tapped))
