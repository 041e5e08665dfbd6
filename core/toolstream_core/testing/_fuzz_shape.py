"""What one recorded stream offers to mutate: where its argument data and tool-call fields are.

Per vendor (DESIGN §4.1): where argument text streams (the four fragment fields), where
structured arguments sit, which fields an adapter reads to place a tool-call event, and where a
Gemini streaming call is open or never ends. Computed once per stream, shared by its cases.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from ._fuzz_sources import FuzzStream, synthesize_body

__all__ = ["PART", "TC", "StreamShape", "find", "gemini_interrupted", "tool_elements"]

Path = tuple[str | int, ...]

# Where argument text streams, per API ("*" is any list position).
_FRAGMENTS: dict[str, tuple[tuple[str, ...], ...]] = {
    "openai-chat": (
        ("choices", "*", "delta", "tool_calls", "*", "function", "arguments"),
        ("choices", "*", "delta", "tool_calls", "*", "custom", "input"),
        ("choices", "*", "delta", "function_call", "arguments"),
    ),
    "openai-responses": (("delta",),),
    "anthropic": (("delta", "partial_json"),),
    "gemini": (("candidates", "*", "content", "parts", "*", "functionCall", "partialArgs", "*",
                "stringValue"),),
    "bedrock-converse": (("contentBlockDelta", "delta", "toolUse", "input"),),
    "cohere": (("delta", "message", "tool_calls", "function", "arguments"),),
}
# Structured arguments (char mutations reach their string leaves too).
_STRUCTURED: dict[str, tuple[tuple[str, ...], ...]] = {
    "anthropic": (("content_block", "input"), ("message", "content", "*", "input")),
    "gemini": (("candidates", "*", "content", "parts", "*", "functionCall", "args"),),
    "ollama": (("message", "tool_calls", "*", "function", "arguments"),),
}
# Fields each adapter reads to place a tool-call event; retyping one makes the event mistyped.
TC = ("choices", "*", "delta", "tool_calls")
PART = ("candidates", "*", "content", "parts", "*")
_BSTART = ("contentBlockStart", "start", "toolUse")
_BDELTA = ("contentBlockDelta", "delta", "toolUse")
_CCALL = ("delta", "message", "tool_calls")
_OCALL = ("message", "tool_calls", "*")
_READ_FIELDS: dict[str, tuple[tuple[str, ...], ...]] = {
    "openai-chat": (
        ("choices",), ("choices", "*"), ("choices", "*", "delta"), TC, (*TC, "*"),
        (*TC, "*", "index"), (*TC, "*", "function"), (*TC, "*", "function", "arguments"),
        (*TC, "*", "id"), (*TC, "*", "function", "name"),
    ),
    "openai-responses": (("type",), ("delta",), ("item",), ("item", "type"), ("arguments",),
                         ("response",), ("item", "call_id"), ("item", "name"), ("item_id",),
                         ("output_index",)),
    "anthropic": (("type",), ("index",), ("delta",), ("delta", "type"), ("delta", "partial_json"),
                  ("content_block",), ("content_block", "type"), ("content_block", "id"),
                  ("content_block", "name")),
    "gemini": (
        ("candidates",), ("candidates", "*"), ("candidates", "*", "content"),
        ("candidates", "*", "content", "parts"), PART, (*PART, "functionCall"),
        (*PART, "functionCall", "partialArgs"), (*PART, "functionCall", "partialArgs", "*"),
        (*PART, "functionCall", "partialArgs", "*", "stringValue"),
        (*PART, "functionCall", "args"), (*PART, "functionCall", "willContinue"),
        (*PART, "functionCall", "id"), (*PART, "functionCall", "name"),
    ),
    "bedrock-converse": (
        ("contentBlockStart",), ("contentBlockStart", "contentBlockIndex"), ("contentBlockStart", "start"),
        _BSTART, (*_BSTART, "toolUseId"), (*_BSTART, "name"), ("contentBlockDelta",),
        ("contentBlockDelta", "contentBlockIndex"), ("contentBlockDelta", "delta"), _BDELTA,
        (*_BDELTA, "input"),
    ),
    "cohere": (("type",), ("index",), ("delta",), ("delta", "message"), _CCALL, (*_CCALL, "id"),
               (*_CCALL, "function"), (*_CCALL, "function", "name"), (*_CCALL, "function", "arguments")),
    "ollama": (("message",), ("message", "tool_calls"), _OCALL, (*_OCALL, "id"), (*_OCALL, "function"),
               (*_OCALL, "function", "name"), (*_OCALL, "function", "arguments"),
               (*_OCALL, "function", "index")),
}


def find(node: Any, pattern: tuple[str, ...], prefix: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every (path, value) in ``node`` matching ``pattern``; ``*`` matches list positions."""
    if not pattern:
        yield prefix, node
        return
    step, rest = pattern[0], pattern[1:]
    if step == "*":
        if isinstance(node, list):
            for i, item in enumerate(node):
                yield from find(item, rest, (*prefix, i))
    elif isinstance(node, dict) and step in node:
        yield from find(node[step], rest, (*prefix, step))


