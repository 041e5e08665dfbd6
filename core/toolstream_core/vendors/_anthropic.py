"""Anthropic Messages through the ``anthropic`` SDK, majors 0.12x and 2."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ._common import add_tools_and_headers, user_turn

DEFAULT_MAX_TOKENS = 1024
"""Messages requires ``max_tokens``; enough for any tool-call turn the project records."""


def client(*, api_key: str, base_url: str | None, api_version: str | None,
           asynchronous: bool) -> Any:
    import anthropic

    cls = anthropic.AsyncAnthropic if asynchronous else anthropic.Anthropic
    return cls(api_key=api_key, base_url=base_url, max_retries=0)


def declare(api: str, tools: Mapping[str, Mapping[str, Any]], *,
            describe: Callable[[str, Mapping[str, Any]], str],
            strict: bool | None) -> list[Any]:
    return [{"name": name, "description": describe(name, schema), "input_schema": dict(schema)}
            for name, schema in tools.items()]


def _request(*, model: str, contents: str | list[Any], tools: list[Any] | None,
             max_tokens: int | None, extra_headers: dict[str, str]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "model": model, "stream": True,
        "max_tokens": DEFAULT_MAX_TOKENS if max_tokens is None else max_tokens,
        "messages": user_turn(contents),
    }
    return add_tools_and_headers(kwargs, tools, extra_headers)


def stream(api: str, sdk: Any, *, model: str, contents: str | list[Any],
         tools: list[Any] | None, max_tokens: int | None, include_usage: bool,
         extra_headers: dict[str, str]) -> Any:
    return sdk.messages.create(**_request(model=model, contents=contents, tools=tools,
                                          max_tokens=max_tokens, extra_headers=extra_headers))


async def astream(api: str, sdk: Any, *, model: str, contents: str | list[Any],
                tools: list[Any] | None, max_tokens: int | None, include_usage: bool,
                extra_headers: dict[str, str]) -> Any:
    return await sdk.messages.create(**_request(model=model, contents=contents, tools=tools,
                                                max_tokens=max_tokens,
                                                extra_headers=extra_headers))
