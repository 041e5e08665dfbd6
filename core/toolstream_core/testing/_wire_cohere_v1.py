"""Cohere v1 chat wire format (``POST /v1/chat``; ``cohere.Client.chat`` / ``chat_stream``).

The API LlamaIndex's ``Cohere`` class speaks. Streamed (``"stream": true``) as JSON lines
(``application/stream+json``; the SDK parses each non-empty line): ``stream-start``, the
plan or answer as ``text-generation``, per call ``tool-calls-chunk`` events
(``tool_call_delta``: ``index`` + ``name``, then ``index`` + ``parameters`` text
fragments), ``tool-calls-generation`` with the complete calls, then ``stream-end`` with the
``finish_reason`` (``COMPLETE``, ``MAX_TOKENS``, ``ERROR``) and the whole ``response``. v1
calls have no ids. A cut (``MAX_TOKENS``) or an error sends no ``tool-calls-generation``.
Non-streamed, the answer is the ``response`` object alone (a cut call left out).
"""

from __future__ import annotations

import json
import random
from typing import Any

from ._scenarios import CallSpec, Script, split_text
from ._wire_common import Rendered, Reply, failed_reply, wire_calls

API = "cohere"
STREAM_JSON = "application/stream+json"

_ERROR_TEXT = "internal server error, this has been reported to our developers"
_PLAN = "I will call the tools the request needs."


def _uuid(rng: random.Random) -> str:
    h = "".join(rng.choice("0123456789abcdef") for _ in range(32))
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _finish(script: Script) -> str:
    return {"length": "MAX_TOKENS", "error": "ERROR"}.get(script.ending, "COMPLETE")


def _line(data: dict[str, Any]) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode() + b"\n"


def _parameters(args: str) -> Any:
    """The object the arguments text stands for; text that is none (a scenario's bad JSON)
    is sent as it is, which no client can take for an object."""
    try:
        return json.loads(args or "{}")
    except ValueError:
        return args


def _complete_calls(calls: list[tuple[str, CallSpec, str]]) -> list[dict[str, Any]]:
    return [{"name": spec.name, "parameters": _parameters(args)} for _, spec, args in calls]


def _response(script: Script, rng: random.Random, calls: list[tuple[str, CallSpec, str]],
              text: str) -> dict[str, Any]:
    output = sum(len(c[2]) for c in calls) // 4 + 5
    answer: dict[str, Any] = {"response_id": _uuid(rng), "generation_id": _uuid(rng),
                              "text": text, "finish_reason": _finish(script),
                              "meta": {"billed_units": {"input_tokens": 20, "output_tokens": output},
                                       "tokens": {"input_tokens": 420, "output_tokens": output + 2}}}
    if calls and script.ending not in ("length", "error"):
        answer["tool_calls"] = _complete_calls(calls)
    return answer


def _call_lines(index: int, call: tuple[str, CallSpec, str], rng: random.Random) -> list[bytes]:
    _, spec, args = call
    lines = [_line({"event_type": "tool-calls-chunk", "is_finished": False,
                    "tool_call_delta": {"index": index, "name": spec.name}})]
    for piece in split_text(args, rng):
        lines.append(_line({"event_type": "tool-calls-chunk", "is_finished": False,
                            "tool_call_delta": {"index": index, "parameters": piece}}))
    return lines


def render_stream(script: Script, rng: random.Random, model: str, body: dict[str, Any]) -> Rendered:
    """The streamed answer for ``script`` (JSON lines)."""
    lines = [_line({"event_type": "stream-start", "is_finished": False, "generation_id": _uuid(rng)})]
    calls = wire_calls(script, lambda call: "")
    text = script.text if script.text is not None else (_PLAN if calls else "")
    for piece in split_text(text, rng, max_piece=8):
        lines.append(_line({"event_type": "text-generation", "is_finished": False, "text": piece}))
    for index, call in enumerate(calls):
        lines += _call_lines(index, call, rng)
    if script.ending == "drop":
        return Rendered(lines, drop=True, content_type=STREAM_JSON)
    if script.ending == "no_finish":
        return Rendered(lines, content_type=STREAM_JSON)
    response = _response(script, rng, calls, text)
    if "tool_calls" in response:
        lines.append(_line({"event_type": "tool-calls-generation", "is_finished": False,
                            "text": text, "tool_calls": response["tool_calls"]}))
    lines.append(_line({"event_type": "stream-end", "is_finished": True,
                        "finish_reason": _finish(script), "response": response}))
    return Rendered(lines, content_type=STREAM_JSON)


def render_complete(script: Script, rng: random.Random, model: str, body: dict[str, Any]) -> Reply:
    """The non-streamed ``chat`` answer; a call cut by the token limit is left out."""
    failed = failed_reply(script, Reply(500, {"message": _ERROR_TEXT}))
    if failed is not None:
        return failed
    calls = wire_calls(script, lambda call: "")
    text = script.text if script.text is not None else (_PLAN if calls else "")
    return Reply(200, _response(script, rng, calls, text))


def _call_key(call: Any) -> str:
    if not isinstance(call, dict):
        return repr(call)
    return json.dumps([call.get("name"), call.get("parameters")], sort_keys=True)


def _role(turn: dict[str, Any]) -> str:
    """A turn's role as Cohere reads it: the SDK sends ``Chatbot`` / ``Tool``, the docs
    ``CHATBOT`` / ``TOOL``."""
    return str(turn.get("role") or "").upper()


def _answered(history: list[Any], start: int, top: Any) -> list[str]:
    """The calls named by the tool results after ``history[start]``: its TOOL entries, and
    the request's own ``tool_results`` when only TOOL entries follow it."""
    keys: list[str] = []
    j = start + 1
    while j < len(history) and isinstance(history[j], dict) and _role(history[j]) == "TOOL":
        keys += [_call_key(r.get("call")) for r in history[j].get("tool_results") or []
                 if isinstance(r, dict)]
        j += 1
    if j == len(history) and isinstance(top, list):
        keys += [_call_key(r.get("call")) for r in top if isinstance(r, dict)]
    return keys


def check_history(body: dict[str, Any]) -> Reply | None:
    """Cohere's 400 when a chatbot turn's tool calls are not each named by a tool result."""
    history = body.get("chat_history")
    if not isinstance(history, list):
        return None
    for i, turn in enumerate(history):
        if not isinstance(turn, dict) or _role(turn) != "CHATBOT" or not turn.get("tool_calls"):
            continue
        answered = _answered(history, i, body.get("tool_results"))
        missing = [c.get("name") for c in turn["tool_calls"]
                   if isinstance(c, dict) and _call_key(c) not in answered]
        if missing:
            return Reply(400, {"message": (
                f"invalid request: chat_history[{i}]: every tool call needs a tool result, "
                f"missing results for {json.dumps(missing)}")})
    return None
