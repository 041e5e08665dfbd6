"""See every Anthropic stream event, including the ones LlamaIndex never yields.

``llama_index.llms.anthropic`` yields a ``ChatResponse`` only for block deltas, block stops
and ``message_delta``; ``message_start``, ``content_block_start`` (the call's id and name)
and ``message_stop`` (the completion proof) are consumed silently. Guessing a call's identity
from the accumulated message would be wrong exactly when it matters (a server tool block, a
re-sent block), so the wrapper reads the SDK's own event objects instead: a thin proxy around
the client's ``messages.create`` records each event as LlamaIndex iterates it.

The proxy is installed on a private copy of the user's LLM, so the user's object is never
modified, and it records nothing unless a stream was opened by ``ToolstreamLLM`` (a context
variable carries the sink into the SDK call). OpenAI chat is tapped the same way
(``install_openai_tap``) so that the core reads a compatible server's chunks before
LlamaIndex's stream merge, which breaks on arguments sent as a JSON object.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from toolstream_core.integration import with_string_arguments

__all__ = ["install_anthropic_tap", "install_openai_tap", "tap_sink"]

logger = logging.getLogger(__name__)

Sink = Callable[[Any], None]
Reshape = Callable[[Any], Any]
"""What LlamaIndex gets instead of an event the sink has seen (``None``: the event itself)."""

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
    def __init__(self, stream: Any, sink: Sink, reshape: Reshape | None = None) -> None:
        self._stream = stream
        self._sink = sink
        self._reshape = reshape

    def __iter__(self) -> Iterator[Any]:
        reshape = self._reshape
        for event in self._stream:
            self._sink(event)
            yield event if reshape is None else reshape(event)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _AsyncStream:
    def __init__(self, stream: Any, sink: Sink, reshape: Reshape | None = None) -> None:
        self._stream = stream
        self._sink = sink
        self._reshape = reshape

    async def _iterate(self) -> AsyncIterator[Any]:
        reshape = self._reshape
        async for event in self._stream:
            self._sink(event)
            yield event if reshape is None else reshape(event)

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
    """Delegates everything to the real client (or resource) except the members given."""

    def __init__(self, client: Any, **members: Any) -> None:
        self._client = client
        self.__dict__.update(members)

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
    tapped._client = _Client(client, messages=_SyncMessages(client.messages))
    tapped._aclient = _Client(aclient, messages=_AsyncMessages(aclient.messages))
    return tapped


class _ChatCompletions:
    """``chat.completions`` of one stream's client: ``create(stream=True)`` feeds ``sink``.

    LlamaIndex's OpenAI class calls ``create`` lazily, inside the generator it returns, where
    the sink's context variable is no longer set; so the sink is bound when the client is
    fetched (eagerly, inside ``tap_sink``). Chat chunks reach LlamaIndex with object
    arguments as text (``with_string_arguments``): its merge would do ``dict += dict``.
    """

    def __init__(self, completions: Any, sink: Sink) -> None:
        self._completions = completions
        self._sink = sink

    def create(self, *args: Any, **kwargs: Any) -> Any:
        result = self._completions.create(*args, **kwargs)
        if not kwargs.get("stream"):
            return result
        if inspect.isawaitable(result):
            return self._await_stream(result)
        return _SyncStream(result, self._sink, with_string_arguments)

    async def _await_stream(self, result: Any) -> Any:
        return _AsyncStream(await result, self._sink, with_string_arguments)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._completions, name)


def _bound(client: Any) -> Any:
    sink = _SINK.get()
    if sink is None:
        return client
    return _Client(client, chat=_Client(client.chat,
                                        completions=_ChatCompletions(client.chat.completions, sink)))


def install_openai_tap(llm: Any) -> Any | None:
    """A copy of a LlamaIndex ``OpenAI`` LLM whose chat streams report to the active sink.

    The copy's ``_get_client`` / ``_get_aclient`` (called eagerly by every chat method) wrap
    the real client for the stream being opened. ``None`` when the class does not fetch its
    clients that way, so the caller falls back to ``ChatResponse.raw``.
    """
    cls = type(llm)
    get_sync, get_async = getattr(cls, "_get_client", None), getattr(cls, "_get_aclient", None)
    if not callable(get_sync) or not callable(get_async):
        logger.warning("toolstream: %s has no OpenAI clients to tap; using ChatResponse.raw",
                       cls.__name__)
        return None
    tapped = llm.model_copy()
    # Instance attributes shadow the methods on this copy only; pydantic ignores them.
    object.__setattr__(tapped, "_get_client", lambda: _bound(get_sync(tapped)))
    object.__setattr__(tapped, "_get_aclient", lambda: _bound(get_async(tapped)))
    return tapped
