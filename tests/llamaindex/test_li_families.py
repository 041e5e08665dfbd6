"""Every LlamaIndex LLM class the gate supports, through the real class, its real SDK client
and ``ToolstreamFunctionAgent`` over HTTP against the emulator (and its server profile).

Per class, streamed and not: complete (parallel) calls run exactly once with the vendor's
arguments; a call cut by the max-token stop, or by a stream that ends without a finish, never
runs, and the next request the agent sends carries it next to its error result. Every request
body the class really sent is read both ways (``history_pairing``): every result has its call,
every call its one result, every call's arguments a JSON object.

``LiteLLM`` reads litellm's own translation (``ChatResponse.raw``), which hides what the
upstream said about the end of a turn: litellm raises on a stream that ends without a finish
(the agent raises, as for a dropped connection) and reports ``finish_reason: "stop"`` for a
whole answer that had none, so ``no_finish`` is not a case it can show (docs/llamaindex.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from li_helpers import Recorder, run_agent, unpaired
from llama_index.core.llms.function_calling import FunctionCallingLLM
from toolstream_core.testing import VendorEmulator, history_pairing, sent_calls

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


def _ollama(base_url: str) -> FunctionCallingLLM:
    from llama_index.llms.ollama import Ollama

    # context_window given, so the class does not ask /api/show for it
    return Ollama(model="llama3.1", base_url=base_url, request_timeout=30,
                  context_window=8000)


def _bedrock_converse(base_url: str) -> FunctionCallingLLM:
    from llama_index.llms.bedrock_converse import BedrockConverse

    return BedrockConverse(model="anthropic.claude-3-5-sonnet-20240620-v1:0",
                           region_name="us-east-1", aws_access_key_id="test",
                           aws_secret_access_key="test", endpoint_url=base_url, max_retries=1)


def _openai(base_url: str) -> FunctionCallingLLM:
    from llama_index.llms.openai import OpenAI

    return OpenAI(model="gpt-4.1-mini", api_base=base_url + "/v1", api_key="test", max_retries=0)


def _openai_responses(base_url: str) -> FunctionCallingLLM:
    from llama_index.llms.openai import OpenAIResponses

    return OpenAIResponses(model="gpt-4.1-mini", api_base=base_url + "/v1", api_key="test",
                           max_retries=0)


def _anthropic(base_url: str) -> FunctionCallingLLM:
    from llama_index.llms.anthropic import Anthropic

    return Anthropic(model="claude-sonnet-4-5", base_url=base_url, api_key="test", max_retries=0)


def _google_genai(base_url: str) -> FunctionCallingLLM:
    from google.genai import types
    from llama_index.llms.google_genai import GoogleGenAI

    return GoogleGenAI(model="gemini-2.5-flash", api_key="test",
                       http_options=types.HttpOptions(base_url=base_url))


def _litellm(base_url: str) -> FunctionCallingLLM:
    from llama_index.llms.litellm import LiteLLM

    return LiteLLM(model="openai/gpt-4.1-mini", api_base=base_url + "/v1", api_key="test",
                   max_retries=0, max_tokens=700)


def _mistral(base_url: str) -> FunctionCallingLLM:
    from llama_index.llms.mistralai import MistralAI

    return MistralAI(model="mistral-large-latest", api_key="test", endpoint=base_url,
                     max_retries=0, max_tokens=700)


#: class -> (the emulator wire it speaks, a builder aimed at the emulator, the package).
FAMILIES: dict[str, tuple[str, Callable[[str], FunctionCallingLLM], str]] = {
    "OpenAI": ("openai-chat", _openai, "llama_index.llms.openai"),
    "OpenAIResponses": ("openai-responses", _openai_responses, "llama_index.llms.openai"),
    "Anthropic": ("anthropic", _anthropic, "llama_index.llms.anthropic"),
    "GoogleGenAI": ("gemini", _google_genai, "llama_index.llms.google_genai"),
    "LiteLLM": ("openai-chat", _litellm, "llama_index.llms.litellm"),
    "MistralAI": ("openai-chat", _mistral, "llama_index.llms.mistralai"),
    "OpenAILike": ("openai-chat", _openai_like, "llama_index.llms.openai_like"),
    "AzureOpenAI": ("openai-chat", _azure_openai, "llama_index.llms.azure_openai"),
    "Ollama": ("ollama", _ollama, "llama_index.llms.ollama"),
    "BedrockConverse": ("bedrock-converse", _bedrock_converse,
                        "llama_index.llms.bedrock_converse"),
}

#: The emulator's server profile a class is served by (Mistral's own dialect).
PROFILE = {"MistralAI": "mistral"}

#: What the gate reads a streamed turn from: the SDK's events (``tap``) or ``ChatResponse.raw``.
STREAM_MODE = {name: "tap" for name in FAMILIES} | {
    name: "raw" for name in ("OpenAIResponses", "GoogleGenAI", "LiteLLM")}

#: Whole (non-streamed) answers can only carry an unproven call where the wire has a place
#: for cut arguments (OpenAI chat: ``finish_reason: "length"`` beside them, or no finish).
#: Ollama's and Bedrock's whole answers hold arguments as an object: a cut call is absent,
#: and an answer without a finish is not a whole answer.
WHOLE_UNPROVEN = {"openai-chat", "openai-responses"}  # Responses: an incomplete function_call

#: Classes that raise for a whole answer the vendor cut (``GoogleGenAI``: "Response was
#: terminated early: MAX_TOKENS", before any gate sees the answer; streamed, the gate reads
#: the cut and answers the call).
WHOLE_CUT_RAISES = {"GoogleGenAI"}

#: (class, scenario, streaming) a class cannot show (see the module docstring: litellm).
NOT_SHOWN = {("LiteLLM", "no_finish", True), ("LiteLLM", "no_finish", False)}

PARALLEL = [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})]


@pytest.fixture
def served(family: str, emu: VendorEmulator) -> Iterator[VendorEmulator]:
    """The emulator ``family`` is served by: the shared one, or its server profile's."""
    profile = PROFILE.get(family)
    if profile is None:
        yield emu
        return
    with VendorEmulator(profile=profile) as own:
        yield own


