"""DESIGN §3 ``assemble`` / ``aassemble``: drive a stream to the end and always return the Turn.

Plain iterators of wire dicts cover the edge cases (an exception from the stream, an idle gap,
task cancellation); the real vendor SDK clients, talking HTTP to the vendor emulator replaying
built streams as SSE (``queue_body``), show the drivers take the SDKs' own stream objects,
including a connection the server drops mid-body.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import builders as b
import pytest
from stall_server import GUARD_S, StallServer
from toolstream_core import (
    ArgumentsDelta,
    AssembleConfig,
    CallOpened,
    CallRejected,
    CallState,
    Reason,
    aassemble,
    assemble,
)
from toolstream_core.integration import StreamIdleTimeout

ADD = '{"a":2,"b":3}'
CALLS = [
    b.Call(id="call_1", name="add", arguments=ADD, cuts=(3, 7)),
    b.Call(id="call_2", name="add", arguments='{"a":1,"b":1}', cuts=(4,)),
]
QUICK = AssembleConfig(assemble_idle_timeout_s=0.3)


def chat_events(ending: str = "finish") -> list[dict[str, Any]]:
    return b.openai_chat(CALLS, ending=ending)  # type: ignore[arg-type]


def summary(turn: Any) -> list[tuple[str | None, CallState, Reason | None]]:
    return [(c.id, c.state, c.reason) for c in turn.calls]


COMMITTED = [("call_1", CallState.committed, None), ("call_2", CallState.committed, None)]


# ============================================================================================
# assemble (sync)
# ============================================================================================


def test_assemble_normal_end_from_dicts_and_sdk_objects() -> None:
    turn = assemble(iter(chat_events()))
    assert summary(turn) == COMMITTED
    assert (turn.complete, turn.error, turn.provider) == (True, None, "openai-chat")
    for provider in b.PROVIDERS:
        events = b.build(provider, CALLS, **({"with_ids": True} if provider == "gemini" else {}))
        turn = assemble(b.to_sdk(provider, events))
        assert summary(turn) == COMMITTED, provider


def test_assemble_passes_its_keywords_to_the_assembler() -> None:
    seen: list[Any] = []
    turn = assemble(iter(chat_events()), provider="openai-chat", tools={"sub": None},
                    config=AssembleConfig(finalize_order="arrival"), on_event=seen.append)
    assert [c.reason for c in turn.calls] == [Reason.unknown_tool, Reason.unknown_tool]
    assert any(isinstance(e, CallOpened) for e in seen)


def test_both_drivers_take_the_run_budget() -> None:
    expected = [("call_1", CallState.committed, None), ("call_2", CallState.failed, Reason.run_budget_exceeded)]
    turn = assemble(iter(chat_events()), run_budget=1)
    assert (summary(turn), turn.run_budget_left) == (expected, 0)
    turn = asyncio.run(aassemble(_agen(chat_events()), run_budget=1))
    assert (summary(turn), turn.run_budget_left) == (expected, 0)


def _raising(events: list[Any], error: BaseException, after: int) -> Iterator[Any]:
    yield from events[:after]
    raise error


@pytest.mark.parametrize("ending_included", [False, True])
def test_assemble_exception_from_the_stream_is_kept_not_raised(ending_included: bool) -> None:
    events = chat_events()
    error = ConnectionResetError("peer went away")
    turn = assemble(_raising(events, error, len(events) if ending_included else 4))
    assert turn.error is error
    assert turn.complete is False
    assert turn.calls and all(c.state is CallState.failed and c.reason is Reason.stream_truncated
                              for c in turn.calls)
    assert len(turn.error_results()) == len(turn.calls)


def test_assemble_idle_timeout_fails_open_calls() -> None:
    release = threading.Event()

    def stalls() -> Iterator[Any]:
        yield from chat_events("none")[:4]
        release.wait(30)  # a socket read that never returns (until the test ends)

    try:
        started = time.monotonic()
        turn = assemble(stalls(), config=QUICK)
        waited = time.monotonic() - started
    finally:
        release.set()
    assert summary(turn)[0] == ("call_1", CallState.failed, Reason.idle_timeout)
    assert all(c.reason is Reason.idle_timeout for c in turn.calls)
    assert turn.complete is False
    assert waited < 25, "the driver waited for the stalled read instead of timing out"


def test_assemble_idle_before_any_event() -> None:
    release = threading.Event()

    def silent() -> Iterator[Any]:
        release.wait(30)
        yield from ()

    try:
        turn = assemble(silent(), config=QUICK, provider="anthropic")
    finally:
        release.set()
    assert (turn.calls, turn.complete) == ((), False)


def test_assemble_base_exception_cancels_and_propagates() -> None:
    seen: list[Any] = []
    with pytest.raises(KeyboardInterrupt):
        assemble(_raising(chat_events(), KeyboardInterrupt(), 4), on_event=seen.append)
    rejected = [e.call for e in seen if isinstance(e, CallRejected)]
    assert rejected and all(c.state is CallState.cancelled for c in rejected)


# ============================================================================================
# aassemble (async)
# ============================================================================================


async def _agen(events: list[Any], *, error: BaseException | None = None, stall: float | None = None,
                after: int | None = None) -> AsyncIterator[Any]:
    cut = len(events) if after is None else after
    for event in events[:cut]:
        await asyncio.sleep(0)
        yield event
    if stall is not None:
        await asyncio.sleep(stall)
    if error is not None:
        raise error


async def test_aassemble_normal_end() -> None:
    turn = await aassemble(_agen(chat_events()))
    assert summary(turn) == COMMITTED
    assert turn.complete is True
    sdk = await aassemble(_agen(b.to_sdk("anthropic", b.anthropic(CALLS))))
    assert summary(sdk) == COMMITTED


async def test_aassemble_exception_from_the_stream_is_kept_not_raised() -> None:
    error = ConnectionAbortedError("reset")
    turn = await aassemble(_agen(chat_events(), error=error, after=5))
    assert turn.error is error
    assert turn.complete is False
    assert {c.reason for c in turn.calls} == {Reason.stream_truncated}


async def test_aassemble_idle_timeout_fails_open_calls() -> None:
    started = time.monotonic()
    turn = await aassemble(_agen(chat_events("none"), stall=30, after=5), config=QUICK)
    assert time.monotonic() - started < 25
    assert turn.calls and {c.reason for c in turn.calls} == {Reason.idle_timeout}
    assert turn.complete is False


async def test_aassemble_task_cancellation_cancels_calls_and_reraises() -> None:
    seen: list[Any] = []
    task = asyncio.create_task(aassemble(_agen(chat_events("none"), stall=30, after=5), on_event=seen.append))
    for _ in range(200):
        if any(isinstance(e, CallOpened) for e in seen):
            break
        await asyncio.sleep(0.01)
    assert any(isinstance(e, CallOpened) for e in seen), "the stream never started"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    rejected = [e.call for e in seen if isinstance(e, CallRejected)]
    assert rejected and all((c.state, c.reason) == (CallState.cancelled, Reason.cancelled) for c in rejected)


async def test_aassemble_passes_its_keywords() -> None:
    turn = await aassemble(_agen(chat_events()), provider="openai-chat", tools={"add": {"type": "object",
                                                                                      "required": ["c"]}})
    assert {c.reason for c in turn.calls} == {Reason.schema_violation}


# ============================================================================================
# The real SDK clients over HTTP (127.0.0.1 only)
# ============================================================================================


def _sse_body(provider: str, events: list[dict[str, Any]], *, done_marker: bool = False) -> bytes:
    """``events`` as the SSE body ``provider``'s server sends (named events where it names them)."""
    named = provider in ("openai-responses", "anthropic")
    body = "".join((f"event: {e['type']}\n" if named else "") + f"data: {json.dumps(e)}\n\n" for e in events)
    return body.encode() + (b"data: [DONE]\n\n" if done_marker else b"")


