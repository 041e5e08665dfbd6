"""Cohere v2 chat wire format (``POST /v2/chat``).

Streamed (``"stream": true``) as ``event: <type>`` + ``data:`` frames:
``message-start``, an optional ``tool-plan-delta`` run, per call
``tool-call-start`` (id, name, empty arguments) / ``tool-call-delta`` (argument
text fragments) / ``tool-call-end`` by ``index``, text as ``content-start`` /
``content-delta`` / ``content-end``, then ``message-end`` with the
``finish_reason`` (``TOOL_CALL``, ``COMPLETE``, ``MAX_TOKENS``, ``ERROR``) and the
usage. The fields follow the recorded Cohere streams in ``tests/streams/cohere``.
An error mid-stream is a ``message-end`` whose ``finish_reason`` is ``ERROR``
(with the ``error`` text); non-streamed, the answer is one ``chat`` JSON object.
"""

from __future__ import annotations

import json
import random
from typing import Any

from ._scenarios import CallSpec, Script, split_text
from ._wire_common import Rendered, Reply, sse, unanswered_calls, wire_calls

API = "cohere"

_ERROR_TEXT = "internal server error, this has been reported to our developers"
_PLAN = "I will call the tools the request needs."
_LOWER = "abcdefghijklmnopqrstuvwxyz0123456789"


def _id(rng: random.Random, name: str) -> str:
    """Cohere's call ids: the tool name, ``_``, twelve lower-case characters."""
    return name + "_" + "".join(rng.choice(_LOWER) for _ in range(12))


def _uuid(rng: random.Random) -> str:
    h = "".join(rng.choice("0123456789abcdef") for _ in range(32))
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _usage(body: dict[str, Any], output: int) -> dict[str, Any]:
    prompt = 20 + len(body.get("messages") or []) * 10
    return {"billed_units": {"input_tokens": prompt, "output_tokens": output},
            "tokens": {"input_tokens": prompt + 400, "output_tokens": output + 2}}


def _finish(script: Script) -> str:
    if script.ending == "length":
        return "MAX_TOKENS"
    if script.ending == "error":
        return "ERROR"
    return "TOOL_CALL" if script.calls else "COMPLETE"


def _frame(data: dict[str, Any]) -> bytes:
    return sse(data, str(data["type"]))


def _text_frames(text: str, rng: random.Random) -> list[bytes]:
    frames = [_frame({"type": "content-start", "index": 0, "delta": {
        "message": {"content": {"type": "text", "text": ""}}}})]
    for piece in split_text(text, rng, max_piece=8):
        frames.append(_frame({"type": "content-delta", "index": 0, "delta": {
            "message": {"content": {"text": piece}}}}))
    frames.append(_frame({"type": "content-end", "index": 0}))
    return frames


def _call_frames(index: int, call: tuple[str, CallSpec, str],
                 rng: random.Random) -> list[bytes]:
    call_id, spec, args = call
    frames = [_frame({"type": "tool-call-start", "index": index, "delta": {"message": {
        "tool_calls": {"id": call_id, "type": "function",
                       "function": {"name": spec.name, "arguments": ""}}}}})]
    for piece in split_text(args, rng):
        frames.append(_frame({"type": "tool-call-delta", "index": index, "delta": {
            "message": {"tool_calls": {"function": {"arguments": piece}}}}}))
    return frames


def render_stream(script: Script, rng: random.Random, model: str, body: dict[str, Any]) -> Rendered:
    """The streamed answer for ``script``."""
    frames = [_frame({"id": _uuid(rng), "type": "message-start", "delta": {"message": {
        "role": "assistant", "content": [], "tool_plan": "", "tool_calls": [],
        "citations": []}}})]
    calls = wire_calls(script, lambda call: _id(rng, call.name))
    if script.text is not None:
        frames += _text_frames(script.text, rng)
    elif calls:
        for piece in split_text(_PLAN, rng, max_piece=6):
            frames.append(_frame({"type": "tool-plan-delta",
                                  "delta": {"message": {"tool_plan": piece}}}))
    for index, call in enumerate(calls):
        frames += _call_frames(index, call, rng)
        last = index == len(calls) - 1
        if last and script.ending == "drop":
            return Rendered(frames, drop=True)
        if not (last and script.ending in ("length", "error")):
            frames.append(_frame({"type": "tool-call-end", "index": index}))
    if script.ending == "no_finish":
        return Rendered(frames)
    delta: dict[str, Any] = {"finish_reason": _finish(script)}
    if script.ending == "error":
        delta["error"] = _ERROR_TEXT
    output = sum(len(c[2]) for c in calls) // 4 + 5
    delta["usage"] = _usage(body, output)
    frames.append(_frame({"type": "message-end", "delta": delta}))
    return Rendered(frames)


def render_complete(script: Script, rng: random.Random, model: str, body: dict[str, Any]) -> Reply:
    """The non-streamed ``chat`` answer; a call cut by the token limit is left out."""
    if script.ending == "drop":
        return Reply(200, None)
    if script.ending == "error":
        return Reply(500, {"id": _uuid(rng), "message": _ERROR_TEXT})
    answer_id = _uuid(rng)
    calls = wire_calls(script, lambda call: _id(rng, call.name))
    message: dict[str, Any] = {"role": "assistant"}
    if script.text is not None:
        message["content"] = [{"type": "text", "text": script.text}]
    if calls and script.ending != "length":
        message["tool_plan"] = _PLAN
        message["tool_calls"] = [{"id": i, "type": "function",
                                  "function": {"name": c.name, "arguments": a}}
                                 for i, c, a in calls]
    output = sum(len(c[2]) for c in calls) // 4 + 5
    return Reply(200, {"id": answer_id, "message": message, "finish_reason": _finish(script),
                       "usage": _usage(body, output)})


def check_history(body: dict[str, Any]) -> Reply | None:
    """Cohere's 400 when an assistant's tool calls are not each answered by a tool message."""
    missing = unanswered_calls(body.get("messages"))
    if missing is None:
        return None
    index, ids = missing
    return Reply(400, {"id": "toolstream-emulator", "message": (
        f"invalid request: messages[{index}]: expected a tool message for each tool call of "
        f"the previous assistant message, missing tool_call_id {json.dumps(ids)}")})
