"""Cohere's v2 chat through the ``cohere`` SDK's ``ClientV2`` (retries off per call)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ._common import user_turn
from ._openai import function_tools


def client(*, api_key: str, base_url: str | None, api_version: str | None,
           asynchronous: bool) -> Any:
    import cohere

    cls = cohere.AsyncClientV2 if asynchronous else cohere.ClientV2
    if base_url is None:
        return cls(api_key=api_key)
    return cls(api_key=api_key, base_url=base_url)


def declare(api: str, tools: Mapping[str, Mapping[str, Any]], *,
            describe: Callable[[str, Mapping[str, Any]], str],
            strict: bool | None) -> list[Any]:
    return function_tools(tools, describe)


def _request(*, model: str, contents: str | list[Any], tools: list[Any] | None,
             max_tokens: int | None, extra_headers: dict[str, str]) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "model": model,
        "messages": user_turn(contents),
        # one request is one HTTP exchange: the SDK would retry a 5xx twice
        "request_options": {"max_retries": 0, "additional_headers": extra_headers},
    }
    if tools:
        kwargs["tools"] = tools
    if max_tokens is not None:
        kwargs["max_tokens"] = max_tokens
    return kwargs


def stream(api: str, sdk: Any, *, model: str, contents: str | list[Any],
           tools: list[Any] | None, max_tokens: int | None, include_usage: bool,
           extra_headers: dict[str, str]) -> Any:
    return sdk.chat_stream(**_request(model=model, contents=contents, tools=tools,
                                      max_tokens=max_tokens, extra_headers=extra_headers))


async def astream(api: str, sdk: Any, *, model: str, contents: str | list[Any],
                  tools: list[Any] | None, max_tokens: int | None, include_usage: bool,
                  extra_headers: dict[str, str]) -> Any:
    return sdk.chat_stream(**_request(model=model, contents=contents, tools=tools,
                                      max_tokens=max_tokens, extra_headers=extra_headers))
