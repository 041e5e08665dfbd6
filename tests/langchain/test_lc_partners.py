"""The LangChain chat model classes users run, gated, against the emulator over HTTP.

One table: each class, the emulator (and server profile) its wire is served by, and how the
real class is pointed at it. Through ``create_agent(model, tools,
middleware=[ToolstreamMiddleware()])`` and through ``with_toolstream``: complete parallel
calls run exactly once with the vendor's arguments; a call cut by the max-token stop, or by a
stream that ends without a finish, never runs, and the next request carries it next to its
error result. Every request body the class really sent is read both ways
(``history_pairing``): every result has its call, every call its one result, every call's
arguments a JSON object.

The four core classes (``ChatOpenAI`` on chat and Responses, ``ChatAnthropic``,
``ChatGoogleGenerativeAI``), ``ChatLiteLLM`` (the ``litellm`` module's chunks), ``ChatBedrock``
with the Converse switch (its ``ChatBedrockConverse`` inside), ``ChatOllama``,
``ChatBedrockConverse`` (streaming, and ``disable_streaming=True`` through ``converse``) and
``ChatCohere`` are tapped on their own SDKs
against the emulator's native wires; classes built on ``langchain-openai`` (``AzureChatOpenAI``,
``ChatDeepSeek``, ``ChatXAI``, ``ChatTogether``) on the OpenAI SDK; ``ChatMistralAI`` (its own
httpx client), ``ChatGroq`` (the ``groq`` SDK), ``ChatFireworks`` (``fireworks-ai``),
``ChatNVIDIA`` (``requests``; NIM's whole calls without ``index``), ``ChatBedrock`` over
InvokeModel (boto3's ``invoke_model_with_response_stream``: Anthropic's events in Bedrock's
chunks) and ``ChatLiteLLMRouter`` (a ``litellm.Router``) are gated on LangChain's own chunks,
through the finish signals their packages put in ``response_metadata``. The record's ``mode``
says which, per class.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from lc_util import Recorder, assert_history_paired, make_model, recording_tools
from profile_util import sorted_calls
from toolstream_core.testing import SCENARIOS, VendorEmulator, history_pairing, sent_calls
from toolstream_core.testing._scenarios import build_script, scenario_rng

from langchain_toolstream import (
    ToolstreamMiddleware,
    error_tool_messages,
    read_record,
    with_toolstream,
)

SCENARIO_CASES = ("parallel_calls", "truncated_length", "no_finish")
LIMIT = 700


def _to_v1(request: httpx.Request) -> None:
    """Vendor SDKs with their own URL layout (Groq's ``/openai/v1``, Azure's deployments) post
    to the emulator's one Chat Completions route: the path is the only thing rewritten."""
    if request.url.path.endswith("/chat/completions"):
        request.url = request.url.copy_with(path="/v1/chat/completions")


def _http(asynchronous: bool = False) -> Any:
    hooks = {"request": [_to_v1] if not asynchronous else [_ato_v1]}
    return httpx.AsyncClient(event_hooks=hooks) if asynchronous else httpx.Client(event_hooks=hooks)


async def _ato_v1(request: httpx.Request) -> None:
    _to_v1(request)


def _mistral(base: str) -> BaseChatModel:
    mistralai = pytest.importorskip("langchain_mistralai")
    return mistralai.ChatMistralAI(model="mistral-large-latest", api_key="test",  # type: ignore[call-arg]
                                   base_url=base + "/v1", max_retries=0, max_tokens=LIMIT)


def _groq(base: str) -> BaseChatModel:
    groq = pytest.importorskip("langchain_groq")
    return groq.ChatGroq(model="llama-3.3-70b-versatile", api_key="test", base_url=base,  # type: ignore[call-arg]
                         max_retries=0, max_tokens=LIMIT, http_client=_http(),
                         http_async_client=_http(asynchronous=True))


def _fireworks(base: str) -> BaseChatModel:
    fireworks = pytest.importorskip("langchain_fireworks")
    return fireworks.ChatFireworks(model="accounts/fireworks/models/llama-v3p1-8b-instruct",  # type: ignore[call-arg]
                                   api_key="test", base_url=base, max_retries=0,
                                   max_tokens=LIMIT)


