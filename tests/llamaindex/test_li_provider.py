"""A ``provider=`` that does not match what the LLM sends is an error, never vanished calls.

Before: following the old error message (``provider="openai-chat"`` for a class the package
did not know) made the gate read nothing of the stream; LlamaIndex still found the tool
calls, but the gate handed none out and answered none: nothing ran, no error, and the agent
answered ``''``. Now a ``provider=`` that contradicts a known class is refused when the gate
is built, and for a class the package cannot know, a response whose tool calls LlamaIndex
found and the gate read none of raises ``ProviderMismatchError`` at its end (nothing runs;
the history stays legal, as for any stream that failed).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from li_helpers import Recorder, make_llm, run_agent, unpaired
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseAsyncGen,
    ChatResponseGen,
    CompletionResponse,
    LLMMetadata,
)
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.llms.llm import ToolSelection
from toolstream_core.testing import VendorEmulator

from llamaindex_toolstream import (
    ProviderMismatchError,
    ToolstreamFunctionAgent,
    ToolstreamLLM,
    declare_finish_signal,
    read_record,
)

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning")]


class HomeGrown(FunctionCallingLLM):
    """A user's own LLM class (one the package cannot recognise) that relays to a real
    LlamaIndex ``Anthropic``: its streams are Anthropic's, whatever ``provider=`` says."""

    inner: Any

    @property
    def metadata(self) -> LLMMetadata:
        return self.inner.metadata  # type: ignore[no-any-return]

    def _prepare_chat_with_tools(self, tools: Sequence[Any], **kwargs: Any) -> dict[str, Any]:
        return self.inner._prepare_chat_with_tools(tools, **kwargs)  # type: ignore[no-any-return]

    def get_tool_calls_from_response(self, response: ChatResponse,
                                     error_on_no_tool_call: bool = True,
                                     **kwargs: Any) -> list[ToolSelection]:
        return self.inner.get_tool_calls_from_response(  # type: ignore[no-any-return]
            response, error_on_no_tool_call=error_on_no_tool_call, **kwargs)

    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return self.inner.chat(messages, **kwargs)  # type: ignore[no-any-return]

    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return await self.inner.achat(messages, **kwargs)  # type: ignore[no-any-return]

    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        return self.inner.stream_chat(messages, **kwargs)  # type: ignore[no-any-return]

    async def astream_chat(self, messages: Sequence[ChatMessage],
                           **kwargs: Any) -> ChatResponseAsyncGen:
        return await self.inner.astream_chat(messages, **kwargs)  # type: ignore[no-any-return]

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        raise NotImplementedError

    async def acomplete(self, prompt: str, formatted: bool = False,
                        **kwargs: Any) -> CompletionResponse:
        raise NotImplementedError

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError

    async def astream_complete(self, prompt: str, formatted: bool = False,
                               **kwargs: Any) -> Any:
        raise NotImplementedError


def test_provider_that_contradicts_the_class_is_refused(
        emu: VendorEmulator) -> None:
    anthropic = make_llm("anthropic", emu.base_url)
    with pytest.raises(ProviderMismatchError, match="Anthropic speaks the anthropic wire"):
        ToolstreamLLM(anthropic, provider="openai-chat")
    with pytest.raises(ValueError, match="not a wire"):
        ToolstreamLLM(anthropic, provider="bedrock")  # type: ignore[arg-type]
    assert ToolstreamLLM(anthropic, provider="anthropic").provider == "anthropic"


async def test_unknown_class_without_provider_is_never_trusted_silently(
        emu: VendorEmulator, caplog: pytest.LogCaptureFixture) -> None:
    """No ``provider=`` for a class the package cannot know: the agent is built, the class is
    read through LlamaIndex's messages, and with no finish signal the gate can read (the
    streamed ``raw`` of LlamaIndex's ``Anthropic`` keeps none at the top) its calls are
    rejected and answered (none runs), a warning names what to declare and the record keeps
    the same note (decision 0098)."""

    class Undeclared(HomeGrown):  # a class of its own: the warning is once per class
        pass

    recorder = Recorder()
    llm = Undeclared(inner=make_llm("anthropic", emu.base_url))
    agent = ToolstreamFunctionAgent(tools=recorder.tools(), llm=llm, streaming=True)
    emu.queue("anthropic", "parallel_calls")
    emu.queue("anthropic", "text")
    with caplog.at_level(logging.WARNING, logger="llamaindex_toolstream"):
        outcome = await run_agent(agent, recorder, emu)

    assert outcome.error is None
    assert outcome.runs == []
    assert unpaired(outcome.memory) == []
    assert "Undeclared showed no finish signal" in caplog.text
    assert "llamaindex_toolstream.declare_finish_signal" in caplog.text
    records = [r for r in map(read_record, outcome.memory) if r is not None]
    assert any("declare_finish_signal" in str(r.get("note")) for r in records)
    rejected = [entry for r in records for entry in r.get("rejected") or []]
    assert {entry["reason"] for entry in rejected} == {"stream_truncated"}


