"""The LangChain shim against OpenAI-compatible servers (issue 13.4): every profile x scenario.

``ChatOpenAI(base_url=<emulator with that server's profile>)`` drives the real OpenAI SDK;
the gate is ``with_toolstream`` on its own and ``ToolstreamMiddleware`` inside a real
``create_agent`` loop whose tools record what they are asked to do. Two things must hold on
every server: no tool runs on a call the stream did not prove, and the request after the
turn is legal (every tool_call id paired; the emulator answers an unpaired history with
OpenAI's 400, which would raise out of the agent).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_openai import ChatOpenAI
from lc_util import Recorder, assert_history_paired, recording_tools
from profile_util import profile_emulators, proven, sorted_calls
from pydantic import ValidationError
from toolstream_core.integration import RecordView
from toolstream_core.testing import PROFILES, SCENARIOS, VendorEmulator

from langchain_toolstream import ToolstreamMiddleware, with_toolstream

CHAT = [n for n, s in SCENARIOS.items() if "openai-chat" in s.apis]
CASES = [(p, n) for p in PROFILES for n in CHAT]
IDS = [f"{p}-{n}" for p, n in CASES]
LIMIT = 777


@pytest.fixture(scope="module")
def emus() -> Iterator[dict[str, VendorEmulator]]:
    with profile_emulators() as started:
        yield started


def chat_model(emu: VendorEmulator) -> ChatOpenAI:
    return ChatOpenAI(model="gpt-4.1-mini", api_key="test", base_url=emu.base_url + "/v1",  # type: ignore[arg-type]
                      max_retries=0, max_tokens=LIMIT)  # type: ignore[call-arg]


@pytest.mark.parametrize(("profile", "scenario"), CASES, ids=IDS)
def test_agent_runs_only_proven_calls_and_the_next_request_is_legal(
        emus: dict[str, VendorEmulator], profile: str, scenario: str) -> None:
    emu = emus[profile]
    emu.clear()
    emu.queue("openai-chat", scenario)  # then "text": the loop ends after one round of tools
    recorder = Recorder()
    agent = create_agent(chat_model(emu), tools=recording_tools(recorder),
                         middleware=[ToolstreamMiddleware()])
    messages: list[Any] = []
    for mode, data in agent.stream({"messages": [HumanMessage("go")]},
                                   stream_mode=["messages", "values"]):
        if mode == "values":
            messages = data["messages"]
    assert sorted_calls(recorder.calls) == sorted_calls(proven(scenario))
    assert_history_paired(messages)
    # the follow-up was sent after any tool-call turn, and accepted (else: 400, raised)
    expect = SCENARIOS[scenario].expect
    # a server that calls a cut turn finished (vLLM's "tool_calls" after the cut) leaves a
    # malformed call: LangChain's invalid tool call, no retry (decision 0112)
    last = next(m for m in reversed(messages) if isinstance(m, AIMessage))
    view = RecordView.read(last.response_metadata.get("toolstream"))
    ended = view is not None and bool(view.malformed) and set(view.malformed) == set(view.rejected)
    assert len(emu.requests) == (2 if (expect.committed or expect.rejected) and not ended else 1)
    assert isinstance(messages[-1], AIMessage) and (messages[-1].text or ended)


@pytest.mark.parametrize(("profile", "scenario"), CASES, ids=IDS)
@pytest.mark.parametrize("mode", ["astream", "ainvoke"])
@pytest.mark.asyncio(loop_scope="session")
async def test_wrapped_model_hands_out_only_committed_calls(
        emus: dict[str, VendorEmulator], profile: str, scenario: str, mode: str) -> None:
    emu = emus[profile]
    emu.clear()
    emu.queue("openai-chat", scenario)
    gated = with_toolstream(chat_model(emu), on_stream_error="pair").bind_tools(
        recording_tools(Recorder()))
    if mode == "ainvoke":
        message: Any = await gated.ainvoke([HumanMessage("go")])
    else:
        message = None
        async for chunk in gated.astream([HumanMessage("go")]):
            message = chunk if message is None else message + chunk
    assert message is not None
    got = [(tc["name"], {**tc["args"]} | ({"content": tc["args"].get("content", "")}
                                           if tc["name"] == "write_file" else {}))
           for tc in message.tool_calls]
    assert sorted_calls(got) == sorted_calls(proven(scenario))
    if mode == "ainvoke":  # the finished message names each rejected call (streamed chunks
        # carry only what is safe to show, so the aggregate of astream has no rejected calls)
        rejected = SCENARIOS[scenario].expect.rejected
        assert [c["name"] for c in message.invalid_tool_calls] == list(rejected)


OBJECT_ARGUMENTS = "litellm-ollama"  # the profile whose tool-call arguments are JSON objects


@pytest.mark.parametrize("scenario", ["single_call", "parallel_calls"])
@pytest.mark.asyncio(loop_scope="session")
async def test_plain_langchain_breaks_on_object_arguments_that_the_gate_commits(
        emus: dict[str, VendorEmulator], scenario: str) -> None:
    """Why the tap hands LangChain a copy: plain ``ChatOpenAI`` cannot even build the chunk.

    The gated run of the same stream commits the scenario's calls (the tests above, on this
    profile); the user's model object stays the plain one, so it still fails the same way.
    """
    emu = emus[OBJECT_ARGUMENTS]
    emu.clear()
    emu.queue("openai-chat", scenario)
    plain = chat_model(emu)
    with pytest.raises(ValidationError, match="tool_call_chunks"):
        async for _ in plain.bind_tools(recording_tools(Recorder())).astream([HumanMessage("go")]):
            pass
    emu.queue("openai-chat", scenario)
    gated = with_toolstream(plain).bind_tools(recording_tools(Recorder()))
    message = await gated.ainvoke([HumanMessage("go")])
    assert sorted_calls([(tc["name"], {"content": "", **tc["args"]} if tc["name"] == "write_file"
                          else tc["args"]) for tc in message.tool_calls]) == sorted_calls(proven(scenario))
