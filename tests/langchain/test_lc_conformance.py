"""The standard ``langchain-tests`` suites, run on the gated wrapper (a suite nobody here wrote).

``ChatModelUnitTests`` runs for the wrapper around each of the four integrations.
``ChatModelIntegrationTests`` runs against the emulator on 127.0.0.1 through the real SDKs.
The integration cases that assert what a *model decides* (call ``magic_function`` with 3,
fill a ``Joke``, finish an agent loop) need a real vendor model; offline, the emulator plays
fixed scenarios, so those cases are marked ``xfail(strict=True)`` in ``conftest.py`` with that
reason (strict: if one starts passing, the mark must go).
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_anthropic import ChatAnthropic
from langchain_google_genai import ChatGoogleGenerativeAI
from langchain_openai import ChatOpenAI
from langchain_tests.integration_tests import ChatModelIntegrationTests
from langchain_tests.unit_tests import ChatModelUnitTests
from toolstream_core.testing import VendorEmulator

from langchain_toolstream import ToolstreamChatModel

_BASE: dict[str, str] = {"url": "http://127.0.0.1:9"}


class GatedChatOpenAI(ToolstreamChatModel):
    """``with_toolstream(ChatOpenAI(**kwargs))`` as a class the suites can instantiate."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("base_url", _BASE["url"] + "/v1")
        super().__init__(chat_model=ChatOpenAI(**kwargs))


class GatedChatAnthropic(ToolstreamChatModel):
    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("base_url", _BASE["url"])
        super().__init__(chat_model=ChatAnthropic(**kwargs))


class GatedChatGoogleGenerativeAI(ToolstreamChatModel):
    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("base_url", _BASE["url"])
        super().__init__(chat_model=ChatGoogleGenerativeAI(**kwargs))


class _Gated:
    """What both suites ask of a gated model: its class and its constructor keywords."""

    cls: type[ToolstreamChatModel]
    params: dict[str, Any]

    @property
    def chat_model_class(self) -> type[ToolstreamChatModel]:
        return self.cls

    @property
    def chat_model_params(self) -> dict[str, Any]:
        return {**self.params, "api_key": "test"}


class _Unit(_Gated, ChatModelUnitTests):
    key_env: str = "OPENAI_API_KEY"

    @property
    def init_from_env_params(self) -> tuple[dict[str, str], dict[str, Any], dict[str, Any]]:
        # The key comes from the wrapped integration's own environment variable.
        return {self.key_env: "test-from-env"}, dict(self.params), {}


# One class per vendor set-up, shared by the unit and the integration suite.
class _OpenAI(_Gated):
    cls = GatedChatOpenAI
    params = {"model": "gpt-4.1-mini"}


class _OpenAIResponses(_Gated):
    cls = GatedChatOpenAI
    params = {"model": "gpt-4.1-mini", "use_responses_api": True}


class _Anthropic(_Gated):
    cls = GatedChatAnthropic
    params = {"model": "claude-sonnet-4-5"}
    key_env = "ANTHROPIC_API_KEY"


class _GoogleGenerativeAI(_Gated):
    cls = GatedChatGoogleGenerativeAI
    params = {"model": "gemini-2.5-flash"}
    key_env = "GOOGLE_API_KEY"


class TestUnitChatOpenAI(_OpenAI, _Unit):
    pass


class TestUnitChatOpenAIResponses(_OpenAIResponses, _Unit):
    pass


class TestUnitChatAnthropic(_Anthropic, _Unit):
    pass


class TestUnitChatGoogleGenerativeAI(_GoogleGenerativeAI, _Unit):
    pass


class _Integration(_Gated, ChatModelIntegrationTests):
    @pytest.fixture(autouse=True)
    def _point_at_emulator(self, emu: VendorEmulator) -> None:
        _BASE["url"] = emu.base_url

    @property
    def supports_model_override(self) -> bool:
        # ChatGoogleGenerativeAI has no per-call ``model=`` (google-genai rejects the kwarg).
        return self.cls is not GatedChatGoogleGenerativeAI

    @property
    def model_override_value(self) -> str:
        return "scenario:text"  # the emulator takes any model name; this one plays "text"


class TestIntegrationChatOpenAI(_OpenAI, _Integration):
    # stream_usage: ChatOpenAI turns it on by itself only for api.openai.com; the emulator,
    # like OpenAI, honours stream_options.include_usage.
    params = {**_OpenAI.params, "stream_usage": True}


class TestIntegrationChatOpenAIResponses(_OpenAIResponses, _Integration):
    pass


class TestIntegrationChatAnthropic(_Anthropic, _Integration):
    @property
    def supports_anthropic_inputs(self) -> bool:
        return True


class TestIntegrationChatGoogleGenerativeAI(_GoogleGenerativeAI, _Integration):
    pass
