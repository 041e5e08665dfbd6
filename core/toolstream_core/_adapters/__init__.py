"""One adapter per vendor family; each owns that vendor's identity rules (DESIGN §4.1).

An adapter turns wire events into the assembler's vocabulary and keeps only the state needed
to resolve identity (which key a fragment belongs to). It never decides anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ._access import field

if TYPE_CHECKING:
    from .._assembler import Assembler
    from .._models import Provider

__all__ = ["Adapter", "detect_provider", "make_adapter", "unwrap"]


class Adapter(Protocol):
    def feed(self, event: Any) -> None: ...


def make_adapter(provider: Provider, sink: Assembler) -> Adapter:
    if provider == "openai-chat":
        from .openai_chat import OpenAIChatAdapter

        return OpenAIChatAdapter(sink)
    if provider == "openai-responses":
        from .openai_responses import OpenAIResponsesAdapter

        return OpenAIResponsesAdapter(sink)
    if provider == "anthropic":
        from .anthropic import AnthropicAdapter

        return AnthropicAdapter(sink)
    from .gemini import GeminiAdapter

    return GeminiAdapter(sink)


_ANTHROPIC_TYPES = frozenset(
    {"message_start", "content_block_start", "content_block_delta", "content_block_stop",
     "message_delta", "message_stop"}
)


def detect_provider(event: Any) -> Provider | None:
    """Tell the vendor family from one event, SDK object or wire dict; ``None`` if undecidable."""
    module = type(event).__module__
    if module.startswith("openai."):
        return "openai-responses" if ".responses" in module else "openai-chat"
    if module.startswith("anthropic."):
        return "anthropic"
    if module.startswith("google.genai"):
        return "gemini"
    if field(event, "choices") is not None or field(event, "object") == "chat.completion.chunk":
        return "openai-chat"
    kind = field(event, "type")
    if isinstance(kind, str):
        if kind.startswith("response."):
            return "openai-responses"
        if kind in _ANTHROPIC_TYPES:
            return "anthropic"
    if field(event, "candidates") is not None or field(event, "usageMetadata") is not None:
        return "gemini"
    if field(event, "promptFeedback") is not None:
        return "gemini"
    return None


def unwrap(chunk: Any) -> Any:
    """Accept the recorded-stream envelope too: ``{"event"?, "data"}``, ``{"done": true}``.

    Returns the vendor event, or ``None`` for markers that carry nothing (``[DONE]``).
    ``{"toolstream_unparsable": text}`` (from ``toolstream_core.sse``) raises, so the assembler
    counts it and refuses to prove any open call.
    """
    if type(chunk) is not dict:
        return chunk
    if "data" in chunk and len(chunk) <= 2 and (len(chunk) == 1 or "event" in chunk):
        data = chunk["data"]
        return data if data is not None else None
    if chunk.get("done") is True and len(chunk) == 1:
        return None
    if "toolstream_unparsable" in chunk or ("raw" in chunk and len(chunk) == 1):
        raise ValueError("an event that is not JSON arrived in the stream")
    return chunk
