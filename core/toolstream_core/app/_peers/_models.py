"""What a target is asked through: the vendor's own client pointed at the replayed cassette
(`sdk_chunks`: the plain ``stream=True`` call), and the LangChain and LlamaIndex model classes
built around it, for the engines (`_engines`)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from toolstream_core.app._peers._readers import (
    EngineUnavailable,
    need,
)
from toolstream_core.app._peers._targets import Target
from toolstream_core.vendors import SDK_EXTRA, make_client, open_stream

# Keys that only have to look like keys: the cassette answers, nothing leaves the host.
_DEMO_KEY = "toolstream-demo-offline-key"
_MAX_TOKENS = 1024


# ----------------------------------------------------------------- vendor clients


def _client(target: Target) -> Any:
    """The vendor's own client, pointed at the replayed cassette (`toolstream_core.vendors`)."""
    return need(SDK_EXTRA[target.api], lambda: make_client(
        target.api, api_key=_DEMO_KEY, base_url=target.base_url,
        api_version=(target.api_version or "v1beta") if target.api == "gemini" else None))


def _gemini_http_options(target: Target) -> Any:
    types = need("gemini", lambda: __import__("google.genai.types", fromlist=["types"]))
    return types.HttpOptions(
        base_url=target.base_url, api_version=target.api_version or "v1beta"
    )


def sdk_chunks(target: Target, *, max_tokens: int | None = _MAX_TOKENS,
               ) -> tuple[list[Any], BaseException | None]:
    """The raw SDK stream objects for the target, and the exception that ended it (if any).

    This is the plain ``stream=True`` call a toolstream user wraps; it is also what
    the SDK itself hands the frameworks. ``max_tokens=None`` leaves the limit out, as
    OpenAI's ``chat.completions.stream`` call below does (a live server reports it back).
    """
    chunks: list[Any] = []
    try:
        # Gemini's recorded declarations are REST JSON, not the SDK's shape; the cassette
        # answers whatever is asked, so that request declares none.
        client = _client(target)  # referenced while reading: see open_stream
        stream = open_stream(target.api, client, model=target.model,
                             contents=target.prompt,
                             tools=None if target.api == "gemini" else target.wire_tools,
                             max_tokens=max_tokens)
        for chunk in stream:
            chunks.append(chunk)
    except EngineUnavailable:
        raise
    except Exception as exc:
        return chunks, exc
    return chunks, None


def _omit() -> Any:
    import openai

    return openai.omit


def _langchain_model(target: Target) -> Any:
    extra = "langchain"
    if target.api in ("openai-chat", "openai-responses"):
        chat_openai = need(extra, lambda: __import__("langchain_openai").ChatOpenAI)
        return chat_openai(**_keyed(target), use_responses_api=target.api == "openai-responses")
    if target.api == "anthropic":
        chat_anthropic = need(extra, lambda: __import__("langchain_anthropic").ChatAnthropic)
        return chat_anthropic(**_keyed(target), max_tokens=_MAX_TOKENS)
    if target.api in _LANGCHAIN_FAMILIES:
        return _LANGCHAIN_FAMILIES[target.api](target)
    chat_google = need(
        extra, lambda: __import__("langchain_google_genai").ChatGoogleGenerativeAI
    )
    return chat_google(
        model=target.model,
        google_api_key=_DEMO_KEY,
        base_url=target.base_url,
        max_retries=0,
        client_args={"http_options": _gemini_http_options(target)},
    )


def _keyed(target: Target) -> dict[str, Any]:
    """What ChatOpenAI and ChatAnthropic both take: the emulator's URL, a demo key, no retries."""
    return {"model": target.model, "base_url": target.base_url, "api_key": _DEMO_KEY,
            "max_retries": 0}


def _chat_bedrock(target: Target) -> Any:
    chat = need("langchain", lambda: __import__("langchain_aws").ChatBedrockConverse)
    # keys given so the control-plane client it also builds does not look for an AWS
    # profile (an instance-metadata request the recorded exchange does not hold)
    return chat(model=target.model, client=_client(target), region_name="us-east-1",
                aws_access_key_id=_DEMO_KEY, aws_secret_access_key=_DEMO_KEY,
                max_tokens=_MAX_TOKENS)


