"""Which LlamaIndex LLM classes the gate can tap, and where each keeps its SDK client.

Why this exists: LlamaIndex's LLM classes turn vendor events into ``ChatResponse`` objects and
lose what the gate needs to prove a call complete (``Anthropic`` never yields
``content_block_start`` or ``message_stop``; ``BedrockConverse`` never yields ``messageStop``;
``OpenAI``'s merge breaks on arguments sent as a JSON object), and some of them write into the
SDK's event objects as they go. So the gate reads the events the SDK parsed from the wire
(``toolstream_core.integration.tap_client``: the SDK knowledge, shared with the LangChain
shim). What is LlamaIndex's is here: which class holds which SDK client in which field.

The gate streams from a private copy of the LLM made per call, so nothing global is
patched, the user's LLM object is never touched, and concurrent calls never share a sink. The
copy is made through the class's public constructor wherever it takes the client
(``OpenAI(openai_client=)``, ``Ollama(client=)``, ``BedrockConverse(client=)``); ``Anthropic``
and ``Cohere`` take none, and their client is set on a ``model_copy()`` under the private
names listed in the table of private contact points
(``toolstream_core.integration._private.PRIVATE_CONTACTS``). Classes not in the table are read from
``ChatResponse.raw``.

A recognised class of a tapped provider that cannot be tapped (a release that moved where it
keeps its client, or ``BedrockConverse`` with aioboto3 installed) raises
``TapUnavailableError`` before the request is sent (DESIGN §6): its ``ChatResponse.raw`` has
lost the proof the tap is there for.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

from toolstream_core.integration import RawSink, ollama_tap_kwargs, tap_client
from toolstream_core.integration._private import ClassTable, private_copy, rebuilt, tap_unavailable

from ._providers import PROVIDER_CLASSES, detect_llm_provider

__all__ = ["RawSink", "tap_llm"]

_HERE = ("llamaindex_toolstream/_tap.py",)  # where the private contacts of a tap are listed


#: The packages whose ``OpenAI`` classes (``OpenAI``, ``AzureOpenAI``, ``OpenAILike``) take
#: the client through their constructor, as the shim knows it.
_OPENAI_CONSTRUCTORS = ("llama_index.llms.openai.", "llama_index.llms.azure_openai.",
                        "llama_index.llms.openai_like.")


def _tap_openai(llm: Any, sink: RawSink) -> Any:
    # ``OpenAI`` (and ``OpenAILike``, ``AzureOpenAI``) keep the user's SDK clients (given, or
    # built from the settings and HTTP client given) behind ``_get_client`` / ``_get_aclient``;
    # the copy takes the tapped ones through its constructor, reused for every request. A
    # subclass with a constructor of its own (``DeepSeek``, ``Groq``, a user's class) may take
    # other arguments or do I/O: its copy gets them as the listed private attributes instead.
    clients = {"openai_client": tap_client(llm._get_client(), sink, "openai"),
               "async_openai_client": tap_client(llm._get_aclient(), sink, "openai")}
    if type(llm).__init__.__module__.startswith(_OPENAI_CONSTRUCTORS):
        return rebuilt(llm, {**clients, "reuse_client": True})
    return private_copy(llm, {"_client": clients["openai_client"],
                              "_aclient": clients["async_openai_client"]},
                        update={"reuse_client": True})


def _tap_anthropic(llm: Any, sink: RawSink) -> Any:
    return private_copy(llm, {"_client": tap_client(llm._client, sink, "anthropic"),
                              "_aclient": tap_client(llm._aclient, sink, "anthropic")})


def _tap_ollama(llm: Any, sink: RawSink) -> Any:
    # The ``ollama`` client's objects drop each tool call's ``id`` and ``function.index``, so
    # a re-sent call would read as a second one: the copy gets clients of its own, built as
    # ``Ollama.client`` / ``async_client`` build theirs, plus the hook that tees the server's
    # ``/api/chat`` lines (``ollama_tap_kwargs``), through its constructor. A client the user
    # handed to ``Ollama`` is not reused for the gated calls (its settings cannot be read back).
    import ollama

    kwargs = {"timeout": llm.request_timeout, "headers": llm.headers or {}}
    return rebuilt(llm, {
        "client": ollama.Client(host=llm.base_url, **ollama_tap_kwargs(kwargs, sink)),
        "async_client": ollama.AsyncClient(
            host=llm.base_url, **ollama_tap_kwargs(kwargs, sink, asynchronous=True))})


def _tap_bedrock_converse(llm: Any, sink: RawSink) -> Any:
    # boto3 ``bedrock-runtime``. Without aioboto3 the async paths run the sync client on a
    # thread, so the one client carries both (the tap then feeds the session from that
    # thread, one event at a time, before LlamaIndex's queue hands the event on). With
    # aioboto3 they open their own session's client, which this cannot reach: refused.
    # The constructor opens a boto3 Session the copy never uses (about 20 ms of CPU): the
    # price of its public ``client=`` over writing the class's private client.
    if importlib.util.find_spec("aioboto3") is not None:
        raise TypeError("BedrockConverse streams its async calls through aioboto3 (installed), "
                        "whose client the gate cannot reach")
    return rebuilt(llm, {"client": tap_client(llm._client, sink, "bedrock")})


def _tap_cohere(llm: Any, sink: RawSink) -> Any:
    # ``Cohere`` holds a v1 ``cohere.Client`` / ``AsyncClient``; note that its
    # ``astream_chat`` streams from the sync ``_client`` too.
    return private_copy(llm, {"_client": tap_client(llm._client, sink, "cohere"),
                              "_aclient": tap_client(llm._aclient, sink, "cohere")})


def _tap_mistralai(llm: Any, sink: RawSink) -> Any:
    # ``MistralAI`` holds a ``mistralai.Mistral`` (or ``MistralAzure``) as a private attribute
    # and streams with its ``chat.stream`` / ``chat.stream_async``: the SDK's events, before
    # LlamaIndex reads them (its stream keeps a content chunk as ``raw`` where a text delta is
    # a list). The class takes no client argument, so the copy gets it through ``private_copy``.
    return private_copy(llm, {"_client": tap_client(llm._client, sink, "mistral")})


_Fields = Callable[[Any, RawSink], Any]
"""How a class speaking a provider is tapped: the copy of ``llm`` whose clients feed the sink."""

#: LLM class -> how it holds its SDK clients. The other classes the package knows are read
#: from ``ChatResponse.raw``: ``OpenAIResponses`` and ``GoogleGenAI`` (wires not tapped) and
#: ``LiteLLM``, which calls the ``litellm`` module's functions, imported inside its own helpers
#: (no client to tap; its ``raw`` is litellm's chunk as litellm made it, unchanged).
_HOW: dict[str, _Fields] = {
    "OpenAI": _tap_openai,
    "Anthropic": _tap_anthropic,
    "Ollama": _tap_ollama,
    "BedrockConverse": _tap_bedrock_converse,
    "Cohere": _tap_cohere,
    "MistralAI": _tap_mistralai,
}

#: The classes of ``_providers.PROVIDER_CLASSES``, each with its tap or ``None``, looked up
#: along the LLM's MRO (``ClassTable``: ``OpenAILike`` or ``DeepSeek`` takes its base's row).
_TAPS: ClassTable[tuple[str, str, _Fields | None]] = ClassTable(
    (module, name, _HOW.get(name)) for module, name, _ in PROVIDER_CLASSES)


def tap_llm(llm: Any, provider: str, sink: RawSink) -> Any | None:
    """A copy of ``llm`` whose SDK clients feed ``sink``; ``None`` when its stream is read
    from ``ChatResponse.raw`` (a class not tapped, one whose wire comes through a client the
    gate cannot hold (``LiteLLM``), a class the package does not recognise whatever
    ``provider=`` it was given, or a ``provider`` that is not its class's).

    Raises ``TapUnavailableError`` for a recognised class that cannot be tapped.
    """
    fields: _Fields | None = _TAPS.get(type(llm))
    if fields is None or detect_llm_provider(llm) != provider:
        return None
    try:
        return fields(llm, sink)
    except Exception as exc:  # a release that keeps its clients elsewhere
        raise tap_unavailable(type(llm), exc, files=_HERE) from exc
