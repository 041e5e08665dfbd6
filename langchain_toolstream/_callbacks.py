"""``ToolstreamCallbackHandler``: tool-call progress for a UI, per model run, without executing.

Two sources, one stream of events:

- runs of a gated model (``with_toolstream`` / ``ToolstreamMiddleware``) push the core's own
  events (``CallOpened``, ``ArgumentsDelta``, ``CallCommitted``, ``CallRejected``), judged on the
  vendor's raw stream;
- runs of a plain chat model are observed through ``on_llm_new_token(chunk=...)``: the handler
  converts LangChain's chunks back to vendor events and runs its own assembler per ``run_id``.
  That view is lossy (see ``_convert``) and is for display only: it never changes a result.

The handler can also ask a gated run to stop (``cancel()``): the run ends at the next chunk
with every open call cancelled and paired, and the HTTP stream is closed.

``on_event(event)`` has the one signature every ``on_event`` in toolstream has; the run an
event belongs to is ``handler.run_id`` while the callback runs (kept per thread: the callback
is synchronous, so no other task runs on its thread meanwhile, and concurrent runs on threads
or tasks each see their own).

What it cannot do is cut a stalled stream: a stream that sends nothing calls no callback, and a
callback holds no connection. ``assemble_idle_timeout_s`` takes effect in the gate
(``with_toolstream``, ``ToolstreamMiddleware``), whose rejections the handler then reports; an
idle timeout given to the handler's own ``config`` is refused with a warning, not ignored.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import ChatGenerationChunk, GenerationChunk, LLMResult
from toolstream_core import (
    ArgumentsDelta,
    AssembleConfig,
    Assembler,
    AssemblerEvent,
    CallCommitted,
    CallOpened,
    CallRejected,
)
from toolstream_core.integration import GateSession
from toolstream_core.integration._private import untraced

from ._convert import ChunkConverter
from ._link import GateLink, link_of
from ._tools import ConfigArg, registry_from_tools

__all__ = ["RunStats", "ToolstreamCallbackHandler"]

_log = logging.getLogger(__name__)

EventCallback = Callable[[AssemblerEvent], None]

_DEFAULT_IDLE_S = AssembleConfig().assemble_idle_timeout_s
_CANNOT_CUT = ("toolstream: ToolstreamCallbackHandler only observes and cannot cut a stalled "
               "stream: assemble_idle_timeout_s=%g has no effect here; set it on the gate "
               "(with_toolstream(config=...) or ToolstreamMiddleware(config=...))")


@dataclass
class RunStats:
    """What one model run did with tool calls (numbers a dashboard or a log line wants)."""

    gated: bool = False
    opened: int = 0
    committed: int = 0
    rejected: int = 0
    reasons: dict[str, int] = field(default_factory=dict)
    started_at: float = field(default_factory=time.monotonic)
    first_commit_s: float | None = None
    finished: bool = False
    bytes_by_call: dict[Any, int] = field(default_factory=dict, repr=False)

    @property
    def argument_bytes(self) -> int:
        """UTF-8 bytes of arguments received, over every call of the run."""
        return sum(self.bytes_by_call.values())


class _Observed:
    """An ungated run: LangChain chunks -> chat events -> a display-only assembler."""

    __slots__ = ("assembler", "converter")

    def __init__(self, assembler: Assembler) -> None:
        self.assembler = assembler
        self.converter = ChunkConverter()


class ToolstreamCallbackHandler(BaseCallbackHandler):
    """Observe streamed tool calls per run; optionally cancel the runs in flight.

    ``on_event(event)`` receives every core event as it happens; inside it, ``run_id`` is
    the model run the event belongs to (e.g. ``cancel(handler.run_id)`` stops that run, or a
    UI keeps concurrent runs apart by it). ``stats[run_id]`` keeps per-run counters.
    ``cancel()`` asks every gated run in flight to stop.
    ``config``: the policy of the display-only view of ungated runs; its
    ``assemble_idle_timeout_s`` cannot apply here (a callback cannot cut a stream) and is
    warned about: set it on the gate.
    """

    run_inline = True  # events must reach the UI in stream order, also from async runs
    raise_error = False

    def __init__(
        self,
        on_event: EventCallback | None = None,
        *,
        tools: Any = None,
        config: ConfigArg | None = None,
    ) -> None:
        self.on_event = on_event
        self.stats: dict[UUID, RunStats] = {}
        self._tools = registry_from_tools(tools)
        self._config = AssembleConfig.coerce(config)
        if self._config.assemble_idle_timeout_s != _DEFAULT_IDLE_S:
            _log.warning(_CANNOT_CUT, self._config.assemble_idle_timeout_s)
        self._lock = threading.RLock()
        self._active: set[UUID] = set()
        self._cancelled: dict[UUID, str] = {}
        self._observed: dict[UUID, _Observed] = {}
        self._links: dict[UUID, GateLink] = {}
        self._receiving = threading.local()  # ``run_id``: the run ``on_event`` is receiving

    @property
    def run_id(self) -> UUID | None:
        """The model run of the event ``on_event`` is receiving; ``None`` outside the callback."""
        run_id: UUID | None = getattr(self._receiving, "run_id", None)
        return run_id

    # -- cancellation --------------------------------------------------------------------------

    def cancel(self, run_id: UUID | None = None, reason: str = "cancelled by the user") -> None:
        """Stop ``run_id`` (default: every model run in flight) at its next vendor event.

        The gated run then ends normally: every call not yet committed is cancelled and
        reported in the message's record, so each id can be paired; the HTTP stream is closed.
        """
        with self._lock:
            targets = [run_id] if run_id is not None else list(self._active)
            for target in targets:
                self._cancelled[target] = reason
                link = self._links.get(target)
                if link is not None:
                    link.request_stop(reason)

    # -- every run -----------------------------------------------------------------------------

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[Any]], *, run_id: UUID,
        **kwargs: Any,
    ) -> None:
        with self._lock:
            self._active.add(run_id)
            self.stats.setdefault(run_id, RunStats())

    def on_llm_new_token(
        self,
        token: str | list[str | dict[str, Any]],
        *,
        chunk: GenerationChunk | ChatGenerationChunk | None = None,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(chunk, ChatGenerationChunk):
            return
        link = link_of(chunk)
        with self._lock:
            stats = self.stats.setdefault(run_id, RunStats())
            if stats.gated:
                return
            if link is not None:
                self._bind(run_id, stats, link)
                return
            observed = self._observed.get(run_id)
            if observed is None:
                observed = self._observed[run_id] = _Observed(self._new_assembler(run_id, stats))
        for event in observed.converter.chunk_events(chunk):
            observed.assembler.feed(event)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, transport_complete=True)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._end(run_id, transport_complete=False)

    # -- internals -----------------------------------------------------------------------------

    def _bind(self, run_id: UUID, stats: RunStats, link: GateLink) -> None:
        """A gated run: from now on its events come from the gate (judged on the raw stream)."""
        stats.gated = True
        self._observed.pop(run_id, None)
        self._links[run_id] = link
        if run_id in self._cancelled:
            link.request_stop(self._cancelled[run_id])

        def deliver(rid: UUID, event: AssemblerEvent) -> None:
            self._record(rid, stats, event)

        link.subscribe(deliver, run_id)

    def _new_assembler(self, run_id: UUID, stats: RunStats) -> Assembler:
        def forward(event: AssemblerEvent) -> None:
            self._record(run_id, stats, event)

        return Assembler(tools=self._tools, config=self._config, provider="openai-chat",
                         on_event=forward)

    def _end(self, run_id: UUID, *, transport_complete: bool) -> None:
        with self._lock:
            self._active.discard(run_id)
            self._cancelled.pop(run_id, None)
            self._links.pop(run_id, None)
            observed = self._observed.pop(run_id, None)
            stats = self.stats.get(run_id)
        if observed is not None:
            with untraced():  # a display-only view of an ungated model: no decision to trace
                observed.assembler.finish(transport_complete=transport_complete)
        if stats is not None:
            stats.finished = True

    def _record(self, run_id: UUID, stats: RunStats, event: AssemblerEvent) -> None:
        if isinstance(event, CallOpened):
            stats.opened += 1
        elif isinstance(event, ArgumentsDelta):
            stats.bytes_by_call[event.key] = event.total_bytes
        elif isinstance(event, CallCommitted):
            stats.committed += 1
            if stats.first_commit_s is None:
                stats.first_commit_s = time.monotonic() - stats.started_at
        elif isinstance(event, CallRejected):
            stats.rejected += 1
            reason = str(event.call.reason) if event.call.reason else "unknown"
            stats.reasons[reason] = stats.reasons.get(reason, 0) + 1
        receiving = self._receiving
        outer = getattr(receiving, "run_id", None)  # an event delivered from inside on_event
        receiving.run_id = run_id
        try:
            GateSession.call_observer(self.on_event, event, log=_log, what="on_event")
        finally:
            receiving.run_id = outer