def _chat_ollama(target: Target) -> Any:
    chat = need("langchain", lambda: __import__("langchain_ollama").ChatOllama)
    return chat(model=target.model, base_url=target.base_url, num_predict=_MAX_TOKENS)


def _chat_cohere(target: Target) -> Any:
    chat = need("langchain", lambda: __import__("langchain_cohere").ChatCohere)
    return chat(model=target.model, cohere_api_key=_DEMO_KEY, base_url=target.base_url,
                max_retries=0, max_tokens=_MAX_TOKENS)


_LANGCHAIN_FAMILIES: dict[str, Callable[[Target], Any]] = {
    "bedrock-converse": _chat_bedrock,
    "ollama": _chat_ollama,
    "cohere": _chat_cohere,
}


_LLAMAINDEX_STAND_IN = {
    "openai-chat": "gpt-4o-mini",
    "openai-responses": "gpt-4o-mini",
    "anthropic": "claude-sonnet-4-5",
}


def _llamaindex_model(api: str, model: str) -> str:
    # Imported by name: the "latest" env type-checks this module without LlamaIndex installed.
    family = "anthropic" if api == "anthropic" else "openai"
    utils = importlib.import_module(f"llama_index.llms.{family}.utils")
    try:
        getattr(utils, f"{family}_modelname_to_contextsize")(model)
    except ValueError:
        return _LLAMAINDEX_STAND_IN[api]
    return model


def _llamaindex_family(target: Target) -> Any:
    """LlamaIndex's Bedrock Converse, Ollama and Cohere classes, on the replayed exchange."""
    extra = "llamaindex"
    if target.api == "bedrock-converse":
        llm = need(extra, lambda: __import__("llama_index.llms.bedrock_converse",
                                              fromlist=["x"]).BedrockConverse)
        return llm(model=target.model, client=_client(target), region_name="us-east-1",
                   max_tokens=_MAX_TOKENS, max_retries=1)
    if target.api == "ollama":
        llm = need(extra, lambda: __import__("llama_index.llms.ollama",
                                              fromlist=["x"]).Ollama)
        return llm(model=target.model, base_url=target.base_url, context_window=32_768)
    llm = need(extra, lambda: __import__("llama_index.llms.cohere", fromlist=["x"]).Cohere)
    return llm(model=target.model, api_key=_DEMO_KEY, base_url=target.base_url,
               max_retries=0, max_tokens=_MAX_TOKENS)


def _llamaindex_llm(target: Target) -> Any:
    extra = "llamaindex"
    if target.api in _LANGCHAIN_FAMILIES:
        return _llamaindex_family(target)
    if target.api == "gemini":
        google_llm = need(extra, lambda: __import__("llama_index.llms.google_genai",
                                                     fromlist=["x"]).GoogleGenAI)
        # Both limits given so the constructor does not fetch model metadata (a GET the
        # recorded exchange does not hold); the model is in the URL path, so it is kept.
        return google_llm(
            model=target.model, api_key=_DEMO_KEY, http_options=_gemini_http_options(target),
            max_tokens=_MAX_TOKENS, context_window=1_000_000,
        )
    if target.api == "anthropic":
        anthropic_llm = need(extra, lambda: __import__("llama_index.llms.anthropic",
                                                        fromlist=["x"]).Anthropic)
        return anthropic_llm(
            model=_llamaindex_model(target.api, target.model), base_url=target.base_url,
            api_key=_DEMO_KEY, max_retries=0, max_tokens=_MAX_TOKENS,
        )
    name = "OpenAI" if target.api == "openai-chat" else "OpenAIResponses"
    openai_llm = need(extra, lambda: getattr(__import__("llama_index.llms.openai",
                                                         fromlist=["x"]), name))
    return openai_llm(
        model=_llamaindex_model(target.api, target.model), api_base=target.base_url,
        api_key=_DEMO_KEY, max_retries=0,
    )
