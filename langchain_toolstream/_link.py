"""How a gated model run and a ``ToolstreamCallbackHandler`` find each other: the model run.

Why a side channel: LangChain hands the handler the run (``run_id``) but not the gate, and the
gate often not the run: ``BaseChatModel.stream``/``astream`` and the streaming branch of
``_generate_with_cache`` call ``_stream``/``_astream`` without the run manager (langchain-core
1.8, ``chat_models.py``), so the gate cannot know its ``run_id`` there. What both sides do share
is the context the run executes in: LangChain calls ``on_llm_new_token(chunk=...)`` right after
the gate yields that very chunk, in the same thread or task. So the model run in progress is a
context variable (`ModelRun`), and while the gate hands a chunk on it names the gate's
`GateLink` and the chunk; a handler that receives that chunk binds to the link by its own
``run_id`` once. From then on the link delivers the core's events to it directly (also the ones
produced while no chunk is in flight, e.g. on a stop), and the handler can ask the run to stop.
The same variable keeps LangChain's run manager where LangChain does hand it over
(``_generate_with_cache``), for the turn's trace (``_observability.run_span``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from contextvars import ContextVar, Token
from typing import Any, NamedTuple
from uuid import UUID

from toolstream_core import AssemblerEvent

__all__ = ["GateLink", "ModelRun", "current_run", "handed", "handing", "link_of", "model_run"]

Deliver = Callable[[UUID, AssemblerEvent], None]


class GateLink:
    """One gated run, as seen by observers: its events, its subscribers, its stop request."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscribers: list[tuple[Deliver, UUID]] = []
        self._pending: list[AssemblerEvent] = []
        self.stop_reason: str | None = None

    def publish_one(self, event: AssemblerEvent) -> None:
        """Deliver ``event`` to every subscriber, or keep it for the first one."""
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

    def request_stop(self, reason: str) -> None:
        """An observer asks the run to stop: the gate cancels its open calls at its next chunk."""
        self.stop_reason = reason


class ModelRun(NamedTuple):
    """The LangChain model run in progress in this context, as far as the gate can see it."""

    run_manager: Any = None
    """LangChain's run manager, where LangChain handed it over (``_generate_with_cache``)."""
    link: GateLink | None = None
    """The gate's link while it hands ``chunk`` on."""
    chunk: Any = None


_RUN: ContextVar[ModelRun | None] = ContextVar("toolstream_lc_model_run", default=None)


def current_run() -> ModelRun | None:
    return _RUN.get()


@contextmanager
def model_run(run_manager: Any) -> Iterator[None]:
    """The model run being generated, for ``_stream`` calls that are not handed its manager."""
    token = _RUN.set(ModelRun(run_manager))
    try:
        yield
    finally:
        _RUN.reset(token)


def handing(link: GateLink, chunk: Any, run_manager: Any) -> Token[ModelRun | None]:
    """``chunk`` is being handed on by the gate of ``link`` (yielded, given to
    ``on_llm_new_token``) until `handed`: a handler given it meanwhile binds to ``link``."""
    return _RUN.set(ModelRun(run_manager, link, chunk))


def handed(token: Token[ModelRun | None]) -> None:
    """The chunk `handing` named went on. A generator may be closed in another context than
    the one it ran in (an abandoned async stream is closed by the loop's finaliser): the value
    is then left to that context's end rather than reset."""
    with suppress(ValueError):
        _RUN.reset(token)


def link_of(chunk: Any) -> GateLink | None:
    """The link of the gate handing ``chunk`` on in this context, if one is."""
    run = _RUN.get()
    return run.link if run is not None and run.chunk is chunk else None
