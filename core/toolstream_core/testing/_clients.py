"""Drive the real vendor SDKs (streaming) against an emulator, a cassette or a vendor.

Used by the cassette recorder, the replay tests and the CLI. What each SDK's
streaming call looks like is `toolstream_core.vendors`' business; this module
adds the scenarios' tools and prompt, the emulator's base URL, and the second
request of an agent loop (the calls paired with their results).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

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


class _Answer(NamedTuple):
    """One call of the turn and the result the agent sends for it."""

    call: Any
    text: str
    is_error: bool


def _answers(turn: Any) -> list[_Answer]:
    """Each call once (a re-sent id is one call), with its result text.

    Committed calls get a stub result, rejected ones their ``ErrorResult`` text
    (``error_results()`` is in the order of ``rejected``). A call without an id
    (the ``ollama`` client drops them) is its own call, answered by position.
    """
    errors = {id(c): r.content for c, r in zip(turn.rejected, turn.error_results(),
                                                strict=True)}
    seen: set[str] = set()
    answers: list[_Answer] = []
    for call in turn.calls:
        if call.id and call.id in seen:
            continue
        if call.id:
            seen.add(call.id)
        error = errors.get(id(call))
        answers.append(_Answer(call, error if error is not None
                               else f"{call.name}: done (emulated tool result)",
                               error is not None))
    return answers


def followup_sdk(api: str, turn: Any, *, model: str, base_url: str | None = None,
                 api_key: str = "test", prompt: str = DEFAULT_PROMPT,
                 tools: Mapping[str, dict[str, Any]] = TOOLS) -> StreamResult:
    """The next request of an agent loop: the turn's calls, each paired with one result.

    Committed calls get a stub result, rejected ones their ``ErrorResult`` text,
    so the history is legal for the vendor (the emulator checks it like the
    real APIs do). Arguments of calls that did not commit are sent as ``{}``.
    """
    result = StreamResult()
    try:
        history = _history(api, prompt, _answers(turn))
    except ImportError as exc:
        result.error = exc
        return result
    return _collect(result, api, base_url=base_url, api_key=api_key, model=model,
                    contents=history, tools=tools)


def _args(call: Any) -> dict[str, Any]:
    """The arguments sent back for a call (``{}`` for one that did not commit)."""
    return dict(call.arguments) if call.arguments is not None else {}


def _history(api: str, prompt: str, answers: list[_Answer]) -> list[Any]:
    """The user prompt, the assistant's calls and one result each, in ``api``'s shape."""
    build = _HISTORY.get(api)
    if build is None:
        raise ValueError(f"unknown API {api!r}")
    return build(prompt, answers)


def _openai_chat(prompt: str, answers: list[_Answer]) -> list[Any]:
    return [{"role": "user", "content": prompt},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": a.call.id, "type": "function",
                 "function": {"name": a.call.name, "arguments": json.dumps(_args(a.call))}}
                for a in answers]},
            *({"role": "tool", "tool_call_id": a.call.id, "content": a.text} for a in answers)]


def _openai_responses(prompt: str, answers: list[_Answer]) -> list[Any]:
    return [{"role": "user", "content": prompt},
            *({"type": "function_call", "call_id": a.call.id, "name": a.call.name,
               "arguments": json.dumps(_args(a.call))} for a in answers),
            *({"type": "function_call_output", "call_id": a.call.id, "output": a.text}
              for a in answers)]


def _anthropic(prompt: str, answers: list[_Answer]) -> list[Any]:
    return [
        {"role": "user", "content": prompt},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": a.call.id, "name": a.call.name, "input": _args(a.call)}
            for a in answers]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": a.call.id, "content": a.text,
             "is_error": a.is_error} for a in answers]},
    ]


def _gemini(prompt: str, answers: list[_Answer]) -> list[Any]:
    from google.genai import types

    return [
        types.Content(role="user", parts=[types.Part(text=prompt)]),
        types.Content(role="model", parts=[
            types.Part(function_call=types.FunctionCall(
                name=a.call.name, args=_args(a.call), id=a.call.id)) for a in answers]),
        types.Content(role="user", parts=[
            types.Part(function_response=types.FunctionResponse(
                name=a.call.name, id=a.call.id,
                response={"error" if a.is_error else "output": a.text}))
            for a in answers]),
    ]


def _bedrock(prompt: str, answers: list[_Answer]) -> list[Any]:
    return [
        {"role": "user", "content": [{"text": prompt}]},
        {"role": "assistant", "content": [
            {"toolUse": {"toolUseId": a.call.id, "name": a.call.name, "input": _args(a.call)}}
            for a in answers]},
        {"role": "user", "content": [
            {"toolResult": {"toolUseId": a.call.id, "content": [{"text": a.text}],
                            "status": "error" if a.is_error else "success"}}
            for a in answers]},
    ]


def _ollama(prompt: str, answers: list[_Answer]) -> list[Any]:
    """Ollama pairs a ``tool`` message with its call by position (and ``tool_name``)."""
    return [{"role": "user", "content": prompt},
            {"role": "assistant", "content": "", "tool_calls": [
                {"function": {"name": a.call.name, "arguments": _args(a.call)}}
                for a in answers]},
            *({"role": "tool", "content": a.text, "tool_name": a.call.name} for a in answers)]


def _cohere(prompt: str, answers: list[_Answer]) -> list[Any]:
    return [{"role": "user", "content": prompt},
            {"role": "assistant", "tool_plan": "I will call the tools.", "tool_calls": [
                {"id": a.call.id, "type": "function",
                 "function": {"name": a.call.name, "arguments": json.dumps(_args(a.call))}}
                for a in answers]},
            *({"role": "tool", "tool_call_id": a.call.id, "content": a.text}
              for a in answers)]


_HISTORY: dict[str, Callable[[str, list[_Answer]], list[Any]]] = {
    "openai-chat": _openai_chat,
    "openai-responses": _openai_responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "bedrock-converse": _bedrock,
    "ollama": _ollama,
    "cohere": _cohere,
}
