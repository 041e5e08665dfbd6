"""The idle timeout, for any stream: ``IdleGuard`` (sync) and ``AsyncIdleGuard`` (async).

One implementation for every reader of a vendor stream: the core's drivers (``_drive``) and the
shims, which read SDK streams through their frameworks (``toolstream_core.integration``). An
idle gap longer than ``assemble_idle_timeout_s`` ends the iteration with
``StreamIdleTimeout`` (a ``TimeoutError``), and the source is closed; the caller then fails the
open calls ``idle_timeout``. Raising rather than ending quietly is deliberate: a caller that
does not look for it treats it as a dropped transport (``transport_complete=False``), which
never commits an open call; a quiet end could, in lenient mode.

A blocked socket read cannot be interrupted from Python, so the sync guard reads on a helper
thread and waits on a queue: the caller is released on time whatever the read does. The
reader never reads again once the guard is closed, and the guard cuts the connection under
the read (``abort_transport``: the socket's ``shutdown``, the only call that wakes a read
blocked in another thread) so the thread and the connection end now rather than at the SDK's
read timeout. The async guard needs no thread: one timer per stream cancels a read that has
waited the timeout (each read only notes when it began), and the guard answers that cancel
itself (``Task.uncancel``) with ``StreamIdleTimeout``. Neither guard takes a lock or makes a
timer per item: an item costs about a microsecond (``benchmarks``: issue 39.5).

httpx style: ``_IdleGuardBase`` holds everything that is not I/O (the timeout, the verdict,
the state); the two guards are short loops of the same shape around it.
"""

from __future__ import annotations

import contextlib
import contextvars
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator, Mapping
from types import TracebackType
from typing import Any, Generic, TypeVar

__all__ = ["AsyncIdleGuard", "IdleGuard", "StreamIdleTimeout", "abort_transport"]

T = TypeVar("T")

_AHEAD = 1024  # items the sync reader may get ahead of its consumer
_POLL = 0.1  # how often a reader held up by a full hand-off looks whether the guard was closed
_ITEM, _END, _ERROR = "item", "end", "error"