def assert_sent_paired(emu: VendorEmulator) -> None:
    """Every request body the class sent pairs each call with one result, both ways."""
    for received in emu.requests:
        assert history_pairing(received.api, received.body, path=received.path) == [], received.body


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
#: (family, streaming, scenario) where the answer can carry an unproven call (see
#: WHOLE_UNPROVEN), less what a class cannot show (NOT_SHOWN).
unproven = pytest.mark.parametrize(
    ("family", "streaming", "scenario"),
    [(f, s, c) for f in sorted(FAMILIES) for s in (True, False)
     for c in ("truncated_length", "no_finish")
     if (s or FAMILIES[f][0] in WHOLE_UNPROVEN) and (f, c, s) not in NOT_SHOWN],
    ids=lambda v: v if isinstance(v, str) else ("stream" if v else "whole"))


@families
@streaming
async def test_complete_parallel_calls_run_once(family: str, streaming: bool,
                                                served: VendorEmulator) -> None:
    _, outcome = await _run(family, "parallel_calls", streaming, served)
    assert outcome.error is None, outcome.error
    assert outcome.runs == PARALLEL
    assert outcome.requests == 2 and "All done" in str(outcome.result)
    assert unpaired(outcome.memory) == []
    # Decided from the SDK's own events (streamed) or the whole vendor response: the
    # vendor's finish was read, not guessed from LlamaIndex's chunks.
    records = [read_record(m) for m in outcome.memory if m.role == "assistant"]
    [record] = [r for r in records if r is not None and r["committed"]]
    assert (record["mode"], record["complete"]) == (STREAM_MODE[family] if streaming else "message", True)
    assert_sent_paired(served)
    # The UI events reach the workflow stream, whichever thread the tap ran on (Bedrock's
    # async path reads boto3 on a worker thread).
    committed = [e for e in outcome.events if isinstance(e, CallCommittedEvent)]
    assert [e.tool_name for e in committed] == ["get_weather", "get_weather"]


@unproven
async def test_unproven_call_never_runs_and_is_answered(
        family: str, streaming: bool, scenario: str,
        served: VendorEmulator) -> None:
    _, outcome = await _run(family, scenario, streaming, served)
    assert outcome.error is None, outcome.error
    assert outcome.runs == []
    assert outcome.requests == 2  # the follow-up was sent, and accepted
    [message] = outcome.tool_messages
    assert "[stream_truncated]" in str(message.content)
    last = served.requests[-1]
    assert len(sent_calls(last.api, last.body, path=last.path)) == 1  # the cut call, in its turn
    assert_sent_paired(served)  # and answered once
    if last.api == "bedrock-converse":  # the error flagged where the wire has a flag for it
        [result] = [b["toolResult"] for b in last.body["messages"][-1]["content"] if "toolResult" in b]
        assert result["status"] == "error"
    if last.api == "anthropic":
        [block] = [b for b in last.body["messages"][-1]["content"] if b.get("type") == "tool_result"]
        assert block["is_error"] is True


@pytest.mark.parametrize("family", sorted(f for f, (api, _, _) in FAMILIES.items()
                                          if api not in WHOLE_UNPROVEN
                                          and f not in WHOLE_CUT_RAISES))
async def test_whole_cut_answer_runs_nothing(family: str,
                                             served: VendorEmulator) -> None:
    """A whole answer stopped by the max-token limit holds no call: nothing runs, nothing is
    left to answer, and the run ends on the model's (empty) text."""
    _, outcome = await _run(family, "truncated_length", False, served)
    assert outcome.error is None, outcome.error
    assert outcome.runs == [] and outcome.tool_messages == []
    assert outcome.requests == 1
    assert unpaired(outcome.memory) == []


@families
@pytest.mark.parametrize(("scenario", "expected"), [("parallel_calls", PARALLEL),
                                                    ("truncated_length", [])])
def test_sync_stream_through_the_llm(family: str, scenario: str, expected: list[Any],
                                     served: VendorEmulator) -> None:
    """The sync twin, through ``ToolstreamLLM`` alone: the same verdict from the same tap."""
    api, build, package = FAMILIES[family]
    pytest.importorskip(package)
    llm = ToolstreamLLM(build(served.base_url))
    served.queue(api, scenario)
    responses = list(llm.stream_chat_with_tools(Recorder().tools(), user_msg="go"))
    calls = llm.get_tool_calls_from_response(responses[-1], error_on_no_tool_call=False)
    assert [(c.tool_name, c.tool_kwargs) for c in calls] == expected
    turn = llm.turn_of(responses[-1])
    assert turn is not None and len(turn.rejected) == (0 if expected else 1)
    assert read_record(responses[-1])["mode"] == STREAM_MODE[family]  # type: ignore[index]


@families
async def test_resent_call_runs_once(family: str, served: VendorEmulator) -> None:
    """The whole call sent twice (same id; OpenAI chat: same index) runs once. Ollama's client
    objects drop the id, so the gate reads the server's ``/api/chat`` lines instead."""
    _, outcome = await _run(family, "resent_duplicate", True, served)
    assert outcome.error is None, outcome.error
    assert outcome.runs == [("get_weather", {"city": "Paris"})]
    assert unpaired(outcome.memory) == []
