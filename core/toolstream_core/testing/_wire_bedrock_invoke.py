"""Amazon Bedrock InvokeModel wire for Anthropic models (``POST /model/{modelId}/invoke`` and
``POST /model/{modelId}/invoke-with-response-stream``).

The request body is Anthropic's Messages request (``anthropic_version:
"bedrock-2023-05-31"``; the model is in the path, and there is no ``stream`` key: the path
says it), so the emulator plays its ``anthropic`` scenarios here, paired and refused by
Anthropic's rules. Only the framing is Bedrock's:

- streamed, each Messages event is one AWS event-stream message (``:event-type chunk``)
  whose JSON payload is ``{"bytes": <base64 of the event's JSON>, "p": <padding>}``;
  botocore hands it out as ``{"chunk": {"bytes": b"..."}}``, and ``ChatBedrock`` reads
  ``json.loads(chunk["bytes"])``. The message id is ``msg_bdrk_...``, Anthropic's ``ping`` is
  not passed on, and ``message_stop`` carries ``amazon-bedrock-invocationMetrics`` (token
  counts, latencies). A failure mid-stream is a ``modelStreamErrorException`` message, which
  botocore raises as ``EventStreamError``;
- whole, the answer is Anthropic's message object as the body;
- errors (a history Anthropic would refuse, a failed answer) are Bedrock's:
  ``x-amzn-ErrorType`` names the exception, the body carries Anthropic's message.
"""

from __future__ import annotations

import base64
import random
from typing import Any

from . import _wire_anthropic
from ._eventstream import encode_exception
from ._scenarios import Script
from ._wire_bedrock import EVENTSTREAM, SERVER_ERROR, STREAM_ERROR, PaddedEvents, error_reply
from ._wire_common import Rendered, Reply, dumps

API = "anthropic"

#: The answer's content type, named in Bedrock's own header (the HTTP one is the framing).
_HEADERS = {"X-Amzn-Bedrock-Content-Type": "application/json"}


def _bedrock_id(message: dict[str, Any]) -> dict[str, Any]:
    """Anthropic's message object as Bedrock relays it: its id is ``msg_bdrk_...``."""
    return {**message, "id": "msg_bdrk_" + str(message.get("id", "")).removeprefix("msg_")}


def _metrics(events: list[dict[str, Any]]) -> dict[str, int]:
    """``amazon-bedrock-invocationMetrics``: the token counts the events reported."""
    start = events[0]["message"]["usage"]
    output = [e["usage"]["output_tokens"] for e in events if e["type"] == "message_delta"]
    return {"inputTokenCount": int(start["input_tokens"]),
            "outputTokenCount": int(output[-1] if output else 0),
            "invocationLatency": 321, "firstByteLatency": 123}


def render_stream(script: Script, rng: random.Random, model: str, body: dict[str, Any]) -> Rendered:
    """The streamed answer for ``script``: Anthropic's events in Bedrock's chunks."""
    events, broken = _wire_anthropic.stream_events(script, rng, model, body)
    events = [e for e in events if e["type"] != "ping"]
    events[0] = {**events[0], "message": _bedrock_id(events[0]["message"])}
    if events[-1]["type"] == "message_stop":
        events[-1] = {**events[-1], "amazon-bedrock-invocationMetrics": _metrics(events)}
    chunks = PaddedEvents(rng)
    for event in events:
        chunks.add("chunk", {"bytes": base64.b64encode(dumps(event).encode()).decode()})
    frames = chunks.frames
    if broken == "error":
        frames.append(encode_exception(*STREAM_ERROR))
    return Rendered(frames, drop=broken == "drop", headers=dict(_HEADERS),
                    content_type=EVENTSTREAM)


def render_complete(script: Script, rng: random.Random, model: str, body: dict[str, Any]) -> Reply:
    """The non-streamed ``InvokeModel`` answer: Anthropic's message object."""
    reply = _wire_anthropic.render_complete(script, rng, model, body)
    if reply.body is None:
        return reply
    if reply.status != 200:
        return error_reply(500, *SERVER_ERROR)
    return Reply(200, _bedrock_id(reply.body))


def check_history(body: dict[str, Any]) -> Reply | None:
    """Anthropic's refusal of the history, as Bedrock relays it: a ``ValidationException``."""
    refused = _wire_anthropic.check_history(body)
    if refused is None or refused.body is None:
        return refused
    error = refused.body.get("error")
    message = error.get("message") if isinstance(error, dict) else None
    return error_reply(refused.status, "ValidationException", str(message))

