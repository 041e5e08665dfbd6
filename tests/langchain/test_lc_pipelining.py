"""Pipelined execution in ``create_agent`` + ``ToolstreamMiddleware`` (issue 26.2, DESIGN 4.10).

With ``execute_before_stream_end`` and ``get_weather`` allow-listed, the core commits each of
Anthropic's two parallel calls before the stream ends (the first when the next block starts,
the second at ``stop_reason: tool_use``), and the middleware starts the tool right then. The
emulator holds the stream's last frame back until a tool has started (``queue_held``, bounded
by a timeout): so a tool that starts only after the stream leaves the hold to its timeout,
and the recorded order shows it. Real ``ChatAnthropic`` over HTTP; the next request is read
from the emulator's log.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from lc_util import assert_history_paired, make_model, tool_messages
from toolstream_core.testing import VendorEmulator

from langchain_toolstream import ToolstreamMiddleware

CONFIG = {"execute_before_stream_end": True, "allow_pipelined_execute": ["get_weather"]}


class Timeline:
    """What happened, in order: tools starting, and each model call's stream ending."""

    def __init__(self, release: threading.Event) -> None:
        self.events: list[str] = []
        self._lock = threading.Lock()
        self._release = release

    def started(self, name: str) -> None:
        with self._lock:
            self.events.append(f"started {name}")
        self._release.set()  # the held stream may end now

    def turn_ended(self, _turn: Any) -> None:
        with self._lock:
            self.events.append("stream ended")


def weather_tools(timeline: Timeline, runs: list[str]) -> list[Any]:
    @tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        timeline.started("get_weather")
        runs.append(city)
        return f"sunny in {city}"

    @tool
    async def aget_weather(city: str) -> str:
        """Get the current weather for a city."""
        timeline.started("get_weather")
        runs.append(city)
        return f"sunny in {city}"

    aget_weather.name = "get_weather"
    return [get_weather, aget_weather]


def assert_pipelined(timeline: Timeline, runs: list[str], messages: list[Any],
                     emu: VendorEmulator, released: bool | None) -> None:
    assert released is True  # a tool released the held stream, not the timeout
    first_end = timeline.events.index("stream ended")
    assert timeline.events[0] == "started get_weather" and first_end > 0
    assert len(runs) == 2  # each call ran once: the tools node did not run them again
    answers = tool_messages(messages)
    assert [m.status for m in answers] == ["success", "success"]
    assert_history_paired(messages)
    assert emu.statuses == [200, 200]
    # the next request answers both calls, right after them, in their order
    body = emu.requests[1].body
    calls = [b["id"] for b in body["messages"][1]["content"] if b.get("type") == "tool_use"]
    results = [b["tool_use_id"] for b in body["messages"][2]["content"]
               if b.get("type") == "tool_result"]
    assert calls == results and len(calls) == 2


@pytest.mark.parametrize("asynchronous", [False, True], ids=["invoke", "ainvoke"])
async def test_an_allow_listed_tool_starts_before_the_stream_ends(emu: VendorEmulator,
                                                                  asynchronous: bool) -> None:
    hold = emu.queue_held("anthropic", "parallel_calls")
    emu.queue("anthropic", "text")
    timeline, runs = Timeline(hold.release), []
    sync_tool, async_tool = weather_tools(timeline, runs)
    agent = create_agent(make_model("anthropic", emu),
                         tools=[async_tool if asynchronous else sync_tool],
                         middleware=[ToolstreamMiddleware(config=CONFIG,
                                                          on_turn=timeline.turn_ended)])
    state = {"messages": [HumanMessage("weather?")]}
    result = await agent.ainvoke(state) if asynchronous else agent.invoke(state)
    assert_pipelined(timeline, runs, result["messages"], emu, hold.released)


def test_without_the_allow_list_the_tool_waits_for_the_end(emu: VendorEmulator) -> None:
    hold = emu.queue_held("anthropic", "parallel_calls", timeout=0.5)
    emu.queue("anthropic", "text")
    timeline, runs = Timeline(hold.release), []
    sync_tool, _ = weather_tools(timeline, runs)
    config = {**CONFIG, "allow_pipelined_execute": []}
    agent = create_agent(make_model("anthropic", emu), tools=[sync_tool],
                         middleware=[ToolstreamMiddleware(config=config,
                                                          on_turn=timeline.turn_ended)])
    agent.invoke({"messages": [HumanMessage("weather?")]})
    assert hold.released is False  # nothing started while the stream was held
    assert timeline.events[0] == "stream ended" and len(runs) == 2