def _deepseek(base: str) -> BaseChatModel:
    deepseek = pytest.importorskip("langchain_deepseek")
    return deepseek.ChatDeepSeek(model="deepseek-chat", api_key="test", base_url=base + "/v1",  # type: ignore[call-arg]
                                 max_retries=0, max_tokens=LIMIT)


def _xai(base: str) -> BaseChatModel:
    xai = pytest.importorskip("langchain_xai")
    return xai.ChatXAI(model="grok-4", api_key="test", base_url=base + "/v1",  # type: ignore[call-arg]
                       max_retries=0, max_tokens=LIMIT)


def _together(base: str) -> BaseChatModel:
    together = pytest.importorskip("langchain_together")
    return together.ChatTogether(model="meta-llama/Llama-3.3-70B-Instruct-Turbo", api_key="test",  # type: ignore[call-arg]
                                 base_url=base + "/v1", max_retries=0, max_tokens=LIMIT)


def _azure(base: str) -> BaseChatModel:
    from langchain_openai import AzureChatOpenAI

    return AzureChatOpenAI(azure_deployment="gpt-4o", api_version="2024-10-21",  # type: ignore[call-arg]
                           azure_endpoint=base, api_key="test", max_retries=0,
                           max_tokens=LIMIT, http_client=_http(),
                           http_async_client=_http(asynchronous=True))


def _ollama(base: str) -> BaseChatModel:
    ollama = pytest.importorskip("langchain_ollama")
    return ollama.ChatOllama(model="llama3.1", base_url=base, num_predict=LIMIT)  # type: ignore[no-any-return]


def _bedrock(base: str, **extra: Any) -> BaseChatModel:
    aws = pytest.importorskip("langchain_aws")
    from botocore.config import Config

    return aws.ChatBedrockConverse(  # type: ignore[no-any-return]
        model="anthropic.claude-3-5-sonnet-20240620-v1:0", region_name="us-east-1",
        endpoint_url=base, aws_access_key_id="toolstream-test", aws_secret_access_key="test",
        max_tokens=LIMIT, config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
        **extra)


def _bedrock_whole(base: str) -> BaseChatModel:
    return _bedrock(base, disable_streaming=True)


def _cohere(base: str) -> BaseChatModel:
    cohere = pytest.importorskip("langchain_cohere")
    return cohere.ChatCohere(model="command-r-plus", cohere_api_key="test", base_url=base,  # type: ignore[no-any-return]
                             max_tokens=LIMIT)


def _litellm(base: str) -> BaseChatModel:
    litellm = pytest.importorskip("langchain_litellm")
    return litellm.ChatLiteLLM(model="openai/gpt-4.1-mini", api_base=base + "/v1",  # type: ignore[no-any-return]
                               api_key="test", max_tokens=LIMIT, max_retries=0)


def _nvidia(base: str) -> BaseChatModel:
    nvidia = pytest.importorskip("langchain_nvidia_ai_endpoints")
    return nvidia.ChatNVIDIA(model="meta/llama-3.1-70b-instruct", base_url=base + "/v1",  # type: ignore[no-any-return]
                             api_key="nvapi-test", max_completion_tokens=LIMIT)


def _bedrock_switch(base: str) -> BaseChatModel:
    """``ChatBedrock`` with the Converse switch: a ``ChatBedrockConverse`` inside."""
    aws = pytest.importorskip("langchain_aws")
    from botocore.config import Config

    return aws.ChatBedrock(  # type: ignore[no-any-return]
        model_id="anthropic.claude-3-5-sonnet-20240620-v1:0", region_name="us-east-1",
        endpoint_url=base, aws_access_key_id="toolstream-test", aws_secret_access_key="test",
        beta_use_converse_api=True, streaming=True, model_kwargs={"max_tokens": LIMIT},
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}))


def _bedrock_invoke(base: str) -> BaseChatModel:
    """``ChatBedrock`` over InvokeModel (the switch off): Anthropic's events inside boto3's
    ``invoke_model_with_response_stream`` chunks, read through LangChain's chunks."""
    aws = pytest.importorskip("langchain_aws")
    from botocore.config import Config

    return aws.ChatBedrock(  # type: ignore[no-any-return]
        model_id="anthropic.claude-3-5-sonnet-20240620-v1:0", region_name="us-east-1",
        endpoint_url=base, aws_access_key_id="toolstream-test", aws_secret_access_key="test",
        beta_use_converse_api=False, model_kwargs={"max_tokens": LIMIT},
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}))


