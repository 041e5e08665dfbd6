"""Gemini through ``google-genai``, majors 2 and 3 (one client serves sync and ``.aio``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def client(*, api_key: str, base_url: str | None, api_version: str | None,
           asynchronous: bool) -> Any:
    from google import genai
    from google.genai import types

    # One attempt, like max_retries=0 for the other SDKs: one request, one HTTP exchange.
    options = types.HttpOptions(base_url=base_url, api_version=api_version,
                                retry_options=types.HttpRetryOptions(attempts=1))
    # Always the whole Client (its ``.aio`` is used for async): google-genai closes the
    # HTTP client when the Client object is collected, so nobody may hold only ``.aio``.
    return genai.Client(api_key=api_key, http_options=options)


def declare(api: str, tools: Mapping[str, Mapping[str, Any]], *,
            describe: Callable[[str, Mapping[str, Any]], str],
            strict: bool | None) -> list[Any]:
    return [{"function_declarations": [
        {"name": name, "description": describe(name, schema),
         "parameters_json_schema": dict(schema)}
        for name, schema in tools.items()]}]


def _request(*, model: str, contents: str | list[Any], tools: list[Any] | None,
             max_tokens: int | None, extra_headers: dict[str, str]) -> dict[str, Any]:
    from google.genai import types

    config = types.GenerateContentConfig(
        tools=tools,
        max_output_tokens=max_tokens,
        http_options=types.HttpOptions(headers=extra_headers) if extra_headers else None,
        # The caller runs the tools (or does not): the SDK must not call anything itself.
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True))
    return {"model": model, "contents": contents, "config": config}


def stream(api: str, sdk: Any, *, model: str, contents: str | list[Any],
         tools: list[Any] | None, max_tokens: int | None, include_usage: bool,
         extra_headers: dict[str, str]) -> Any:
    return sdk.models.generate_content_stream(
        **_request(model=model, contents=contents, tools=tools, max_tokens=max_tokens,
                   extra_headers=extra_headers))


async def astream(api: str, sdk: Any, *, model: str, contents: str | list[Any],
                tools: list[Any] | None, max_tokens: int | None, include_usage: bool,
                extra_headers: dict[str, str]) -> Any:
    return await sdk.aio.models.generate_content_stream(
        **_request(model=model, contents=contents, tools=tools, max_tokens=max_tokens,
                   extra_headers=extra_headers))