def _sdk_stream(provider: str, base: str) -> Any:
    if provider == "openai-chat":
        import openai

        return openai.OpenAI(base_url=base + "/v1", api_key="test", max_retries=0).chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hi"}], stream=True)
    if provider == "openai-responses":
        import openai

        return openai.OpenAI(base_url=base + "/v1", api_key="test", max_retries=0).responses.create(
            model="gpt-5", input="hi", stream=True)
    if provider == "anthropic":
        import anthropic

        return anthropic.Anthropic(base_url=base, api_key="test", max_retries=0).messages.create(
            model="claude-sonnet-4-5", max_tokens=100, messages=[{"role": "user", "content": "hi"}],
            stream=True)
    from google import genai
    from google.genai import types

    client = genai.Client(api_key="test", http_options=types.HttpOptions(base_url=base))

    def chunks() -> Iterator[Any]:  # holds the client: google-genai closes its HTTP client on GC
        yield from client.models.generate_content_stream(model="gemini-2.5-flash", contents="hi")

    return chunks()


@pytest.mark.parametrize("provider", b.PROVIDERS)
def test_assemble_over_the_real_sdk_client_stream(provider: str, emu: Any) -> None:
    events = b.build(provider, CALLS, **({"with_ids": True} if provider == "gemini" else {}))
    emu.queue_body(provider, _sse_body(provider, events, done_marker=provider == "openai-chat"))
    turn = assemble(_sdk_stream(provider, emu.base_url))
    assert emu.requests, "the SDK never reached the local server"
    assert turn.provider == provider
    assert summary(turn) == COMMITTED
    assert turn.complete is True


