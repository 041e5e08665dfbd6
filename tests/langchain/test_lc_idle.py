"""``assemble_idle_timeout_s`` at every LangChain entry point (issue 26, item 2).

A vendor that sends a call's first chunks and then nothing (``VendorEmulator.queue_stall``) is
cut at the configured timeout: the call is answered ``idle_timeout``, nothing runs, the
emulator sees the client close the connection, and the next request pairs the call's id.
Through ``with_toolstream`` (invoke, ainvoke, stream, astream) and ``create_agent`` +
``ToolstreamMiddleware`` (sync and async), on OpenAI chat and Anthropic, with the real partner
classes. The models' own timeout (``GUARD_S``) is the bound against a hang: were the gate's
timeout not honoured, the call would end ``stream_truncated`` there and the test fail.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from lc_util import Recorder, make_model, recording_tools
from test_lc_wrapper import TOOL_DICTS, run
from toolstream_core import Turn
from toolstream_core.testing import VendorEmulator, history_pairing

from langchain_toolstream import (
    ToolstreamCallbackHandler,
    ToolstreamMiddleware,
    error_tool_messages,
    message_with_rejected_calls,
    with_toolstream,
)

GUARD_S = 20.0
"""The longest anything here waits: a bound against a hang, never a speed claim."""
QUICK = {"assemble_idle_timeout_s": 0.5}
APIS = ("openai-chat", "anthropic")
MODES = ("invoke", "ainvoke", "stream", "astream")


def _model(api: str, emu: VendorEmulator) -> Any:
    return make_model(api, emu, timeout=GUARD_S)


def _legal(emu: VendorEmulator) -> None:
    """The last request the partner class sent pairs every call, and was accepted."""
    last = emu.requests[-1]
    assert history_pairing(last.api, last.body, path=last.path) == []
    assert emu.statuses[-1] == 200


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("api", APIS)
async def test_the_wrapper_cuts_a_stalled_stream_and_answers_the_call(
        api: str, mode: str, emu: VendorEmulator) -> None:
    turns: list[Turn] = []
    gated = with_toolstream(_model(api, emu), config=QUICK, on_turn=turns.append).bind_tools(TOOL_DICTS)
    stall = emu.queue_stall(api)
    message = message_with_rejected_calls(await run(gated, mode))  # aggregated chunks too
    assert isinstance(message, AIMessage)
    assert message.tool_calls == []
    assert [c["error"] for c in message.invalid_tool_calls] == ["idle_timeout"]
    assert [str(c.reason) for turn in turns for c in turn.calls] == ["idle_timeout"]
    assert stall.closed.wait(GUARD_S)  # the connection was really cut
    # the next request, with the gate's error result for the id, is legal
    answers = error_tool_messages(message)
    assert [a.tool_call_id for a in answers] == [c["id"] for c in message.invalid_tool_calls]
    gated.invoke([HumanMessage("do it"), message, *answers])
    _legal(emu)


@pytest.mark.parametrize("asynchronous", [False, True], ids=["invoke", "ainvoke"])
@pytest.mark.parametrize("api", APIS)
async def test_the_middleware_cuts_a_stalled_stream_and_the_agent_goes_on(
        api: str, asynchronous: bool, emu: VendorEmulator) -> None:
    recorder = Recorder()
    turns: list[Turn] = []
    agent = create_agent(_model(api, emu), tools=recording_tools(recorder),
                         middleware=[ToolstreamMiddleware(config=QUICK, on_turn=turns.append)])
    stall = emu.queue_stall(api)
    request = {"messages": [HumanMessage("do it")]}
    result = await agent.ainvoke(request) if asynchronous else agent.invoke(request)
    assert recorder.calls == []  # nothing ran from the cut call
    assert [[str(c.reason) for c in t.rejected] for t in turns] == [["idle_timeout"], []]
    assert stall.closed.wait(GUARD_S)
    assert len(emu.requests) == 2  # the agent went on with one more request ...
    _legal(emu)  # ... that answers the cut call's id
    assert isinstance(result["messages"][-1], AIMessage)


def test_the_callback_handler_says_it_cannot_cut_a_stream(caplog: pytest.LogCaptureFixture) -> None:
    """The handler only observes: a stalled stream of an ungated model gives it no callback
    to act in, so an idle timeout given to it is refused in words, not ignored in silence."""
    with caplog.at_level(logging.WARNING, logger="langchain_toolstream"):
        ToolstreamCallbackHandler(config=QUICK)
    assert any("cannot cut a stalled stream" in r.getMessage() for r in caplog.records)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="langchain_toolstream"):
        ToolstreamCallbackHandler()
    assert not caplog.records


# -- a class the tap cannot reach, gated on LangChain's chunks ----------------------------------

#: ``ChatMistralAI`` (its own httpx client: read through LangChain's chunks) gives up reading at
#: this many seconds: the sync guard cannot cut a connection it does not hold, so the blocked
#: read ends there and the stream is closed then (the caller was released at the idle timeout).
READ_S = 3.0


@pytest.mark.parametrize("asynchronous", [False, True], ids=["invoke", "ainvoke"])
async def test_a_class_read_through_its_chunks_is_cut_by_the_shim(asynchronous: bool) -> None:
    mistralai = pytest.importorskip("langchain_mistralai")
    with VendorEmulator(profile="mistral") as emu:
        model = mistralai.ChatMistralAI(model="mistral-large-latest", api_key="test",
                                        base_url=emu.base_url + "/v1", max_retries=0, timeout=READ_S)
        gated = with_toolstream(model, config={"assemble_idle_timeout_s": 1.0}).bind_tools(TOOL_DICTS)
        gated.invoke("hi")  # warm: the first request's own set-up is not what is timed out
        stall = emu.queue_stall("openai-chat")
        message = await gated.ainvoke("do it") if asynchronous else gated.invoke("do it")
        assert message.response_metadata["toolstream"]["mode"] == "chunks"
        assert message.tool_calls == []
        assert [c["error"] for c in message.invalid_tool_calls] == ["idle_timeout"]
        assert stall.closed.wait(GUARD_S)
