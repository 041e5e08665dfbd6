"""Read a workflow run's event stream as tool-call progress, for a UI.

``ToolstreamFunctionAgent`` writes ``CallOpenedEvent`` / ``CallProgressEvent`` /
``CallCommittedEvent`` / ``CallRejectedEvent`` into the run's stream; this module picks them
out (optionally passing everything else through) and keeps a per-call snapshot a UI can
render. It only reads events: nothing here can cause a tool to run.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Generator
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from llama_index.core.workflow import Event

from ._events import (
    CallCommittedEvent,
    CallProgressEvent,
    CallRejectedEvent,
    CallStreamEvent,
)

__all__ = ["CallView", "ToolstreamStreamHandler", "stream_call_events"]


class _Streaming(Protocol):
    def stream_events(self, *args: Any, **kwargs: Any) -> AsyncIterator[Event]: ...


@dataclass
class CallView:
    """What a UI shows for one call: who, how many argument bytes so far, and the verdict."""

    key: str
    agent_name: str
    tool_id: str | None = None
    tool_name: str | None = None
    bytes_so_far: int = 0
    status: Literal["streaming", "committed", "rejected"] = "streaming"
    reason: str | None = None


class ToolstreamStreamHandler:
    """Async-iterate a workflow handler's events as call-progress events.

    ``async for event in ToolstreamStreamHandler(handler): ...`` yields the
    ``CallStreamEvent`` subclasses only; with ``passthrough=True`` every other workflow event
    is yielded too (one loop for a whole UI). ``calls`` holds a ``CallView`` per call seen,
    keyed by ``(agent_name, key)``. Awaiting the handler itself still gives the run's result.
    """

    def __init__(self, handler: _Streaming, *, passthrough: bool = False) -> None:
        self.handler = handler
        self.passthrough = passthrough
        self.calls: dict[tuple[str, str], CallView] = {}

    def _update(self, event: CallStreamEvent) -> None:
        ident = (event.agent_name, event.key)
        view = self.calls.get(ident)
        if view is None:
            view = self.calls[ident] = CallView(key=event.key, agent_name=event.agent_name)
        view.tool_id = event.tool_id or view.tool_id
        view.tool_name = event.tool_name or view.tool_name
        if isinstance(event, CallProgressEvent):
            view.bytes_so_far = event.bytes_so_far
        elif isinstance(event, CallCommittedEvent):
            view.status = "committed"
        elif isinstance(event, CallRejectedEvent):
            view.status, view.reason = "rejected", event.reason

    async def __aiter__(self) -> AsyncIterator[Event]:
        async for event in self.handler.stream_events():
            if isinstance(event, CallStreamEvent):
                self._update(event)
                yield event
            elif self.passthrough:
                yield event

    def __await__(self) -> Generator[Any, None, Any]:
        """The run's result (what awaiting the workflow handler gives)."""
        result: Generator[Any, None, Any] = self.handler.__await__()  # type: ignore[attr-defined]
        return result


async def stream_call_events(handler: _Streaming) -> AsyncIterator[CallStreamEvent]:
    """Only the call-progress events of a run, in order."""
    async for event in ToolstreamStreamHandler(handler):
        if isinstance(event, CallStreamEvent):  # always, without passthrough
            yield event


