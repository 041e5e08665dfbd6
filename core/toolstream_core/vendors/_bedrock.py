"""Amazon Bedrock Converse through ``boto3``'s ``bedrock-runtime`` client.

boto3 has no async client, so the async stream reads the same event stream one
event at a time on a worker thread (what LangChain's ``ChatBedrockConverse``
does too). A client built here signs with dummy credentials in ``us-east-1``:
the emulator and the cassettes check no signature, and a missing AWS profile
must not stop a replay before it starts.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

REGION = "us-east-1"
"""The region the client names (the cassettes are recorded under its endpoint)."""
ACCESS_KEY_ID = "toolstream-test"
"""The dummy access key id (the secret key is the caller's ``api_key``)."""
#: Environment variables that give boto3 real credentials to sign with.
_AWS_CREDENTIALS = ("AWS_ACCESS_KEY_ID", "AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK",
                    "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")


def client(*, api_key: str, base_url: str | None, api_version: str | None,
           asynchronous: bool) -> Any:
    """A ``bedrock-runtime`` client: dummy keys for the emulator or a replay, else the
    environment's credentials (recording against AWS)."""
    import boto3  # type: ignore[import-untyped]
    from botocore.config import Config  # type: ignore[import-untyped]

    # one attempt: one request is one HTTP exchange, as with the other SDKs
    config = Config(retries={"total_max_attempts": 1, "mode": "standard"})
    if base_url is None and any(os.environ.get(name) for name in _AWS_CREDENTIALS):
        return boto3.client("bedrock-runtime", region_name=os.environ.get("AWS_REGION", REGION),
                            config=config)
    return boto3.client("bedrock-runtime", region_name=REGION, endpoint_url=base_url,
                        aws_access_key_id=ACCESS_KEY_ID, aws_secret_access_key=api_key,
                        config=config)


def declare(api: str, tools: Mapping[str, Mapping[str, Any]], *,
            describe: Callable[[str, Mapping[str, Any]], str],
            strict: bool | None) -> list[Any]:
    return [{"toolSpec": {"name": name, "description": describe(name, schema),
                          "inputSchema": {"json": dict(schema)}}}
            for name, schema in tools.items()]


def _request(*, model: str, contents: str | list[Any], tools: list[Any] | None,
             max_tokens: int | None) -> dict[str, Any]:
    kwargs: dict[str, Any] = {
        "modelId": model,
        "messages": ([{"role": "user", "content": [{"text": contents}]}]
                     if isinstance(contents, str) else contents),
    }
    if tools:
        kwargs["toolConfig"] = {"tools": tools}
    if max_tokens is not None:
        kwargs["inferenceConfig"] = {"maxTokens": max_tokens}
    return kwargs


def stream(api: str, sdk: Any, *, model: str, contents: str | list[Any],
           tools: list[Any] | None, max_tokens: int | None, include_usage: bool,
           extra_headers: dict[str, str]) -> Any:
    """``converse_stream``'s event stream (``extra_headers`` are not sent: boto3 takes none)."""
    response = sdk.converse_stream(**_request(model=model, contents=contents, tools=tools,
                                              max_tokens=max_tokens))
    return response["stream"]


async def astream(api: str, sdk: Any, *, model: str, contents: str | list[Any],
                  tools: list[Any] | None, max_tokens: int | None, include_usage: bool,
                  extra_headers: dict[str, str]) -> Any:
    events = await asyncio.to_thread(stream, api, sdk, model=model, contents=contents,
                                     tools=tools, max_tokens=max_tokens,
                                     include_usage=include_usage, extra_headers=extra_headers)
    return _in_thread(iter(events))


_END = object()


async def _in_thread(events: Iterator[Any]) -> AsyncIterator[Any]:
    """Each ``next()`` of a blocking iterator on a worker thread."""
    while (event := await asyncio.to_thread(next, events, _END)) is not _END:
        yield event
