"""The capped flood through LangChain (issue 37.3): a rejected call costs nothing downstream.

A model streams one ``write_file`` call whose arguments run 64 times past the gate's cap in
64-byte fragments (``flood_streams``). At both LangChain entry points (``create_agent`` with
``ToolstreamMiddleware``, and ``with_toolstream``), sync and async, on the real partner classes
and SDK clients over HTTP against the emulator: the call is rejected for its cap, nothing ran,
the next request answers it with that reason, and LangChain saw only a bounded number of
chunks, counted (``stream_mode="messages"``, or the model's own stream): not one per fragment
the vendor sent. Speed and memory are measured in ``benchmarks/flood.py``, not here.
"""

from __future__ import annotations

from typing import Any

import pytest
from flood_streams import APIS, CALL_ID, CONFIG, FRAGMENTS, SEEN_AT_MOST, flood_answer, flood_body
from langchain.agents import create_agent
from langchain_core.messages import AIMessageChunk, HumanMessage
from lc_util import Recorder, make_model, recording_tools
from toolstream_core import Turn
from toolstream_core.testing import VendorEmulator

from langchain_toolstream import ToolstreamMiddleware, with_toolstream

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def _queue(api: str, emu: VendorEmulator) -> list[Turn]:
    emu.queue_body(api, flood_body(api))
    emu.queue(api, "text")
    return []


def _check(api: str, emu: VendorEmulator, turns: list[Turn], recorder: Recorder,
           chunks: int, requests: int) -> None:
    assert recorder.calls == []  # nothing ran
    assert [str(call.reason) for call in turns[0].rejected] == ["arguments_exceed_max_bytes"]
    assert 0 < chunks <= SEEN_AT_MOST < FRAGMENTS  # LangChain saw no fragment past the failure
    assert len(emu.requests) == requests
    if requests > 1:  # the next request answers the call, with its reason, right after it
        calls, results = flood_answer(api, emu.requests[1].body)
        assert calls == [CALL_ID[api]] and [ident for ident, _ in results] == calls
        assert "[arguments_exceed_max_bytes]" in results[0][1]
        assert emu.statuses == [200, 200]


def _agent(api: str, emu: VendorEmulator, recorder: Recorder, turns: list[Turn]) -> Any:
    return create_agent(make_model(api, emu), tools=recording_tools(recorder),
                        middleware=[ToolstreamMiddleware(config=CONFIG, on_turn=turns.append)])


def _model_chunks(messages: Any) -> int:
    return sum(1 for chunk, _meta in messages if isinstance(chunk, AIMessageChunk))


@pytest.mark.parametrize("api", APIS)
def test_the_agent_rejects_a_capped_flood_without_streaming_it(
        api: str, emu: VendorEmulator, recorder: Recorder) -> None:
    turns = _queue(api, emu)
    agent = _agent(api, emu, recorder, turns)
    chunks = _model_chunks(agent.stream({"messages": [HumanMessage("go")]}, stream_mode="messages"))
    _check(api, emu, turns, recorder, chunks, requests=2)


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("api", APIS)
async def test_the_async_agent_rejects_it_the_same_way(
        api: str, emu: VendorEmulator, recorder: Recorder) -> None:
    turns = _queue(api, emu)
    agent = _agent(api, emu, recorder, turns)
    chunks = 0
    async for chunk, _meta in agent.astream({"messages": [HumanMessage("go")]},
                                            stream_mode="messages"):
        chunks += isinstance(chunk, AIMessageChunk)
    _check(api, emu, turns, recorder, chunks, requests=2)


@pytest.mark.parametrize("api", APIS)
def test_with_toolstream_yields_no_chunk_per_fragment(
        api: str, emu: VendorEmulator, recorder: Recorder) -> None:
    turns = _queue(api, emu)
    model = with_toolstream(make_model(api, emu), config=CONFIG, on_turn=turns.append)
    bound = model.bind_tools(recording_tools(recorder))
    streamed = list(bound.stream("go"))
    _check(api, emu, turns, recorder, len(streamed), requests=1)
    full = streamed[0]
    for chunk in streamed[1:]:
        full = full + chunk
    assert full.tool_calls == []  # the aggregate holds no call the gate rejected


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("api", APIS)
async def test_async_with_toolstream_yields_none_either(
        api: str, emu: VendorEmulator, recorder: Recorder) -> None:
    turns = _queue(api, emu)
    model = with_toolstream(make_model(api, emu), config=CONFIG, on_turn=turns.append)
    streamed = [chunk async for chunk in model.bind_tools(recording_tools(recorder)).astream("go")]
    _check(api, emu, turns, recorder, len(streamed), requests=1)


@pytest.mark.parametrize("api", APIS)
def test_a_chunk_that_carries_nothing_is_never_yielded(
        api: str, emu: VendorEmulator, recorder: Recorder) -> None:
    """The same stream under a cap it fits: the call commits, and LangChain gets the chunks
    that carry something (the first, the finish, the gate's last), not one emptied chunk per
    fragment that its aggregation would keep to the end."""
    turns = _queue(api, emu)
    model = with_toolstream(make_model(api, emu), config={"max_tool_argument_bytes": 1 << 20},
                            on_turn=turns.append)
    streamed = list(model.bind_tools(recording_tools(recorder)).stream("go"))
    assert [call.name for call in turns[0].committed] == ["write_file"]
    assert len(streamed) <= 8 < FRAGMENTS
    full = streamed[0]
    for chunk in streamed[1:]:
        full = full + chunk
    assert [call["id"] for call in full.tool_calls] == [CALL_ID[api]]
    assert len(full.tool_calls[0]["args"]["content"]) == 64 * FRAGMENTS
