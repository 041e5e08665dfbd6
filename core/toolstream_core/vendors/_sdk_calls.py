"""Which SDK calls the tap intercepts, which provider each speaks, and the SDK objects' wire form.

The SDK knowledge of `tap_client` (``_tap.py``), kept apart from how it wraps what a call
returns: per SDK, the streaming (and whole-answer) methods and a classifier naming the provider
a call speaks (`Call`); per SDK whose objects the adapters do not read as they are, the wire
dict an event stands for; and `sdk_of`, the SDK a client object belongs to, by its module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

Call = tuple[str, bool]
"""What an intercepted SDK call is: its provider, and whether it answers whole (not streamed)."""


def _openai_call(owner: Any, path: tuple[str, ...], kwargs: Mapping[str, Any]) -> Call | None:
    if path[-1] == "stream" or (path[-1] == "create" and kwargs.get("stream")):
        return ("openai-responses" if "responses" in path else "openai-chat"), False
    return None


def _anthropic_call(owner: Any, path: tuple[str, ...], kwargs: Mapping[str, Any]) -> Call | None:
    if path[-1] == "stream" or (path[-1] == "create" and kwargs.get("stream")):
        return "anthropic", False
    return None


def _gemini_call(owner: Any, path: tuple[str, ...], kwargs: Mapping[str, Any]) -> Call | None:
    return ("gemini", False) if path[-1] == "generate_content_stream" else None


def _bedrock_call(owner: Any, path: tuple[str, ...], kwargs: Mapping[str, Any]) -> Call | None:
    """boto3 ``bedrock-runtime``: ``converse_stream`` streams, ``converse`` answers whole."""
    return "bedrock-converse", path[-1] == "converse"


def _ollama_call(owner: Any, path: tuple[str, ...], kwargs: Mapping[str, Any]) -> Call | None:
    """``ollama.Client.chat``: streams with ``stream=True``, else one whole ``ChatResponse``."""
    return "ollama", not kwargs.get("stream")


def _cohere_call(owner: Any, path: tuple[str, ...], kwargs: Mapping[str, Any]) -> Call | None:
    """The v2 chat (``ClientV2`` or ``Client.v2``), else the v1 one (`_cohere_v1_call`)."""
    if not any(c.__module__.startswith("cohere.v2") for c in type(owner).__mro__):
        return _cohere_v1_call(owner, path)
    return "cohere", path[-1] == "chat"


def _cohere_v1_call(owner: Any, path: tuple[str, ...]) -> Call | None:
    """``cohere.Client`` / ``AsyncClient`` ``chat`` and ``chat_stream`` (the v1 chat, which
    LlamaIndex's ``Cohere`` calls): the same provider reads its ``event_type`` events."""
    if path != ("chat",) and path != ("chat_stream",):
        return None
    if not any(c.__name__ in ("BaseCohere", "AsyncBaseCohere") for c in type(owner).__mro__):
        return None
    return "cohere", path[-1] == "chat"


def _mistral_call(owner: Any, path: tuple[str, ...], kwargs: Mapping[str, Any]) -> Call | None:
    """``mistralai``'s ``chat.stream`` / ``stream_async`` (Mistral's chat completions SSE,
    the OpenAI chat wire with Mistral's quirks) and ``chat.complete`` / ``complete_async``."""
    if len(path) < 2 or path[-2] != "chat":
        return None
    return "openai-chat", path[-1].startswith("complete")


def _litellm_call(owner: Any, path: tuple[str, ...], kwargs: Mapping[str, Any]) -> Call | None:
    """The ``litellm`` module's ``completion`` / ``acompletion``: litellm's own translation of
    whatever the upstream sent, always in the OpenAI chat shape (``ModelResponseStream``)."""
    return "openai-chat", not kwargs.get("stream")


_Classify = Callable[[Any, tuple[str, ...], Mapping[str, Any]], "Call | None"]

# Per SDK: the method names the proxy intercepts, and what a call of one of them is.
_CALLS: dict[str, tuple[frozenset[str], _Classify]] = {
    "openai": (frozenset({"create", "stream"}), _openai_call),
    "anthropic": (frozenset({"create", "stream"}), _anthropic_call),
    "gemini": (frozenset({"generate_content_stream"}), _gemini_call),
    "bedrock": (frozenset({"converse_stream", "converse"}), _bedrock_call),
    "ollama": (frozenset({"chat"}), _ollama_call),
    "cohere": (frozenset({"chat_stream", "chat"}), _cohere_call),
    "mistral": (frozenset({"stream", "stream_async", "complete", "complete_async"}), _mistral_call),
    "litellm": (frozenset({"completion", "acompletion"}), _litellm_call),
}


def _wire_dump(obj: Any) -> Any:
    """A pydantic SDK object as the JSON it was parsed from: by alias, and without the fields
    the wire did not carry (``mistralai`` fills an absent tool-call ``index`` with 0, which
    would read as a call the server numbered)."""
    return obj.model_dump(mode="json", by_alias=True, exclude_unset=True)


def _litellm_dump(obj: Any) -> Any:
    """litellm builds its chunks itself (nothing was parsed): every field it set."""
    return obj.model_dump(mode="json")


#: Per SDK whose objects the core's adapters do not read as they are: (what the sink gets
#: for a streamed item, what it gets for a whole answer), each a plain wire dict.
_FORMS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "mistral": (lambda event: _wire_dump(event.data), _wire_dump),  # CompletionEvent(data=chunk)
    "litellm": (_litellm_dump, _litellm_dump),
}

#: (SDK, method) whose result serves both ``for`` and ``async for`` but is read synchronously
#: (litellm's ``CustomStreamWrapper`` from ``completion``).
_SYNC_STREAMS = frozenset({("litellm", "completion")})


# The SDK a client object belongs to, by the module of its class (longest prefix first).
_SDK_MODULES = (
    ("google.genai.", "gemini"),
    ("openai.", "openai"),
    ("anthropic.", "anthropic"),
    ("ollama.", "ollama"),
    ("cohere.", "cohere"),
    ("mistralai.", "mistral"),
)


def sdk_of(client: Any) -> str | None:
    """The SDK ``client`` belongs to (a key of the tap's tables), or ``None``.

    boto3 clients are classes botocore makes at run time; only ``bedrock-runtime`` counts.
    """
    module = type(client).__module__
    if module == "botocore.client":
        meta = getattr(client, "meta", None)
        service = getattr(getattr(meta, "service_model", None), "service_name", None)
        return "bedrock" if service == "bedrock-runtime" else None
    for prefix, sdk in _SDK_MODULES:
        if module.startswith(prefix):
            return sdk
    return None


def _cohere_v1_text(event: Any) -> Any:
    """A v1 ``tool-calls-chunk`` without ``text`` (an argument fragment) as one with ``""``.

    LlamaIndex's ``Cohere.stream_chat`` adds every event's declared ``text`` to its content
    and fails on ``None`` with a ``TypeError``, ending any streamed tool turn; the sink has
    already seen the event as sent. Every other event is handed on as it is.
    """
    if type(event).__name__ != "ToolCallsChunkStreamedChatResponse" or event.text is not None:
        return event
    return event.model_copy(update={"text": ""})