def _leaves(value: Any, prefix: Path) -> Iterator[tuple[Path, str]]:
    if isinstance(value, str):
        yield prefix, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _leaves(item, (*prefix, i))


class StreamShape:
    """What one stream offers to mutate, computed once per stream and shared by its cases."""

    def __init__(self, stream: FuzzStream) -> None:
        self.stream = stream
        api = stream.api
        events = stream.events
        self.fragments: list[tuple[int, Path, str]] = []
        self.texts: list[tuple[int, Path, str]] = []
        self.fields: list[tuple[int, Path, Any]] = []
        self.fragment_events: set[int] = set()  # events carrying argument data
        self.tool_events: set[int] = set()  # events carrying any part of a tool call
        for i, event in enumerate(events):
            for pattern in _FRAGMENTS.get(api, ()):
                for path, value in find(event, pattern):
                    if isinstance(value, str) and (api != "openai-responses" or _is_delta(event)):
                        self.texts.append((i, path, value))
                        if value:
                            self.fragments.append((i, path, value))
                            self.fragment_events.add(i)
            for pattern in _STRUCTURED.get(api, ()):
                for path, value in find(event, pattern):
                    self.texts.extend((i, p, v) for p, v in _leaves(value, path))
            if api == "gemini" and any(True for _ in find(event, (*PART, "functionCall", "partialArgs", "*"))):
                self.fragment_events.add(i)  # a lost value of any type is as invisible as text
            if _tool_event(api, event):
                self.tool_events.add(i)
                for pattern in _READ_FIELDS.get(api, ()):
                    self.fields.extend((i, p, v) for p, v in find(event, pattern))
        self.texts = [t for t in self.texts if t[2]]
        self.keepalive_after = _gemini_open_points(events) if api == "gemini" else []
        self._bodies: dict[bool, tuple[bytes, str]] = {}

    def body(self, rng: random.Random) -> tuple[bytes, str, str]:
        """The raw body to cut: the cassette's own, else one built (Gemini: SSE or JSON array)."""
        if self.stream.body is not None:
            return self.stream.body, self.stream.content_type, "recorded body"
        as_array = self.stream.api == "gemini" and rng.random() < 0.5
        if as_array not in self._bodies:
            self._bodies[as_array] = synthesize_body(self.stream, json_array=as_array)
        body, content_type = self._bodies[as_array]
        return body, content_type, "JSON array" if as_array else "SSE"

    def applicable(self, kind: str) -> bool:
        n = len(self.stream.events)
        if kind == "swap":
            return n >= 2
        if kind == "rechunk":
            return any(len(text) >= 2 for _, _, text in self.fragments)
        if kind == "char":
            return bool(self.texts)
        if kind == "retype":
            return bool(self.fields)
        if kind == "keepalive":
            return bool(self.keepalive_after)
        return n >= 1


def _is_delta(event: Any) -> bool:
    kind = event.get("type") if isinstance(event, dict) else None
    return isinstance(kind, str) and kind.endswith(".delta") and "call" in kind


