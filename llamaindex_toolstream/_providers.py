"""Which vendor wire a LlamaIndex LLM class speaks, and how its ``ChatResponse.raw`` looks.

Detection is by class so that a stream is decoded with the right adapter from its first
chunk on; the LLM packages are optional, so each is imported only if installed. A class the
package does not know, given no ``provider=``, is read through LlamaIndex's own messages
(``_convert``), its end of turn read or declared (``declare_finish_signal``) or, for a test
double (``TEST_DOUBLES``, ``declare_test_double``), the clean end of its response.
"""

from __future__ import annotations

import importlib
from typing import Any

from toolstream_core import PROVIDERS, Provider
from toolstream_core.integration import FINISH

__all__ = [
    "PROVIDER_CLASSES",
    "TEST_DOUBLES",
    "UNREADABLE_CLASSES",
    "ProviderMismatchError",
    "detect_llm_provider",
    "is_test_double",
    "resolve_provider",
    "unreadable_reason",
]

#: (module, class name, provider), most specific first: ``OpenAIResponses`` is not an
#: ``OpenAI`` subclass today, but ordering keeps that true if it ever becomes one.
PROVIDER_CLASSES: tuple[tuple[str, str, Provider], ...] = (
    ("llama_index.llms.openai", "OpenAIResponses", "openai-responses"),
    ("llama_index.llms.openai", "OpenAI", "openai-chat"),
    ("llama_index.llms.anthropic", "Anthropic", "anthropic"),
    ("llama_index.llms.google_genai", "GoogleGenAI", "gemini"),
    ("llama_index.llms.ollama", "Ollama", "ollama"),
    ("llama_index.llms.bedrock_converse", "BedrockConverse", "bedrock-converse"),
    # Cohere's v1 chat (``event_type`` events), which the "cohere" adapter reads too
    ("llama_index.llms.cohere", "Cohere", "cohere"),
    # litellm's own translation of its upstream, always in the OpenAI chat shape
    ("llama_index.llms.litellm", "LiteLLM", "openai-chat"),
    # the mistralai SDK: Mistral's chat completions, the OpenAI chat wire with its quirks
    ("llama_index.llms.mistralai", "MistralAI", "openai-chat"),
)


#: (module, class name, why): classes whose stream the gate cannot read whatever
#: ``provider=`` says, refused with the reason rather than read as a wire they do not send.
UNREADABLE_CLASSES: tuple[tuple[str, str, str], ...] = (
    ("llama_index.llms.huggingface_api", "HuggingFaceInferenceAPI",
     "its tool calls follow text-generation-inference's old format, which no gate can make "
     "legal: it sends a call back with its id as function.name and no id, and a tool result "
     "with name= and no tool_call_id, so the request after a tool call pairs nothing on an "
     "OpenAI-compatible server; and its async stream stops before the finish chunk, the "
     "vendor's only proof that a call is complete. Use OpenAILike on the endpoint's "
     "/v1/chat/completions route instead"),
)


#: (module, class name): LlamaIndex's own test doubles. Each is handed its whole answer by the
#: test that scripts it (a message, or a generator of messages) and has no transport that
#: could cut it, so a clean end of its response is its finish where it shows none: a call it
#: makes commits as a vendor's would, and a test that runs the stock agent on it runs the
#: gated one without a line of setup. A project's own double: ``declare_test_double``.
TEST_DOUBLES: tuple[tuple[str, str], ...] = (
    ("llama_index.core.llms.mock", "MockLLM"),
    ("llama_index.core.llms.mock", "MockFunctionCallingLLM"),
)


def is_test_double(llm: Any) -> bool:
    """Whether ``llm`` is one of LlamaIndex's doubles or of a class declared a test double."""
    return FINISH.is_test_double(type(llm)) or any(
        _instance_of(llm, module, name) for module, name in TEST_DOUBLES)


def _instance_of(llm: Any, module_name: str, class_name: str) -> bool:
    try:
        module = importlib.import_module(module_name)
    except ImportError:
        return False
    cls = getattr(module, class_name, None)
    return isinstance(cls, type) and isinstance(llm, cls)


def unreadable_reason(llm: Any) -> str | None:
    """Why the gate cannot read ``llm``'s stream at all, or ``None``."""
    return next((why for module_name, class_name, why in UNREADABLE_CLASSES
                 if _instance_of(llm, module_name, class_name)), None)


def detect_llm_provider(llm: Any) -> Provider | None:
    """The wire ``llm`` speaks, or ``None`` for a class this package does not know."""
    return next((provider for module_name, class_name, provider in PROVIDER_CLASSES
                 if _instance_of(llm, module_name, class_name)), None)


class ProviderMismatchError(ValueError):
    """The wire a ``ToolstreamLLM`` was told to read is not the one its LLM speaks.

    Raised when ``provider=`` contradicts the class, and at the end of a response whose tool
    calls the framework found but the gate could not read: those calls would otherwise
    vanish (nothing runs, nothing is answered, the agent answers ``''``).
    """


def resolve_provider(llm: Any, given: Provider | None) -> Provider | None:
    """The wire to read ``llm``'s streams as: its class's, or ``given`` for a class this
    package does not know; a ``given`` that contradicts the class is an error. ``None``: a
    class this package does not know, given no wire, is read through LlamaIndex's own
    messages (``_convert``)."""
    detected = detect_llm_provider(llm)
    name = type(llm).__name__
    why = unreadable_reason(llm)
    if why is not None:
        raise ProviderMismatchError(f"toolstream cannot gate {name}: {why}")
    if given is not None and given not in PROVIDERS:
        raise ValueError(f"provider={given!r} is not a wire toolstream reads; "
                         f"one of {', '.join(PROVIDERS)}")
    if detected is not None and given is not None and given != detected:
        raise ProviderMismatchError(
            f"{name} speaks the {detected} wire, not provider={given!r}: the gate would read "
            f"none of its tool calls; leave provider= unset for {name}")
    return given or detected