def _litellm_router(base: str) -> BaseChatModel:
    """``ChatLiteLLMRouter``: a ``litellm.Router`` whose one deployment is the emulator."""
    litellm = pytest.importorskip("langchain_litellm")
    from litellm import Router

    router = Router(model_list=[{"model_name": "gpt", "litellm_params": {
        "model": "openai/gpt-4.1-mini", "api_base": base + "/v1", "api_key": "test"}}],
        num_retries=0)
    return litellm.ChatLiteLLMRouter(router=router, max_tokens=LIMIT, max_retries=0)  # type: ignore[no-any-return]


Factory = Callable[[str], BaseChatModel]


def _core(api: str, **kwargs: Any) -> Factory:
    """The four core classes (``ChatOpenAI`` on chat and Responses, ``ChatAnthropic``,
    ``ChatGoogleGenerativeAI``), as ``lc_util.make_model`` builds them."""
    def factory(base: str) -> BaseChatModel:
        return make_model(api, _Base(base), max_tokens=LIMIT, **kwargs)  # type: ignore[no-any-return]
    return factory


class _Base:
    """What ``make_model`` reads of an emulator: its base URL."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

#: class name -> (the API its wire is, the emulator's server profile or None, the factory)
CLASSES: dict[str, tuple[str, str | None, Factory]] = {
    "ChatOpenAI": ("openai-chat", None, _core("openai-chat")),
    "ChatOpenAI-responses": ("openai-responses", None, _core("openai-responses")),
    "ChatAnthropic": ("anthropic", None, _core("anthropic")),
    "ChatGoogleGenerativeAI": ("gemini", None, _core("gemini")),
    "ChatOllama": ("ollama", None, _ollama),
    "ChatBedrockConverse": ("bedrock-converse", None, _bedrock),
    "ChatBedrockConverse-converse": ("bedrock-converse", None, _bedrock_whole),
    "ChatCohere": ("cohere", None, _cohere),
    "ChatMistralAI": ("openai-chat", "mistral", _mistral),
    "ChatGroq": ("openai-chat", "groq", _groq),
    "ChatFireworks": ("openai-chat", None, _fireworks),
    "ChatDeepSeek": ("openai-chat", "deepseek", _deepseek),
    "ChatXAI": ("openai-chat", None, _xai),
    "ChatTogether": ("openai-chat", None, _together),
    "AzureChatOpenAI": ("openai-chat", None, _azure),
    "ChatLiteLLM": ("openai-chat", None, _litellm),
    "ChatNVIDIA": ("openai-chat", "nvidia", _nvidia),
    "ChatBedrock-converse-switch": ("bedrock-converse", None, _bedrock_switch),
    "ChatBedrock-invoke-model": ("anthropic", None, _bedrock_invoke),
    "ChatLiteLLMRouter": ("openai-chat", None, _litellm_router),
}


@pytest.fixture(scope="module")
def emulators() -> Iterator[dict[str | None, VendorEmulator]]:
    profiles = {profile for _, profile, _ in CLASSES.values()}
    started: dict[str | None, VendorEmulator] = {}
    try:
        for profile in profiles:
            started[profile] = (VendorEmulator(profile=profile) if profile
                                else VendorEmulator(seed=0)).start()
        yield started
    finally:
        for emu in started.values():
            emu.stop()


def _setup(emulators: dict[str | None, VendorEmulator], name: str,
           scenario: str) -> tuple[VendorEmulator, BaseChatModel, str]:
    api, profile, factory = CLASSES[name]
    emu = emulators[profile]
    emu.clear()
    emu.queue(api, scenario)  # then "text": an agent loop ends after one round of tools
    return emu, factory(emu.base_url), api


def proven(api: str, scenario: str) -> list[tuple[str, dict[str, Any]]]:
    """The calls a correct gate runs: the scenario's calls when it is committed, else none."""
    if not SCENARIOS[scenario].expect.committed:
        return []
    return [(c.name, dict(c.arguments))
            for c in build_script(scenario, scenario_rng(0, api, scenario)).calls]


def assert_calls_sent(emu: VendorEmulator, calls: list[Any]) -> None:
    """``calls`` (rejected ones) are in the last request the class sent, as calls: by id, or
    by name on the wires that pair by name (Ollama, Gemini without ids); ``assert_sent_paired``
    then proves each has its one result."""
    last = emu.requests[-1]
    sent = set(sent_calls(last.api, last.body, path=last.path))
    assert {c["id"] for c in calls} <= sent or {c["name"] for c in calls} <= sent, last.body


