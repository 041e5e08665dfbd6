"""Serve one recorded vendor stream (the stream corpus) on 127.0.0.1 in its wire format, so
the real SDK clients and LlamaIndex classes read real vendor bytes. Every request gets the
same stream; the body ends cleanly after the last recorded event."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from streams_util import DONE, RawPayload, StreamCase


def sse_frames(case: StreamCase) -> list[bytes]:
    """The recorded events as SSE frames of ``case.api``."""
    frames: list[bytes] = []
    for event, name in zip(case.events, case.sse_events, strict=True):
        if event is DONE:
            frames.append(b"data: [DONE]\n\n")
            continue
        data = event.text if isinstance(event, RawPayload) else json.dumps(event)
        if case.api in ("anthropic", "openai-responses"):
            kind = name or (event.get("type") if isinstance(event, dict) else None)
            head = f"event: {kind}\n" if kind else ""
            frames.append(f"{head}data: {data}\n\n".encode())
        else:
            frames.append(f"data: {data}\n\n".encode())
    return frames


@contextmanager
def replay_server(case: StreamCase) -> Iterator[str]:
    """Yields the base URL of a server answering every POST with ``case``'s stream."""
    frames = sse_frames(case)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            for frame in frames:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()
