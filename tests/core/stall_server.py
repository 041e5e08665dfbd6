"""A 127.0.0.1 HTTP server that sends the start of a streamed body and then stalls.

The real blocking source for idle-timeout tests: a vendor SDK's socket read that never returns
on its own. Each connection gets the response head and ``body`` (chunked, so the SDK reads it
as a live stream), then nothing until the client goes away or the test ends; ``cut`` is set
when the client closed or shut down its side, which is how a test sees that a reader stopped
reading rather than holding the connection until the SDK's own read timeout.
"""

from __future__ import annotations

import socket
import threading
from types import TracebackType

_HEAD = (b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
         b"Transfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n")
GUARD_S = 30.0
"""The longest anything here waits: a bound against a hung test, never a speed claim."""


class StallServer:
    """Serve ``body`` then stall, on every connection. Use as a context manager."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.cut = threading.Event()
        self.served = threading.Event()
        self._release = threading.Event()
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen()
        self._threads: list[threading.Thread] = []

    @property
    def base_url(self) -> str:
        host, port = self._sock.getsockname()
        return f"http://{host}:{port}"

    def __enter__(self) -> StallServer:
        thread = threading.Thread(target=self._accept, daemon=True)
        thread.start()
        self._threads.append(thread)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._release.set()
        self._sock.close()

    def _accept(self) -> None:
        while not self._release.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            thread.start()
            self._threads.append(thread)

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(GUARD_S)
            try:
                conn.recv(65536)  # the request (small: one read holds it)
                conn.sendall(_HEAD + b"%x\r\n%s\r\n" % (len(self.body), self.body))
            except OSError:
                return
            self.served.set()
            conn.settimeout(0.2)  # how often the stall looks whether the test has ended
            while not self._release.is_set():
                # Stall: the client waits for more. recv returns b"" (or fails) once the
                # client closes or shuts down its end.
                try:
                    if not conn.recv(1):
                        break
                except TimeoutError:
                    continue
                except OSError:
                    break
            if not self._release.is_set():
                self.cut.set()
