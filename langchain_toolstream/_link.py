"""How a gated model run and a ``ToolstreamCallbackHandler`` find each other.

Why a side channel: ``BaseChatModel.stream`` calls ``_stream`` *without* the run manager, so the
wrapper cannot see the run's callback handlers. What it can do is hand out chunks: every chunk
it yields is registered here for as long as it is in flight, and LangChain passes that very
object to ``on_llm_new_token(chunk=...)``. A handler that receives a registered chunk binds to
the run's ``GateLink`` once; from then on the link delivers the core's events to it directly
(also the ones produced while no chunk is in flight, e.g. on cancel), and the handler can ask
the run to stop.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any
from uuid import UUID

from toolstream_core import AssemblerEvent

__all__ = ["GateLink", "link_of", "register", "unregister"]

Deliver = Callable[[UUID, AssemblerEvent], None]

_IN_FLIGHT: dict[int, GateLink] = {}


class GateLink:
    """One gated run, as seen by observers: its events, its subscribers, its stop request."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscribers: list[tuple[Deliver, UUID]] = []
        self._pending: list[AssemblerEvent] = []
        self.cancel_reason: str | None = None

    def publish(self, events: list[AssemblerEvent]) -> None:
        if not events:
            return
        with self._lock:
            subscribers = list(self._subscribers)
            if not subscribers:
                self._pending.extend(events)
                return
        for deliver, run_id in subscribers:
            for event in events:
                deliver(run_id, event)

    def publish_one(self, event: AssemblerEvent) -> None:
        """``publish([event])`` without the list: the core emits one event per call."""
        with self._lock:
            if not self._subscribers:
                self._pending.append(event)
                return
            subscribers = list(self._subscribers)
        for deliver, run_id in subscribers:
            deliver(run_id, event)

    def subscribe(self, deliver: Deliver, run_id: UUID) -> None:
        """Receive this run's events (the ones already produced first)."""
        with self._lock:
            self._subscribers.append((deliver, run_id))
            backlog = list(self._pending)
        for event in backlog:
            deliver(run_id, event)

    def cancel(self, reason: str) -> None:
        self.cancel_reason = reason


# ``_IN_FLIGHT`` takes no lock: each function is one dict operation on a key only its own
# chunk has (``id(chunk)`` while the chunk is alive), and a single dict operation is atomic in
# CPython, with or without the GIL. A lock here cost about 0.5 us per streamed chunk.


def register(chunk: Any, link: GateLink) -> None:
    _IN_FLIGHT[id(chunk)] = link


def unregister(chunk: Any) -> None:
    _IN_FLIGHT.pop(id(chunk), None)


def link_of(chunk: Any) -> GateLink | None:
    return _IN_FLIGHT.get(id(chunk))
