"""One model call's view of the vendor wire: the `RawSink` a shim hands the SDK tap.

Every shim needs the same bookkeeping for a gated call: which provider the tapped request
speaks and what output limit it carries (known only once the SDK call is made, so the core's
``Assembler`` is built lazily), whether the tapped stream opened and how it ended (a clean end
of the transport is part of the proof, DESIGN 4.4), and the events themselves, fed at once or
held until the framework has read the chunk they belong to. `TapSession` is that bookkeeping,
once; what a framework builds from the verdict stays in its shim.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any, Literal

from .._assembler import Assembler
from .._config import AssembleConfig
from .._models import AssemblerEvent, ToolSpec, Turn
from ._limits import request_limit

__all__ = ["TapSession", "TapState", "call_observer"]

_log = logging.getLogger(__name__)

TapState = Literal["none", "open", "ok", "error"]
"""The tapped stream: never opened, open, ended cleanly, ended by an error."""


class TapSession:
    """A `RawSink` feeding one lazily built ``Assembler``; one per model call, not thread-safe.

    ``provider`` and ``limit`` are the shim's best knowledge before the call (the model class,
    its settings); the tapped request replaces both as long as no event has been fed.
    ``buffered``: hold the tapped events until `flush` (a framework that must read its chunk
    first), instead of feeding each as it arrives.
    """

    def __init__(self, *, tools: Mapping[str, Mapping[str, Any] | ToolSpec] | None,
                 config: AssembleConfig, provider: str | None = None, limit: int | None = None,
                 on_event: Callable[[AssemblerEvent], None] | None = None,
                 buffered: bool = False) -> None:
        self.provider = provider
        self.limit = limit
        self.state: TapState = "none"
        self.turn: Turn | None = None  # set by the shim once it has decided the turn
        self._tools = tools
        self._config = config
        self._on_event = on_event
        self._buffer: list[Any] | None = [] if buffered else None
        self._assembler: Assembler | None = None

    @property
    def assembler(self) -> Assembler:
        """The core for this call, built on first use with the provider and limit known then."""
        if self._assembler is None:
            provider: Any = self.provider
            self._assembler = Assembler(tools=self._tools, config=self._config, provider=provider,
                                        on_event=self._on_event, max_output_tokens=self.limit)
        return self._assembler

    @property
    def started(self) -> bool:
        """Whether anything has been fed (after which provider and limit are fixed)."""
        return self._assembler is not None

    # -- RawSink ---------------------------------------------------------------------------

    def raw_start(self, provider: str, request: Mapping[str, Any]) -> None:
        if self.state != "none":
            _log.warning("toolstream: a second vendor stream in one model call; fed to the same turn")
        if not self.started:
            self.provider = provider
            self.limit = request_limit(request)
        self.state = "open"

    def raw_event(self, event: Any) -> None:
        if self._buffer is not None:
            self._buffer.append(event)
        else:
            self.feed(event)

    def raw_end(self, error: BaseException | None) -> None:
        if self.state == "open":
            self.state = "error" if error is not None else "ok"

    # -- the shim's side ---------------------------------------------------------------------

    def feed(self, event: Any) -> list[AssemblerEvent]:
        """Feed one vendor event unless the turn is decided; the UI events it caused (what
        ``Assembler.feed`` returned; ``on_event`` has seen each of them too)."""
        return self.assembler.feed(event) if self.turn is None else []

    def flush(self) -> list[AssemblerEvent]:
        """Feed the held events (``buffered``), in wire order; the UI events they caused."""
        caused: list[AssemblerEvent] = []
        if self._buffer:
            held, self._buffer[:] = list(self._buffer), []
            for event in held:
                caused.extend(self.feed(event))
        return caused

    def transport_complete(self, error: BaseException | None) -> bool:
        """Whether the transport ended cleanly: the framework raised nothing and, if the tap
        saw the stream, the stream itself ended without an error."""
        return error is None and self.state in ("none", "ok")


def call_observer(callback: Callable[..., object] | None, *args: Any, log: logging.Logger,
                  what: str) -> None:
    """Call a user's observer (``on_event``, ``on_turn``) if there is one. An observer must
    never break the stream or change the result: its failure is logged, each time, through
    the caller's logger with ``exception`` (DESIGN 6)."""
    if callback is None:
        return
    try:
        callback(*args)
    except Exception:
        log.exception("toolstream: %s callback failed", what)
