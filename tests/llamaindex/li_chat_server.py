"""A scripted OpenAI Chat Completions server on 127.0.0.1 for inputs the emulator has no
scenario for (invalid JSON, schema violations). It streams exactly the given argument
fragments, answers follow-up requests with text, and, like OpenAI, answers a history with an
unanswered ``tool_call_id`` with a 400."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Call = tuple[str, str, list[str]]  # id, name, argument fragments


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    body = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 0,
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(body)}\n\n".encode()


def _unanswered(messages: list[dict[str, Any]]) -> list[str]:
    answered = {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
    return [c["id"] for m in messages for c in (m.get("tool_calls") or []) if c["id"] not in answered]


class ScriptedChat:
    """Serves ``calls`` (then ``finish``) to the first request and text to the others."""

    def __init__(self, calls: list[Call], finish: str = "tool_calls") -> None:
        self.calls = calls
        self.finish = finish
        self.requests: list[dict[str, Any]] = []
        self.statuses: list[int] = []
        self.base_url = ""

    def _frames(self, first: bool) -> list[bytes]:
        frames = [_chunk({"role": "assistant", "content": None})]
        if not first:
            return [*frames, _chunk({"content": "Understood."}), _chunk({}, "stop")]
        for index, (call_id, name, fragments) in enumerate(self.calls):
            frames.append(_chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                                  "function": {"name": name, "arguments": ""}}]}))
            frames += [_chunk({"tool_calls": [{"index": index, "function": {"arguments": f}}]})
                       for f in fragments]
        return [*frames, _chunk({}, self.finish)]

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        body = json.loads(handler.rfile.read(int(handler.headers["content-length"])))
        self.requests.append(body)
        missing = _unanswered(body.get("messages") or [])
        if missing:
            payload = json.dumps({"error": {
                "message": "An assistant message with 'tool_calls' must be followed by tool "
                           f"messages responding to each 'tool_call_id': {missing}",
                "type": "invalid_request_error", "param": "messages", "code": None}}).encode()
            self.statuses.append(400)
            handler.send_response(400)
            handler.send_header("content-type", "application/json")
            handler.send_header("content-length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload)
            return
        self.statuses.append(200)
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.end_headers()
        for frame in self._frames(first=len(self.requests) == 1):
            handler.wfile.write(frame)
        handler.wfile.write(b"data: [DONE]\n\n")
        handler.wfile.flush()
        handler.close_connection = True


@contextmanager
def scripted_chat(calls: list[Call], finish: str = "tool_calls") -> Iterator[ScriptedChat]:
    script = ScriptedChat(calls, finish)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            script.handle(self)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    script.base_url = f"http://127.0.0.1:{server.server_port}"
    try:
        yield script
    finally:
        server.shutdown()
        server.server_close()
