"""DESIGN §3 drivers and integration: the idle timeout for any stream (``IdleGuard`` /
``AsyncIdleGuard``), the one implementation the core's drivers and the shims share.

Real blocking sources: the openai SDK's sync and async streams reading from a local server that
sends the start of a stream and stalls (``stall_server``), and generators that block. No timing
claims: each test asserts that the iteration ended with ``StreamIdleTimeout``, that the source
was closed and that the reader stopped reading; ``GUARD_S`` only bounds a hung test.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import builders as b
import pytest
from stall_server import GUARD_S, StallServer
from toolstream_core._idle import AsyncIdleGuard, IdleGuard, abort_transport
from toolstream_core.integration import StreamIdleTimeout

CALLS = [b.Call(id="call_1", name="add", arguments='{"a":2,"b":3}', cuts=(3, 7))]
QUICK = 0.3


def _stalling_body() -> bytes:
    """The first events of an OpenAI chat stream: a call opened, arguments half sent."""
    events = b.openai_chat(CALLS, ending="none")[:3]
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode()


def _create(client: Any) -> Any:
    return client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}],
                                          stream=True)


# ============================================================================================
# IdleGuard (sync)
# ============================================================================================


def test_sync_guard_ends_a_stalled_sdk_stream_and_cuts_its_connection() -> None:
    openai = pytest.importorskip("openai")
    with StallServer(_stalling_body()) as server:
        stream = _create(openai.OpenAI(base_url=server.base_url + "/v1", api_key="test", max_retries=0))
        got: list[Any] = []
        with pytest.raises(StreamIdleTimeout) as caught, IdleGuard(stream, QUICK) as chunks:
            got.extend(chunks)
        assert caught.value.seconds == QUICK
        assert isinstance(caught.value, TimeoutError)
        assert chunks.timed_out is True
        assert len(got) == 3, "the chunks sent before the stall were delivered"
        assert server.cut.wait(GUARD_S), "the stalled connection was held open after the timeout"


def test_sync_guard_reads_nothing_after_the_timeout() -> None:
    """Today's bug: the driver's reader kept reading the stream after giving up on it."""
    release, closed = threading.Event(), threading.Event()
    pulled: list[int] = []

    def source() -> Iterator[int]:
        try:
            yield 1
            release.wait(GUARD_S)  # a read that blocks past the timeout
            for item in range(2, 100):
                pulled.append(item)
                yield item
        finally:
            closed.set()

    got: list[int] = []
    try:
        with pytest.raises(StreamIdleTimeout):
            got.extend(IdleGuard(source(), QUICK))
    finally:
        release.set()
    assert got == [1]
    assert closed.wait(GUARD_S), "the source was never closed"
    assert pulled == [2], "the read in flight may return; nothing after it is read"


def test_sync_guard_passes_the_items_and_the_end() -> None:
    closed = threading.Event()

    def source() -> Iterator[int]:
        try:
            yield from range(5)
        finally:
            closed.set()

    guard = IdleGuard(source(), QUICK)
    assert list(guard) == [0, 1, 2, 3, 4]
    assert guard.timed_out is False
    assert closed.is_set()
    assert list(guard) == []  # ended stays ended


@pytest.mark.parametrize("error", [ConnectionResetError("peer went away"), KeyboardInterrupt(), SystemExit(3)])
def test_sync_guard_raises_the_sources_exception_in_the_callers_thread(error: BaseException) -> None:
    raised_in: list[str] = []

    def source() -> Iterator[int]:
        yield 1
        raise error

    got: list[int] = []
    guard = IdleGuard(source(), QUICK)
    with pytest.raises(type(error)) as caught:
        try:
            got.extend(guard)
        except BaseException:
            raised_in.append(threading.current_thread().name)
            raise
    assert caught.value is error
    assert got == [1]
    assert raised_in == [threading.current_thread().name]
    assert guard.timed_out is False


def test_sync_guard_closed_early_stops_its_reader_and_closes_the_source() -> None:
    closed = threading.Event()

    def endless() -> Iterator[int]:
        try:
            n = 0
            while True:
                n += 1
                yield n
        finally:
            closed.set()

    with IdleGuard(endless(), QUICK) as guard:
        assert [next(guard) for _ in range(3)] == [1, 2, 3]
    assert closed.wait(GUARD_S), "the reader kept the source open after close()"
    with pytest.raises(StopIteration):
        next(guard)


def test_sync_guard_uses_the_given_abort_for_a_source_it_cannot_reach() -> None:
    """A framework's iterator over an SDK stream: the guard cannot see the socket, the caller
    names what cuts it (here: releasing the blocked read)."""
    release = threading.Event()
    aborted: list[bool] = []

    def framework_chunks() -> Iterator[str]:
        yield "a"
        release.wait(GUARD_S)
        yield "late"

    def abort() -> None:
        aborted.append(True)
        release.set()

    with pytest.raises(StreamIdleTimeout):
        list(IdleGuard(framework_chunks(), QUICK, abort=abort))
    assert aborted == [True]


@pytest.mark.parametrize("seconds", [0, -1, True, "2", None])
def test_guard_timeout_must_be_a_positive_number(seconds: Any) -> None:
    with pytest.raises(ValueError, match="idle_timeout_s"):
        IdleGuard([], seconds)
    with pytest.raises(ValueError, match="idle_timeout_s"):
        AsyncIdleGuard(_agen([]), seconds)


# ============================================================================================
# AsyncIdleGuard
# ============================================================================================


async def _agen(items: list[Any], *, stall: float | None = None, error: BaseException | None = None,
                closed: list[bool] | None = None) -> AsyncIterator[Any]:
    try:
        for item in items:
            await asyncio.sleep(0)
            yield item
        if stall is not None:
            await asyncio.sleep(stall)
            yield "late"
        if error is not None:
            raise error
    finally:
        if closed is not None:
            closed.append(True)


async def test_async_guard_ends_a_stalled_sdk_stream_and_cuts_its_connection() -> None:
    openai = pytest.importorskip("openai")
    with StallServer(_stalling_body()) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url + "/v1", api_key="test", max_retries=0)
        stream = await _create(client)
        got: list[Any] = []
        with pytest.raises(StreamIdleTimeout):
            async with AsyncIdleGuard(stream, QUICK) as chunks:
                async for chunk in chunks:
                    got.append(chunk)
        assert chunks.timed_out is True
        assert len(got) == 3
        assert await asyncio.to_thread(server.cut.wait, GUARD_S), "the connection was held open"


async def test_async_guard_ends_a_stalled_generator_and_closes_it() -> None:
    closed: list[bool] = []
    got: list[Any] = []
    guard = AsyncIdleGuard(_agen([1, 2], stall=GUARD_S, closed=closed), QUICK)
    with pytest.raises(StreamIdleTimeout):
        async for item in guard:
            got.append(item)
    assert got == [1, 2]
    assert closed == [True]
    assert guard.timed_out is True
    with pytest.raises(StopAsyncIteration):
        await guard.__anext__()


async def test_async_guard_passes_the_items_the_end_and_the_sources_errors() -> None:
    closed: list[bool] = []
    assert [i async for i in AsyncIdleGuard(_agen([1, 2, 3], closed=closed), QUICK)] == [1, 2, 3]
    assert closed == [True]
    error = ConnectionAbortedError("reset")
    with pytest.raises(ConnectionAbortedError):
        [i async for i in AsyncIdleGuard(_agen([1], error=error), QUICK)]


async def test_async_guard_never_reads_a_sources_own_timeout_as_idle() -> None:
    """A ``TimeoutError`` the source raises (an SDK's read timeout) is the source's error, not
    the guard's verdict: it passes through as it is."""
    error = TimeoutError("the SDK's own read timeout")
    guard = AsyncIdleGuard(_agen([1], error=error), GUARD_S)
    with pytest.raises(TimeoutError) as caught:
        [i async for i in guard]
    assert caught.value is error
    assert guard.timed_out is False


# ============================================================================================
# abort_transport
# ============================================================================================


def test_abort_transport_wakes_a_read_blocked_in_another_thread() -> None:
    openai = pytest.importorskip("openai")
    with StallServer(_stalling_body()) as server:
        stream = _create(openai.OpenAI(base_url=server.base_url + "/v1", api_key="test", max_retries=0))
        ended = threading.Event()
        outcome: list[BaseException | None] = []

        def read() -> None:
            try:
                for _ in stream:
                    pass
                outcome.append(None)
            except BaseException as exc:
                outcome.append(exc)
            ended.set()

        threading.Thread(target=read, daemon=True).start()
        assert server.served.wait(GUARD_S)
        assert abort_transport(stream) is True
        assert ended.wait(GUARD_S), "the blocked read never returned"
        assert outcome and outcome[0] is not None, "a cut connection is an error, not a clean end"
        assert server.cut.wait(GUARD_S)


@pytest.mark.parametrize("thing", [None, [1, 2], iter(()), object()])
def test_abort_transport_without_a_transport_does_nothing(thing: Any) -> None:
    assert abort_transport(thing) is False
