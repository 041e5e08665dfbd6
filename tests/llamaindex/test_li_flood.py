"""The capped flood through LlamaIndex (issue 37.3): a rejected call costs nothing downstream.

A model streams one ``write_file`` call whose arguments run 64 times past the gate's cap in
64-byte fragments (``flood_streams``). Before, the tap handed every chunk to
``llama-index-llms-openai``, whose ``update_tool_calls`` rebuilds the whole argument string per
chunk (a 20 MB flood never ended). At both LlamaIndex entry points (``ToolstreamFunctionAgent``,
``ToolstreamLLM`` sync and async), on the real classes and SDK clients over HTTP against the
emulator: the call is rejected for its cap, nothing ran, the next request answers it with that
reason, and LlamaIndex produced only a bounded number of responses, counted (``AgentStream``
events, or the LLM's own stream): none for the fragments after the failure. Speed and memory
are measured in ``benchmarks/flood.py``, not here.
"""

from __future__ import annotations

from typing import Any

import pytest
from flood_streams import APIS, CALL_ID, CONFIG, FRAGMENTS, SEEN_AT_MOST, flood_answer, flood_body
from li_helpers import THIRD_PARTY_WARNINGS, Recorder, make_llm, run_agent
from llama_index.core.agent.workflow import AgentStream
from llama_index.core.llms import ChatMessage
from toolstream_core import Turn
from toolstream_core.testing import VendorEmulator

from llamaindex_toolstream import ToolstreamFunctionAgent, ToolstreamLLM

pytestmark = THIRD_PARTY_WARNINGS
ASYNC = pytest.mark.asyncio(loop_scope="module")


def _queue(api: str, emu: VendorEmulator) -> list[Turn]:
    emu.queue_body(api, flood_body(api))
    emu.queue(api, "text")
    return []


def _rejected_for_its_cap(turns: list[Turn]) -> None:
    assert [str(call.reason) for call in turns[0].rejected] == ["arguments_exceed_max_bytes"]
    assert not turns[0].committed


@ASYNC
@pytest.mark.parametrize("api", APIS)
async def test_the_agent_rejects_a_capped_flood_without_streaming_it(
        api: str, emu: VendorEmulator) -> None:
    turns = _queue(api, emu)
    recorder = Recorder()
    agent = ToolstreamFunctionAgent(tools=recorder.tools(), llm=make_llm(api, emu.base_url),
                                    config=CONFIG, on_turn=turns.append)
    outcome = await run_agent(agent, recorder, emu)
    assert outcome.error is None and outcome.runs == []  # nothing ran
    _rejected_for_its_cap(turns)
    streamed = [event for event in outcome.events if isinstance(event, AgentStream)]
    assert 0 < len(streamed) <= SEEN_AT_MOST < FRAGMENTS
    assert outcome.requests == 2 and emu.statuses == [200, 200]
    calls, results = flood_answer(api, emu.requests[1].body)
    assert calls == [CALL_ID[api]] and [ident for ident, _ in results] == calls
    assert "[arguments_exceed_max_bytes]" in results[0][1]


def _llm(api: str, emu: VendorEmulator, turns: list[Turn]) -> ToolstreamLLM:
    return ToolstreamLLM(make_llm(api, emu.base_url), config=CONFIG, on_turn=turns.append)


HISTORY = [ChatMessage(role="user", content="go")]


@pytest.mark.parametrize("api", APIS)
def test_the_llm_yields_no_response_per_fragment(api: str, emu: VendorEmulator) -> None:
    turns = _queue(api, emu)
    recorder = Recorder()
    llm = _llm(api, emu, turns)
    responses = list(llm.stream_chat_with_tools(recorder.tools(), chat_history=HISTORY))
    _rejected_for_its_cap(turns)
    assert 0 < len(responses) <= SEEN_AT_MOST < FRAGMENTS
    assert llm.get_tool_calls_from_response(responses[-1], error_on_no_tool_call=False) == []
    assert [(r.tool_call_id, r.name) for r in llm.error_results_from_response(responses[-1])] \
        == [(CALL_ID[api], "write_file")]


@ASYNC
@pytest.mark.parametrize("api", APIS)
async def test_the_async_llm_yields_none_either(api: str, emu: VendorEmulator) -> None:
    turns = _queue(api, emu)
    recorder = Recorder()
    llm = _llm(api, emu, turns)
    responses: list[Any] = [r async for r in await llm.astream_chat_with_tools(
        recorder.tools(), chat_history=HISTORY)]
    _rejected_for_its_cap(turns)
    assert 0 < len(responses) <= SEEN_AT_MOST < FRAGMENTS


def test_a_class_read_through_raw_hands_on_no_spent_response(emu: VendorEmulator,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A class the gate cannot tap is read through ``ChatResponse.raw`` (a class it does not
    recognise, LiteLLM): the class has built each response, but after the call failed the
    shim hands on none whose event touched only the failed call (``GateSession.spent``), and
    the last one still carries the verdict. The real class, read the way an unrecognised one
    is (the tap declined). OpenAI chat only: read this way, LlamaIndex's classes pay for every
    fragment themselves (Anthropic's took minutes here), which is what the tap avoids."""
    import llamaindex_toolstream._llm as shim

    api = "openai-chat"
    monkeypatch.setattr(shim, "tap_llm", lambda llm, provider, sink: None)
    turns = _queue(api, emu)
    llm = _llm(api, emu, turns)
    responses = list(llm.stream_chat_with_tools(Recorder().tools(), chat_history=HISTORY))
    _rejected_for_its_cap(turns)
    assert 0 < len(responses) <= SEEN_AT_MOST < FRAGMENTS
    assert llm.get_tool_calls_from_response(responses[-1], error_on_no_tool_call=False) == []
    assert [(r.tool_call_id, r.name) for r in llm.error_results_from_response(responses[-1])] \
        == [(CALL_ID[api], "write_file")]
