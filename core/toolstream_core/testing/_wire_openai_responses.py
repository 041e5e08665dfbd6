"""OpenAI Responses wire format (``POST /v1/responses``).

Streamed as ``event: <type>`` + ``data: {...}`` frames with a running
``sequence_number``: ``response.created``, ``response.in_progress``, per output
item ``output_item.added`` / deltas / ``*.done`` / ``output_item.done``, then
``response.completed`` (or ``response.incomplete`` with
``incomplete_details.reason = max_output_tokens``, or ``error`` +
``response.failed``), as in recorded OpenAI streams.
"""

from __future__ import annotations

import random
from typing import Any

from ._scenarios import Script, split_text
from ._vendor_events import (
    responses_call_events,
    responses_call_item,
    responses_error,
    responses_event,
    responses_object,
)
from ._wire_common import Rendered, Reply, failed_reply, rand_id, sse

API = "openai-responses"

_ERROR_MESSAGE = "The server had an error while processing your request. Sorry about that!"
_ERROR: dict[str, Any] = responses_error("server_error", _ERROR_MESSAGE, nested=True)["error"]


def _usage(body: dict[str, Any], output: int) -> dict[str, Any]:
    inp = body.get("input")
    prompt = 20 + (len(inp) * 10 if isinstance(inp, list) else 10)
    return {
        "input_tokens": prompt,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt + output,
    }


