"""Responses events through the real openai SDK: served as SSE over HTTP, parsed by the client.

The transport is ``httpx.MockTransport`` (below the SDK, the only mocked layer): the SDK's own
SSE decoder and event types make the objects the core is fed, as in production.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import pytest

openai = pytest.importorskip("openai")
httpx = pytest.importorskip("httpx")


def sse_body(events: Iterable[Mapping[str, Any]]) -> bytes:
    """The events as the vendor frames them: ``event: <type>`` + ``data: <json>``."""
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def through_sdk(events: Iterable[Mapping[str, Any]]) -> list[Any]:
    """The SDK's event objects for ``events``, streamed by ``client.responses.create``."""
    body = sse_body(events)

    def handler(request: Any) -> Any:
        assert request.url.path.endswith("/responses")
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    client = openai.OpenAI(api_key="test", base_url="http://vendor.test/v1",
                           http_client=httpx.Client(transport=httpx.MockTransport(handler)))
    with client.responses.create(model="gpt-5", input="go", stream=True) as stream:
        return list(stream)
