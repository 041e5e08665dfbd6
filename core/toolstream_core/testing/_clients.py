"""Drive the real vendor SDKs (streaming) against an emulator, a cassette or a vendor.

Used by the cassette recorder, the replay tests and the CLI: one place that
knows each SDK's streaming call, how it wants tools declared, and which base
URL form it expects. The SDKs are optional dependencies, imported on use.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ._scenarios import TOOL_DESCRIPTIONS, TOOLS

__all__ = [
    "DEFAULT_PROMPT",
    "StreamResult",
    "anthropic_tools",
    "gemini_tools",
    "openai_chat_tools",
    "openai_responses_tools",
    "stream_sdk",
]

DEFAULT_PROMPT = "Write the notes file, check the weather and the time as needed."


def openai_chat_tools(tools: Mapping[str, dict[str, Any]] = TOOLS) -> list[dict[str, Any]]:
    """``tools=`` for Chat Completions."""
    return [{"type": "function", "function": {"name": n, "description": _desc(n),
                                              "parameters": s}} for n, s in tools.items()]


def openai_responses_tools(tools: Mapping[str, dict[str, Any]] = TOOLS) -> list[dict[str, Any]]:
    """``tools=`` for the Responses API."""
    return [{"type": "function", "name": n, "description": _desc(n), "parameters": s}
            for n, s in tools.items()]


def anthropic_tools(tools: Mapping[str, dict[str, Any]] = TOOLS) -> list[dict[str, Any]]:
    """``tools=`` for Anthropic Messages."""
    return [{"name": n, "description": _desc(n), "input_schema": s} for n, s in tools.items()]


def gemini_tools(tools: Mapping[str, dict[str, Any]] = TOOLS) -> list[Any]:
    """``config.tools`` for google-genai (function declarations with JSON Schema)."""
    from google.genai import types

    decls = [types.FunctionDeclaration(name=n, description=_desc(n),
                                       parameters_json_schema=s) for n, s in tools.items()]
    return [types.Tool(function_declarations=decls)]


def _desc(name: str) -> str:
    return TOOL_DESCRIPTIONS.get(name, name)


@dataclass
class StreamResult:
    """What one streamed SDK call produced: the SDK's events and how it ended."""

    events: list[Any] = field(default_factory=list)
    error: BaseException | None = None


def _sdk_kwargs(api: str, base_url: str | None, api_key: str) -> dict[str, Any]:
    kw: dict[str, Any] = {"api_key": api_key, "max_retries": 0}
    if base_url is not None:
        kw["base_url"] = base_url.rstrip("/") + ("/v1" if api.startswith("openai") else "")
    return kw


@functools.lru_cache(maxsize=32)
def _client(api: str, base_url: str | None, api_key: str) -> Any:
    """One SDK client per (api, base_url, key): building one costs more than a request."""
    if api.startswith("openai"):
        import openai

        return openai.OpenAI(**_sdk_kwargs(api, base_url, api_key))
    if api == "anthropic":
        import anthropic

        return anthropic.Anthropic(**_sdk_kwargs(api, base_url, api_key))
    if api == "gemini":
        from google import genai
        from google.genai import types

        opts = types.HttpOptions(base_url=base_url,
                                 retry_options=types.HttpRetryOptions(attempts=1))
        return genai.Client(api_key=api_key, http_options=opts)
    raise ValueError(f"unknown API {api!r}")


