"""``assemble_idle_timeout_s`` at every LlamaIndex entry point (issue 26, item 2).

A vendor that sends a call's first chunks and then nothing (``VendorEmulator.queue_stall``) is
cut at the configured timeout: the call is answered ``idle_timeout``, nothing runs, and the
emulator sees the client close the connection. Through ``ToolstreamLLM``'s streaming methods
(sync and async, with and without tools), ``ToolstreamFunctionAgent`` and
``ToolstreamReActAgent``, whose next request pairs the call's id. OpenAI chat and Anthropic,
the real LlamaIndex classes and SDK clients over HTTP. The SDK clients' own timeout
(``GUARD_S``) bounds a hang: were the gate's timeout not honoured, the call would end
``stream_truncated`` there and the test fail.
"""

from __future__ import annotations

from typing import Any

import pytest
from li_helpers import THIRD_PARTY_WARNINGS, Recorder, make_llm, run_agent
from llama_index.core.base.llms.types import ChatMessage, ChatResponse
from toolstream_core import Reason, Turn
from toolstream_core.testing import VendorEmulator, history_pairing

from llamaindex_toolstream import ToolstreamFunctionAgent, ToolstreamLLM, ToolstreamReActAgent

# ReActAgent's own step warns about its ``ctx.is_running`` (upstream, not ours).
pytestmark = [*THIRD_PARTY_WARNINGS, pytest.mark.filterwarnings("ignore:is_running:DeprecationWarning")]

GUARD_S = 20.0
"""The longest anything here waits: a bound against a hang, never a speed claim."""
QUICK = {"assemble_idle_timeout_s": 0.5}
APIS = ("openai-chat", "anthropic")
METHODS = ("stream_chat", "astream_chat", "stream_chat_with_tools", "astream_chat_with_tools")


async def _last(llm: ToolstreamLLM, method: str, recorder: Recorder) -> ChatResponse:
    """The last response of one streamed call of ``method``."""
    messages = [ChatMessage(role="user", content="go")]
    if method == "stream_chat":
        responses: Any = llm.stream_chat(messages)
    elif method == "stream_chat_with_tools":
        responses = llm.stream_chat_with_tools(recorder.tools(), chat_history=messages)
    elif method == "astream_chat":
        responses = await llm.astream_chat(messages)
    else:
        responses = await llm.astream_chat_with_tools(recorder.tools(), chat_history=messages)
    if method.startswith("a"):
        return [r async for r in responses][-1]
    return list(responses)[-1]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("api", APIS)
async def test_the_llm_cuts_a_stalled_stream_and_answers_the_call(
        api: str, method: str, emu: VendorEmulator) -> None:
    turns: list[Turn] = []
    llm = ToolstreamLLM(make_llm(api, emu.base_url, timeout=GUARD_S), config=QUICK,
                        on_turn=turns.append)
    stall = emu.queue_stall(api)
    last = await _last(llm, method, Recorder())
    assert llm.get_tool_calls_from_response(last, error_on_no_tool_call=False) == []
    assert [e.reason for e in llm.error_results_from_response(last)] == [Reason.idle_timeout]
    assert [[c.reason for c in t.calls] for t in turns] == [[Reason.idle_timeout]]
    assert stall.closed.wait(GUARD_S)  # the connection was really cut


def _legal(emu: VendorEmulator) -> None:
    last = emu.requests[-1]
    assert history_pairing(last.api, last.body, path=last.path) == []
    assert emu.statuses[-1] == 200


@pytest.mark.parametrize("agent_class", [ToolstreamFunctionAgent, ToolstreamReActAgent],
                         ids=["function", "react"])
@pytest.mark.parametrize("api", APIS)
async def test_the_agents_cut_a_stalled_stream_and_go_on(api: str, agent_class: Any,
                                                         emu: VendorEmulator) -> None:
    recorder = Recorder()
    turns: list[Turn] = []
    agent = agent_class(tools=recorder.tools(), llm=make_llm(api, emu.base_url, timeout=GUARD_S),
                        config=QUICK, on_turn=turns.append)
    stall = emu.queue_stall(api)
    outcome = await run_agent(agent, recorder, emu)
    assert outcome.error is None
    assert recorder.runs == []  # nothing ran from the cut call
    assert [[c.reason for c in t.rejected] for t in turns] == [[Reason.idle_timeout], []]
    assert stall.closed.wait(GUARD_S)
    assert outcome.requests == 2  # the agent went on with one more request ...
    _legal(emu)  # ... that answers the cut call's id


# -- a class the tap cannot reach, read from ``ChatResponse.raw`` -------------------------------

#: ``OpenAIResponses`` is read from ``ChatResponse.raw`` (no tap); its client gives up reading at
#: this many seconds: the sync guard cannot cut a connection it does not hold, so the blocked
#: read ends there and the stream is closed then (the caller was released at the idle timeout).
READ_S = 3.0


@pytest.mark.parametrize("method", ["stream_chat_with_tools", "astream_chat_with_tools"])
async def test_a_class_read_from_raw_is_cut_by_the_shim(method: str, emu: VendorEmulator) -> None:
    inner = make_llm("openai-responses", emu.base_url, timeout=READ_S)
    # warm, ungated: the class's first request sets itself up (over a second here) inside
    # the stream it returns, which is not what is timed out
    list(inner.stream_chat([ChatMessage(role="user", content="hi")]))
    llm = ToolstreamLLM(inner, config={"assemble_idle_timeout_s": 1.0})
    stall = emu.queue_stall("openai-responses")
    last = await _last(llm, method, Recorder())
    session = llm.stream_for(last)
    assert session is not None and not session.tapped
    assert [e.reason for e in llm.error_results_from_response(last)] == [Reason.idle_timeout]
    assert stall.closed.wait(GUARD_S)
