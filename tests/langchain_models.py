"""The real LangChain integration classes aimed at the emulator, for the LangChain shim's tests
and for the parity suite under tests/llamaindex (a module at the root of tests/, so both
directories import it)."""

from __future__ import annotations

from typing import Any

from toolstream_core.testing import VendorEmulator
from toolstream_core.testing._record_cassettes import MODELS

__all__ = ["MODEL_NAMES", "make_model"]

# The bundled cassettes' model names, one table for recording and for the models built here
# (``make_model``'s partner classes use the last three; the ``api`` fixture keeps the four).
MODEL_NAMES = MODELS


def _partner_model(api: str, base: str | None, **kwargs: Any) -> Any:
    """``ChatBedrockConverse``, ``ChatOllama`` or ``ChatCohere``; ``base=None``: the vendor's
    default URL (where the bundled cassettes were recorded)."""
    if api == "bedrock-converse":
        from botocore.config import Config
        from langchain_aws import ChatBedrockConverse

        extra: dict[str, Any] = {"endpoint_url": base} if base is not None else {}
        return ChatBedrockConverse(
            model=MODEL_NAMES[api], region_name="us-east-1", aws_access_key_id="toolstream-test",
            aws_secret_access_key="test", **extra, **kwargs,
            config=Config(retries={"total_max_attempts": 1, "mode": "standard"}))
    if api == "ollama":
        from langchain_ollama import ChatOllama

        return ChatOllama(model=MODEL_NAMES[api], base_url=base or "http://localhost:11434",
                          **kwargs)
    from langchain_cohere import ChatCohere

    extra = {"base_url": base} if base is not None else {}
    return ChatCohere(model=MODEL_NAMES[api], cohere_api_key="test", **extra, **kwargs)


def make_model(api: str, emu: VendorEmulator | None = None, **kwargs: Any) -> Any:
    """The real LangChain integration class for ``api``, pointed at the emulator."""
    base = emu.base_url if emu is not None else None
    if api in ("bedrock-converse", "ollama", "cohere"):
        return _partner_model(api, base, **kwargs)
    if api.startswith("openai"):
        from langchain_openai import ChatOpenAI

        extra: dict[str, Any] = {"use_responses_api": True} if api == "openai-responses" else {}
        if base is not None:
            extra["base_url"] = base + "/v1"
        return ChatOpenAI(model=MODEL_NAMES[api], api_key="test", max_retries=0,
                          **extra, **kwargs)
    if api == "anthropic":
        from langchain_anthropic import ChatAnthropic

        extra = {"base_url": base} if base is not None else {}
        return ChatAnthropic(model=MODEL_NAMES[api], api_key="test", max_retries=0,
                             **extra, **kwargs)
    from langchain_google_genai import ChatGoogleGenerativeAI

    extra = {"base_url": base} if base is not None else {}
    return ChatGoogleGenerativeAI(model=MODEL_NAMES[api], google_api_key="test",
                                  max_retries=0, **extra, **kwargs)