#: Classes called without streaming: a whole answer cannot end without its finish (so
#: ``no_finish`` does not apply), and the emulator's whole answer to a max-token cut carries no
#: half call (Bedrock's ``converse`` returns the blocks it finished): nothing to reject.
WHOLE = frozenset({"ChatBedrockConverse-converse"})


#: How the gate reads each class: the vendor SDK's own events, or LangChain's chunks.
MODES = {name: "tap" for name in CLASSES} | {
    name: "chunks" for name in ("ChatMistralAI", "ChatGroq", "ChatFireworks", "ChatNVIDIA",
                                "ChatBedrock-invoke-model", "ChatLiteLLMRouter")}


def judged_as(name: str, api: str) -> str:
    """The wire the record says the turn was judged on: the vendor's own where tapped;
    LangChain's chunks are converted to Chat Completions events."""
    return "openai-chat" if MODES[name] == "chunks" else api


def expected_rejected(name: str, scenario: str) -> list[str]:
    return [] if name in WHOLE else list(SCENARIOS[scenario].expect.rejected)


def assert_sent_paired(emu: VendorEmulator) -> None:
    """Every request the class really sent pairs each call with one result, both ways, and
    sends every call's arguments as a JSON object (read off the wire, not the messages)."""
    for received in emu.requests:
        assert history_pairing(received.api, received.body, path=received.path) == [], received.body


CASES = [(n, s) for n in CLASSES for s in SCENARIO_CASES
         if not (n in WHOLE and s == "no_finish")]
IDS = [f"{n}-{s}" for n, s in CASES]


@pytest.mark.parametrize(("name", "scenario"), CASES, ids=IDS)
def test_agent_runs_complete_calls_once_and_answers_the_rest(
        emulators: dict[str | None, VendorEmulator], name: str, scenario: str) -> None:
    emu, model, api = _setup(emulators, name, scenario)
    recorder = Recorder()
    agent = create_agent(model, tools=recording_tools(recorder), middleware=[ToolstreamMiddleware()])
    messages = agent.invoke({"messages": [HumanMessage("go")]})["messages"]
    assert sorted_calls(recorder.calls) == sorted_calls(proven(api, scenario))
    assert_history_paired(messages)
    first = next(m for m in messages if isinstance(m, AIMessage))
    assert [c["name"] for c in first.invalid_tool_calls] == expected_rejected(name, scenario)
    assert len(emu.requests) == 1 + bool(first.tool_calls or first.invalid_tool_calls)
    assert_calls_sent(emu, first.invalid_tool_calls)
    assert_sent_paired(emu)
    assert_reasons_told(emu, messages, first, scenario)


def assert_reasons_told(emu: VendorEmulator, messages: list[Any], first: AIMessage,
                        scenario: str) -> None:
    """Each rejected call is answered with its reason, and that answer is what the class
    really sent the vendor next."""
    answers = {m.tool_call_id: str(m.content) for m in messages if isinstance(m, ToolMessage)}
    sent = json.dumps(emu.requests[-1].body, ensure_ascii=False)
    for call in first.invalid_tool_calls:
        tags = [f"[{reason}]" for reason in SCENARIOS[scenario].expect.reasons]
        assert any(tag in answers[call["id"]] for tag in tags), answers[call["id"]]
        assert any(tag in sent for tag in tags), sent


@pytest.mark.parametrize(("name", "scenario"), CASES, ids=IDS)
def test_with_toolstream_hands_out_only_complete_calls(
        emulators: dict[str | None, VendorEmulator], name: str, scenario: str) -> None:
    emu, model, api = _setup(emulators, name, scenario)
    gated = with_toolstream(model, on_stream_error="pair").bind_tools(recording_tools(Recorder()))
    message = gated.invoke([HumanMessage("go")])
    record = read_record(message)
    assert record is not None and record["mode"] == MODES[name], record
    assert record["provider"] == judged_as(name, api)
    assert sorted_calls([(c["name"], c["args"]) for c in message.tool_calls]) == \
        sorted_calls(proven(api, scenario))
    assert [c["name"] for c in message.invalid_tool_calls] == expected_rejected(name, scenario)
    # the rejected ids are answered when the caller sends the history on
    answers = error_tool_messages(message)
    assert {m.tool_call_id for m in answers} == {c["id"] for c in message.invalid_tool_calls}
    if answers:
        gated.invoke([HumanMessage("go"), message, *answers])
        assert_calls_sent(emu, message.invalid_tool_calls)
    assert_sent_paired(emu)


