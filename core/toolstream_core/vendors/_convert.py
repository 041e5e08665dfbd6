"""A whole (non-streamed) vendor response, replayed to the core as the events it stands for.

Non-streamed answers can be cut too (``finish_reason: length`` with half a JSON string on
OpenAI chat), so they go through the same proof as streams: identity, a normal finish, a
strict parse. Each function turns a vendor's whole response (the SDK's object or its JSON:
what a shim's tap sees, or the ``ChatResponse.raw`` a LlamaIndex class keeps) into the event
sequence the vendor would have streamed, in the shape the core's adapter for it reads.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

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


def _bedrock_block(i: int, block: Mapping[str, Any]) -> list[dict[str, Any]]:
    use = block.get("toolUse")
    if isinstance(use, Mapping):
        start = {"toolUse": {"toolUseId": use.get("toolUseId"), "name": use.get("name")}}
        text = json.dumps(use.get("input"), ensure_ascii=False)
        return [{"contentBlockStart": {"contentBlockIndex": i, "start": start}},
                {"contentBlockDelta": {"contentBlockIndex": i,
                                       "delta": {"toolUse": {"input": text}}}},
                {"contentBlockStop": {"contentBlockIndex": i}}]
    if isinstance(block.get("text"), str):
        return [{"contentBlockDelta": {"contentBlockIndex": i, "delta": {"text": block["text"]}}},
                {"contentBlockStop": {"contentBlockIndex": i}}]
    return []


def _bedrock_converse(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """``converse``'s answer (``output.message``, ``stopReason``, ``usage``) as ConverseStream."""
    message = (raw.get("output") or {}).get("message") or {}
    events: list[dict[str, Any]] = [{"messageStart": {"role": message.get("role", "assistant")}}]
    for i, block in enumerate(message.get("content") or []):
        if isinstance(block, Mapping):
            events.extend(_bedrock_block(i, block))
    events.append({"messageStop": {"stopReason": raw.get("stopReason")}})
    if isinstance(raw.get("usage"), Mapping):
        events.append({"metadata": {"usage": raw["usage"]}})
    return events


def _ollama(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """A whole ``/api/chat`` answer is the stream's last chunk: the message, ``done``, reason."""
    return [raw]


def _cohere_call(i: int, call: Mapping[str, Any]) -> list[dict[str, Any]]:
    function = call.get("function") or {}
    start = {"id": call.get("id"), "type": call.get("type", "function"),
             "function": {"name": function.get("name"), "arguments": ""}}
    delta = {"function": {"arguments": function.get("arguments")}}
    return [{"type": "tool-call-start", "index": i, "delta": {"message": {"tool_calls": start}}},
            {"type": "tool-call-delta", "index": i, "delta": {"message": {"tool_calls": delta}}},
            {"type": "tool-call-end", "index": i}]


def _cohere_v1(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """A v1 ``chat`` answer (``tool_calls`` of name + parameters, ``finish_reason``, ``meta``)
    as its v1 stream's ending: the complete calls, then ``stream-end``."""
    events: list[dict[str, Any]] = [{"event_type": "stream-start"}]
    if raw.get("tool_calls"):
        events.append({"event_type": "tool-calls-generation", "tool_calls": raw["tool_calls"]})
    events.append({"event_type": "stream-end", "finish_reason": raw.get("finish_reason"),
                   "response": {"meta": raw.get("meta")}})
    return events


def _cohere(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """A v2 ``chat`` answer (``message.tool_calls``, ``finish_reason``) as its v2 stream;
    an answer without ``message`` is v1's (`_cohere_v1`)."""
    if "message" not in raw:
        return _cohere_v1(raw)
    message = raw.get("message") or {}
    events: list[dict[str, Any]] = [{"type": "message-start", "id": raw.get("id"),
                                     "delta": {"message": {"role": "assistant"}}}]
    for i, call in enumerate(message.get("tool_calls") or []):
        if isinstance(call, Mapping):
            events.extend(_cohere_call(i, call))
    events.append({"type": "message-end", "delta": {"finish_reason": raw.get("finish_reason"),
                                                    "usage": raw.get("usage")}})
    return events


_BY_PROVIDER = {
    "openai-chat": _openai_chat,
    "openai-responses": _openai_responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "bedrock-converse": _bedrock_converse,
    "ollama": _ollama,
    "cohere": _cohere,
}


def events_for_response(provider: str | None, raw: Any) -> list[Any] | None:
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
    convert = _BY_PROVIDER.get(provider or "")
    return convert(data) if convert is not None else None