class StreamIdleTimeout(TimeoutError):
    """The stream sent nothing for ``seconds``; it was closed. Open calls fail ``idle_timeout``."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no data for {seconds:g} s")
        self.seconds = seconds


def abort_transport(stream: Any) -> bool:
    """Cut the connection under ``stream`` so a read blocked on it, in any thread, returns now.

    ``stream``: an SDK stream with an httpx ``response`` (``openai``, ``anthropic``), or an
    httpx ``Response``. Reached through public API only: the response's ``network_stream``
    extension and its ``get_extra_info("socket")`` (httpcore's documented extensions). Closing
    the response is not enough: a socket closed in one thread does not wake a read blocked on
    it in another; ``shutdown`` does. Returns whether a socket was found; never raises.
    """
    response = getattr(stream, "response", stream)
    extensions = getattr(response, "extensions", None)
    if not isinstance(extensions, Mapping):
        return False
    get_extra_info = getattr(extensions.get("network_stream"), "get_extra_info", None)
    if not callable(get_extra_info):
        return False
    try:
        sock = get_extra_info("socket")
        if not isinstance(sock, socket.socket):
            return False
        sock.shutdown(socket.SHUT_RDWR)
    except (OSError, ValueError):  # already closed or shut down: nothing left to wake
        return False
    return True


class _IdleGuardBase(Generic[T]):
    """What the two guards share: the timeout, whether it fired, and how an end is decided."""

    def __init__(self, source: Any, idle_timeout_s: float, abort: Callable[[], object] | None) -> None:
        if isinstance(idle_timeout_s, bool) or not isinstance(idle_timeout_s, (int, float)) \
                or not idle_timeout_s > 0:
            raise ValueError(f"idle_timeout_s must be a positive number, got {idle_timeout_s!r}")
        self._source = source
        self.idle_timeout_s = float(idle_timeout_s)
        self.timed_out = False
        """Whether the iteration ended because the stream went idle."""
        self._abort = abort if abort is not None else lambda: abort_transport(source)
        self._done = False  # the iteration ended: every later step is a plain end

    def _expired(self) -> StreamIdleTimeout:
        """The idle verdict: remembered, and the exception that tells the caller."""
        self.timed_out = True
        self._done = True
        return StreamIdleTimeout(self.idle_timeout_s)

    def _abort_quietly(self) -> None:
        with contextlib.suppress(Exception):  # cutting a stalled stream is best effort
            self._abort()

    def __repr__(self) -> str:
        state = "timed out" if self.timed_out else "ended" if self._done else "open"
        return f"<{type(self).__name__} {self.idle_timeout_s:g} s, {state}>"


class IdleGuard(_IdleGuardBase[T], Iterator[T]):
    """Iterate ``source`` with an idle timeout; a gap over ``idle_timeout_s`` raises
    ``StreamIdleTimeout`` after closing the source.

    ``source`` is read on a helper thread, so the timeout holds while a socket read blocks.
    ``abort``: what cuts the connection under a blocked read (default: ``abort_transport`` of
    the source; a framework iterator over an SDK stream passes the SDK stream's). Exceptions
    from the source are raised here, in the caller's thread. Use it in a ``with`` block, or
    call ``close()``, so the reader stops when the caller stops early.
    """

    def __init__(self, source: Iterable[T], idle_timeout_s: float, *,
                 abort: Callable[[], object] | None = None) -> None:
        super().__init__(source, idle_timeout_s, abort)
        # The hand-off is a deque (an append and a popleft need no lock) and two events that
        # are set only for a side that waits (``_wanted``, ``_full``): a step that finds the
        # other side busy costs no lock, where a ``queue.Queue`` took two per item.
        self._items: deque[tuple[str, Any]] = deque()
        self._arrived = threading.Event()
        self._room = threading.Event()
        self._wanted = False  # the caller waits for an item (``_arrived`` will be set)
        self._full = False  # the reader waits for room (``_room`` will be set)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._reader: threading.Thread | None = None
        self._reading = False  # the reader thread holds the source
        self._closed = False  # the source was closed (once, by whichever thread last held it)

    def __iter__(self) -> IdleGuard[T]:
        return self

    def __next__(self) -> T:
        if self._done:
            raise StopIteration
        if self._reader is None:
            self._start()
        try:
            kind, value = self._items.popleft()
        except IndexError:
            kind, value = self._wait()
        if self._full:
            self._full = False
            self._room.set()
        if kind is _ITEM:
            return value  # type: ignore[no-any-return]
        self._done = True
        self.close()
        if kind is _ERROR:
            raise value
        raise StopIteration

    def _wait(self) -> tuple[str, Any]:
        """The next step when none is waiting: wait up to the idle timeout for the reader."""
        deadline = time.monotonic() + self.idle_timeout_s
        self._wanted = True  # before looking again: an item appended after this is announced
        try:
            while True:
                try:
                    return self._items.popleft()
                except IndexError:
                    pass
                left = deadline - time.monotonic()
                if left <= 0 or not self._arrived.wait(left):
                    self.close()
                    raise self._expired() from None
                self._arrived.clear()
        finally:
            self._wanted = False

    def close(self) -> None:
        """Stop reading and close the source (idempotent). A read still blocked is cut
        (``abort``); the reader thread then closes the source itself, never concurrently."""
        self._done = True
        self._room.set()  # a reader waiting for room sees the stop
        with self._lock:
            self._stop.set()
            reading = self._reading
            if not reading:
                self._close_source()
        if reading:
            self._abort_quietly()

    def __enter__(self) -> IdleGuard[T]:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def _start(self) -> None:
        with self._lock:
            if self._stop.is_set():
                return
            self._reading = True
        # The reader runs in a copy of the caller's context: a framework's generator read there
        # sees the context variables it would have seen in the caller's thread.
        context = contextvars.copy_context()
        self._reader = threading.Thread(target=context.run, args=(self._read,),
                                        name="toolstream-idle-guard", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        """The helper thread: read until the end, an error or ``close``; never once closed."""
        try:
            for item in self._source:
                if not self._put(_ITEM, item) or self._stop.is_set():
                    return
        except BaseException as exc:  # handed to the caller's thread, which decides
            self._put(_ERROR, exc)
        else:
            self._put(_END, None)
        finally:
            with self._lock:
                self._reading = False
                if self._stop.is_set():
                    self._close_source()

    def _put(self, kind: str, value: Any) -> bool:
        """Hand one step to the caller; ``False`` once the guard is closed (nobody listens).
        At most ``_AHEAD`` steps wait: then the reader waits for room (or the stop)."""
        items = self._items
        while len(items) >= _AHEAD:
            self._room.clear()
            self._full = True
            if len(items) >= _AHEAD:
                self._room.wait(_POLL)
            if self._stop.is_set():
                return False
        if self._stop.is_set():
            return False
        items.append((kind, value))
        if self._wanted:
            self._arrived.set()
        return True

    def _close_source(self) -> None:
        """Close the source once; the caller holds ``_lock``."""
        if self._closed:
            return
        self._closed = True
        close = getattr(self._source, "close", None)
        if callable(close):
            with contextlib.suppress(Exception):  # closing a stalled stream is best effort
                close()


class AsyncIdleGuard(_IdleGuardBase[T], AsyncIterator[T]):
    """``IdleGuard`` for an async ``source``: the timed-out ``__anext__`` is cancelled, the
    source closed (``aclose``, else ``close``), and ``StreamIdleTimeout`` raised. Use it in
    an ``async with`` block, or call ``aclose()``."""

    def __init__(self, source: AsyncIterable[T], idle_timeout_s: float, *,
                 abort: Callable[[], object] | None = None) -> None:
        super().__init__(source, idle_timeout_s, abort)
        self._iterator: AsyncIterator[T] | None = None
        self._closed = False
        # One timer for the whole stream (``_check``), not one per item: each read only notes
        # when it began (``_since``) and which task waits (``_task``, ``None`` between reads).
        self._timer: Any = None
        self._task: Any = None
        self._since = 0.0
        self._fired = False

    def __aiter__(self) -> AsyncIdleGuard[T]:
        return self

    async def __anext__(self) -> T:
        if self._done:
            raise StopAsyncIteration
        if self._iterator is None:
            self._iterator = self._source.__aiter__()
        if not _LAZY_TIMER:  # pragma: no cover - Python 3.10
            return await self._next_within()
        if self._timer is None:
            self._arm(time.monotonic() + self.idle_timeout_s)
        self._since = time.monotonic()
        self._task = _current_task()
        try:
            return await self._iterator.__anext__()
        except BaseException as exc:
            if self._fired and isinstance(exc, _cancelled()):
                self._task.uncancel()  # our own cancel, not the caller's: it is answered here
                await self._stalled()
            self._done = True
            await self.aclose()
            raise
        finally:
            self._task = None

    def _arm(self, when: float) -> None:
        import asyncio

        loop = asyncio.get_running_loop()
        self._timer = loop.call_at(loop.time() + (when - time.monotonic()), self._check)

    def _check(self) -> None:
        """The timer: cancel the waiting read if it has waited the idle timeout, else look
        again when it would have (or a timeout from now, with no read waiting)."""
        if self._done:
            return
        now = time.monotonic()
        task = self._task
        if task is not None and now - self._since >= self.idle_timeout_s:
            self._fired = True
            task.cancel()
            return
        self._arm((self._since if task is not None else now) + self.idle_timeout_s)

    async def _stalled(self) -> None:
        self._abort_quietly()  # for a source whose read a cancel cannot reach
        await self.aclose()
        raise self._expired() from None

    async def _next_within(self) -> T:  # pragma: no cover - Python 3.10
        assert self._iterator is not None
        try:
            return await _next_within(self._iterator, self.idle_timeout_s)
        except _Expired:
            await self._stalled()
            raise
        except BaseException:
            self._done = True
            await self.aclose()
            raise

    async def aclose(self) -> None:
        """Close the source (idempotent)."""
        self._done = True
        if self._timer is not None:
            self._timer.cancel()
        if self._closed:
            return
        self._closed = True
        import asyncio  # on first use, as the async driver is: a sync caller never pays for it

        for name in ("aclose", "close"):
            close = getattr(self._source, name, None)
            if callable(close):
                with contextlib.suppress(Exception):  # closing a stalled stream is best effort
                    result = close()
                    if asyncio.iscoroutine(result):
                        await result
                return

    async def __aenter__(self) -> AsyncIdleGuard[T]:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()


#: Python 3.11's ``Task.uncancel`` lets the guard answer its own cancel: one timer per stream.
_LAZY_TIMER = sys.version_info >= (3, 11)


def _current_task() -> Any:
    import asyncio

    return asyncio.current_task()


def _cancelled() -> type[BaseException]:
    import asyncio

    return asyncio.CancelledError


class _Expired(Exception):
    """Our own timeout fired (not a ``TimeoutError`` the source raised)."""


async def _next_within(iterator: AsyncIterator[T], timeout: float) -> T:
    import asyncio

    if sys.version_info >= (3, 11):
        scope = asyncio.timeout(timeout)
        try:
            async with scope:
                return await iterator.__anext__()
        except TimeoutError:
            if scope.expired():
                raise _Expired from None
            raise
    try:  # pragma: no cover - Python 3.10: a source's own asyncio.TimeoutError reads as idle
        return await asyncio.wait_for(iterator.__anext__(), timeout)
    except asyncio.TimeoutError:  # pragma: no cover
        raise _Expired from None
