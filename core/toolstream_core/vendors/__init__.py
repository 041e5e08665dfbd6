"""The one place that knows the vendor SDKs: build a client, declare tools, open a stream.

The core never imports an SDK (it reads whatever objects the caller's SDK yields); the
test kit and the ``toolstream`` command both have to *make* requests, and they make
them through here so there is one spelling of each SDK's streaming call. Each API's
quirks live in one private module (`_openai`, `_anthropic`, `_gemini`, `_bedrock`,
`_ollama`, `_cohere`); the SDKs are
optional extras, imported only when a client is built or a stream opened, so
``import toolstream_core.vendors`` costs nothing.

Both majors of each SDK are supported (openai 2/3, anthropic 0.12x/2, google-genai
2/3): only calls whose shape is the same in both are used. Bedrock goes through
boto3's ``bedrock-runtime`` client, Ollama through ``ollama.Client(host=)``, Cohere
through ``cohere.ClientV2``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

from . import _anthropic, _bedrock, _cohere, _gemini, _ollama, _openai

__all__ = [
    "SDK_EXTRA",
    "Describe",
    "aopen_stream",
    "declare_tools",
    "make_client",
    "open_stream",
    "schema_description",
]

SDK_EXTRA: dict[str, str] = {
    "openai-chat": "openai",
    "openai-responses": "openai",
    "anthropic": "anthropic",
    "gemini": "gemini",
    "bedrock-converse": "bedrock",
    "ollama": "ollama",
    "cohere": "cohere",
}
"""The ``toolstream-gate[...]`` extra that installs each API's SDK (for error messages)."""

Describe = Callable[[str, Mapping[str, Any]], str]
"""How a tool's description is chosen from its name and JSON Schema."""


def schema_description(name: str, schema: Mapping[str, Any]) -> str:
    """The schema's own ``description``, else a neutral one (vendors require some text)."""
    text = schema.get("description")
    return text if isinstance(text, str) and text else f"The {name} tool."


_MODULES: dict[str, Any] = {
    "openai-chat": _openai,
    "openai-responses": _openai,
    "anthropic": _anthropic,
    "gemini": _gemini,
    "bedrock-converse": _bedrock,
    "ollama": _ollama,
    "cohere": _cohere,
}


def _module(api: str) -> Any:
    try:
        return _MODULES[api]
    except KeyError:
        raise ValueError(f"unknown API {api!r}") from None


def make_client(api: str, *, api_key: str, base_url: str | None = None,
                api_version: str | None = None, asynchronous: bool = False) -> Any:
    """A client of ``api``'s SDK with retries off: one request is one HTTP exchange.

    ``base_url`` is in the form the SDK takes (OpenAI's includes ``/v1``); ``None`` is
    the vendor's default. ``api_version`` only matters to Gemini (``v1beta``...).
    Raises ImportError when the SDK is not installed.
    """
    return _module(api).client(api_key=api_key, base_url=base_url, api_version=api_version,
                               asynchronous=asynchronous)


def declare_tools(api: str, tools: Mapping[str, Mapping[str, Any]], *,
                  describe: Describe = schema_description,
                  strict: bool | None = None) -> list[Any]:
    """``tools`` (``name -> JSON Schema``) in the request shape ``api`` takes.

    ``strict`` is sent only where the API has the flag (Responses) and only when given.
    """
    declared: list[Any] = _module(api).declare(api, tools, describe=describe, strict=strict)
    return declared


def open_stream(api: str, client: Any, *, model: str, contents: str | list[Any],
                tools: list[Any] | None = None, max_tokens: int | None = None,
                include_usage: bool = False,
                extra_headers: Mapping[str, str] | None = None) -> Iterator[Any]:
    """The SDK's own streamed response (``stream=True``), iterated by the caller.

    ``contents`` is a user prompt, or a whole history already in ``api``'s message
    shape. ``tools`` come from `declare_tools`; none means the request declares none.
    ``include_usage`` asks Chat Completions for its usage chunk. Keep ``client``
    referenced until the stream is read: google-genai closes its HTTP connection
    when the Client object is collected, and its stream is lazy.
    """
    stream: Iterator[Any] = _module(api).stream(
        api, client, model=model, contents=contents, tools=tools or None,
        max_tokens=max_tokens, include_usage=include_usage,
        extra_headers=dict(extra_headers or {}))
    return stream


async def aopen_stream(api: str, client: Any, *, model: str, contents: str | list[Any],
                       tools: list[Any] | None = None, max_tokens: int | None = None,
                       include_usage: bool = False,
                       extra_headers: Mapping[str, str] | None = None) -> AsyncIterator[Any]:
    """`open_stream` for a client built with ``asynchronous=True``."""
    stream: AsyncIterator[Any] = await _module(api).astream(
        api, client, model=model, contents=contents, tools=tools or None,
        max_tokens=max_tokens, include_usage=include_usage,
        extra_headers=dict(extra_headers or {}))
    return stream
