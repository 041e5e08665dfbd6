"""Mutated real streams through the real SDKs, LlamaIndex and the shim (issue 9, item 3), and
the output-limit backstop through the shim (issue 13).

The faults (``fault_streams.faults``) reach ``ToolstreamLLM(OpenAI / Anthropic / GoogleGenAI)``
and ``ToolstreamFunctionAgent`` through the real SDK clients. What the SDK or the LlamaIndex
class raises on is a transport failure: once a tool call started, ``ToolstreamLLM`` ends the
turn with every call rejected and answered (``on_stream_error="pair"``, DESIGN 6), so the
agent goes on as ``create_agent`` + ``ToolstreamMiddleware`` does; a failure before any call
ends the run with that exception and the conversation stays usable (the next run's request is
legal). What they deliver reaches the core (``ChatResponse.raw``, or the Anthropic tap). The
checks are ``fault_streams``'s: only untouched calls run, and the follow-up pairs every id.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fault_streams import (
    LIMIT_STREAMS,
    Fault,
    assert_follow_up_paired,
    assert_runs,
    by_setting,
    fault_server,
    faults,
    limit_headroom,
    limited_stream,
    sent_limit,
)
from google.genai import types as genai_types
from li_helpers import Recorder, make_llm, run_agent, unpaired
from llama_index.core.base.llms.types import ChatMessage, ChatResponse
from llama_index.core.workflow import Context
from toolstream_core.testing import VendorEmulator

from llamaindex_toolstream import (
    ToolstreamFunctionAgent,
    ToolstreamLLM,
    error_tool_messages,
    message_with_rejected_calls,
)

# The workflows runtime walks every agent with inspect.getmembers, which trips pydantic's
# deprecated-attribute warnings; google-genai subclasses aiohttp.ClientSession. Neither is ours.
pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

FAULTS = [fault.param("llamaindex") for fault in faults()]


@pytest.mark.parametrize("fault", FAULTS)
async def test_fault_through_the_function_agent(fault: Fault,
                                                emu: VendorEmulator) -> None:
    recorder = Recorder()
    with fault_server(fault.api, fault.events, emu) as server:
        agent = ToolstreamFunctionAgent(tools=recorder.corpus_tools(),
                                        llm=make_llm(fault.api, server.base_url))
        ctx = Context(agent)
        outcome = await run_agent(agent, recorder, ctx=ctx)
        raised = outcome.error is not None
        if raised:
            # The stream failed in the SDK: the run ended with that error. The same
            # conversation must still be usable: the next request carries no unpaired call.
            again = await run_agent(agent, recorder, user_msg="try again", ctx=ctx)
            assert again.error is None, again.error
            memory = again.memory
        else:
            memory = outcome.memory

    assert_runs(fault, recorder.runs, transport_failed=raised)
    assert unpaired(memory) == []
    assert_follow_up_paired(fault, server, holds_calls=not raised)
    assert len(server.bodies) == 2  # the faulty turn, then one accepted follow-up


@pytest.mark.parametrize("fault", FAULTS)
async def test_fault_through_toolstream_llm(fault: Fault,
                                            emu: VendorEmulator) -> None:
    recorder = Recorder()
    tools = {t.metadata.name: t for t in recorder.corpus_tools()}
    with fault_server(fault.api, fault.events, emu) as server:
        llm = ToolstreamLLM(make_llm(fault.api, server.base_url))
        history: list[ChatMessage] = [ChatMessage(role="user", content="go")]
        responses: list[ChatResponse] = []
        error: BaseException | None = None
        try:
            gen = await llm.astream_chat_with_tools(list(tools.values()), chat_history=history)
            async for response in gen:
                responses.append(response)
        except Exception as exc:  # the SDK / LlamaIndex raised on the mutated event
            error = exc
        # Raised or not, no response of the stream hands out a call the fault touched.
        for response in responses:
            selections = llm.get_tool_calls_from_response(response, error_on_no_tool_call=False)
            allowed = () if error is not None else fault.allowed
            assert all((c.tool_name, c.tool_kwargs) in allowed for c in selections)
        if error is None:
            last = responses[-1]
            for call in llm.get_tool_calls_from_response(last, error_on_no_tool_call=False):
                await tools[call.tool_name].acall(**call.tool_kwargs)
            turn = llm.turn_of(last)
            assert turn is not None
            if not fault.required:
                assert turn.rejected, "the call live at the fault was neither run nor rejected"
            history += [message_with_rejected_calls(last), *error_tool_messages(last),
                        *_results(llm, last)]
        answer = await llm.achat(history)

    assert_runs(fault, recorder.runs, transport_failed=error is not None)
    assert_follow_up_paired(fault, server, holds_calls=error is None)
    assert answer.message.content  # the vendor accepted the follow-up and answered it


def _results(llm: ToolstreamLLM, response: ChatResponse) -> list[ChatMessage]:
    """One tool message per committed call (what the test's tool step returned)."""
    return [ChatMessage(role="tool", content="done",
                        additional_kwargs={"tool_call_id": call.tool_id, "name": call.tool_name})
            for call in llm.get_tool_calls_from_response(response, error_on_no_tool_call=False)]


# -- the output-limit backstop (issue 13) --------------------------------------------------------
# vLLM reports ``finish_reason: "tool_calls"`` for a call that ``max_tokens`` cut. The shim gives
# the core the limit the request carries, from wherever the user set it, so a turn whose usage
# reports exactly that many output tokens is ``stream_truncated`` whatever its finish says.

Settings = tuple[dict[str, Any], dict[str, Any]]  # (LLM constructor, per-call keyword arguments)

LIMIT_SETTINGS: dict[tuple[str, str], Callable[[int], Settings]] = {
    ("openai-chat", "max_tokens"): lambda n: ({"max_tokens": n}, {}),
    ("openai-chat", "additional_kwargs"): lambda n: (
        {"additional_kwargs": {"max_completion_tokens": n}}, {}),
    ("openai-chat", "call"): lambda n: ({}, {"max_tokens": n}),
    ("anthropic", "max_tokens"): lambda n: ({"max_tokens": n}, {}),
    ("anthropic", "call"): lambda n: ({}, {"max_tokens": n}),
    ("gemini", "max_tokens"): lambda n: ({"max_tokens": n}, {}),
    ("gemini", "generation_config"): lambda n: (
        {"generation_config": genai_types.GenerateContentConfig(max_output_tokens=n)}, {}),
    ("gemini", "call"): lambda n: ({}, {"generation_config": {"max_output_tokens": n}}),
}


@limit_headroom
@by_setting(LIMIT_SETTINGS)
async def test_output_limit_through_toolstream_llm(api: str, how: str, headroom: int,
                                                   emu: VendorEmulator) -> None:
    events, limit = limited_stream(api, headroom)
    llm_settings, call_settings = LIMIT_SETTINGS[api, how](limit)
    recorder = Recorder()
    with fault_server(api, events, emu) as server:
        llm = ToolstreamLLM(make_llm(api, server.base_url, **llm_settings))
        history = [ChatMessage(role="user", content="go")]
        gen = await llm.astream_chat_with_tools(recorder.corpus_tools(), chat_history=history,
                                                **call_settings)
        responses = [response async for response in gen]
        last = responses[-1]
        turn = llm.turn_of(last)
        assert turn is not None
        committed = llm.get_tool_calls_from_response(last, error_on_no_tool_call=False)
        history += [message_with_rejected_calls(last), *error_tool_messages(last),
                    *_results(llm, last)]
        answer = await llm.achat(history)

    assert sent_limit(api, server.bodies[0]) == limit  # the vendor was asked for this limit
    if headroom == 0:
        assert committed == [] and turn.rejected and not turn.complete
        assert {call.reason and call.reason.value for call in turn.rejected} == {
            "stream_truncated"}
    else:
        assert not turn.rejected and len(committed) == len(turn.calls) > 0
    assert_follow_up_paired(Fault(api, how, events, ()), server)
    assert answer.message.content


@limit_headroom
@pytest.mark.parametrize("api", sorted(LIMIT_STREAMS))
async def test_output_limit_through_the_function_agent(
        api: str, headroom: int, emu: VendorEmulator) -> None:
    events, limit = limited_stream(api, headroom)
    recorder = Recorder()
    with fault_server(api, events, emu) as server:
        agent = ToolstreamFunctionAgent(
            tools=recorder.corpus_tools(),
            llm=make_llm(api, server.base_url, max_tokens=limit))
        outcome = await run_agent(agent, recorder)

    assert outcome.error is None, outcome.error
    if headroom == 0:
        assert recorder.runs == []
        assert outcome.tool_messages and all(
            "stream_truncated" in str(m.content) for m in outcome.tool_messages)
    else:
        assert len(recorder.runs) == len(outcome.tool_messages) > 0
    assert unpaired(outcome.memory) == []
    assert_follow_up_paired(Fault(api, "limit", events, ()), server)