def _iter_sdk(api: str, *, base_url: str | None, api_key: str, model: str, prompt: str,
              tools: Mapping[str, dict[str, Any]],
              extra_headers: Mapping[str, str] | None) -> Iterator[Any]:
    headers = dict(extra_headers or {})
    if api == "openai-chat":
        oc = _client(api, base_url, api_key)
        yield from oc.chat.completions.create(
            model=model, messages=[{"role": "user", "content": prompt}],
            tools=openai_chat_tools(tools), stream=True,
            stream_options={"include_usage": True}, extra_headers=headers)
    elif api == "openai-responses":
        orc = _client(api, base_url, api_key)
        yield from orc.responses.create(
            model=model, input=prompt, tools=openai_responses_tools(tools),
            stream=True, extra_headers=headers)
    elif api == "anthropic":
        ac = _client(api, base_url, api_key)
        yield from ac.messages.create(
            model=model, max_tokens=1024, messages=[{"role": "user", "content": prompt}],
            tools=anthropic_tools(tools), stream=True, extra_headers=headers)
    elif api == "gemini":
        from google.genai import types

        gc = _client(api, base_url, api_key)
        config = types.GenerateContentConfig(
            tools=gemini_tools(tools),
            http_options=types.HttpOptions(headers=headers) if headers else None,
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
        yield from gc.models.generate_content_stream(model=model, contents=prompt, config=config)
    else:
        raise ValueError(f"unknown API {api!r}")


def stream_sdk(api: str, *, model: str, base_url: str | None = None, api_key: str = "test",
               prompt: str = DEFAULT_PROMPT, tools: Mapping[str, dict[str, Any]] = TOOLS,
               extra_headers: Mapping[str, str] | None = None) -> StreamResult:
    """Stream one request through the real SDK and keep every event it yields.

    ``base_url`` is the server root (``VendorEmulator.base_url``); ``None`` uses
    the SDK's default vendor URL (for cassette replay). An exception while
    streaming (a dropped connection, an error event the SDK raises on) ends the
    stream and is returned in ``error``, the way ``assemble()`` treats it.
    """
    result = StreamResult()
    try:
        for event in _iter_sdk(api, base_url=base_url, api_key=api_key, model=model,
                               prompt=prompt, tools=tools, extra_headers=extra_headers):
            result.events.append(event)
    except Exception as exc:  # the stream's end, recorded like assemble() does
        result.error = exc
    return result



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
        if api == "openai-chat":
            import json

            messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": c.id, "type": "function",
                 "function": {"name": c.name, "arguments": json.dumps(args_of(c))}}
                for c in calls]})
            messages += [{"role": "tool", "tool_call_id": c.id, "content": texts[c.id][0]}
                         for c in calls]
            stream = _client(api, base_url, api_key).chat.completions.create(
                model=model, messages=messages, tools=openai_chat_tools(tools), stream=True,
                stream_options={"include_usage": True})
        elif api == "openai-responses":
            import json

            items: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
            items += [{"type": "function_call", "call_id": c.id, "name": c.name,
                       "arguments": json.dumps(args_of(c))} for c in calls]
            items += [{"type": "function_call_output", "call_id": c.id,
                       "output": texts[c.id][0]} for c in calls]
            stream = _client(api, base_url, api_key).responses.create(
                model=model, input=items, tools=openai_responses_tools(tools), stream=True)
        elif api == "anthropic":
            msgs: list[dict[str, Any]] = [
                {"role": "user", "content": prompt},
                {"role": "assistant", "content": [
                    {"type": "tool_use", "id": c.id, "name": c.name, "input": args_of(c)}
                    for c in calls]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": c.id, "content": texts[c.id][0],
                     "is_error": texts[c.id][1]} for c in calls]},
            ]
            stream = _client(api, base_url, api_key).messages.create(
                model=model, max_tokens=1024, messages=msgs, tools=anthropic_tools(tools),
                stream=True)
        elif api == "gemini":
            from google.genai import types

            contents = [
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
            config = types.GenerateContentConfig(
                tools=gemini_tools(tools),
                automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
            stream = _client(api, base_url, api_key).models.generate_content_stream(
                model=model, contents=contents, config=config)
        else:
            raise ValueError(f"unknown API {api!r}")
        for event in stream:
            result.events.append(event)
    except Exception as exc:  # the stream's end, as in stream_sdk
        result.error = exc
    return result
