"""Drive the real vendor SDKs (streaming) against an emulator, a cassette or a vendor.

Used by the cassette recorder, the replay tests and the CLI. What each SDK's
streaming call looks like is `toolstream_core.vendors`' business; this module
adds the scenarios' tools and prompt, the emulator's base URL, and the second
request of an agent loop (the calls paired with their results).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolstream_core.vendors import declare_tools, make_client, open_stream

from ._scenarios import TOOL_DESCRIPTIONS, TOOLS

__all__ = [
    "DEFAULT_PROMPT",
    "StreamResult",
    "followup_sdk",
    "openai_chat_tools",
    "scenario_tools",
    "stream_sdk",
]

DEFAULT_PROMPT = "Write the notes file, check the weather and the time as needed."


def scenario_tools(api: str, tools: Mapping[str, dict[str, Any]] = TOOLS) -> list[Any]:
    """``tools=`` for ``api``, described the way the scenarios describe them."""
    return declare_tools(api, tools, describe=_desc)


def openai_chat_tools(tools: Mapping[str, dict[str, Any]] = TOOLS) -> list[Any]:
    """``tools=`` for Chat Completions (the gateway and the load benchmark post raw JSON)."""
    return scenario_tools("openai-chat", tools)


def _desc(name: str, schema: Mapping[str, Any]) -> str:
    return TOOL_DESCRIPTIONS.get(name, name)


@dataclass
class StreamResult:
    """What one streamed SDK call produced: the SDK's events and how it ended."""

    events: list[Any] = field(default_factory=list)
    error: BaseException | None = None


@functools.lru_cache(maxsize=32)
def _client(api: str, base_url: str | None, api_key: str) -> Any:
    """One SDK client per (api, base_url, key): building one costs more than a request.

    ``base_url`` is the server root (the emulator's); OpenAI's SDK wants ``/v1`` on it.
    """
    if base_url is not None:
        base_url = base_url.rstrip("/") + ("/v1" if api.startswith("openai") else "")
    return make_client(api, api_key=api_key, base_url=base_url)


def _collect(result: StreamResult, api: str, *, base_url: str | None, api_key: str, model: str,
             contents: str | list[Any], tools: Mapping[str, dict[str, Any]],
             extra_headers: Mapping[str, str] | None = None,
             max_tokens: int | None = None) -> StreamResult:
    try:
        for event in open_stream(api, _client(api, base_url, api_key), model=model,
                                 contents=contents, tools=scenario_tools(api, tools),
                                 max_tokens=max_tokens, include_usage=True,
                                 extra_headers=extra_headers):
            result.events.append(event)
    except Exception as exc:  # the stream's end, recorded like assemble() does
        result.error = exc
    return result


def stream_sdk(api: str, *, model: str, base_url: str | None = None, api_key: str = "test",
               prompt: str = DEFAULT_PROMPT, tools: Mapping[str, dict[str, Any]] = TOOLS,
               extra_headers: Mapping[str, str] | None = None,
               max_tokens: int | None = None) -> StreamResult:
    """Stream one request through the real SDK and keep every event it yields.

    ``base_url`` is the server root (``VendorEmulator.base_url``); ``None`` uses
    the SDK's default vendor URL (for cassette replay). An exception while
    streaming (a dropped connection, an error event the SDK raises on) ends the
    stream and is returned in ``error``, the way ``assemble()`` treats it.
    ``max_tokens`` is the request's output limit (the profiles' cassettes send one, so
    that the core's max-token backstop has a limit to compare the usage with).
    """
    return _collect(StreamResult(), api, base_url=base_url, api_key=api_key, model=model,
                    contents=prompt, tools=tools, extra_headers=extra_headers,
                    max_tokens=max_tokens)


def _result_texts(turn: Any) -> dict[str, tuple[str, bool]]:
    """Tool result text per call id: the paired error for rejected calls, a stub otherwise."""
    texts: dict[str, tuple[str, bool]] = {}
    for call in turn.calls:
        if call.id:
            texts[call.id] = (f"{call.name}: done (emulated tool result)", False)
    for result in turn.error_results():
        texts[result.tool_call_id] = (result.content, True)
    return texts


def _unique_calls(turn: Any) -> list[Any]:
    seen: set[str] = set()
    calls = []
    for call in turn.calls:
        if call.id and call.id not in seen:
            seen.add(call.id)
            calls.append(call)
    return calls


def followup_sdk(api: str, turn: Any, *, model: str, base_url: str | None = None,
                 api_key: str = "test", prompt: str = DEFAULT_PROMPT,
                 tools: Mapping[str, dict[str, Any]] = TOOLS) -> StreamResult:
    """The next request of an agent loop: the turn's calls, each paired with one result.

    Committed calls get a stub result, rejected ones their ``ErrorResult`` text,
    so the history is legal for the vendor (the emulator checks it like the
    real APIs do). Arguments of calls that did not commit are sent as ``{}``.
    """
    calls = _unique_calls(turn)
    texts = _result_texts(turn)
    result = StreamResult()

    def args_of(call: Any) -> dict[str, Any]:
        return dict(call.arguments) if call.arguments is not None else {}

    try:
        history = _history(api, prompt, calls, texts, args_of)
    except ImportError as exc:
        result.error = exc
        return result
    return _collect(result, api, base_url=base_url, api_key=api_key, model=model,
                    contents=history, tools=tools)


def _history(api: str, prompt: str, calls: list[Any], texts: dict[str, tuple[str, bool]],
             args_of: Any) -> list[Any]:
    """The user prompt, the assistant's calls and one result each, in ``api``'s shape."""
    if api == "openai-chat":
        return [{"role": "user", "content": prompt},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": c.id, "type": "function",
                     "function": {"name": c.name, "arguments": json.dumps(args_of(c))}}
                    for c in calls]},
                *({"role": "tool", "tool_call_id": c.id, "content": texts[c.id][0]}
                  for c in calls)]
    if api == "openai-responses":
        return [{"role": "user", "content": prompt},
                *({"type": "function_call", "call_id": c.id, "name": c.name,
                   "arguments": json.dumps(args_of(c))} for c in calls),
                *({"type": "function_call_output", "call_id": c.id,
                   "output": texts[c.id][0]} for c in calls)]
    if api == "anthropic":
        return [
            {"role": "user", "content": prompt},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": c.id, "name": c.name, "input": args_of(c)}
                for c in calls]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": c.id, "content": texts[c.id][0],
                 "is_error": texts[c.id][1]} for c in calls]},
        ]
    if api == "gemini":
        from google.genai import types

        return [
            types.Content(role="user", parts=[types.Part(text=prompt)]),
            types.Content(role="model", parts=[
                types.Part(function_call=types.FunctionCall(
                    name=c.name, args=args_of(c), id=c.id)) for c in calls]),
            types.Content(role="user", parts=[
                types.Part(function_response=types.FunctionResponse(
                    name=c.name, id=c.id,
                    response={"error" if texts[c.id][1] else "output": texts[c.id][0]}))
                for c in calls]),
        ]
    raise ValueError(f"unknown API {api!r}")
