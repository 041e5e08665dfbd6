"""Mutated real streams through the real SDKs, LangChain and the gate (issue 9, item 3), and
the output-limit backstop through the gate (issue 13).

The faults (``fault_streams.faults``: Gemini keep-alive parts, orphan argument fragments,
garbage and mistyped events) are served in the vendor's wire format, so ``ChatOpenAI`` /
``ChatAnthropic`` / ``ChatGoogleGenerativeAI`` parse them with the real SDK clients, through
``create_agent(middleware=[ToolstreamMiddleware()])`` and through ``with_toolstream``. What
the SDK or the integration raises on is a transport failure that the gate records (``pair``:
every call rejected and answered); what they deliver reaches the core through the tap. The
checks are ``fault_streams``'s: only untouched calls run, and the follow-up pairs every id.
"""

from __future__ import annotations

from collections import Counter
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
    pairing,
    sent_limit,
)
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from lc_util import Recorder, ai_messages, assert_history_paired, corpus_tools, make_model
from toolstream_core.testing import VendorEmulator

from langchain_toolstream import ToolstreamMiddleware, error_tool_messages, with_toolstream

# LangChain moves a known parameter out of ``model_kwargs`` with a warning: that is the point.
pytestmark = pytest.mark.filterwarnings("ignore:Parameters .* should be specified explicitly")

FAULTS = [fault.param("langchain") for fault in faults()]


def _failed(message: AIMessage) -> bool:
    """Whether the SDK or LangChain raised on the stream (the gate records the error)."""
    return message.response_metadata["toolstream"]["error"] is not None


def _check_first_turn(fault: Fault, first: AIMessage) -> None:
    """The call live at the fault is rejected (and so answered), unless nothing was touched."""
    committed = [(c["name"], c["args"]) for c in first.tool_calls]
    allowed = () if _failed(first) else fault.allowed
    assert all(call in allowed for call in committed), committed
    if not fault.required:
        assert first.invalid_tool_calls, "the call live at the fault was neither run nor rejected"


@pytest.mark.parametrize("fault", FAULTS)
def test_fault_through_create_agent(fault: Fault, emu: VendorEmulator) -> None:
    recorder = Recorder()
    with fault_server(fault.api, fault.events, emu) as server:
        agent = create_agent(make_model(fault.api, server), tools=corpus_tools(recorder),
                             middleware=[ToolstreamMiddleware(max_retries=1)])
        messages: list[BaseMessage] = agent.invoke({"messages": [HumanMessage("go")]})["messages"]

    first = ai_messages(messages)[0]
    assert_runs(fault, recorder.calls, transport_failed=_failed(first))
    _check_first_turn(fault, first)
    assert_history_paired(messages)
    assert_follow_up_paired(fault, server)
    assert messages[-1].text  # the vendor accepted the follow-up and answered it


@pytest.mark.parametrize("fault", FAULTS)
async def test_fault_through_the_wrapper(fault: Fault, emu: VendorEmulator) -> None:
    recorder = Recorder()
    tools = {t.name: t for t in corpus_tools(recorder)}
    with fault_server(fault.api, fault.events, emu) as server:
        model = with_toolstream(make_model(fault.api, server),
                                on_stream_error="pair").bind_tools(list(tools.values()))
        history: list[Any] = [HumanMessage("go")]
        first = await model.ainvoke(history)
        assert isinstance(first, AIMessage)
        _check_first_turn(fault, first)
        results = [await tools[call["name"]].ainvoke(call) for call in first.tool_calls]
        history += [first, *error_tool_messages(first), *results]
        answer = await model.ainvoke(history)

    assert_runs(fault, recorder.calls, transport_failed=_failed(first))
    assert_follow_up_paired(fault, server)
    assert answer.text  # the vendor accepted the follow-up and answered it


