"""Amazon Bedrock Converse wire format (``POST /model/{modelId}/converse-stream``).

Streamed as binary AWS event-stream messages (``application/vnd.amazon.eventstream``),
one event a message, named by its ``:event-type`` header: ``messageStart``, per
tool call ``contentBlockStart`` (``start.toolUse`` with ``toolUseId`` and
``name``) / ``contentBlockDelta`` (``delta.toolUse.input``: argument text
fragments) / ``contentBlockStop``, text as ``contentBlockDelta`` ``delta.text``
with no start, then ``messageStop`` (``stopReason``: ``tool_use``, ``end_turn``,
``max_tokens``) and ``metadata`` (usage, latency). Like the recorded Bedrock
streams in ``tests/streams/bedrock-converse``, each payload carries a ``p``
padding field. A failure mid-stream is an exception message
(``:message-type exception``, ``:exception-type modelStreamErrorException``),
which botocore raises as ``EventStreamError``. ``POST /model/{modelId}/converse``
answers one JSON object; its errors name their type in ``x-amzn-ErrorType``.
"""

from __future__ import annotations

import random
from typing import Any

from ._eventstream import encode_event, encode_exception
from ._scenarios import Script, split_text
from ._wire_common import Rendered, Reply, wire_calls

API = "bedrock-converse"

#: The content type of a ConverseStream answer.
EVENTSTREAM = "application/vnd.amazon.eventstream"
_B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
_PAD = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
STREAM_ERROR = ("modelStreamErrorException",
                 "Model stream error: the model encountered an error while streaming.")
SERVER_ERROR = ("InternalServerException",
                 "The server encountered an internal error while processing the request.")


def _tool_use_id(rng: random.Random) -> str:
    return "tooluse_" + "".join(rng.choice(_B64URL) for _ in range(22))


def _stop_reason(script: Script) -> str:
    if script.ending == "length":
        return "max_tokens"
    return "tool_use" if script.calls else "end_turn"


def _usage(body: dict[str, Any], output: int) -> dict[str, int]:
    prompt = 20 + len(body.get("messages") or []) * 10
    return {"inputTokens": prompt, "outputTokens": output, "totalTokens": prompt + output}


class PaddedEvents:
    """Event-stream frames with the ``p`` padding the service adds to each payload (its length
    drawn from the RNG): Converse's events and InvokeModel's chunks alike."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.frames: list[bytes] = []

    def add(self, kind: str, data: dict[str, Any]) -> None:
        pad = _PAD[: self.rng.randint(1, len(_PAD))]
        self.frames.append(encode_event(kind, {**data, "p": pad}))


def render_stream(script: Script, rng: random.Random, model: str, body: dict[str, Any]) -> Rendered:
    """The streamed answer for ``script`` (event-stream messages)."""
    ev = PaddedEvents(rng)
    ev.add("messageStart", {"role": "assistant"})
    index = 0
    if script.text is not None:
        for piece in split_text(script.text, rng, max_piece=8):
            ev.add("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": piece}})
        ev.add("contentBlockStop", {"contentBlockIndex": 0})
        index = 1
    calls = wire_calls(script, lambda _call: _tool_use_id(rng))
    for n, (use_id, call, args) in enumerate(calls):
        ev.add("contentBlockStart", {"contentBlockIndex": index, "start": {
            "toolUse": {"toolUseId": use_id, "name": call.name}}})
        for piece in split_text(args, rng):
            ev.add("contentBlockDelta", {"contentBlockIndex": index,
                                         "delta": {"toolUse": {"input": piece}}})
        if n == len(calls) - 1 and script.ending == "drop":
            return Rendered(ev.frames, drop=True, content_type=EVENTSTREAM)
        if n == len(calls) - 1 and script.ending == "error":
            ev.frames.append(encode_exception(*STREAM_ERROR))
            return Rendered(ev.frames, content_type=EVENTSTREAM)
        ev.add("contentBlockStop", {"contentBlockIndex": index})
        index += 1
    if script.ending != "no_finish":
        ev.add("messageStop", {"stopReason": _stop_reason(script)})
        output = sum(len(c[2]) for c in calls) // 4 + 5
        ev.add("metadata", {"usage": _usage(body, output), "metrics": {"latencyMs": 321}})
    return Rendered(ev.frames, content_type=EVENTSTREAM)


def render_complete(script: Script, rng: random.Random, model: str, body: dict[str, Any]) -> Reply:
    """The non-streamed ``Converse`` answer; a call cut by the token limit is left out."""
    if script.ending == "drop":
        return Reply(200, None)
    if script.ending == "error":
        return error_reply(500, *SERVER_ERROR)
    content: list[dict[str, Any]] = []
    if script.text is not None:
        content.append({"text": script.text})
    calls = wire_calls(script, lambda _call: _tool_use_id(rng))
    if script.ending != "length":
        for use_id, call, _args in calls:
            content.append({"toolUse": {"toolUseId": use_id, "name": call.name,
                                        "input": call.arguments}})
    output = sum(len(c[2]) for c in calls) // 4 + 5
    return Reply(200, {"output": {"message": {"role": "assistant", "content": content}},
                       "stopReason": _stop_reason(script), "usage": _usage(body, output),
                       "metrics": {"latencyMs": 321}})


def _blocks(message: Any, kind: str, key: str) -> list[Any]:
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return []
    return [b[kind].get(key) for b in content
            if isinstance(b, dict) and isinstance(b.get(kind), dict)]


def check_history(body: dict[str, Any]) -> Reply | None:
    """Bedrock's ValidationException when toolUse blocks lack toolResult blocks right after."""
    messages = body.get("messages")
    if not isinstance(messages, list):
        return None
    for i, msg in enumerate(messages):
        uses = _blocks(msg, "toolUse", "toolUseId")
        if not uses:
            continue
        nxt = messages[i + 1] if i + 1 < len(messages) else None
        answered = set(_blocks(nxt, "toolResult", "toolUseId"))
        missing = [u for u in uses if u not in answered]
        if missing:
            return error_reply(400, "ValidationException",
                          f"Expected toolResult blocks at messages.{i + 1}.content for the "
                          f"following Ids: {', '.join(map(str, missing))}")
    return None


def error_reply(status: int, kind: str, message: str) -> Reply:
    """A Bedrock error answer: ``x-amzn-ErrorType`` names the exception."""
    return Reply(status, {"message": message}, headers={"x-amzn-ErrorType": f"{kind}:http://"
                                                        "internal.amazon.com/coral/com.amazon."
                                                        "bedrock/"})
