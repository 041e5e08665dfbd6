"""Every LlamaIndex LLM class the gate supports beyond the four it was built on, through the
real class, its real SDK client and ``ToolstreamFunctionAgent`` over HTTP against the emulator.

Per class, streamed and not: complete (parallel) calls run exactly once with the vendor's
arguments; a call cut by the max-token stop, or by a stream that ends without a finish, never
runs, and its id is answered in the next request the agent sends.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from fault_streams import pairing
from li_helpers import Recorder, make_llm, run_agent, unpaired
from llama_index.core.llms.function_calling import FunctionCallingLLM
from toolstream_core.testing import VendorEmulator

from llamaindex_toolstream import (
    CallCommittedEvent,
    ToolstreamFunctionAgent,
    ToolstreamLLM,
    read_record,
)

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
    "Ollama": ("ollama", partial(make_llm, "ollama"), "llama_index.llms.ollama"),
    "BedrockConverse": ("bedrock-converse", partial(make_llm, "bedrock-converse"),
                        "llama_index.llms.bedrock_converse"),
}

#: Whole (non-streamed) answers can only carry an unproven call where the wire has a place
#: for cut arguments (OpenAI chat: ``finish_reason: "length"`` beside them, or no finish).
#: Ollama's and Bedrock's whole answers hold arguments as an object: a cut call is absent,
#: and an answer without a finish is not a whole answer.
WHOLE_UNPROVEN = {"openai-chat"}

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
#: (family, streaming) where the answer can carry an unproven call (see WHOLE_UNPROVEN).
unproven = pytest.mark.parametrize(
    ("family", "streaming"),
    [(f, s) for f in sorted(FAMILIES) for s in (True, False)
     if s or FAMILIES[f][0] in WHOLE_UNPROVEN],
    ids=lambda v: v if isinstance(v, str) else ("stream" if v else "whole"))


def _pairing(api: str, body: dict[str, Any]) -> tuple[Counter[str], Counter[str]]:
    """(calls, results) in a request body: by id, or by count where the wire has no ids
    (Ollama pairs a tool message with a call by position)."""
    if api == "openai-chat":
        return pairing(api, body)
    calls: Counter[str] = Counter()
    answers: Counter[str] = Counter()
    for message in body.get("messages") or []:
        if api == "ollama":
            calls["call"] += len(message.get("tool_calls") or [])
            answers["call"] += message.get("role") == "tool"
            continue
        for block in message.get("content") or []:
            calls.update([block["toolUse"]["toolUseId"]] if "toolUse" in block else [])
            answers.update([block["toolResult"]["toolUseId"]] if "toolResult" in block else [])
    return calls, answers


@families
@streaming
async def test_complete_parallel_calls_run_once(family: str, streaming: bool,
                                                emu: VendorEmulator) -> None:
    _, outcome = await _run(family, "parallel_calls", streaming, emu)
    assert outcome.error is None, outcome.error
    assert outcome.runs == PARALLEL
    assert outcome.requests == 2 and "All done" in str(outcome.result)
    assert unpaired(outcome.memory) == []
    # Decided from the SDK's own events (streamed) or the whole vendor response: the
    # vendor's finish was read, not guessed from LlamaIndex's chunks.
    records = [read_record(m) for m in outcome.memory if m.role == "assistant"]
    [record] = [r for r in records if r is not None and r["committed"]]
    assert (record["mode"], record["complete"]) == ("tap" if streaming else "message", True)
    # The UI events reach the workflow stream, whichever thread the tap ran on (Bedrock's
    # async path reads boto3 on a worker thread).
    committed = [e for e in outcome.events if isinstance(e, CallCommittedEvent)]
    assert [e.tool_name for e in committed] == ["get_weather", "get_weather"]


@unproven
@pytest.mark.parametrize("scenario", ["truncated_length", "no_finish"])
async def test_unproven_call_never_runs_and_is_answered(
        family: str, streaming: bool, scenario: str,
        emu: VendorEmulator) -> None:
    api, outcome = await _run(family, scenario, streaming, emu)
    assert outcome.error is None, outcome.error
    assert outcome.runs == []
    assert outcome.requests == 2  # the follow-up was sent, and accepted
    [message] = outcome.tool_messages
    assert "[stream_truncated]" in str(message.content)
    calls, answers = _pairing(api, emu.requests[-1].body)
    assert sum(calls.values()) == 1 and calls == answers  # the cut call's id, answered once


@pytest.mark.parametrize("family", sorted(f for f, (api, _, _) in FAMILIES.items()
                                          if api not in WHOLE_UNPROVEN))
async def test_whole_cut_answer_runs_nothing(family: str,
                                             emu: VendorEmulator) -> None:
    """A whole answer stopped by the max-token limit holds no call: nothing runs, nothing is
    left to answer, and the run ends on the model's (empty) text."""
    _, outcome = await _run(family, "truncated_length", False, emu)
    assert outcome.error is None, outcome.error
    assert outcome.runs == [] and outcome.tool_messages == []
    assert outcome.requests == 1
    assert unpaired(outcome.memory) == []


@families
@pytest.mark.parametrize(("scenario", "expected"), [("parallel_calls", PARALLEL),
                                                    ("truncated_length", [])])
def test_sync_stream_through_the_llm(family: str, scenario: str, expected: list[Any],
                                     emu: VendorEmulator) -> None:
    """The sync twin, through ``ToolstreamLLM`` alone: the same verdict from the same tap."""
    api, build, package = FAMILIES[family]
    pytest.importorskip(package)
    llm = ToolstreamLLM(build(emu.base_url))
    emu.queue(api, scenario)
    responses = list(llm.stream_chat_with_tools(Recorder().tools(), user_msg="go"))
    calls = llm.get_tool_calls_from_response(responses[-1], error_on_no_tool_call=False)
    assert [(c.tool_name, c.tool_kwargs) for c in calls] == expected
    turn = llm.turn_of(responses[-1])
    assert turn is not None and len(turn.rejected) == (0 if expected else 1)
    assert read_record(responses[-1])["mode"] == "tap"  # type: ignore[index]


@families
async def test_resent_call_runs_once(family: str, emu: VendorEmulator) -> None:
    """The whole call sent twice (same id; OpenAI chat: same index) runs once. Ollama's client
    objects drop the id, so the gate reads the server's ``/api/chat`` lines instead."""
    _, outcome = await _run(family, "resent_duplicate", True, emu)
    assert outcome.error is None, outcome.error
    assert outcome.runs == [("get_weather", {"city": "Paris"})]
    assert unpaired(outcome.memory) == []