def _anthropic_stop(metadata: Mapping[str, Any]) -> str | None:
    """A finish signal as a user would declare it for ``HomeGrown``: Anthropic's stop reason
    on the ``message_delta`` event LlamaIndex keeps as ``raw``."""
    stop = getattr(metadata.get("delta"), "stop_reason", None) or metadata.get("stop_reason")
    return {"tool_use": "tool_calls", "end_turn": "stop"}.get(stop or "")


@pytest.mark.parametrize(("streaming", "declare"), [(True, True), (False, True), (False, False)],
                         ids=["stream-declared", "whole-declared", "whole-known-key"])
async def test_calls_run_after_a_finish_the_gate_reads(
        streaming: bool, declare: bool, emu: VendorEmulator) -> None:
    """The same class with its end of turn declared, or (whole answers) with the vendor's
    ``stop_reason`` kept in ``raw``, a key the gate reads in either shim: its calls, read from
    the message the class built, commit after that finish and run once each."""

    class Read(HomeGrown):
        pass

    if declare:
        declare_finish_signal(Read, _anthropic_stop)
    recorder = Recorder()
    agent = ToolstreamFunctionAgent(tools=recorder.tools(), streaming=streaming,
                                    llm=Read(inner=make_llm("anthropic", emu.base_url)))
    emu.queue("anthropic", "parallel_calls")
    emu.queue("anthropic", "text")
    outcome = await run_agent(agent, recorder, emu)

    assert outcome.error is None
    assert [name for name, _ in outcome.runs] == ["get_weather", "get_weather"]
    assert unpaired(outcome.memory) == []


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "whole"])
async def test_wrong_provider_raises_instead_of_losing_the_calls(
        streaming: bool, emu: VendorEmulator) -> None:
    recorder = Recorder()
    inner = make_llm("anthropic", emu.base_url)
    llm = ToolstreamLLM(HomeGrown(inner=inner), provider="openai-chat")
    agent = ToolstreamFunctionAgent(tools=recorder.tools(), llm=llm, streaming=streaming)
    emu.queue("anthropic", "parallel_calls")
    outcome = await run_agent(agent, recorder, emu)

    assert isinstance(outcome.error, ProviderMismatchError)
    assert "get_weather, get_weather" in str(outcome.error)
    assert "provider='openai-chat'" in str(outcome.error)
    assert outcome.runs == []
    assert unpaired(outcome.memory) == []


async def test_text_only_turn_is_not_refused(
        emu: VendorEmulator) -> None:
    """The check fires on unread calls, not on the class: text-only turns pass."""
    inner = make_llm("anthropic", emu.base_url)
    llm = ToolstreamLLM(HomeGrown(inner=inner), provider="openai-chat")
    emu.queue("anthropic", "text")
    response = await llm.achat([ChatMessage(role="user", content="hi")])
    assert response.message.content


def test_cohere_v1_class_reads_as_cohere_and_refuses_another_wire() -> None:
    """LlamaIndex's ``Cohere`` speaks Cohere's v1 chat, which the "cohere" adapter reads."""
    cohere = pytest.importorskip("llama_index.llms.cohere")
    llm = cohere.Cohere(api_key="test", model="command-r-plus")
    assert ToolstreamLLM(llm).provider == "cohere"
    with pytest.raises(ProviderMismatchError, match="Cohere speaks the cohere wire"):
        ToolstreamLLM(llm, provider="openai-chat")


@pytest.mark.parametrize("wrong", ["openai-chat", "anthropic"])
def test_the_old_advice_for_ollama_is_refused(wrong: str) -> None:
    """``Ollama`` with the ``provider=`` the old message suggested: refused, not silent."""
    ollama = pytest.importorskip("llama_index.llms.ollama")
    llm = ollama.Ollama(model="llama3.1", base_url="http://127.0.0.1:9", context_window=8000)
    with pytest.raises(ProviderMismatchError, match="Ollama speaks the ollama wire"):
        ToolstreamLLM(llm, provider=wrong)  # type: ignore[arg-type]
    assert ToolstreamLLM(llm).provider == "ollama"


def test_huggingface_inference_api_is_refused_with_its_reason() -> None:
    """``HuggingFaceInferenceAPI`` is a ``FunctionCallingLLM`` whose tool history no gate can
    make legal (calls sent back without ids, results without ``tool_call_id``): refused when
    the gate is built, ``provider=`` or not, with the way out."""
    hf = pytest.importorskip("llama_index.llms.huggingface_api")
    from llamaindex_toolstream import ProviderMismatchError, ToolstreamFunctionAgent, ToolstreamLLM

    llm = hf.HuggingFaceInferenceAPI(model_name="meta-llama/Llama-3.1-8B-Instruct", token="test")
    for provider in (None, "openai-chat"):
        with pytest.raises(ProviderMismatchError, match=r"tool_call_id.*OpenAILike"):
            ToolstreamLLM(llm, provider=provider)
    with pytest.raises(ProviderMismatchError, match="text-generation-inference"):
        ToolstreamFunctionAgent(tools=[], llm=llm)
