"""A small asyncio HTTP/1.1 server: the emulator's transport, built for many clients.

One event loop on one daemon thread serves every connection (keep-alive, bodies
by ``Content-Length`` or chunked), so thousands of concurrent streams cost
sockets, not threads: a thread per connection spent more CPU switching threads
than answering once past about a thousand clients. The listen backlog is sized
for thousands too (the kernel caps it at ``net.core.somaxconn``).

The application is a plain function from a request to a :class:`Response`; it
runs on the loop thread, so it must be quick (the emulator's answers are
scripted). A response can end by resetting the connection after its bytes
(``abort``), which is how a dropped vendor stream looks to a client, or by holding the
connection open with nothing more to send until the client closes it (``held``), which is how
a stalled vendor stream looks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import struct
import threading
from collections.abc import Callable
from typing import NamedTuple

__all__ = ["BACKLOG", "AsyncHTTPServer", "Pause", "Request", "Response"]

logger = logging.getLogger(__name__)

#: Listen backlog (the standard library's servers default to 5).
BACKLOG = 4096
_MAX_HEAD = 1 << 20


class Request(NamedTuple):
    """One parsed request: method, target (path and query), lower-cased headers, body."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes


class Pause(NamedTuple):
    """A held point inside a response body: the bytes before ``at`` go out, then the server
    waits until ``release`` is set (by the test, from the client's side) or ``timeout``
    seconds pass, whichever comes first, and ``resumed(released)`` says which it was."""

    at: int
    release: threading.Event
    timeout: float
    resumed: Callable[[bool], None]


class Response(NamedTuple):
    """Bytes to send: status line and headers are built by the server.

    ``abort`` resets the connection after ``body`` (no clean end); ``chunked``
    means ``body`` is already chunk-encoded and carries its own terminator (or,
    with ``abort`` or ``held``, deliberately does not). Status 0 sends nothing at all: the
    connection is reset before any response. ``held``: after ``body`` the connection stays
    open and silent until the client closes (or shuts down) its end; ``held`` is then called
    (not when the server itself stops).
    """

    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes
    chunked: bool = False
    abort: bool = False
    held: Callable[[], None] | None = None
    pause: Pause | None = None
    """Send ``body[:pause.at]``, wait for ``pause`` (bounded), then the rest."""


Handler = Callable[[Request], Response]


class AsyncHTTPServer:
    """Serve ``handler`` on ``(host, port)`` from a background event loop."""

    def __init__(self, handler: Handler, host: str, port: int,
                 extra_headers: list[tuple[str, str]] | None = None) -> None:
        self._handler = handler
        self._extra = extra_headers or []
        self._loop = asyncio.new_event_loop()
        self._tasks: set[asyncio.Task[None]] = set()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="toolstream-emulator")
        self._thread.start()
        try:
            self._server = asyncio.run_coroutine_threadsafe(self._listen(host, port),
                                                            self._loop).result(timeout=10)
        except BaseException:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)
            raise
        self.address: tuple[str, int] = self._server.sockets[0].getsockname()[:2]

    async def _listen(self, host: str, port: int) -> asyncio.Server:
        return await asyncio.start_server(self._connection, host, port, backlog=BACKLOG,
                                          limit=_MAX_HEAD, reuse_address=True)

    def close(self) -> None:
        """Stop listening, end open connections, stop the loop (idempotent)."""
        if self._loop.is_closed():
            return

        async def shutdown() -> None:
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self._loop.close()

    # -- one connection -----------------------------------------------------------
    async def _connection(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                try:
                    response = self._handler(request)
                except Exception:
                    logger.exception("emulator: handler failed for %s", request.target)
                    response = Response(500, "Internal Server Error",
                                        [("Content-Type", "text/plain")], b"emulator error")
                if response.status == 0:
                    _reset(writer)
                    return
                if response.abort:
                    # everything must reach the client before the reset: wait for an
                    # empty write buffer, not just one below the high-water mark
                    writer.transport.set_write_buffer_limits(high=0)
                await self._write(writer, response)
                if response.abort:
                    _reset(writer)
                    return
                if response.held is not None:
                    await _hold(reader, response.held)
                    return
                if request.headers.get("connection", "").lower() == "close":
                    break
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError,
                ValueError):
            logger.debug("emulator: connection ended", exc_info=True)
        except asyncio.CancelledError:
            pass
        finally:
            if task is not None:
                self._tasks.discard(task)
            with contextlib.suppress(Exception):
                writer.close()

    async def _write(self, writer: asyncio.StreamWriter, response: Response) -> None:
        pause = response.pause
        if pause is None:
            writer.write(self._head(response) + response.body)
            await writer.drain()
            return
        writer.write(self._head(response) + response.body[:pause.at])
        await writer.drain()
        released = await asyncio.get_running_loop().run_in_executor(
            None, pause.release.wait, pause.timeout)
        pause.resumed(released)
        writer.write(response.body[pause.at:])
        await writer.drain()

    def _head(self, response: Response) -> bytes:
        lines = [f"HTTP/1.1 {response.status} {response.reason}"]
        lines += [f"{k}: {v}" for k, v in [*self._extra, *response.headers]]
        if not response.chunked:
            lines.append(f"Content-Length: {len(response.body)}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _read_request(reader: asyncio.StreamReader) -> Request | None:
    """The next request on a keep-alive connection (``None``: the client closed it)."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial.strip():
            raise
        return None
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    method, target, _version = request_line.split(" ", 2)
    headers: dict[str, str] = {}
    for line in header_lines:
        if ":" in line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        parts = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")
                break
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)
        body = b"".join(parts)
    else:
        length = int(headers.get("content-length") or 0)
        body = await reader.readexactly(length) if length else b""
    return Request(method, target, headers, body)


async def _hold(reader: asyncio.StreamReader, closed: Callable[[], None]) -> None:
    """Send nothing more; call ``closed`` once the client closes or shuts down its end.

    Whatever the client sends meanwhile is read and ignored: an HTTP/1.1 client sends no new
    request while a response is unfinished, so only its end of the connection ends the wait.
    """
    with contextlib.suppress(ConnectionError, OSError):
        while await reader.read(4096):
            pass
    closed()


def _reset(writer: asyncio.StreamWriter) -> None:
    """Cut the connection like a proxy does: FIN mid-message, then RST (``SO_LINGER`` 0).

    The FIN first is what clients report as the peer closing without a complete
    message (httpx ``RemoteProtocolError``), the way the threaded server did.
    """
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            sock.shutdown(socket.SHUT_RDWR)
    writer.transport.abort()