@pytest.mark.parametrize("provider", ["openai-chat", "anthropic"])
def test_assemble_over_a_connection_dropped_mid_body(provider: str, emu: Any) -> None:
    body = _sse_body(provider, b.build(provider, CALLS))
    emu.queue_body(provider, body[: len(body) // 2], drop=True)
    turn = assemble(_sdk_stream(provider, emu.base_url))
    assert turn.error is not None, "the SDK's transport error is kept in Turn.error"
    assert turn.complete is False
    assert turn.committed == ()
    assert len(turn.error_results()) == len(turn.calls)


# ============================================================================================
# Twins in lockstep: every end decides the turn, in both drivers
# ============================================================================================

INTERRUPTS = [KeyboardInterrupt(), SystemExit(2), GeneratorExit()]


def _cancelled_calls(seen: list[Any]) -> list[Any]:
    return [e.call for e in seen if isinstance(e, CallRejected) and e.call.state is CallState.cancelled]


def _turn_span_states() -> Any:
    """The states the one ``toolstream.turn`` span recorded (the span exists: it was closed)."""
    from otel_util import call_events, turn_spans

    return [[e["toolstream.tool_call.state"] for e in call_events(s)] for s in turn_spans(_EXPORTER[0])]


_EXPORTER: list[Any] = []


@pytest.fixture
def span_states() -> Any:
    from otel_util import span_exporter

    _EXPORTER[:] = [span_exporter()]
    return _turn_span_states


@pytest.mark.parametrize("interrupt", INTERRUPTS, ids=lambda e: type(e).__name__)
def test_assemble_finishes_the_turn_on_any_interrupt(interrupt: BaseException, span_states: Any) -> None:
    """Issue 26 item 7: the sync driver used to re-raise without ``finish()``: no Turn, no span."""
    seen: list[Any] = []
    with pytest.raises(type(interrupt)):
        assemble(_raising(chat_events(), interrupt, 4), on_event=seen.append)
    cancelled = _cancelled_calls(seen)
    assert [c.id for c in cancelled] == ["call_1"]
    assert span_states() == [["cancelled"]]


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt(), SystemExit(2)], ids=lambda e: type(e).__name__)
async def test_aassemble_finishes_the_turn_on_any_interrupt(interrupt: BaseException, span_states: Any) -> None:
    seen: list[Any] = []
    with pytest.raises(type(interrupt)):
        await aassemble(_agen(chat_events(), error=interrupt, after=4), on_event=seen.append)
    assert [c.id for c in _cancelled_calls(seen)] == ["call_1"]
    assert span_states() == [["cancelled"]]