def test_a_class_whose_end_the_gate_cannot_read_gets_one_warning_and_a_way_out(
        emulators: dict[str | None, VendorEmulator], caplog: pytest.LogCaptureFixture) -> None:
    """A class outside the known partner packages that hides its finish signal under its own
    key: the gate warns once, names the class and the keys it saw, notes it in the record; a
    declared signal then lets its complete calls through."""
    from langchain_core.utils.function_calling import convert_to_openai_tool
    from langchain_openai import ChatOpenAI

    from langchain_toolstream import declare_finish_signal

    class HiddenFinish(BaseChatModel):
        """Streams the wrapped model's chunks with ``finish_reason`` renamed ``end``."""

        inner: BaseChatModel

        @property
        def _llm_type(self) -> str:
            return "hidden-finish"

        def _generate(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError

        def _stream(self, messages: Any, stop: Any = None, run_manager: Any = None,
                    **kwargs: Any) -> Iterator[Any]:
            for chunk in self.inner._stream(messages, stop=stop, **kwargs):
                info = dict(chunk.generation_info or {})
                metadata = dict(chunk.message.response_metadata)
                for source in (info, metadata):
                    if "finish_reason" in source:
                        metadata["end"] = source.pop("finish_reason")
                yield chunk.model_copy(update={
                    "generation_info": info or None,
                    "message": chunk.message.model_copy(update={"response_metadata": metadata})})

    emu = emulators[None]
    model = HiddenFinish(inner=ChatOpenAI(model="gpt-4.1-mini", api_key="test",  # type: ignore[arg-type]
                                          base_url=emu.base_url + "/v1", max_retries=0))
    bound = model.bind(tools=[convert_to_openai_tool(t) for t in recording_tools(Recorder())])
    caplog.set_level(logging.WARNING, logger="langchain_toolstream")
    records = []
    for _ in range(2):
        emu.clear()
        emu.queue("openai-chat", "parallel_calls")
        message = with_toolstream(bound).invoke([HumanMessage("go")])
        assert message.tool_calls == []
        records.append(read_record(message))
    warnings = [r.getMessage() for r in caplog.records if "HiddenFinish" in r.getMessage()]
    assert len(warnings) == 1
    assert "end" in warnings[0] and "declare_finish_signal" in warnings[0]
    assert all(r is not None and "HiddenFinish" in r.get("note", "") for r in records)
    declare_finish_signal(HiddenFinish, "end")
    emu.clear()
    emu.queue("openai-chat", "parallel_calls")
    message = with_toolstream(bound).invoke([HumanMessage("go")])
    assert [c["name"] for c in message.tool_calls] == ["get_weather", "get_weather"]
    record = read_record(message)
    assert record is not None and "note" not in record


ASYNC_CASES = [(n, s) for n in CLASSES for s in ("parallel_calls", "truncated_length")]


@pytest.mark.parametrize(("name", "scenario"), ASYNC_CASES,
                         ids=[f"{n}-{s}" for n, s in ASYNC_CASES])
@pytest.mark.asyncio(loop_scope="session")
async def test_async_streams_are_gated_the_same_way(
        emulators: dict[str | None, VendorEmulator], name: str, scenario: str) -> None:
    """``astream``: the async SDK clients (``ollama.AsyncClient``, cohere's ``AsyncClient.v2``,
    the OpenAI SDK's async client; Bedrock's sync client in LangChain's executor) are tapped
    like the sync ones."""
    _, model, api = _setup(emulators, name, scenario)
    gated = with_toolstream(model, on_stream_error="pair").bind_tools(recording_tools(Recorder()))
    message: Any = None
    async for chunk in gated.astream([HumanMessage("go")]):
        message = chunk if message is None else message + chunk
    record = read_record(message)
    assert record is not None and record["mode"] == MODES[name], record
    assert record["provider"] == judged_as(name, api)
    assert sorted_calls([(c["name"], c["args"]) for c in message.tool_calls]) == \
        sorted_calls(proven(api, scenario))
    assert [c["name"] for c in record["rejected"]] == expected_rejected(name, scenario)
