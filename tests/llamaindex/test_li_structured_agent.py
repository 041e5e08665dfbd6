"""Issue 28: a LlamaIndex agent with a structured output retries a cut one.

``ToolstreamFunctionAgent(output_cls=...)``: after its loop, LlamaIndex asks the agent's LLM
for the structured response (``as_structured_llm(...).achat``). The gated LLM answers a cut
output (the gate's error result for a call, a user message naming the reason for a JSON
text) and asks again, at most ``STRUCTURED_RETRIES`` times; ``structured_response`` is never
set from the cut output. Stock ``FunctionAgent`` hands out the cut output or nothing.
"""

from __future__ import annotations

import json
import warnings
from typing import Any

import pytest
from li_helpers import APIS, THIRD_PARTY_WARNINGS, Recorder, make_llm, run_agent
from llama_index.core.agent.workflow import AgentStreamStructuredOutput
from pydantic import BaseModel
from toolstream_core.testing import VendorEmulator

from llamaindex_toolstream import ToolstreamFunctionAgent
from llamaindex_toolstream._structured import STRUCTURED_RETRIES

pytestmark = THIRD_PARTY_WARNINGS


class Weather(BaseModel):
    city: str
    unit: str


WHOLE = {"city": "Paris", "unit": "celsius"}
#: What each class's structured output is in mode DEFAULT (see test_li_structured).
SCENARIO = {"openai-chat": "structured_json", "openai-responses": "structured_json",
            "anthropic": "structured_json", "gemini": "structured_json"}


def _agent(api: str, emu: VendorEmulator, recorder: Recorder, **kwargs: Any) -> Any:
    return ToolstreamFunctionAgent(tools=recorder.tools(), llm=make_llm(api, emu.base_url),
                                   output_cls=Weather, **kwargs)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.asyncio(loop_scope="session")
async def test_the_agent_answers_the_cut_output_and_ends_on_the_whole_one(
        emu: VendorEmulator, api: str) -> None:
    scenario = SCENARIO[api]
    emu.queue(api, "text", scenario + "_truncated", scenario)  # the loop, then the structure
    recorder = Recorder()
    outcome = await run_agent(_agent(api, emu, recorder), recorder, emu)
    assert outcome.error is None, outcome.error
    assert outcome.result.structured_response == WHOLE
    streamed = [e.output for e in outcome.events if isinstance(e, AgentStreamStructuredOutput)]
    assert streamed == [WHOLE]  # never an object from the cut output, not even streamed
    assert emu.statuses == [200, 200, 200]
    assert "stream_truncated" in json.dumps(emu.requests[-1].body)  # the answer named it


@pytest.mark.asyncio(loop_scope="session")
async def test_after_the_bounded_retries_no_structured_response_is_set(
        emu: VendorEmulator) -> None:
    """LlamaIndex turns a structured-output error into a warning and leaves the response
    unset; the warning carries the reason."""
    cut = "structured_json_truncated"
    emu.queue("anthropic", "text", *[cut] * (STRUCTURED_RETRIES + 1))
    recorder = Recorder()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outcome = await run_agent(_agent("anthropic", emu, recorder), recorder, emu)
    assert outcome.error is None and outcome.result.structured_response is None
    assert outcome.requests == 1 + STRUCTURED_RETRIES + 1
    assert any("stream_truncated" in str(w.message) for w in caught)


@pytest.mark.asyncio(loop_scope="session")
async def test_a_cut_structured_call_is_answered_by_its_error_result(emu: VendorEmulator) -> None:
    """FUNCTION mode on OpenAI chat: the structured output is a call; its cut is answered by
    the gate's error result for that call id, so the retry's history is legal."""
    from llama_index.core.types import PydanticProgramMode

    emu.queue("openai-chat", "text", "structured_call_truncated", "structured_call")
    recorder = Recorder()
    llm = make_llm("openai-chat", emu.base_url, pydantic_program_mode=PydanticProgramMode.FUNCTION)
    agent = ToolstreamFunctionAgent(tools=recorder.tools(), llm=llm, output_cls=Weather)
    outcome = await run_agent(agent, recorder, emu)
    assert outcome.result.structured_response == WHOLE
    retry = emu.requests[-1].body["messages"]
    assert retry[-1]["role"] == "tool" and "stream_truncated" in retry[-1]["content"]
    assert recorder.runs == []  # the structured call is an output, never run as a tool
