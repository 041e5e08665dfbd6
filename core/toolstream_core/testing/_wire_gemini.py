"""Gemini wire format (``POST /v1beta/models/{model}:streamGenerateContent?alt=sse``).

Streamed as ``data: {GenerateContentResponse}`` frames (CRLF-separated, as
Google sends them). Arguments are structured: a ``functionCall`` part carries
the whole ``args`` object, except in ``partialArgs`` mode (Gemini 3
``streamFunctionCallArguments``), where string values arrive by ``jsonPath``
with ``willContinue`` and an empty ``functionCall`` ends the call. Errors are a
``data: {"error": {...}}`` frame.
"""

from __future__ import annotations

import json
import random
from typing import Any

from ._scenarios import CallSpec, Script, split_text
from ._vendor_events import (
    gemini_call,
    gemini_chunk,
    gemini_error,
    gemini_partial_parts,
    gemini_string_entries,
)
from ._wire_common import Rendered, Reply, entries, failed_reply, neighbour, rand_id, sse

API = "gemini"

_ERROR = gemini_error(500, "An internal error has occurred. Please retry or report in "
                      "https://developers.generativeai.google/guide/troubleshooting", "INTERNAL")


def _usage(body: dict[str, Any], output: int) -> dict[str, Any]:
    prompt = 20 + len(body.get("contents") or []) * 10
    return {"promptTokenCount": prompt, "candidatesTokenCount": output,
            "totalTokenCount": prompt + output}


class _Chunks:
    def __init__(self, rng: random.Random, model: str, body: dict[str, Any]) -> None:
        self.model = model
        self.rid = rand_id(rng, "", 23)
        self.body = body

    def chunk(self, parts: list[dict[str, Any]] | None, finish: str | None = None,
              output: int | None = None) -> bytes:
        usage = None if output is None else _usage(self.body, output)
        return sse(gemini_chunk([{"text": ""}] if parts is None else parts, model=self.model,
                                finish=finish, usage=usage, response_id=self.rid), crlf=True)


def _call_part(call: CallSpec, call_id: str | None) -> dict[str, Any]:
    return gemini_call(call.name, call_id, args=call.arguments)


def _partial_parts(call: CallSpec, rng: random.Random, cut_at: int | None) -> list[dict[str, Any]]:
    """functionCall parts of one call in partialArgs mode, values cut at random.

    With ``cut_at`` the call stops where its JSON text would be cut (only string
    values are streamed, so the cut falls in the value it lands in).
    """
    entries: list[dict[str, Any]] = []
    sent = 0
    for key, value in call.arguments.items():
        prefix = json.dumps({key: ""}, separators=(",", ":"))[:-2]  # '{"key":"'
        prefix = ("," if sent else "{") + prefix[1:]
        if cut_at is not None and sent + len(prefix) + len(value) >= cut_at:
            value = value[: max(0, cut_at - sent - len(prefix))]
            entries += gemini_string_entries(f"$.{key}", split_text(value, rng, max_piece=4),
                                             closed=False)
            return gemini_partial_parts(call.name, None, entries, end="cut")
        entries += gemini_string_entries(f"$.{key}", split_text(value, rng, max_piece=6))
        sent += len(prefix) + len(json.dumps(value, ensure_ascii=False)) - 1
    return gemini_partial_parts(call.name, None, entries)


def render_stream(script: Script, rng: random.Random, model: str, body: dict[str, Any]) -> Rendered:
    """The streamed answer for ``script``."""
    ch = _Chunks(rng, model, body)
    frames: list[bytes] = []
    output = sum(len(c.args_text) for c in script.calls) // 4 + 5
    name = script.scenario
    if script.text is not None:
        pieces = split_text(script.text, rng, max_piece=12)
        for piece in pieces[:-1]:
            frames.append(ch.chunk([{"text": piece}]))
        finish = "MAX_TOKENS" if script.ending == "length" else "STOP"
        frames.append(ch.chunk([{"text": pieces[-1]}], finish, output))
        return Rendered(frames)
    if name in ("partial_args", "truncated_length", "error_event", "structured_call_truncated"):
        call = script.calls[0]
        parts = _partial_parts(call, rng, script.cut_at)
        for part in parts[:-1]:
            frames.append(ch.chunk([part]))
        if script.ending == "stop":
            frames.append(ch.chunk([parts[-1]], "STOP", output))
        elif script.ending == "length":
            frames.append(ch.chunk([parts[-1]]))
            frames.append(ch.chunk(None, "MAX_TOKENS", output))
        else:
            frames.append(ch.chunk([parts[-1]]))
            frames.append(sse(_ERROR, crlf=True))
        return Rendered(frames)
    ids: list[str | None] = [rand_id(rng, "", 8).lower() for _ in script.calls]
    if name in ("parallel_calls", "parallel_no_ids"):
        if name == "parallel_no_ids":
            ids = [None for _ in ids]
        parts = [_call_part(c, i) for c, i in zip(script.calls, ids, strict=True)]
        frames.append(ch.chunk(parts, "STOP", output))
        return Rendered(frames)
    if name == "resent_duplicate":
        part = _call_part(script.calls[0], ids[0])
        frames.append(ch.chunk([part]))
        frames.append(ch.chunk([part], "STOP", output))
        return Rendered(frames)
    part = _call_part(script.calls[0], ids[0])
    if script.ending == "stop":
        frames.append(ch.chunk([part], "STOP", output))
        return Rendered(frames)
    frames.append(ch.chunk([part]))
    return Rendered(frames, drop=script.ending == "drop")


def render_complete(script: Script, rng: random.Random, model: str, body: dict[str, Any]) -> Reply:
    """The non-streamed ``GenerateContentResponse``; a cut call is left out."""
    failed = failed_reply(script, Reply(500, _ERROR))
    if failed is not None:
        return failed
    ch = _Chunks(rng, model, body)
    parts: list[dict[str, Any]] = []
    if script.text is not None:
        parts.append({"text": script.text})
    if script.ending != "length":
        for call in script.calls:
            ident = rand_id(rng, "", 8).lower()
            parts.append(_call_part(call, None if script.scenario == "parallel_no_ids" else ident))
        if script.scenario == "resent_duplicate":
            parts.append(dict(parts[-1]))
    finish = {"stop": "STOP", "length": "MAX_TOKENS"}.get(script.ending)
    output = sum(len(c.args_text) for c in script.calls) // 4 + 5
    return Reply(200, gemini_chunk(parts or [{"text": ""}], model=ch.model, finish=finish,
                                   usage=_usage(body, output), response_id=ch.rid))


def _count(content: dict[str, Any], *keys: str) -> int:
    parts = content.get("parts")
    if not isinstance(parts, list):
        return 0
    return sum(1 for p in parts if isinstance(p, dict) and any(k in p for k in keys))


_CALL = ("functionCall", "function_call")
_RESPONSE = ("functionResponse", "function_response")


def check_history(body: dict[str, Any]) -> Reply | None:
    """Gemini's 400 INVALID_ARGUMENT when function calls and responses do not pair up."""
    for i, content, contents in entries(body, "contents"):
        responses = _count(content, *_RESPONSE)
        if responses and not _count(neighbour(contents, i - 1), *_CALL):
            return _error("Please ensure that function response turn comes immediately after "
                          "a function call turn.")
        calls = _count(content, *_CALL)
        if not calls:
            continue
        if _count(neighbour(contents, i + 1), *_RESPONSE) != calls:
            return _error("Please ensure that the number of function response parts is equal "
                          "to the number of function call parts of the function call turn.")
    return None


def _error(message: str) -> Reply:
    return Reply(400, {"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}})
