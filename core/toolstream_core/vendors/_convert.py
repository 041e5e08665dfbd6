"""A whole (non-streamed) vendor response, replayed to the core as the events it stands for.

Non-streamed answers can be cut too (``finish_reason: length`` with half a JSON string on
OpenAI chat), so they go through the same proof as streams: identity, a normal finish, a
strict parse. Each function turns the ``ChatResponse.raw`` a LlamaIndex class keeps for a
non-streamed call into the event sequence the vendor would have streamed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from .._models import Provider

__all__ = ["events_for_response"]


def _plain(value: Any) -> Any:
    """SDK objects to plain data (pydantic ``model_dump``), recursively for dicts and lists."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump()
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _openai_chat(raw: dict[str, Any]) -> list[dict[str, Any]]:
    choices = []
    for choice in raw.get("choices") or []:
        message = choice.get("message") or {}
        delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
        calls = []
        for i, call in enumerate(message.get("tool_calls") or []):
            function = call.get("function") or {}
            calls.append({"index": i, "id": call.get("id"), "type": call.get("type"),
                          "function": {"name": function.get("name"),
                                       "arguments": function.get("arguments")}})
        if calls:
            delta["tool_calls"] = calls
        choices.append({"index": choice.get("index", 0), "delta": delta,
                        "finish_reason": choice.get("finish_reason")})
    return [{"object": "chat.completion.chunk", "id": raw.get("id"), "choices": choices}]


def _openai_responses(raw: dict[str, Any]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    for i, item in enumerate(raw.get("output") or []):
        events.append({"type": "response.output_item.added", "output_index": i,
                       "item": {**item, "arguments": ""} if "arguments" in item else item})
        if item.get("type") == "function_call":
            events.append({"type": "response.function_call_arguments.done", "output_index": i,
                           "item_id": item.get("id"), "arguments": item.get("arguments")})
        events.append({"type": "response.output_item.done", "output_index": i, "item": item})
    status = raw.get("status")
    kind = {"completed": "response.completed", "incomplete": "response.incomplete",
            "failed": "response.failed"}.get(str(status), "response.incomplete")
    events.append({"type": kind, "response": raw})
    return events


def _anthropic(raw: dict[str, Any]) -> list[dict[str, Any]]:
    message = {k: v for k, v in raw.items() if k not in ("content", "stop_reason")}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}}
    ]
    for i, block in enumerate(raw.get("content") or []):
        events.append({"type": "content_block_start", "index": i, "content_block": block})
        events.append({"type": "content_block_stop", "index": i})
    events.append({"type": "message_delta", "delta": {"stop_reason": raw.get("stop_reason")}})
    events.append({"type": "message_stop"})
    return events


def _gemini(raw: dict[str, Any]) -> list[dict[str, Any]]:
    if "candidates" in raw:
        return [raw]
    return [{"candidates": [raw]}]


def events_for_response(provider: Provider | None, raw: Any) -> list[Any] | None:
    """The events a whole response stands for; ``None`` when ``raw`` is not recognisable."""
    if raw is None:
        return None
    data = _plain(raw)
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except ValueError:
            return None
    if not isinstance(data, dict):
        return None
    if provider == "openai-chat":
        return _openai_chat(data)
    if provider == "openai-responses":
        return _openai_responses(data)
    if provider == "anthropic":
        return _anthropic(data)
    if provider == "gemini":
        return _gemini(data)
    return None
