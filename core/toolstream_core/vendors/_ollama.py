"""Ollama's native ``/api/chat`` through the ``ollama`` client.

The client is told the host (the emulator's, else ``OLLAMA_HOST`` or the local
default); it sends no key, as a local server takes none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ._common import user_turn
from ._openai import function_tools


def client(*, api_key: str, base_url: str | None, api_version: str | None,
           asynchronous: bool) -> Any:
    import ollama

    cls = ollama.AsyncClient if asynchronous else ollama.Client
    return cls(host=base_url)


def declare(api: str, tools: Mapping[str, Mapping[str, Any]], *,
            describe: Callable[[str, Mapping[str, Any]], str],
            strict: bool | None) -> list[Any]:
    return function_tools(tools, describe)


def _request(*, model: str, contents: str | list[Any], tools: list[Any] | None,
             max_tokens: int | None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "model": model, "stream": True,
        "messages": user_turn(contents),
    }
    if tools:
        kwargs["tools"] = tools
    if max_tokens is not None:  # Ollama's output limit is the num_predict option
        kwargs["options"] = {"num_predict": max_tokens}
    return kwargs


def stream(api: str, sdk: Any, *, model: str, contents: str | list[Any],
           tools: list[Any] | None, max_tokens: int | None, include_usage: bool,
           extra_headers: dict[str, str]) -> Any:
    """``chat(stream=True)`` (``extra_headers`` go on the client, not a call)."""
    return sdk.chat(**_request(model=model, contents=contents, tools=tools,
                               max_tokens=max_tokens))


async def astream(api: str, sdk: Any, *, model: str, contents: str | list[Any],
                  tools: list[Any] | None, max_tokens: int | None, include_usage: bool,
                  extra_headers: dict[str, str]) -> Any:
    return await sdk.chat(**_request(model=model, contents=contents, tools=tools,
                                     max_tokens=max_tokens))
