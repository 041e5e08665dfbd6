"""OpenAI (Chat Completions and Responses) through the ``openai`` SDK, majors 2 and 3."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ._common import add_tools_and_headers, user_turn


def client(*, api_key: str, base_url: str | None, api_version: str | None,
           asynchronous: bool) -> Any:
    import openai

    cls = openai.AsyncOpenAI if asynchronous else openai.OpenAI
    return cls(api_key=api_key, base_url=base_url, max_retries=0)


def function_tools(tools: Mapping[str, Mapping[str, Any]],
                   describe: Callable[[str, Mapping[str, Any]], str]) -> list[Any]:
    """Chat Completions' ``{"type": "function", "function": {...}}`` tools (Ollama, Cohere too)."""
    return [{"type": "function", "function": {"name": name,
                                              "description": describe(name, schema),
                                              "parameters": dict(schema)}}
            for name, schema in tools.items()]


def declare(api: str, tools: Mapping[str, Mapping[str, Any]], *,
            describe: Callable[[str, Mapping[str, Any]], str],
            strict: bool | None) -> list[Any]:
    if api == "openai-chat":
        return function_tools(tools, describe)
    declared: list[Any] = []
    for name, schema in tools.items():
        tool: dict[str, Any] = {"type": "function", "name": name,
                                "description": describe(name, schema),
                                "parameters": dict(schema)}
        if strict is not None:
            tool["strict"] = strict
        declared.append(tool)
    return declared


def _request(api: str, *, model: str, contents: str | list[Any], tools: list[Any] | None,
             max_tokens: int | None, include_usage: bool,
             extra_headers: dict[str, str]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"model": model, "stream": True}
    if max_tokens is not None:  # each API's current name for the output limit
        kwargs["max_completion_tokens" if api == "openai-chat" else "max_output_tokens"] = max_tokens
    if api == "openai-chat":
        kwargs["messages"] = user_turn(contents)
        if include_usage:
            kwargs["stream_options"] = {"include_usage": True}
    else:
        kwargs["input"] = contents
    return add_tools_and_headers(kwargs, tools, extra_headers)


def stream(api: str, sdk: Any, *, model: str, contents: str | list[Any],
         tools: list[Any] | None, max_tokens: int | None, include_usage: bool,
         extra_headers: dict[str, str]) -> Any:
    kwargs = _request(api, model=model, contents=contents, tools=tools, max_tokens=max_tokens,
                      include_usage=include_usage, extra_headers=extra_headers)
    endpoint = sdk.chat.completions if api == "openai-chat" else sdk.responses
    return endpoint.create(**kwargs)


async def astream(api: str, sdk: Any, *, model: str, contents: str | list[Any],
                tools: list[Any] | None, max_tokens: int | None, include_usage: bool,
                extra_headers: dict[str, str]) -> Any:
    kwargs = _request(api, model=model, contents=contents, tools=tools, max_tokens=max_tokens,
                      include_usage=include_usage, extra_headers=extra_headers)
    endpoint = sdk.chat.completions if api == "openai-chat" else sdk.responses
    return await endpoint.create(**kwargs)
