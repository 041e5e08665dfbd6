"""Which vendor wire a LlamaIndex LLM class speaks, and how its ``ChatResponse.raw`` looks.

Detection is by class so that a stream is decoded with the right adapter from its first
chunk on; the LLM packages are optional, so each is imported only if installed.
"""

from __future__ import annotations

import importlib
from typing import Any

from toolstream_core import Provider

__all__ = ["PROVIDER_CLASSES", "detect_llm_provider"]

#: (module, class name, provider), most specific first: ``OpenAIResponses`` is not an
#: ``OpenAI`` subclass today, but ordering keeps that true if it ever becomes one.
PROVIDER_CLASSES: tuple[tuple[str, str, Provider], ...] = (
    ("llama_index.llms.openai", "OpenAIResponses", "openai-responses"),
    ("llama_index.llms.openai", "OpenAI", "openai-chat"),
    ("llama_index.llms.anthropic", "Anthropic", "anthropic"),
    ("llama_index.llms.google_genai", "GoogleGenAI", "gemini"),
)


def detect_llm_provider(llm: Any) -> Provider | None:
    """The wire ``llm`` speaks, or ``None`` for a class this package does not know."""
    for module_name, class_name, provider in PROVIDER_CLASSES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        cls = getattr(module, class_name, None)
        if isinstance(cls, type) and isinstance(llm, cls):
            return provider
    return None
