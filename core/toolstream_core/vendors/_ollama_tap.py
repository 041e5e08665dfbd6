"""Ollama's ``/api/chat`` lines as the server sent them, for the gate, under the ``ollama`` client.

Why not the client's objects: ``ollama``'s ``ChatResponse`` keeps a tool call's ``function``
``name`` and ``arguments`` only and drops the ``id`` and ``function.index`` recent servers send,
so a call the server re-sends reads as a second call with the same arguments and would run
twice. The lines carry both. The client takes httpx keyword arguments, so the tap is an httpx
response hook (public API of both): for a successful ``/api/chat`` response it tees each NDJSON
line (or the one JSON body of a whole answer) to the `RawSink` while the client reads it.
Imported only when an Ollama client is built (it imports httpx).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from typing import Any

import httpx

from ._tap import RawSink, ending

__all__ = ["ollama_tap_kwargs"]


class _Lines:
    """Splits the body into lines and hands each parsed line to the sink, in order."""

    def __init__(self, sink: RawSink) -> None:
        self._sink = sink
        self._rest = b""
        self._ended = False

    def feed(self, data: bytes) -> None:
        *lines, self._rest = (self._rest + data).split(b"\n")
        for line in lines:
            self._line(line)

    def _line(self, line: bytes) -> None:
        line = line.strip()
        if not line:
            return
        try:
            event: Any = json.loads(line)
        except ValueError:  # the core reports it as malformed; it never commits anything
            event = line.decode("utf-8", "replace")
        self._sink.raw_event(event)

    def end(self, error: BaseException | None) -> None:
        if self._ended:
            return
        self._ended = True
        if error is None:
            self._line(self._rest)
        self._sink.raw_end(error)


class _SyncTee(httpx.SyncByteStream):
    def __init__(self, stream: Any, lines: _Lines) -> None:
        self._stream = stream
        self._lines = lines

    def __iter__(self) -> Iterator[bytes]:
        with ending(self._lines.end):
            for data in self._stream:
                self._lines.feed(data)
                yield data

    def close(self) -> None:
        self._stream.close()


class _AsyncTee(httpx.AsyncByteStream):
    def __init__(self, stream: Any, lines: _Lines) -> None:
        self._stream = stream
        self._lines = lines

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with ending(self._lines.end):
            async for data in self._stream:
                self._lines.feed(data)
                yield data

    async def aclose(self) -> None:
        await self._stream.aclose()


def _started(response: httpx.Response, sink: RawSink) -> _Lines | None:
    """Starts the sink for a successful chat response; ``None`` for anything else."""
    if response.status_code != 200 or not response.request.url.path.endswith("/api/chat"):
        return None
    try:
        request = json.loads(response.request.content or b"{}")
    except ValueError:
        request = {}
    sink.raw_start("ollama", request if isinstance(request, dict) else {})
    return _Lines(sink)


def _sync_hook(sink: RawSink) -> Callable[[httpx.Response], None]:
    def hook(response: httpx.Response) -> None:
        lines = _started(response, sink)
        if lines is not None:
            response.stream = _SyncTee(response.stream, lines)
    return hook


def _async_hook(sink: RawSink) -> Callable[[httpx.Response], Awaitable[None]]:
    async def hook(response: httpx.Response) -> None:
        lines = _started(response, sink)
        if lines is not None:
            response.stream = _AsyncTee(response.stream, lines)
    return hook


def ollama_tap_kwargs(kwargs: Mapping[str, Any], sink: RawSink, *,
                      asynchronous: bool = False) -> dict[str, Any]:
    """``kwargs`` for ``ollama.Client`` (``AsyncClient`` with ``asynchronous``) plus the hook
    that tees its ``/api/chat`` lines to ``sink``; the caller's own event hooks are kept."""
    hooks = {name: list(value) for name, value in dict(kwargs.get("event_hooks") or {}).items()}
    hook: Any = _async_hook(sink) if asynchronous else _sync_hook(sink)
    hooks["response"] = [*hooks.get("response", []), hook]
    return {**kwargs, "event_hooks": hooks}
