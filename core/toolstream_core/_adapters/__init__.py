"""One adapter per vendor family; each owns that vendor's identity rules (DESIGN §4.1).

An adapter turns wire events into the words of a ``Sink`` (the call table, ``_table.CallTable``)
and keeps only the state needed to resolve identity (which key a fragment belongs to). It never
decides anything, and it never sees the ``Assembler``.

Call keys: each adapter names its calls with hashable keys of its own shape. They are the
``ToolCall.key`` callers see and the ``key`` of UI events, and they are unique within a stream:

    OpenAI chat       ("chat", choice_index, n)   n: a per-stream counter; a reused index or a
                                                  summary copy gets a new n (see openai_chat)
    OpenAI Responses  ("item", item_id)           or ("item", output_index) without an item id
                                                  (function, custom and built-in client calls)
    Anthropic         ("block", index)            a streamed content block
                      ("block", index, n)         the block re-sent whole at a used index (n-th copy)
                      ("block", None, n)          a tool block started with no integer index
                      ("start", position)         a complete block inside message_start
    Gemini            ("part", n)                 the n-th functionCall part that opened a call
    Bedrock Converse  ("block", index)            a tool block by its contentBlockIndex
                      ("block", index, n)         the block started again at a used index
    Ollama            ("id", id)                  a whole call that carries an id
                      ("index", index)            no id, a function.index
                      ("call", n)                 neither (the ollama client drops both), or a
                                                  different call at a reused index
    Cohere            ("index", index)            the tool-call-* index (v1: tool_call_delta.index,
                                                  or the position in tool-calls-generation)
                      ("index", index, n)         the call started again at a used index
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from importlib import import_module
from typing import TYPE_CHECKING, Any, Protocol

from ._access import field

if TYPE_CHECKING:
    from .._completion import Verdict
    from .._models import CallKind, Provider, Reason

__all__ = ["Adapter", "Sink", "detect_provider", "fast_path", "make_adapter", "takes_nothing", "unwrap"]


class Adapter(Protocol):
    """``feed`` reads one vendor event (unwrapped, a record) the full way. An adapter may also
    have ``fast(chunk) -> bool``, its fast path (DESIGN §9): given the chunk as fed, it takes
    the common event whole and says so, or touches nothing and says no."""

    def feed(self, event: Any) -> None: ...


def fast_path(adapter: Adapter) -> Callable[[Any], bool]:
    """The adapter's ``fast``, or a fast path that takes nothing."""
    fast: Callable[[Any], bool] | None = getattr(adapter, "fast", None)
    return fast if fast is not None else takes_nothing


def takes_nothing(chunk: Any) -> bool:
    return False


class Sink(Protocol):
    """What an adapter may say about a stream (``_table.CallTable`` implements it; see there
    for what each word does)."""

    structured_fragments: bool
    #: Whether ``carries`` is listened to (once a call failed mid-stream): an adapter asks
    #: first, so a healthy stream never pays for looking at content the gate does not read.
    recording: bool

    def open(self, key: Hashable, *, index: int | None, id: Any = None, name: Any = None,
             kind: CallKind = "function", order: Any = None, anonymous: bool = False) -> None: ...
    def append(self, key: Hashable, fragment: Any) -> None: ...
    def set_value(self, key: Hashable, value: Any, *, count: bool = True) -> None: ...
    def count_structured(self, key: Hashable, fragment: Any, total_bytes: int) -> bool: ...
    def done_arguments(self, key: Hashable, text: Any) -> None: ...
    def close_arguments(self, key: Hashable) -> None: ...
    def settle(self, key: Hashable) -> None: ...
    def end_turn(self, finish_reason: str | None, verdict: Verdict | None) -> None: ...
    def usage(self, output_tokens: Any) -> None: ...
    def upstream_error(self, detail: str) -> None: ...
    def taint(self, key: Hashable, reason: Reason, detail: str) -> None: ...
    def fail_live(self, detail: str, where: Callable[[Hashable], bool] | None = None, *,
                  why: str = ...) -> None: ...
    def anomaly(self, detail: str) -> None: ...
    def carries(self) -> None: ...
    def has_fragments(self, key: Hashable) -> bool: ...
    def call_id(self, key: Hashable) -> str | None: ...


