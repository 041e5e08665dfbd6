"""Small, readable streams of the three newer families, for their rule tests and fuzz runs.

Shapes follow the vendors' documented wire formats (Bedrock ConverseStream events as boto3
yields them, Ollama ``/api/chat`` NDJSON chunks, Cohere v2 chat SSE payloads).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["bedrock", "cohere", "ollama", "write_jsonl"]


def bedrock(calls: list[tuple[str, str, list[str]]], stop: str | None = "tool_use",
            *, usage: int | None = 20, text: bool = True) -> list[dict[str, Any]]:
    """messageStart, an optional text block, one toolUse block per call, messageStop, metadata."""
    events: list[dict[str, Any]] = [{"messageStart": {"role": "assistant"}}]
    first = 0
    if text:
        events += [{"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "Let me look."}}},
                   {"contentBlockStop": {"contentBlockIndex": 0}}]
        first = 1
    for n, (call_id, name, fragments) in enumerate(calls, start=first):
        events.append({"contentBlockStart": {"contentBlockIndex": n,
                                             "start": {"toolUse": {"toolUseId": call_id, "name": name}}}})
        events += [{"contentBlockDelta": {"contentBlockIndex": n, "delta": {"toolUse": {"input": f}}}}
                   for f in fragments]
        events.append({"contentBlockStop": {"contentBlockIndex": n}})
    if stop is not None:
        events.append({"messageStop": {"stopReason": stop}})
    if usage is not None:
        events.append({"metadata": {"usage": {"inputTokens": 10, "outputTokens": usage, "totalTokens": 10 + usage},
                                    "metrics": {"latencyMs": 100}}})
    return events


def ollama(calls: list[dict[str, Any]], done_reason: str | None = "stop", *, done: bool = True,
           split: bool = False, eval_count: int = 20) -> list[dict[str, Any]]:
    """A thinking chunk, the tool calls (one chunk, or one chunk per call), the done chunk."""
    def chunk(**message: Any) -> dict[str, Any]:
        return {"model": "qwen3", "created_at": "2025-01-01T00:00:00Z",
                "message": {"role": "assistant", "content": "", **message}, "done": False}

    events = [chunk(thinking="The user wants the weather.")]
    groups = [[c] for c in calls] if split else [calls]
    events += [chunk(tool_calls=group) for group in groups if group]
    if done:
        last = chunk()
        last.update(done=True, eval_count=eval_count, total_duration=1000)
        if done_reason is not None:
            last["done_reason"] = done_reason
        events.append(last)
    return events


def ollama_call(name: str, arguments: Any, *, call_id: str | None = None, index: int | None = None) -> dict[str, Any]:
    function: dict[str, Any] = {"name": name, "arguments": arguments}
    if index is not None:
        function["index"] = index
    call: dict[str, Any] = {"function": function}
    if call_id is not None:
        call["id"] = call_id
    return call


def cohere(calls: list[tuple[str, str, list[str]]], finish: str | None = "TOOL_CALL",
           *, output_tokens: int = 20) -> list[dict[str, Any]]:
    """message-start, a tool plan, tool-call-start / -delta / -end per call, message-end."""
    events: list[dict[str, Any]] = [
        {"id": "m1", "type": "message-start",
         "delta": {"message": {"role": "assistant", "content": [], "tool_plan": "", "tool_calls": [],
                               "citations": []}}},
        {"type": "tool-plan-delta", "delta": {"message": {"tool_plan": "I will look it up."}}},
    ]
    for n, (call_id, name, fragments) in enumerate(calls):
        events.append({"type": "tool-call-start", "index": n, "delta": {"message": {"tool_calls": {
            "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}}}})
        events += [{"type": "tool-call-delta", "index": n,
                    "delta": {"message": {"tool_calls": {"function": {"arguments": f}}}}} for f in fragments]
        events.append({"type": "tool-call-end", "index": n})
    if finish is not None:
        events.append({"type": "message-end", "delta": {"finish_reason": finish, "usage": {
            "billed_units": {"input_tokens": 5, "output_tokens": output_tokens},
            "tokens": {"input_tokens": 50, "output_tokens": output_tokens}}}})
    return events


def write_jsonl(path: Path, api: str, events: list[dict[str, Any]]) -> Path:
    """A corpus-format stream file (header line, then one ``data`` line per event)."""
    header = {"toolstream_stream": 1, "api": api, "vendor": api, "model": "test", "notes": "rule-test stream"}
    lines = [json.dumps(header)]
    for event in events:
        if api == "bedrock-converse":
            [(name, body)] = event.items()
            lines.append(json.dumps({"event": name, "data": body}, ensure_ascii=False))
        else:
            lines.append(json.dumps({"data": event}, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
