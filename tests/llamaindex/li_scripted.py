"""A scripted OpenAI Chat Completions answer for inputs the emulator has no scenario for
(invalid JSON, schema violations): the vendor emulator streams exactly the given argument
fragments to the first request (``queue_body``) and answers the follow-ups itself, with text,
or, like OpenAI, with a 400 for a history holding an unanswered ``tool_call_id``."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from toolstream_core.testing import VendorEmulator

Call = tuple[str, str, list[str]]  # id, name, argument fragments


def _chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    body = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 0,
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(body)}\n\n"


def calls_body(calls: list[Call], finish: str = "tool_calls") -> bytes:
    """The SSE body streaming ``calls`` (each opened, then its fragments), then ``finish``."""
    frames = [_chunk({"role": "assistant", "content": None})]
    for index, (call_id, name, fragments) in enumerate(calls):
        frames.append(_chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                              "function": {"name": name, "arguments": ""}}]}))
        frames += [_chunk({"tool_calls": [{"index": index, "function": {"arguments": f}}]})
                   for f in fragments]
    return "".join([*frames, _chunk({}, finish), "data: [DONE]\n\n"]).encode()


@contextmanager
def scripted_chat(emulator: VendorEmulator, calls: list[Call],
                  finish: str = "tool_calls") -> Iterator[VendorEmulator]:
    """``emulator`` serving ``calls`` to its next chat request; its request log and
    :attr:`~VendorEmulator.statuses` start empty, and nothing queued outlives the block."""
    emulator.clear()
    emulator.queue_body("openai-chat", calls_body(calls, finish))
    try:
        yield emulator
    finally:
        emulator.clear()