def _tool_event(api: str, event: Any) -> bool:
    """Does this event carry part of a tool call (so a mistyped field in it touches one)?"""
    if not isinstance(event, dict):
        return False
    if api == "openai-chat":
        return any(True for _ in find(event, ("choices", "*", "delta", "tool_calls", "*")))
    if api == "gemini":
        return any(True for _ in find(event, (*PART, "functionCall")))
    kind = event.get("type")
    if api == "anthropic":
        block = event.get("content_block")
        block_type = block.get("type") if isinstance(block, dict) else None
        delta = event.get("delta")
        return (isinstance(block_type, str) and block_type.endswith("tool_use")) or (
            isinstance(delta, dict) and delta.get("type") == "input_json_delta")
    if api == "openai-responses" and isinstance(kind, str):
        item = event.get("item")
        item_type = item.get("type") if isinstance(item, dict) else None
        return "call" in kind or item_type in ("function_call", "custom_tool_call")
    return _new_family_tool_event(api, event)


def _new_family_tool_event(api: str, event: dict[str, Any]) -> bool:
    if api == "bedrock-converse":
        return any(True for _ in find(event, _BSTART)) or any(True for _ in find(event, _BDELTA))
    if api == "cohere":
        kind = event.get("type")
        return isinstance(kind, str) and kind.startswith("tool-call-")
    if api == "ollama":
        return any(True for _ in find(event, _OCALL))
    return False


def _gemini_open_points(events: list[Any]) -> list[tuple[int, Any]]:
    """Positions after which a streaming Gemini call is open: (event index, candidate index)."""
    points: list[tuple[int, Any]] = []
    open_at: dict[Any, bool] = {}
    for i, event in enumerate(events):
        for path, call in find(event, (*PART, "functionCall")):
            if not isinstance(call, dict):
                continue
            candidate = event["candidates"][path[1]]
            ci = candidate.get("index") if isinstance(candidate, dict) else None
            if call.get("name"):
                open_at[ci] = call.get("willContinue") is True
            elif call.get("partialArgs") or call.get("willContinue") is True:
                open_at[ci] = open_at.get(ci, False) and call.get("willContinue") is True
            else:
                open_at[ci] = False
        points.extend((i, ci) for ci, is_open in open_at.items() if is_open)
    return points


def gemini_interrupted(events: list[Any]) -> list[tuple[int, str]]:
    """Streaming Gemini calls that never got their end: (call position, name).

    Either a new named ``functionCall`` began over the call, or the stream ended with the call
    still declared to continue (``willContinue: true`` and no end marker before the finish
    reason): the vendor never finished it. Positions count calls as DESIGN §4.1 opens them
    (every named part, and a nameless part with ``args``; a nameless part with ``partialArgs``
    and nothing open is an orphan and opens nothing), which is the ``ToolCall.index``.
    """
    interrupted: list[tuple[int, str]] = []
    open_at: dict[Any, tuple[int, str]] = {}
    count = 0
    for event in events:
        for path, call in find(event, (*PART, "functionCall")):
            if not isinstance(call, dict):
                continue
            candidate = event["candidates"][path[1]]
            ci = candidate.get("index") if isinstance(candidate, dict) else None
            name, going = call.get("name"), call.get("willContinue") is True
            if name:
                if ci in open_at:
                    interrupted.append(open_at.pop(ci))
                if going:
                    open_at[ci] = (count, str(name))
                count += 1
            elif call.get("partialArgs"):
                if ci not in open_at:  # nothing to attach to: an orphan (DESIGN §5.1), no call
                    continue
                if not going:
                    del open_at[ci]
            elif call.get("args") is not None:
                count += 1
            elif not going:
                open_at.pop(ci, None)
    return interrupted + [call for call in open_at.values() if call[1]]


def tool_elements(api: str, event: Any) -> int:
    if api == "openai-chat":
        return sum(1 for _ in find(event, (*TC, "*")))
    if api == "ollama":
        return sum(1 for _ in find(event, _OCALL))
    if api == "gemini":
        return sum(1 for _ in find(event, (*PART, "functionCall")))
    return 1
