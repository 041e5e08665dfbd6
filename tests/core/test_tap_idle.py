"""``assemble_idle_timeout_s`` through the SDK tap: the one place every shim's stream passes.

A ``GateSession`` is the tap's sink and carries the timeout (``idle_timeout_s``); the tap reads
the SDK's stream through the idle guard, so a stream that stalls after a call's first chunks
is cut: ``StreamIdleTimeout`` reaches whoever iterates the tapped stream (a framework), the
session answers the open call ``idle_timeout``, and the emulator sees the client close the
connection (the transport was really cut, not left to the SDK's read timeout). Real SDK
clients over HTTP; the clients' own timeout (``GUARD_S``) is the bound against a hang.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import anthropic
import openai
import pytest
from toolstream_core import AssembleConfig, Reason
from toolstream_core.integration import GateSession, StreamIdleTimeout, tap_client
from toolstream_core.testing import TOOLS, VendorEmulator, openai_chat_tools

GUARD_S = 20.0
"""The longest anything here waits: a bound against a hung test, never a speed claim."""
QUICK = AssembleConfig(assemble_idle_timeout_s=0.5)
APIS = ("openai-chat", "anthropic")
_ANTHROPIC_TOOLS = [{"name": n, "input_schema": s} for n, s in TOOLS.items()]


def _request(api: str, emu: VendorEmulator, session: Any, asynchronous: bool) -> Any:
    """The tapped streaming call's pending result (an awaitable when ``asynchronous``)."""
    if api == "openai-chat":
        cls = openai.AsyncOpenAI if asynchronous else openai.OpenAI
        client = tap_client(cls(base_url=emu.base_url + "/v1", api_key="t", timeout=GUARD_S,
                                max_retries=0), session, "openai")
        return client.chat.completions.create(model="m", stream=True, tools=openai_chat_tools(),
                                              messages=[{"role": "user", "content": "go"}])
    acls = anthropic.AsyncAnthropic if asynchronous else anthropic.Anthropic
    aclient = tap_client(acls(base_url=emu.base_url, api_key="t", timeout=GUARD_S, max_retries=0),
                         session, "anthropic")
    return aclient.messages.create(model="m", stream=True, max_tokens=1000, tools=_ANTHROPIC_TOOLS,
                                   messages=[{"role": "user", "content": "go"}])


def _judged(session: GateSession, raised: BaseException) -> None:
    assert isinstance(raised, StreamIdleTimeout)
    turn = session.end(raised)
    assert [c.reason for c in turn.calls] == [Reason.idle_timeout]
    assert turn.committed == ()
    assert not session.raises(raised) and session.had_calls  # "pair": answered, not raised


@pytest.mark.parametrize("api", APIS)
def test_a_stalled_sync_stream_is_cut_and_its_call_answered_idle_timeout(api: str) -> None:
    with VendorEmulator() as emu:
        stall = emu.queue_stall(api)
        session = GateSession(tools=TOOLS, config=QUICK)
        seen = []
        with pytest.raises(StreamIdleTimeout) as raised:
            for event in _request(api, emu, session, asynchronous=False):
                seen.append(event)  # the framework's side: the events before the stall
        assert seen and session.state == "error"
        _judged(session, raised.value)
        assert stall.closed.wait(GUARD_S)


@pytest.mark.parametrize("api", APIS)
async def test_a_stalled_async_stream_is_cut_and_its_call_answered_idle_timeout(api: str) -> None:
    with VendorEmulator() as emu:
        stall = emu.queue_stall(api)
        session = GateSession(tools=TOOLS, config=QUICK)
        seen = []
        with pytest.raises(StreamIdleTimeout) as raised:
            async for event in await _request(api, emu, session, asynchronous=True):
                seen.append(event)
        assert seen and session.state == "error"
        _judged(session, raised.value)
        assert stall.closed.wait(GUARD_S)


class _PlainSink:
    """A sink of the ``RawSink`` protocol alone: no ``idle_timeout_s``, so no guard."""

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.ended: list[BaseException | None] = []

    def raw_start(self, provider: str, request: Mapping[str, Any]) -> None:
        pass

    def raw_event(self, event: Any) -> None:
        self.events.append(event)

    def raw_end(self, error: BaseException | None) -> None:
        self.ended.append(error)


def test_a_sink_without_a_timeout_reads_the_stream_as_it_is() -> None:
    """The tap guards only for a sink that sets ``idle_timeout_s``; a plain sink's stream is
    read as before, to its end (here a normal one)."""
    with VendorEmulator() as emu:
        emu.queue("openai-chat", "single_call")
        sink = _PlainSink()
        stream = _request("openai-chat", emu, sink, asynchronous=False)
        assert len(list(stream)) == len(sink.events) > 0
        assert sink.ended == [None]


def test_the_session_carries_the_configured_timeout_and_the_verb_says_idle_timeout() -> None:
    session = GateSession(tools=TOOLS, config=QUICK)
    assert session.idle_timeout_s == 0.5
    session.observe({"choices": [{"index": 0, "delta": {"tool_calls": [
        {"index": 0, "id": "c1", "function": {"name": "get_time", "arguments": "{}"}}]}}]})
    turn = session.idle_timeout(2)
    assert [c.reason for c in turn.calls] == [Reason.idle_timeout]
    assert isinstance(session.error, StreamIdleTimeout) and session.error.seconds == 2
