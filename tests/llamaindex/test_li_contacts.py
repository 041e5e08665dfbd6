"""How the LlamaIndex shim reaches each LLM class's SDK client (issue 26, item 5).

Through the class's public constructor wherever it takes the client (``OpenAI(openai_client=)``,
``Ollama(client=)``, ``BedrockConverse(client=)``), so the tapped copy keeps everything the
user set, their HTTP client included; through the private names of the table (``Anthropic``,
``Cohere``) only on the per-call copy. When a release moves such a name, the gated call raises
``TapUnavailableError`` before any request is sent, the same as the LangChain shim, instead of
reading ``ChatResponse.raw`` with a log line.
"""

from __future__ import annotations

import importlib.util
from importlib.machinery import ModuleSpec
from importlib.metadata import version
from typing import Any

import httpx
import pytest
from li_helpers import Recorder, make_llm, run_agent
from llama_index.core.base.llms.types import ChatMessage
from toolstream_core.testing import VendorEmulator

from llamaindex_toolstream import TapUnavailableError, ToolstreamFunctionAgent, ToolstreamLLM

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning")]

GO = [ChatMessage(role="user", content="go")]


def _is_tap(client: Any) -> bool:
    return repr(client).startswith("<toolstream tap")


def _drain(llm: ToolstreamLLM) -> Any:
    return list(llm.stream_chat(GO))[-1]


# -- a moved private name: told, before any request -------------------------------------------


def test_a_moved_client_method_raises_before_any_request(
        emu: VendorEmulator, monkeypatch: pytest.MonkeyPatch) -> None:
    from llama_index.llms.openai import OpenAI

    monkeypatch.delattr(OpenAI, "_get_client")  # a release that keeps its client elsewhere
    emu.queue("openai-chat", "single_call")
    with pytest.raises(TapUnavailableError) as raised:
        _drain(ToolstreamLLM(make_llm("openai-chat", emu.base_url)))
    assert f"OpenAI._get_client (llama-index-llms-openai {version('llama-index-llms-openai')})" \
        in str(raised.value)
    assert emu.requests == []


async def test_a_moved_private_attribute_stops_the_agent_before_any_request(
        emu: VendorEmulator, monkeypatch: pytest.MonkeyPatch) -> None:
    from llama_index.llms.anthropic import Anthropic

    llm = make_llm("anthropic", emu.base_url)
    monkeypatch.delitem(Anthropic.__private_attributes__, "_client")  # the attribute moved
    recorder = Recorder()
    agent = ToolstreamFunctionAgent(tools=recorder.tools(), llm=llm)
    emu.queue("anthropic", "single_call")
    outcome = await run_agent(agent, recorder, emu)

    assert isinstance(outcome.error, TapUnavailableError)
    assert "Anthropic._client (llama-index-llms-anthropic" in str(outcome.error)
    assert (outcome.requests, outcome.runs) == (0, [])


def test_bedrock_with_aioboto3_is_refused_with_the_reason(
        emu: VendorEmulator, monkeypatch: pytest.MonkeyPatch) -> None:
    """aioboto3 makes ``BedrockConverse`` open its own async client, out of the tap's reach."""
    from llama_index.llms.bedrock_converse import BedrockConverse

    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any, **kwargs: Any) -> Any:
        return ModuleSpec("aioboto3", None) if name == "aioboto3" else real(name, *args, **kwargs)

    llm = BedrockConverse(model="anthropic.claude-3-5-sonnet-20240620-v1:0", region_name="us-east-1",
                          aws_access_key_id="test", aws_secret_access_key="test",
                          endpoint_url=emu.base_url, max_retries=1)
    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    with pytest.raises(TapUnavailableError, match="aioboto3"):
        _drain(ToolstreamLLM(llm))
    assert emu.requests == []


# -- OpenAI: rebuilt by its constructor with the user's own client -----------------------------


@pytest.mark.parametrize("reuse_client", [True, False])
async def test_openai_copy_streams_through_the_users_http_client(
        reuse_client: bool, emu: VendorEmulator) -> None:
    sent: list[str] = []

    def hook(request: httpx.Request) -> None:
        sent.append(request.url.path)

    async def ahook(request: httpx.Request) -> None:
        sent.append(request.url.path)

    llm = make_llm("openai-chat", emu.base_url, reuse_client=reuse_client, max_tokens=777,
                   http_client=httpx.Client(event_hooks={"request": [hook]}),
                   async_http_client=httpx.AsyncClient(event_hooks={"request": [ahook]}))
    gated = ToolstreamLLM(llm)
    emu.queue("openai-chat", "single_call", "single_call")
    sync_last = _drain(gated)
    async_last = [r async for r in await gated.astream_chat(GO)][-1]

    for last in (sync_last, async_last):
        record = last.additional_kwargs["toolstream"]
        assert record["mode"] == "tap"
        assert [c["name"] for c in record["committed"]] == ["write_file"]
    assert sent == ["/v1/chat/completions"] * 2  # the user's HTTP clients carried both
    assert [r.body["max_tokens"] for r in emu.requests] == [777, 777]  # the user's settings
    assert llm.reuse_client is reuse_client
    assert not _is_tap(llm._get_client())


def test_anthropic_copy_is_tapped_and_the_users_llm_is_not(emu: VendorEmulator) -> None:
    llm = make_llm("anthropic", emu.base_url)
    own = (llm._client, llm._aclient)
    emu.queue("anthropic", "single_call")
    last = _drain(ToolstreamLLM(llm))
    assert last.additional_kwargs["toolstream"]["mode"] == "tap"
    assert (llm._client, llm._aclient) == own
    assert not _is_tap(llm._client)


def test_an_openai_subclass_with_its_own_constructor_is_tapped(emu: VendorEmulator) -> None:
    """A subclass whose constructor the shim cannot call (it takes an argument that is no
    field) gets the tapped clients on its copy under the listed private names."""
    from llama_index.llms.openai import OpenAI

    class Mine(OpenAI):
        def __init__(self, region: str, **kwargs: Any) -> None:
            super().__init__(**kwargs)

    llm = Mine("eu", model="gpt-4o-mini", api_key="test", api_base=emu.base_url + "/v1",
               max_retries=0, reuse_client=False)
    emu.queue("openai-chat", "single_call")
    record = _drain(ToolstreamLLM(llm)).additional_kwargs["toolstream"]
    assert record["mode"] == "tap"
    assert [c["name"] for c in record["committed"]] == ["write_file"]
    assert llm.reuse_client is False



def test_every_tapped_class_is_one_the_package_reads() -> None:
    """The tap table is built from the provider table: a tap named for a class the package
    does not recognise would never be used, and its class silently read from ``raw``."""
    from llamaindex_toolstream import _providers, _tap

    assert set(_tap._HOW) <= {name for _, name, _ in _providers.PROVIDER_CLASSES}
    assert [row[:2] for row in _tap._TAPS] == [row[:2] for row in _providers.PROVIDER_CLASSES]
