"""The Anthropic tap hands each SDK event to the core before LlamaIndex can change it.

LlamaIndex's ``Anthropic`` stream keeps the ``content_block_start`` event's ``content_block``
as its current call and writes its own partial-JSON repair into ``content_block.input`` on
every ``input_json_delta``. A tap that buffered the event objects and fed them later let the
core read that repaired value as if the vendor had sent a complete ``input`` beside the text
fragments (``upstream_error``): a complete call sent as one whole fragment never ran. These
tests serve such a stream through the real Anthropic SDK and the real agent.
"""

from __future__ import annotations

import pytest
from fault_streams import FaultServer, WireEvent, fault_server, pairing
from li_helpers import Outcome, Recorder, make_llm, run_agent
from llama_index.core.agent.workflow import FunctionAgent
from toolstream_core.testing import VendorEmulator

from llamaindex_toolstream import ToolstreamFunctionAgent, ToolstreamLLM

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning")]

PARIS = ("get_weather", {"city": "Paris"})


def _whole_fragment_stream(*fragments: str) -> list[WireEvent]:
    """One get_weather call whose input arrives as ``fragments`` (one whole object by
    default), then a normal ``tool_use`` end."""
    events = [
        {"type": "message_start", "message": {
            "id": "msg_tap", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {
            "type": "tool_use", "id": "toolu_paris", "name": "get_weather", "input": {}}},
        *({"type": "content_block_delta", "index": 0,
           "delta": {"type": "input_json_delta", "partial_json": fragment}}
          for fragment in fragments),
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
         "usage": {"output_tokens": 12}},
        {"type": "message_stop"},
    ]
    return [WireEvent(event, event["type"]) for event in events]


WHOLE = ['{"city":"Paris"}']
SPLIT = ['{"city":', '"Paris"}']


async def _run(agent_class: type[FunctionAgent], fragments: list[str],
               emulator: VendorEmulator) -> tuple[Outcome, FaultServer]:
    """``agent_class`` (streaming) over the real Anthropic class, served the stream."""
    recorder = Recorder()
    with fault_server("anthropic", _whole_fragment_stream(*fragments), emulator) as server:
        agent = agent_class(tools=recorder.tools(), streaming=True,
                            llm=make_llm("anthropic", server.base_url))
        return await run_agent(agent, recorder), server


@pytest.mark.parametrize("fragments", [WHOLE, SPLIT], ids=["one_fragment", "two_fragments"])
async def test_anthropic_whole_object_fragment_runs_once(
        fragments: list[str], emu: VendorEmulator) -> None:
    outcome, server = await _run(ToolstreamFunctionAgent, fragments, emu)

    assert outcome.error is None, outcome.error
    assert outcome.runs == [PARIS]
    assert server.follow_up is not None
    calls, answers = pairing("anthropic", server.follow_up)
    assert calls == answers == {"toolu_paris": 1}


async def test_plain_function_agent_runs_the_same_stream(
        emu: VendorEmulator) -> None:
    """The baseline: the stock agent runs this call, so the gate must too."""
    outcome, _ = await _run(FunctionAgent, WHOLE, emu)
    assert outcome.runs == [PARIS]


async def test_anthropic_llm_decides_from_the_vendor_event(
        emu: VendorEmulator) -> None:
    """Through ``ToolstreamLLM`` alone: the committed call carries the vendor's text."""
    recorder = Recorder()
    with fault_server("anthropic", _whole_fragment_stream(*WHOLE), emu) as server:
        llm = ToolstreamLLM(make_llm("anthropic", server.base_url))
        gen = await llm.astream_chat_with_tools(recorder.tools(), user_msg="go")
        responses = [response async for response in gen]
    turn = llm.turn_of(responses[-1])
    assert turn is not None
    assert [(c.name, c.arguments) for c in turn.committed] == [PARIS]
    assert not turn.rejected
