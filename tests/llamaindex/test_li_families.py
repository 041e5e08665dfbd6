"""Every LlamaIndex LLM class the gate supports beyond the four it was built on, through the
real class, its real SDK client and ``ToolstreamFunctionAgent`` over HTTP against the emulator.

Per class, streamed and not: complete (parallel) calls run exactly once with the vendor's
arguments; a call cut by the max-token stop, or by a stream that ends without a finish, never
runs, and its id is answered in the next request the agent sends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fault_streams import pairing
from li_helpers import Recorder, run_agent, unpaired
from llama_index.core.llms.function_calling import FunctionCallingLLM
from toolstream_core.testing import VendorEmulator

from llamaindex_toolstream import ToolstreamFunctionAgent

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning")]


def _openai_like(base_url: str) -> FunctionCallingLLM:
    from llama_index.llms.openai_like import OpenAILike

    return OpenAILike(model="local-model", api_base=base_url + "/v1", api_key="test",
                      is_chat_model=True, is_function_calling_model=True, max_retries=0)


def _azure_openai(base_url: str) -> FunctionCallingLLM:
    from llama_index.llms.azure_openai import AzureOpenAI

    return AzureOpenAI(engine="gpt-4o-mini", model="gpt-4o-mini", azure_endpoint=base_url,
                       api_key="test", api_version="2024-10-21", max_retries=0)


#: class -> (the emulator wire it speaks, a builder aimed at the emulator, the package).
FAMILIES: dict[str, tuple[str, Callable[[str], FunctionCallingLLM], str]] = {
    "OpenAILike": ("openai-chat", _openai_like, "llama_index.llms.openai_like"),
    "AzureOpenAI": ("openai-chat", _azure_openai, "llama_index.llms.azure_openai"),
}

PARALLEL = [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})]


async def _run(family: str, scenario: str, streaming: bool, emu: VendorEmulator) -> Any:
    api, build, package = FAMILIES[family]
    pytest.importorskip(package)
    recorder = Recorder()
    agent = ToolstreamFunctionAgent(tools=recorder.tools(), llm=build(emu.base_url),
                                    streaming=streaming)
    emu.queue(api, scenario)
    return api, await run_agent(agent, recorder, emu)


families = pytest.mark.parametrize("family", sorted(FAMILIES))
streaming = pytest.mark.parametrize("streaming", [True, False], ids=["stream", "whole"])


@families
@streaming
async def test_complete_parallel_calls_run_once(family: str, streaming: bool,
                                                toolstream_emulator: VendorEmulator) -> None:
    _, outcome = await _run(family, "parallel_calls", streaming, toolstream_emulator)
    assert outcome.error is None, outcome.error
    assert outcome.runs == PARALLEL
    assert outcome.requests == 2 and "All done" in str(outcome.result)
    assert unpaired(outcome.memory) == []


@families
@streaming
@pytest.mark.parametrize("scenario", ["truncated_length", "no_finish"])
async def test_unproven_call_never_runs_and_is_answered(
        family: str, streaming: bool, scenario: str,
        toolstream_emulator: VendorEmulator) -> None:
    api, outcome = await _run(family, scenario, streaming, toolstream_emulator)
    assert outcome.error is None, outcome.error
    assert outcome.runs == []
    assert outcome.requests == 2  # the follow-up was sent, and accepted
    [message] = outcome.tool_messages
    assert "[stream_truncated]" in str(message.content)
    calls, answers = pairing(api, toolstream_emulator.requests[-1].body)
    assert len(calls) == 1 and calls == answers  # the cut call's id, answered once
