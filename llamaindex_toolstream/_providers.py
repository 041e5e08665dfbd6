"""Which vendor wire a LlamaIndex LLM class speaks, and how its ``ChatResponse.raw`` looks.

Detection is by class so that a stream is decoded with the right adapter from its first
chunk on; the LLM packages are optional, so the tables name their classes by module and name
(``ClassTable``, looked up along the LLM's MRO) and import none of them. A class the
package does not know, given no ``provider=``, is read through LlamaIndex's own messages
(``_convert``), its end of turn read or declared (``declare_finish_signal``) or, for a test
double (``TEST_DOUBLES``, ``declare_test_double``), the clean end of its response.
"""

from __future__ import annotations

from typing import Any

from toolstream_core import PROVIDERS, Provider
from toolstream_core.integration._private import ClassTable

__all__ = [
    "PROVIDER_CLASSES",
    "TEST_DOUBLES",
    "UNREADABLE_CLASSES",
    "ProviderMismatchError",
    "detect_llm_provider",
    "resolve_provider",
    "unreadable_reason",
]

#: (module, class name, provider), looked up along the LLM's MRO (``ClassTable``: the nearest
#: listed class decides, so ``OpenAIResponses`` keeps its row if it ever subclasses ``OpenAI``).
PROVIDER_CLASSES: ClassTable[tuple[str, str, Provider]] = ClassTable((
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
))


#: (module, class name, why): classes whose stream the gate cannot read whatever
#: ``provider=`` says, refused with the reason rather than read as a wire they do not send.
UNREADABLE_CLASSES: ClassTable[tuple[str, str, str]] = ClassTable((
    ("llama_index.llms.huggingface_api", "HuggingFaceInferenceAPI",
     "its tool calls follow text-generation-inference's old format, which no gate can make "
     "legal: it sends a call back with its id as function.name and no id, and a tool result "
     "with name= and no tool_call_id, so the request after a tool call pairs nothing on an "
     "OpenAI-compatible server; and its async stream stops before the finish chunk, the "
     "vendor's only proof that a call is complete. Use OpenAILike on the endpoint's "
     "/v1/chat/completions route instead"),
))


#: (module, class name): LlamaIndex's own test doubles. Each is handed its whole answer by the
#: test that scripts it (a message, or a generator of messages) and has no transport that
#: could cut it, so a clean end of its response is its finish where it shows none: a call it
#: makes commits as a vendor's would, and a test that runs the stock agent on it runs the
#: gated one without a line of setup. The rule is the core's (``FINISH.is_test_double``, with
#: this table); a project's own double: ``declare_test_double``.
TEST_DOUBLES: ClassTable[tuple[str, str]] = ClassTable((
    ("llama_index.core.llms.mock", "MockLLM"),
    ("llama_index.core.llms.mock", "MockFunctionCallingLLM"),
))


def unreadable_reason(llm: Any) -> str | None:
    """Why the gate cannot read ``llm``'s stream at all, or ``None``."""
    why: str | None = UNREADABLE_CLASSES.get(type(llm))
    return why


def detect_llm_provider(llm: Any) -> Provider | None:
    """The wire ``llm`` speaks, or ``None`` for a class this package does not know."""
    provider: Provider | None = PROVIDER_CLASSES.get(type(llm))
    return provider


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
