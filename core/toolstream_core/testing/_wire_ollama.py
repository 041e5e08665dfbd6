"""Ollama's native chat wire format (``POST /api/chat``).

Streamed (``"stream"`` is true unless the request says false) as NDJSON: one
``ChatResponse`` object a line, ``"done": false`` while generating, then a last
line with ``"done": true``, the ``done_reason`` (``stop`` is Ollama's normal end,
tool calls included; ``length`` is the ``num_predict`` cut) and the timings.
Tool calls arrive whole, never in fragments: ``message.tool_calls`` holds
``{"id", "function": {"index", "name", "arguments": {...}}}`` with the arguments
as an object (recent servers; older ones send neither ``id`` nor ``index``). The
server is Go: its encoder drops a zero ``index`` (``omitempty``), so the first
call of a turn carries none. A
mid-stream failure is an ``{"error": "..."}`` line. Ollama never receives a
half-written call, so a call cut by the token limit is rendered as what its
parser had read: the argument object of the text up to the cut (``{"path":
"/tmp/a"}``), followed by ``done_reason: length``; before an error line the
call is whole.

Besides the chat endpoint, the read-only ``/api/show``, ``/api/tags`` and
``/api/version`` answers let framework classes that ask for a model's details
at construction be built against the emulator.
"""

from __future__ import annotations

import json
import random
from typing import Any

from ._scenarios import Script, split_text
from ._wire_common import Rendered, Reply, dumps, failed_reply, unanswered_calls

API = "ollama"

#: Ollama streams ``application/x-ndjson``.
NDJSON = "application/x-ndjson"
#: A fixed creation time, like the other wires' ``CREATED``.
CREATED_AT = "2025-06-16T00:00:00.000000Z"
_ERROR_TEXT = "an error was encountered while running the model: unexpected EOF"
_LOWER = "abcdefghijklmnopqrstuvwxyz0123456789"


def _partial_object(text: str) -> dict[str, Any]:
    """The object an incremental parser holds after reading ``text`` (a cut call)."""
    for end in ('"}', "}"):
        try:
            value = json.loads(text + end)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return {}


def _calls(script: Script, rng: random.Random) -> list[dict[str, Any]]:
    """The ``tool_calls`` entries, cut and re-sent as the script says."""
    calls: list[dict[str, Any]] = []
    for i, call in enumerate(script.calls):
        cut = script.ending == "length" and i == len(script.calls) - 1
        args = (_partial_object(call.args_text[: script.cut_at]) if cut
                else call.arguments)
        call_id = "call_" + "".join(rng.choice(_LOWER) for _ in range(8))
        # Go's encoder drops a zero index (``omitempty``): call 0 goes without one.
        function: dict[str, Any] = {"index": i} if i else {}
        function.update(name=call.name, arguments=args)
        calls.append({"id": call_id, "function": function})
        if script.scenario == "resent_duplicate":
            calls.append(calls[-1])
    return calls


def _line(obj: dict[str, Any]) -> bytes:
    return (dumps(obj) + "\n").encode()


def _chunk(model: str, message: dict[str, Any]) -> dict[str, Any]:
    return {"model": model, "created_at": CREATED_AT,
            "message": {"role": "assistant", "content": "", **message}, "done": False}


def _final(model: str, script: Script, body: dict[str, Any], output: int) -> dict[str, Any]:
    prompt = 20 + len(body.get("messages") or []) * 10
    return {"model": model, "created_at": CREATED_AT,
            "message": {"role": "assistant", "content": ""}, "done": True,
            "done_reason": "length" if script.ending == "length" else "stop",
            "total_duration": 1_234_567_000, "load_duration": 12_345_000,
            "prompt_eval_count": prompt, "prompt_eval_duration": 23_456_000,
            "eval_count": output, "eval_duration": 987_654_000}


def _output(script: Script) -> int:
    return sum(len(c.args_text) for c in script.calls) // 4 + 5


def render_stream(script: Script, rng: random.Random, model: str, body: dict[str, Any]) -> Rendered:
    """The streamed answer for ``script`` (NDJSON lines)."""
    lines: list[bytes] = []
    if script.text is not None:
        for piece in split_text(script.text, rng, max_piece=8):
            lines.append(_line(_chunk(model, {"content": piece})))
    for call in _calls(script, rng):
        lines.append(_line(_chunk(model, {"tool_calls": [call]})))
    if script.ending in ("drop", "no_finish"):
        return Rendered(lines, drop=script.ending == "drop", content_type=NDJSON)
    if script.ending == "error":
        lines.append(_line({"error": _ERROR_TEXT}))
        return Rendered(lines, content_type=NDJSON)
    lines.append(_line(_final(model, script, body, _output(script))))
    return Rendered(lines, content_type=NDJSON)


def render_complete(script: Script, rng: random.Random, model: str, body: dict[str, Any]) -> Reply:
    """The non-streamed answer (``"stream": false``); a cut call is left out."""
    failed = failed_reply(script, Reply(500, {"error": _ERROR_TEXT}))
    if failed is not None:
        return failed
    answer = _final(model, script, body, _output(script))
    if script.text is not None:
        answer["message"]["content"] = script.text
    calls = _calls(script, rng)
    if calls and script.ending != "length":
        answer["message"]["tool_calls"] = calls
    return Reply(200, answer)


def check_history(body: dict[str, Any]) -> Reply | None:
    """A 400 when an assistant's tool calls are not each answered by a ``tool`` message.

    Stricter than Ollama itself (which passes any history to the model): an
    unanswered call is a bug in the agent, and the emulator's job is to show it.
    """
    missing = unanswered_calls(body.get("messages"))
    if missing is None:
        return None
    index, keys = missing
    return Reply(400, {"error": f"messages[{index}]: tool calls without a tool message: "
                                f"{', '.join(keys)}"})


#: What ``/api/tags`` lists: common tool-calling models (so a framework class that checks
#: its model is pulled, ``ChatOllama(validate_model_on_init=True)``, can be built), the
#: model the request names, and ``emulated-model``.
LOCAL_MODELS: tuple[str, ...] = ("qwen3:8b", "qwen2.5:7b", "llama3.1:8b", "llama3.2:3b",
                                 "mistral:7b", "gpt-oss:20b")


def model_info(path: str, model: str) -> Reply:
    """The answer to one of the read-only endpoints (``/api/show``, ``/api/tags``, ...)."""
    details = {"parent_model": "", "format": "gguf", "family": "qwen3", "families": ["qwen3"],
               "parameter_size": "8.2B", "quantization_level": "Q4_K_M"}
    if path == "/api/version":
        return Reply(200, {"version": "0.12.6"})
    if path == "/api/tags":
        names = dict.fromkeys((*LOCAL_MODELS, model))
        return Reply(200, {"models": [{"name": name, "model": name,
                                       "modified_at": CREATED_AT, "size": 5_225_388_164,
                                       "digest": "0" * 64, "details": details}
                                      for name in names]})
    return Reply(200, {"modelfile": "", "parameters": "", "template": "{{ .Prompt }}",
                       "details": details, "model_info": {"general.architecture": "qwen3"},
                       "capabilities": ["completion", "tools"], "modified_at": CREATED_AT})
