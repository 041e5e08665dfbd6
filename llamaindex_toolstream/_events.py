"""Typed call-progress events a UI can show while a response streams.

They are workflow ``Event`` subclasses so ``ToolstreamFunctionAgent`` can write them into the
workflow's event stream next to LlamaIndex's own ``AgentStream`` / ``ToolCall`` events. They
report; they never cause anything to run: only ``CallCommittedEvent`` calls are ever executed,
and by the agent, not by whoever reads these.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from llama_index.core.workflow import Event
from toolstream_core import (
    ArgumentsDelta,
    AssemblerEvent,
    CallCommitted,
    CallOpened,
    CallRejected,
    ErrorResult,
    ToolCall,
)
from toolstream_core.integration import ProgressEncoder

__all__ = [
    "CallCommittedEvent",
    "CallOpenedEvent",
    "CallProgressEvent",
    "CallRejectedEvent",
    "CallStreamEvent",
    "ProgressTranslator",
]


class CallStreamEvent(Event):
    """Base of the call-progress events. ``key`` is stable for one call within one response."""

    agent_name: str = ""
    key: str
    tool_id: str | None = None
    tool_name: str | None = None
    sensitive: bool = False
    """The tool is marked sensitive: no fragment ever, and its ``tool_kwargs`` are masked."""


class CallOpenedEvent(CallStreamEvent):
    """The vendor started a tool call (its id and name may still be unknown)."""


class CallProgressEvent(CallStreamEvent):
    """More argument bytes arrived. ``fragment`` is ``None`` when partial args are not forwarded."""

    bytes_so_far: int
    fragment: str | None = None


class CallCommittedEvent(CallStreamEvent):
    """The call is complete, proven and valid: the agent will run it. ``tool_kwargs`` are its
    arguments as a UI may show them (a sensitive tool's masked; the tool gets the real ones)."""

    tool_kwargs: Any = None


class CallRejectedEvent(CallStreamEvent):
    """The call will not run; ``content`` is the error result the model receives."""

    reason: str
    detail: str | None = None
    content: str = ""


class ProgressTranslator:
    """Turns the core's UI events for one response into workflow events, one per call per chunk.

    Argument deltas are coalesced per call between two flushes, so a 200 KB argument cut into
    thousands of fragments costs one event per streamed chunk, not one per fragment.
    """

    def __init__(self, agent_name: str, result_for: Callable[[ToolCall], ErrorResult | None],
                 *, forward_args: bool = True):
        self._agent = agent_name
        self._result_for = result_for
        self._shown = ProgressEncoder(forward_args=forward_args)  # what a UI may show: its rule
        self._identity: dict[str, tuple[str | None, str | None]] = {}

    def translate(self, events: list[AssemblerEvent]) -> list[CallStreamEvent]:
        out: list[CallStreamEvent] = []
        progress: dict[str, CallProgressEvent] = {}
        for event in events:
            if isinstance(event, CallOpened):
                key = str(event.key)
                self._identity[key] = (event.id, event.name)
                out.append(CallOpenedEvent(agent_name=self._agent, key=key, tool_id=event.id,
                                           tool_name=event.name))
            elif isinstance(event, ArgumentsDelta):
                key = str(event.key)
                if key not in self._identity:
                    # A re-sent copy the core folded into an earlier call (rule 7) is never
                    # opened; its bytes are not a second call for the UI.
                    continue
                tool_id, name = self._identity[key]
                current = progress.get(key)
                if current is None:
                    current = CallProgressEvent(agent_name=self._agent, key=key, tool_id=tool_id,
                                                tool_name=name, bytes_so_far=event.total_bytes,
                                                fragment=event.fragment)
                    progress[key] = current
                    out.append(current)
                else:
                    current.bytes_so_far = event.total_bytes
                    if event.fragment is not None:
                        current.fragment = (current.fragment or "") + event.fragment
            elif isinstance(event, CallCommitted):
                call = event.call
                out.append(CallCommittedEvent(agent_name=self._agent, key=str(call.key),
                                              tool_id=call.id, tool_name=call.name,
                                              sensitive=call.sensitive is not False,
                                              tool_kwargs=self._shown.arguments(call)))
            elif isinstance(event, CallRejected):
                call = event.call
                result = self._result_for(call)
                out.append(CallRejectedEvent(
                    agent_name=self._agent, key=str(call.key),
                    tool_id=result.tool_call_id if result is not None else call.id,
                    tool_name=call.name, reason=str(call.reason or "upstream_error"),
                    sensitive=call.sensitive is not False,
                    detail=self._shown.detail(call),
                    content=result.content if result is not None else ""))
        return out
