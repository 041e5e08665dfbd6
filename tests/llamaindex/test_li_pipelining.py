"""Pipelined execution in ``ToolstreamFunctionAgent`` (issue 26.2, DESIGN 4.10).

With ``execute_before_stream_end`` and ``get_weather`` allow-listed, the core commits each of
Anthropic's two parallel calls before the stream ends, and the agent starts the tool from the
step that is still reading the stream. The emulator holds the stream's last frame back until
a tool has started (``queue_held``, bounded by a timeout), so a tool that starts only after
the stream leaves the hold to its timeout. Real ``Anthropic`` LLM class over HTTP; the next
request is read from the emulator's log.
"""

from __future__ import annotations

import threading
from typing import Any

from li_helpers import THIRD_PARTY_WARNINGS, make_llm
from llama_index.core.tools import FunctionTool
from toolstream_core.testing import VendorEmulator

from llamaindex_toolstream import ToolstreamFunctionAgent

pytestmark = THIRD_PARTY_WARNINGS

CONFIG = {"execute_before_stream_end": True, "allow_pipelined_execute": ["get_weather"]}


class Timeline:
    """What happened, in order: tools starting, and each model call's stream ending."""

    def __init__(self, release: threading.Event) -> None:
        self.events: list[str] = []
        self.runs: list[str] = []
        self._release = release

    def tool(self) -> FunctionTool:
        async def get_weather(city: str) -> str:
            """Get the current weather for a city."""
            self.events.append("started get_weather")
            self.runs.append(city)
            self._release.set()  # the held stream may end now
            return f"sunny in {city}"
        return FunctionTool.from_defaults(async_fn=get_weather)

    def turn_ended(self, _turn: Any) -> None:
        self.events.append("stream ended")


async def run(emu: VendorEmulator, config: dict[str, Any], timeout: float = 10.0) -> tuple[Any, Timeline]:
    hold = emu.queue_held("anthropic", "parallel_calls", timeout=timeout)
    emu.queue("anthropic", "text")
    timeline = Timeline(hold.release)
    agent = ToolstreamFunctionAgent(tools=[timeline.tool()], llm=make_llm("anthropic", emu.base_url),
                                    config=config, on_turn=timeline.turn_ended)
    await agent.run(user_msg="weather?")
    return hold, timeline


async def test_an_allow_listed_tool_starts_before_the_stream_ends(emu: VendorEmulator) -> None:
    hold, timeline = await run(emu, CONFIG)
    assert hold.released is True  # a tool released the held stream, not the timeout
    assert timeline.events[0] == "started get_weather"
    assert timeline.events.index("stream ended") > 0
    assert len(timeline.runs) == 2  # each call ran once: call_tool did not run them again
    assert emu.statuses == [200, 200]
    body = emu.requests[1].body
    calls = [b["id"] for b in body["messages"][1]["content"] if b.get("type") == "tool_use"]
    results = [b for b in body["messages"][2]["content"] if b.get("type") == "tool_result"]
    assert [b["tool_use_id"] for b in results] == calls and len(calls) == 2
    assert all(not b.get("is_error") for b in results)


async def test_without_the_allow_list_the_tool_waits_for_the_end(emu: VendorEmulator) -> None:
    hold, timeline = await run(emu, {**CONFIG, "allow_pipelined_execute": []}, timeout=0.5)
    assert hold.released is False  # nothing started while the stream was held
    assert timeline.events[0] == "stream ended" and len(timeline.runs) == 2
