"""OpenAI Chat Completions wire format (``POST /v1/chat/completions``).

Streamed as ``data: {chat.completion.chunk}`` frames ending in ``data: [DONE]``;
the fields follow recorded OpenAI streams (role chunk first, id/type/name on
the opening tool_call delta, ``arguments`` fragments after, ``finish_reason``
on a final empty-delta chunk, an optional usage chunk with no choices).
"""

from __future__ import annotations

import random
from typing import Any

from ._scenarios import CallSpec, Script, split_text
from ._vendor_events import (
    ChatIdentity,
    chat_base,
    chat_call_deltas,
    chat_chunk,
    chat_role_delta,
    chat_tool_delta,
    chat_usage_chunk,
)
from ._wire_common import Rendered, Reply, entries, failed_reply, rand_id, sse

API = "openai-chat"

_ERROR_EVENT = {
    "error": {
        "message": "The server had an error while processing your request. Sorry about that!",
        "type": "server_error",
        "param": None,
        "code": None,
    }
}


def _usage(body: dict[str, Any], completion: int) -> dict[str, Any]:
    prompt = 20 + len(body.get("messages") or []) * 10
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


class _Chunks:
    """Builds chunks that share the completion id, model and fingerprint."""

    def __init__(self, rng: random.Random, model: str) -> None:
        self.base = chat_base(rand_id(rng, "chatcmpl-", 29), model, service_tier="default",
                              fingerprint="fp_toolstream")

    def delta(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        return sse(chat_chunk(self.base, delta, finish))

    def tool(self, tc: dict[str, Any]) -> bytes:
        return self.delta({"tool_calls": [tc]})

    def usage(self, usage: dict[str, Any]) -> bytes:
        return sse(chat_usage_chunk(self.base, usage))


# The scenarios that repeat a call's identity on its later deltas, and how.
_IDENTITY: dict[str, ChatIdentity] = {"id_name_repeated": "every", "empty_id_later": "blank"}


def render_stream(script: Script, rng: random.Random, model: str, body: dict[str, Any]) -> Rendered:
    """The streamed answer for ``script``."""
    ch = _Chunks(rng, model)
    ids = [rand_id(rng, "call_", 24) for _ in script.calls]
    frames: list[bytes] = []
    name = script.scenario
    if script.text is not None:
        frames.append(ch.delta(chat_role_delta("", refusal=True)))
        for piece in split_text(script.text, rng, max_piece=8):
            frames.append(ch.delta({"content": piece}))
    else:
        frames.append(ch.delta(chat_role_delta(refusal=True)))

    pieces = [split_text(c.args_text, rng) for c in script.calls]
    if script.cut_at is not None and script.calls:
        last = script.calls[-1]
        pieces[-1] = split_text(last.args_text[: script.cut_at], rng)

    if name == "parallel_calls":
        frames.extend(_interleaved(ch, script.calls, ids, pieces, rng))
    else:
        for i, (call, frags) in enumerate(zip(script.calls, pieces, strict=True)):
            frames.extend(_one_call(ch, name, i, ids[i], call, frags))
            if name == "resent_duplicate":
                frames.extend(_one_call(ch, name, i, ids[i], call, frags))

    completion = sum(len(c.args_text) for c in script.calls) // 4 + 5
    if script.ending == "error":
        frames.append(sse(_ERROR_EVENT))
        return Rendered(frames)
    if script.ending == "drop":
        return Rendered(frames, drop=True)
    if script.ending in ("stop", "length"):
        finish = "length" if script.ending == "length" else (
            "tool_calls" if script.calls else "stop"
        )
        frames.append(ch.delta({}, finish))
    if (body.get("stream_options") or {}).get("include_usage"):
        frames.append(ch.usage(_usage(body, completion)))
    frames.append(sse("[DONE]"))
    return Rendered(frames)


def _one_call(
    ch: _Chunks, name: str, i: int, call_id: str, call: CallSpec, frags: list[str]
) -> list[bytes]:
    index: int | None = None if name == "missing_index" else i
    identity = _IDENTITY.get(name, "first")
    return [ch.tool(tc) for tc in chat_call_deltas(index, call_id, call.name, frags, identity=identity)]


def _interleaved(
    ch: _Chunks,
    calls: tuple[CallSpec, ...],
    ids: list[str],
    pieces: list[list[str]],
    rng: random.Random,
) -> list[bytes]:
    """Open every call, then alternate fragments between indexes at random."""
    out = [ch.tool(chat_tool_delta(i, "", ident=(ids[i], c.name))) for i, c in enumerate(calls)]
    queues = [list(p) for p in pieces]
    while any(queues):
        i = rng.choice([k for k, q in enumerate(queues) if q])
        out.append(ch.tool(chat_tool_delta(i, queues[i].pop(0))))
    return out


def render_complete(script: Script, rng: random.Random, model: str, body: dict[str, Any]) -> Reply:
    """The non-streamed ``chat.completion`` for ``script``."""
    failed = failed_reply(script, Reply(500, _ERROR_EVENT))
    if failed is not None:
        return failed
    ch = _Chunks(rng, model)
    tool_calls = []
    for i, call in enumerate(script.calls):
        args = call.args_text
        if script.cut_at is not None and i == len(script.calls) - 1:
            args = args[: script.cut_at]
        if script.scenario == "resent_duplicate":
            args = args + args
        tool_calls.append({"id": rand_id(rng, "call_", 24), "type": "function",
                           "function": {"name": call.name, "arguments": args}})
    message: dict[str, Any] = {"role": "assistant", "content": script.text, "refusal": None,
                               "annotations": []}
    if tool_calls:
        message["tool_calls"] = tool_calls
    finish = {"stop": "tool_calls" if tool_calls else "stop", "length": "length"}.get(
        script.ending
    )
    completion = sum(len(c.args_text) for c in script.calls) // 4 + 5
    return Reply(200, {
        **{k: v for k, v in ch.base.items() if k != "object"},
        "object": "chat.completion",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
        "usage": _usage(body, completion),
    })


def check_history(body: dict[str, Any]) -> Reply | None:
    """OpenAI's 400 for a tool call without its tool message, or a stray tool message."""
    for i, msg, messages in entries(body, "messages"):
        if msg.get("role") == "tool":
            prev = messages[i - 1] if i > 0 else None
            ok = isinstance(prev, dict) and (
                prev.get("role") == "tool" or (prev.get("role") == "assistant"
                                               and prev.get("tool_calls"))
            )
            if not ok:
                return _error(
                    "Invalid parameter: messages with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'.",
                    f"messages.[{i}].role",
                )
        if msg.get("role") != "assistant" or not msg.get("tool_calls"):
            continue
        pending = [tc.get("id") for tc in msg["tool_calls"] if isinstance(tc, dict)]
        j = i + 1
        while j < len(messages) and isinstance(messages[j], dict) \
                and messages[j].get("role") == "tool":
            answered = messages[j].get("tool_call_id")
            pending = [p for p in pending if p != answered]
            j += 1
        if pending:
            return _error(
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(str(p) for p in pending)}",
                f"messages.[{j if j < len(messages) else i}].role",
            )
    return None


def _error(message: str, param: str) -> Reply:
    return Reply(400, {"error": {"message": message, "type": "invalid_request_error",
                                 "param": param, "code": None}})
