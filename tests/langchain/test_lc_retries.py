"""``max_retries`` bounds the gate's own consecutive all-rejected turns, whatever the ids."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from lc_util import Recorder, assert_history_paired, make_model, recording_tools
from toolstream_core.testing import VendorEmulator

from langchain_toolstream import ToolstreamMiddleware


@pytest.mark.parametrize("max_retries", [0, 2])
def test_retries_are_bounded_when_the_server_reuses_one_response_id(
        api: str, emu: VendorEmulator, max_retries: int) -> None:
    """Every attempt cut, every answer the same bytes (one response id, one message id, one
    call id): LangGraph replaces the AIMessage instead of adding one, so counting failed
    turns by message never grew and the agent ran to the recursion limit."""
    recorder = Recorder()
    for _ in range(30):
        emu.queue(api, "truncated_length")
    agent = create_agent(make_model(api, emu), tools=recording_tools(recorder),
                         middleware=[ToolstreamMiddleware(max_retries=max_retries)])
    messages = agent.invoke({"messages": [HumanMessage("go")]},
                            {"recursion_limit": 80})["messages"]
    assert len(emu.requests) == max_retries + 1
    assert recorder.calls == []
    assert_history_paired(messages)


def test_a_committed_turn_resets_the_count(api: str, emu: VendorEmulator) -> None:
    """Two failures, a success, two failures: each run of failures gets its own retries."""
    recorder = Recorder()
    emu.queue(api, "truncated_length", "truncated_length", "single_call",
              "truncated_length", "truncated_length", "text")
    agent = create_agent(make_model(api, emu), tools=recording_tools(recorder),
                         middleware=[ToolstreamMiddleware(max_retries=2)])
    messages = agent.invoke({"messages": [HumanMessage("go")]},
                            {"recursion_limit": 80})["messages"]
    assert len(emu.requests) == 6 and messages[-1].text
    assert [name for name, _ in recorder.calls] == ["write_file"]
