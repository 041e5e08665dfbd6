"""See every Anthropic stream event, including the ones LlamaIndex never yields.

``llama_index.llms.anthropic`` yields a ``ChatResponse`` only for block deltas, block stops
and ``message_delta``; ``message_start``, ``content_block_start`` (the call's id and name)
and ``message_stop`` (the completion proof) are consumed silently. Guessing a call's identity
from the accumulated message would be wrong exactly when it matters (a server tool block, a
re-sent block), so the wrapper reads the SDK's own event objects instead: a thin proxy around
the client's ``messages.create`` records each event as LlamaIndex iterates it.

The proxy is installed on a private copy of the user's LLM, so the user's object is never
modified, and it records nothing unless a stream was opened by ``ToolstreamLLM`` (a context
variable carries the sink into the SDK call).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["install_anthropic_tap", "tap_sink"]

logger = logging.getLogger(__name__)

Sink = Callable[[Any], None]

_SINK: ContextVar[Sink | None] = ContextVar("toolstream_llamaindex_sink", default=None)


@contextmanager
def tap_sink(sink: Sink) -> Iterator[None]:
    """Route the events of streams *opened* inside this block to ``sink``."""
    token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(token)


class _SyncStream:
    def __init__(self, stream: Any, sink: Sink) -> None:
        self._stream = stream
        self._sink = sink

    def __iter__(self) -> Iterator[Any]:
        for event in self._stream:
            self._sink(event)
            yield event

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _AsyncStream:
    def __init__(self, stream: Any, sink: Sink) -> None:
        self._stream = stream
        self._sink = sink

    async def _iterate(self) -> AsyncIterator[Any]:
        async for event in self._stream:
            self._sink(event)
            yield event

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._iterate()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _SyncMessages:
    def __init__(self, messages: Any) -> None:
        self._messages = messages

    def create(self, *args: Any, **kwargs: Any) -> Any:
        result = self._messages.create(*args, **kwargs)
        sink = _SINK.get()
        if sink is not None and kwargs.get("stream"):
            return _SyncStream(result, sink)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._messages, name)


class _AsyncMessages:
    def __init__(self, messages: Any) -> None:
        self._messages = messages

    async def create(self, *args: Any, **kwargs: Any) -> Any:
        result = await self._messages.create(*args, **kwargs)
        sink = _SINK.get()
        if sink is not None and kwargs.get("stream"):
            return _AsyncStream(result, sink)
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._messages, name)


class _Client:
    """Delegates everything to the real client except ``messages``."""

    def __init__(self, client: Any, messages: Any) -> None:
        self._client = client
        self.messages = messages

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def install_anthropic_tap(llm: Any) -> Any | None:
    """A copy of a LlamaIndex ``Anthropic`` LLM whose streams report to the active sink.

    Returns ``None`` when the object does not hold the clients this expects (a subclass that
    builds its own), so the caller can fall back to ``ChatResponse.raw``.
    """
    try:
        client = llm._client
        aclient = llm._aclient
        client.messages.create  # noqa: B018 - probe: both clients must expose messages.create
        aclient.messages.create  # noqa: B018
    except AttributeError:
        logger.warning("toolstream: %s has no Anthropic clients to tap; using ChatResponse.raw",
                       type(llm).__name__)
        return None
    tapped = llm.model_copy()
    tapped._client = _Client(client, _SyncMessages(client.messages))
    tapped._aclient = _Client(aclient, _AsyncMessages(aclient.messages))
    return tapped