def _response(
    rid: str, model: str, body: dict[str, Any], status: str, output: list[dict[str, Any]],
    *, usage: dict[str, Any] | None = None, incomplete: str | None = None,
    error: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return responses_object(rid, model, status, output, body=body, usage=usage,
                            incomplete=incomplete, error=error)


class _Seq:
    def __init__(self) -> None:
        self.n = 0
        self.frames: list[bytes] = []

    def emit(self, kind: str, **fields: Any) -> None:
        self.add(responses_event(kind, **fields))

    def add(self, event: dict[str, Any]) -> None:
        """Number ``event`` in stream order and frame it under its type."""
        event["sequence_number"] = self.n
        self.frames.append(sse(event, event["type"]))
        self.n += 1


def _plan(script: Script, rng: random.Random) -> tuple[str, list[dict[str, Any]]]:
    """Response id and the output items (function calls carry their streamed text)."""
    rid = rand_id(rng, "resp_", 48)
    items: list[dict[str, Any]] = []
    if script.text is not None:
        items.append({"id": rand_id(rng, "msg_", 48), "type": "message", "role": "assistant",
                      "text": script.text})
    for i, call in enumerate(script.calls):
        args = call.args_text
        if script.cut_at is not None and i == len(script.calls) - 1:
            args = args[: script.cut_at]
        item = {"id": rand_id(rng, "fc_", 48), "type": "function_call",
                "call_id": rand_id(rng, "call_", 24), "name": call.name, "arguments": args}
        items.append(item)
        if script.scenario == "resent_duplicate":
            items.append({**item, "id": rand_id(rng, "fc_", 48)})
    return rid, items


def _final_item(item: dict[str, Any], status: str) -> dict[str, Any]:
    if item["type"] == "message":
        return {"id": item["id"], "type": "message", "status": status, "role": "assistant",
                "content": [{"type": "output_text", "text": item["text"], "annotations": [],
                             "logprobs": []}]}
    return responses_call_item(item["id"], item["call_id"], item["name"], item["arguments"], status)


def render_stream(script: Script, rng: random.Random, model: str, body: dict[str, Any]) -> Rendered:
    """The streamed answer for ``script``."""
    rid, items = _plan(script, rng)
    s = _Seq()
    s.emit("response.created", response=_response(rid, model, body, "in_progress", []))
    s.emit("response.in_progress", response=_response(rid, model, body, "in_progress", []))
    done_items: list[dict[str, Any]] = []
    last = len(items) - 1
    for idx, item in enumerate(items):
        cut_here = idx == last and script.ending in ("length", "error", "drop")
        if item["type"] == "message":
            status = "incomplete" if cut_here else "completed"
            _stream_message(s, item, idx, rng, status)
            done_items.append(_final_item(item, status))
            continue
        frags = split_text(item["arguments"], rng)
        events = responses_call_events(item["id"], idx, item["call_id"], item["name"], frags,
                                       item["arguments"],
                                       final_status="incomplete" if cut_here else "completed")
        if cut_here and script.ending in ("error", "drop"):
            for event in events[: 1 + len(frags)]:
                s.add(event)
            break
        for event in events:
            s.add(event)
        done_items.append(events[-1]["item"])

    output = sum(len(i.get("arguments", "")) for i in items) // 4 + 5
    usage = _usage(body, output)
    if script.ending == "stop":
        s.emit("response.completed",
               response=_response(rid, model, body, "completed", done_items, usage=usage))
    elif script.ending == "length":
        s.emit("response.incomplete",
               response=_response(rid, model, body, "incomplete", done_items, usage=usage,
                                  incomplete="max_output_tokens"))
    elif script.ending == "error":
        s.add(responses_error("server_error", _ERROR_MESSAGE, nested=True))
        failed = {"code": "server_error", "message": _ERROR_MESSAGE}
        s.emit("response.failed",
               response=_response(rid, model, body, "failed", done_items, usage=usage,
                                  error=failed))
    return Rendered(s.frames, drop=script.ending == "drop")


def _stream_message(s: _Seq, item: dict[str, Any], idx: int, rng: random.Random,
                    status: str) -> None:
    s.emit("response.output_item.added", output_index=idx,
           item={"id": item["id"], "type": "message", "status": "in_progress",
                 "role": "assistant", "content": []})
    part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
    s.emit("response.content_part.added", item_id=item["id"], output_index=idx,
           content_index=0, part=part)
    for piece in split_text(item["text"], rng, max_piece=8):
        s.emit("response.output_text.delta", item_id=item["id"], output_index=idx,
               content_index=0, delta=piece, logprobs=[])
    s.emit("response.output_text.done", item_id=item["id"], output_index=idx,
           content_index=0, text=item["text"], logprobs=[])
    s.emit("response.content_part.done", item_id=item["id"], output_index=idx,
           content_index=0, part={**part, "text": item["text"]})
    s.emit("response.output_item.done", output_index=idx, item=_final_item(item, status))


def render_complete(script: Script, rng: random.Random, model: str, body: dict[str, Any]) -> Reply:
    """The non-streamed ``response`` object for ``script``."""
    failed = failed_reply(script, Reply(500, {"error": dict(_ERROR)}))
    if failed is not None:
        return failed
    rid, items = _plan(script, rng)
    status = {"stop": "completed", "length": "incomplete"}.get(script.ending, "in_progress")
    output = [_final_item(i, "incomplete" if status == "incomplete" and i is items[-1]
                          else "completed") for i in items]
    usage = _usage(body, sum(len(i.get("arguments", "")) for i in items) // 4 + 5)
    return Reply(200, _response(rid, model, body, status, output, usage=usage,
                                incomplete="max_output_tokens" if status == "incomplete"
                                else None))


# Items that wait for the client: type -> (its id field, the answer's type, the answer's id field).
_CALL_TYPES: dict[str, tuple[str, str, str]] = {
    "function_call": ("call_id", "function_call_output", "call_id"),
    "custom_tool_call": ("call_id", "custom_tool_call_output", "call_id"),
    "computer_call": ("call_id", "computer_call_output", "call_id"),
    "local_shell_call": ("call_id", "local_shell_call_output", "id"),
    "shell_call": ("call_id", "shell_call_output", "call_id"),
    "apply_patch_call": ("call_id", "apply_patch_call_output", "call_id"),
    "tool_search_call": ("call_id", "tool_search_output", "call_id"),
    "mcp_approval_request": ("id", "mcp_approval_response", "approval_request_id"),
}
_ANSWERS = {answer: field for _, answer, field in _CALL_TYPES.values()}


def _waits(item: dict[str, Any]) -> str | None:
    """The id of a client call in ``input`` (a tool search the server ran waits for nothing)."""
    kind = item.get("type")
    if kind not in _CALL_TYPES or (kind == "tool_search_call" and item.get("execution") != "client"):
        return None
    call_id = item.get(_CALL_TYPES[kind][0])
    return call_id if isinstance(call_id, str) else None


def check_history(body: dict[str, Any]) -> Reply | None:
    """OpenAI's 400 for a client call in ``input`` without its output item (and vice versa):
    function and custom tool calls and the built-in items the client executes."""
    items = body.get("input")
    if not isinstance(items, list):
        return None
    calls: set[str] = set()
    answered: set[str] = set()
    for item in items:
        if not isinstance(item, dict):
            continue
        call_id = _waits(item)
        answer_field = _ANSWERS.get(item.get("type"))  # type: ignore[arg-type]
        if call_id is not None:
            calls.add(call_id)
        elif answer_field is not None and isinstance(item.get(answer_field), str):
            answer_id = item[answer_field]
            if answer_id not in calls and not body.get("previous_response_id"):
                return _error(f"No tool call found for function call output with call_id "
                              f"{answer_id}.")
            answered.add(answer_id)
    for call_id in calls:
        if call_id not in answered:
            return _error(f"No tool output found for function call {call_id}.")
    return None


def _error(message: str) -> Reply:
    return Reply(400, {"error": {"message": message, "type": "invalid_request_error",
                                 "param": "input", "code": None}})