# -- the output-limit backstop (issue 13) --------------------------------------------------------
# vLLM reports ``finish_reason: "tool_calls"`` for a call that ``max_tokens`` cut. The gate gives
# the core the limit the request carried, from wherever the user set it, so a turn whose usage
# reports exactly that many output tokens is ``stream_truncated`` whatever its finish says.

# (api, how the user set the limit): the model's field, model_kwargs, or a per-call ``bind``.
LIMIT_SETTINGS: dict[tuple[str, str], Callable[[int], tuple[dict[str, Any], dict[str, Any]]]] = {
    ("openai-chat", "max_tokens"): lambda n: ({"max_tokens": n}, {}),
    ("openai-chat", "max_completion_tokens"): lambda n: ({"max_completion_tokens": n}, {}),
    ("openai-chat", "model_kwargs"): lambda n: ({"model_kwargs": {"max_completion_tokens": n}}, {}),
    ("openai-chat", "bind"): lambda n: ({}, {"max_tokens": n}),
    ("anthropic", "max_tokens"): lambda n: ({"max_tokens": n}, {}),
    ("anthropic", "bind"): lambda n: ({}, {"max_tokens": n}),
    ("gemini", "max_output_tokens"): lambda n: ({"max_output_tokens": n}, {}),
    ("gemini", "bind"): lambda n: ({}, {"max_output_tokens": n}),
}


@limit_headroom
@by_setting(LIMIT_SETTINGS)
async def test_output_limit_through_the_wrapper(api: str, how: str, headroom: int,
                                                emu: VendorEmulator) -> None:
    events, limit = limited_stream(api, headroom)
    model_settings, call_settings = LIMIT_SETTINGS[api, how](limit)
    recorder = Recorder()
    tools = {t.name: t for t in corpus_tools(recorder)}
    with fault_server(api, events, emu) as server:
        model = with_toolstream(make_model(api, server, **model_settings)).bind_tools(
            list(tools.values())).bind(**call_settings)
        first = await model.ainvoke([HumanMessage("go")])
        results = [await tools[call["name"]].ainvoke(call) for call in first.tool_calls]
        answer = await model.ainvoke([HumanMessage("go"), first, *error_tool_messages(first),
                                      *results])

    assert sent_limit(api, server.bodies[0]) == limit  # the vendor was asked for this limit
    record = first.response_metadata["toolstream"]
    if headroom == 0:
        assert first.tool_calls == [] and recorder.calls == []
        assert [c["error"] for c in first.invalid_tool_calls] == ["stream_truncated"] * len(
            first.invalid_tool_calls) != []
        assert record["complete"] is False
    else:
        assert first.invalid_tool_calls == [] and len(recorder.calls) == len(first.tool_calls) > 0
    calls, answers = pairing(api, server.bodies[1])
    assert calls == answers and sum(calls.values()) == len(record["committed"]) + len(
        record["rejected"])
    assert answer.text


@limit_headroom
@pytest.mark.parametrize("api", sorted(LIMIT_STREAMS))
def test_output_limit_through_create_agent(api: str, headroom: int, emu: VendorEmulator) -> None:
    events, limit = limited_stream(api, headroom)
    field = "max_output_tokens" if api == "gemini" else "max_tokens"
    recorder = Recorder()
    with fault_server(api, events, emu) as server:
        agent = create_agent(make_model(api, server, **{field: limit}),
                             tools=corpus_tools(recorder),
                             middleware=[ToolstreamMiddleware(max_retries=1)])
        messages = agent.invoke({"messages": [HumanMessage("go")]})["messages"]

    first = ai_messages(messages)[0]
    if headroom == 0:
        assert recorder.calls == [] and first.tool_calls == []
        assert {c["error"] for c in first.invalid_tool_calls} == {"stream_truncated"}
    else:
        assert len(recorder.calls) == len(first.tool_calls) > 0 and not first.invalid_tool_calls
    assert_history_paired(messages)
    calls, answers = pairing(api, server.bodies[1])
    assert calls == answers != Counter()
    assert messages[-1].text