def test_assemble_interrupt_in_the_callers_thread_stops_the_reader(span_states: Any) -> None:
    """Ctrl-C lands in the caller's thread (here: raised by the UI callback mid-stream): the
    turn is decided, the reader stops and the stream is closed."""
    closed = threading.Event()

    def source() -> Iterator[Any]:
        try:
            yield from chat_events()
        finally:
            closed.set()

    def on_event(event: Any) -> None:
        if isinstance(event, ArgumentsDelta):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        assemble(source(), on_event=on_event)
    assert closed.wait(GUARD_S), "the stream was left open"
    assert span_states() == [["cancelled"]]


def test_assemble_reader_stops_when_the_idle_timeout_fires() -> None:
    """Issue 26 item 7: the pump thread kept reading the stream after the idle timeout."""
    release, closed = threading.Event(), threading.Event()
    pulled: list[Any] = []
    events = chat_events()

    def stalls() -> Iterator[Any]:
        try:
            yield from events[:4]
            release.wait(GUARD_S)
            for event in events[4:]:
                pulled.append(event)
                yield event
        finally:
            closed.set()

    try:
        turn = assemble(stalls(), config=QUICK)
    finally:
        release.set()
    assert {c.reason for c in turn.calls} == {Reason.idle_timeout}
    assert isinstance(turn.error, StreamIdleTimeout)
    assert closed.wait(GUARD_S), "the stream was never closed"
    assert len(pulled) <= 1, f"read {len(pulled)} events after giving up on the stream"


def test_assemble_idle_timeout_over_a_stalled_sdk_stream_cuts_the_connection() -> None:
    openai = pytest.importorskip("openai")
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in chat_events("none")[:3]).encode()
    with StallServer(body) as server:
        stream = openai.OpenAI(base_url=server.base_url + "/v1", api_key="test", max_retries=0).chat.completions.create(
            model="gpt-4o", messages=[{"role": "user", "content": "hi"}], stream=True)
        turn = assemble(stream, config=QUICK)
        assert summary(turn) == [("call_1", CallState.failed, Reason.idle_timeout)]
        assert server.cut.wait(GUARD_S), "the stalled connection was held open"


def _sync_source(events: list[Any], kind: str, release: threading.Event) -> Iterator[Any]:
    yield from events[:4] if kind != "end" else events
    if kind == "error":
        raise ConnectionResetError("peer went away")
    if kind == "idle":
        release.wait(GUARD_S)


def _async_source(events: list[Any], kind: str) -> AsyncIterator[Any]:
    if kind == "end":
        return _agen(events)
    if kind == "error":
        return _agen(events, error=ConnectionResetError("peer went away"), after=4)
    return _agen(events, stall=GUARD_S, after=4)


@pytest.mark.parametrize("ending", ["finish", "none", "truncated"])
@pytest.mark.parametrize("kind", ["end", "error", "idle"])
async def test_the_twins_decide_the_same_turn(kind: str, ending: str) -> None:
    events = chat_events(ending)
    release = threading.Event()
    try:
        sync_turn = assemble(_sync_source(events, kind, release), config=QUICK)
    finally:
        release.set()
    async_turn = await aassemble(_async_source(events, kind), config=QUICK)
    assert summary(sync_turn) == summary(async_turn)
    assert (sync_turn.complete, type(sync_turn.error)) == (async_turn.complete, type(async_turn.error))
    assert [r.content for r in sync_turn.error_results()] == [r.content for r in async_turn.error_results()]
    if kind == "idle":
        assert {c.reason for c in sync_turn.calls} == {Reason.idle_timeout}