#: provider -> (module, class): imported on first use, so a stream loads only its own adapter.
_ADAPTERS: dict[str, tuple[str, str]] = {
    "openai-chat": ("openai_chat", "OpenAIChatAdapter"),
    "openai-responses": ("openai_responses", "OpenAIResponsesAdapter"),
    "anthropic": ("anthropic", "AnthropicAdapter"),
    "gemini": ("gemini", "GeminiAdapter"),
    "bedrock-converse": ("bedrock_converse", "BedrockConverseAdapter"),
    "ollama": ("ollama", "OllamaAdapter"),
    "cohere": ("cohere", "CohereAdapter"),
}


def make_adapter(provider: Provider, sink: Sink) -> Adapter:
    module, name = _ADAPTERS[provider]
    adapter_class: Callable[[Sink], Adapter] = getattr(import_module(f"{__name__}.{module}"), name)
    return adapter_class(sink)


_ANTHROPIC_TYPES = frozenset(
    {"message_start", "content_block_start", "content_block_delta", "content_block_stop",
     "message_delta", "message_stop"}
)


_SDK_MODULES: tuple[tuple[str, Provider], ...] = (
    ("anthropic.", "anthropic"), ("google.genai", "gemini"), ("cohere.", "cohere"), ("ollama.", "ollama"),
)


def detect_provider(event: Any) -> Provider | None:
    """Tell the vendor family from one event, SDK object or wire dict; ``None`` if undecidable."""
    module = type(event).__module__
    if module.startswith("openai."):
        return "openai-responses" if ".responses" in module else "openai-chat"
    for prefix, provider in _SDK_MODULES:
        if module.startswith(prefix):
            return provider
    if field(event, "choices") is not None or field(event, "object") == "chat.completion.chunk":
        return "openai-chat"
    kind = field(event, "type")
    if isinstance(kind, str):
        return _by_type(kind)
    if _is_cohere_v1(field(event, "event_type")):
        return "cohere"
    if field(event, "candidates") is not None or field(event, "usageMetadata") is not None:
        return "gemini"
    if field(event, "promptFeedback") is not None:
        return "gemini"
    return _by_shape(event)


def _by_type(kind: str) -> Provider | None:
    from .cohere import COHERE_TYPES

    if kind.startswith("response."):
        return "openai-responses"
    if kind in _ANTHROPIC_TYPES:
        return "anthropic"
    if kind in COHERE_TYPES:
        return "cohere"
    return None


def _is_cohere_v1(kind: Any) -> bool:
    from .cohere import COHERE_V1_TYPES

    return isinstance(kind, str) and kind in COHERE_V1_TYPES


def _by_shape(event: Any) -> Provider | None:
    """Families whose events have no ``type``: Bedrock's one-key events, Ollama's chunks."""
    from .bedrock_converse import BEDROCK_EVENTS, is_bedrock_exception

    if type(event) is not dict:
        return None
    if len(event) == 1:
        name = next(iter(event))
        if name in BEDROCK_EVENTS or (is_bedrock_exception(name) and name != "error"):
            return "bedrock-converse"
    if type(event.get("done")) is bool and ("message" in event or "model" in event):
        return "ollama"
    return None


def unwrap(chunk: Any) -> Any:
    """Accept the recorded-stream envelope too: ``{"event"?, "data"}``, ``{"done": true}``.

    Returns the vendor event, or ``None`` for markers that carry nothing (``[DONE]``). A
    Bedrock event in the envelope (``{"event": "contentBlockDelta", "data": {...}}``, a raw
    frame's ``:event-type`` and payload) becomes the shape boto3 yields,
    ``{"contentBlockDelta": {...}}``: its payload has no ``type``, the name is its only kind.
    ``{"toolstream_unparsable": text}`` (from ``toolstream_core.sse``) raises, so the assembler
    counts it and refuses to prove any open call.
    """
    if type(chunk) is not dict:
        return chunk
    if "data" in chunk and len(chunk) <= 2 and (len(chunk) == 1 or "event" in chunk):
        data = chunk["data"]
        if len(chunk) == 2 and type(data) is dict and "type" not in data:
            return _named(chunk["event"], data)
        return data if data is not None else None
    if chunk.get("done") is True and len(chunk) == 1:
        return None
    if "toolstream_unparsable" in chunk or ("raw" in chunk and len(chunk) == 1):
        raise ValueError("an event that is not JSON arrived in the stream")
    return chunk


def _named(event: Any, data: dict[str, Any]) -> Any:
    from .bedrock_converse import BEDROCK_EVENTS, is_bedrock_exception

    if isinstance(event, str) and (event in BEDROCK_EVENTS or (is_bedrock_exception(event) and event != "error")):
        return {event: data}
    return data
