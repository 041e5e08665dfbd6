"""One model call through the gate, sans-I/O: `GateSession`, the same object under every shim.

A framework shim (LangChain, LlamaIndex, a third one) puts one model call through the gate with
four verbs and reads the verdict back:

- **begin**: the request is known (its provider and output-token limit, DESIGN 5.5). The SDK
  tap calls it (`raw_start`, the `RawSink` side), or the shim does for a stream it reads
  another way (framework chunks converted back, ``ChatResponse.raw``);
- **observe**: one vendor event; returns the UI events it caused (``Assembler.feed``'s list),
  which also went to the shim's own channel (``forward``) and the user's ``on_event``;
- **end**: the stream is over, cleanly or with ``error``: the decided `Turn` (transport
  completeness comes from how the tapped stream ended, DESIGN 4.4), its decision record
  (``turn_record``) and the user's ``on_turn``;
- **cancel**: the consumer stopped; every open call is cancelled, and the turn is decided.

What a shim builds from the verdict (its messages, its chunks, its tool step) stays in the shim;
everything else, the fault policy included (`raises`), lives here once, so the same input gets
the same outcome through either framework.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from typing import Any, Literal

from .._assembler import Assembler, fail_unfinished
from .._config import AssembleConfig
from .._decision import DecisionRecord, RecordMode, turn_record
from .._idle import StreamIdleTimeout
from .._models import (
    AssemblerEvent,
    CallCommitted,
    CallOpened,
    ErrorResult,
    Reason,
    ToolCall,
    ToolSpec,
    Turn,
)
from .._requests import rewrites_requests
from .._tracing import active as tracing_active
from .._tracing import trace_parent
from ..vendors._convert import events_for_response
from ..vendors._limits import request_limit
from ..vendors._tap import guarded

__all__ = [
    "DEFAULT_ON_STREAM_ERROR",
    "GateSession",
    "OnStreamError",
    "TapState",
    "call_observer",
]

_log = logging.getLogger(__name__)

TapState = Literal["none", "open", "ok", "error"]
"""The tapped stream: never opened, open, ended cleanly, ended by an error."""

OnStreamError = Literal["pair", "raise"]
"""What happens when the stream fails (a dropped connection, a vendor error the SDK raises, an
idle timeout) after a client tool call started: ``"pair"`` ends the turn with every call
rejected and answered, so an agent goes on; ``"raise"`` propagates the error. A failure before
any tool call always propagates: there is nothing to answer (DESIGN 6)."""

#: The one default of ``on_stream_error=`` in every shim entry point (DESIGN 6).
DEFAULT_ON_STREAM_ERROR: OnStreamError = "pair"

Tools = Mapping[str, Mapping[str, Any] | ToolSpec] | None


class GateSession:
    """One model call through the gate: a `RawSink` over one lazily built ``Assembler``.

    ``provider`` and ``limit`` are the shim's best knowledge before the call (the model class,
    its settings); `begin` (the tapped request) replaces both as long as nothing has been
    observed. ``forward``: the shim's own channel for UI events (a graph's stream, a queue),
    called before ``on_event``; ``on_event`` / ``on_turn``: the user's observers (`call_observer`:
    a failure is logged through ``log``, never raised). ``on_stream_error``: the fault policy
    (`raises`). ``mode``: how the shim sees the turn, for the record (``tap``, ``chunks``,
    ``raw``, ``message``). ``parent``: returns the span the turn's trace goes under (asked only
    while tracing is on). ``buffered``: hold tapped events until `flush` instead of observing
    each as it arrives. ``run_budget``: the calls the agent's run may still commit
    (``Assembler(run_budget=)``; ``None``: the config's ``max_tool_calls_per_run`` alone).
    ``on_early_commit``: called with each call committed while the stream is still open (a
    pipelined tool, DESIGN 4.10), so the agent can start it now; never for the calls the end
    of the stream commits. It must only start the tool (a task, a thread), not wait for it;
    a failure is logged like an observer's, and the call then runs the ordinary way.
    One per model call; not thread-safe (events arrive one at a time).
    """

    #: The fault policy's default in every shim entry point.
    DEFAULT_ON_STREAM_ERROR: OnStreamError = DEFAULT_ON_STREAM_ERROR

    def __init__(self, *, tools: Tools, config: AssembleConfig, provider: str | None = None,
                 limit: int | None = None,
                 on_event: Callable[[AssemblerEvent], None] | None = None,
                 on_turn: Callable[[Turn], None] | None = None,
                 forward: Callable[[AssemblerEvent], None] | None = None,
                 on_stream_error: OnStreamError = DEFAULT_ON_STREAM_ERROR,
                 mode: RecordMode = "tap", parent: Callable[[], Any] | None = None,
                 log: logging.Logger = _log, buffered: bool = False,
                 run_budget: int | None = None,
                 on_early_commit: Callable[[ToolCall], None] | None = None) -> None:
        if on_stream_error not in ("pair", "raise"):
            raise ValueError(f"on_stream_error must be 'pair' or 'raise', not {on_stream_error!r}")
        self.provider = provider
        self.limit = limit
        self.mode: RecordMode = mode
        self.state: TapState = "none"
        self.on_stream_error: OnStreamError = on_stream_error
        self.error: BaseException | None = None
        self._tools = tools
        self._config = config
        self._on_event = on_event
        self._on_turn = on_turn
        self._forward = forward
        self._parent = parent
        self._log = log
        self._buffer: list[Any] | None = [] if buffered else None
        self._run_budget = run_budget
        self._on_early_commit = on_early_commit
        self._ending = False
        self._assembler: Assembler | None = None
        #: The decided turn; ``None`` until `end` or `cancel`.
        self.turn: Turn | None = None
        #: The turn's decision record (``turn_record``), kept on the shim's message.
        self.record: DecisionRecord | None = None
        self._early: list[ToolCall] = []
        self._wire_error: BaseException | None = None
        self.opened = 0

    # -- the core ------------------------------------------------------------------------------

    @property
    def assembler(self) -> Assembler:
        """The core for this call, built on first use with the provider and limit known then."""
        if self._assembler is None:
            provider: Any = self.provider
            self._assembler = Assembler(tools=self._tools, config=self._config, provider=provider,
                                        on_event=self._relay, max_output_tokens=self.limit,
                                        run_budget=self._run_budget)
        return self._assembler

    @property
    def config(self) -> AssembleConfig:
        return self._config

    @property
    def idle_timeout_s(self) -> float:
        """``assemble_idle_timeout_s``: the tap reads the SDK stream under this idle guard
        (``RawSink``), so a stalled stream is cut and its calls fail ``idle_timeout``."""
        return float(self._config.assemble_idle_timeout_s)

    def guarded(self, stream: Any, *, asynchronous: bool) -> Any:
        """The framework's ``stream`` as a context manager (``async with`` when
        ``asynchronous``) to iterate under the idle timeout where the tap does not guard it
        (a class read through its framework's chunks or ``raw``); ``stream`` itself in tap
        mode, whose SDK stream the tap guards. A stall then raises ``StreamIdleTimeout`` in
        the shim's loop (`end` it with that error). Without the SDK stream in hand the sync
        guard cannot cut the connection: the caller is released on time and the framework's
        stream is closed once its blocked read returns (the SDK's read timeout); the async
        guard cancels the read."""
        if self.mode == "tap":
            return nullcontext(stream)
        return guarded(stream, self, asynchronous=asynchronous)

    @property
    def started(self) -> bool:
        """Whether anything has been observed (after which provider and limit are fixed)."""
        return self._assembler is not None

    def _relay(self, event: AssemblerEvent) -> None:
        if isinstance(event, CallCommitted):
            self._early.append(event.call)
            if not self._ending:
                call_observer(self._on_early_commit, event.call, log=self._log,
                              what="on_early_commit")
        elif isinstance(event, CallOpened):
            self.opened += 1
        if self._forward is not None:
            self._forward(event)
        if self._on_event is not None:
            call_observer(self._on_event, event, log=self._log, what="on_event")

    # -- begin ---------------------------------------------------------------------------------

    def begin(self, provider: str | None, request: Mapping[str, Any] | None = None) -> None:
        """The request is known: its wire (``provider``) and, from ``request`` (the SDK call's
        keyword arguments), its output-token limit. Ignored once anything was observed."""
        if self.started:
            return
        if provider is not None:
            self.provider = provider
        if request is not None:
            self.limit = request_limit(request)

    # -- RawSink (the SDK tap) -----------------------------------------------------------------

    def raw_start(self, provider: str, request: Mapping[str, Any]) -> None:
        if self.state != "none":
            _log.warning("toolstream: a second vendor stream in one model call; fed to the same turn")
        self.begin(provider, request)
        self.state = "open"

    def raw_event(self, event: Any) -> bool:
        """Observe one tapped event; ``False`` when the framework need not see it (`spent`).
        The path every tapped event takes: `observe` and `spent` inlined."""
        if self._buffer is not None:
            self._buffer.append(event)
            return True
        if self.turn is not None:
            return True
        assembler = self._assembler if self._assembler is not None else self.assembler
        assembler.feed(event)
        return not assembler.spent

    @property
    def spent(self) -> bool:
        """Whether the event last observed touched only calls already failed mid-stream (their
        cap passed, tainted by an unreadable event: ``Assembler.spent``, issue 37.3). Their
        verdict is fixed, and the framework would only keep paying for their bytes (a string
        rebuilt per chunk, a chunk kept per fragment), so a shim does not hand such an event
        on; anything that also carried text, an id, a finish, an error goes on."""
        assembler = self._assembler
        return self.turn is None and assembler is not None and assembler.spent

    def raw_end(self, error: BaseException | None) -> None:
        if self.state == "open":
            self.state = "error" if error is not None else "ok"
        if error is not None and self._wire_error is None:
            self._wire_error = error

    # -- observe -------------------------------------------------------------------------------

    def observe(self, event: Any) -> list[AssemblerEvent]:
        """Feed one vendor event unless the turn is decided; the UI events it caused."""
        return self.assembler.feed(event) if self.turn is None else []

    def flush(self) -> list[AssemblerEvent]:
        """Observe the held events (``buffered``), in wire order; the UI events they caused."""
        caused: list[AssemblerEvent] = []
        if self._buffer:
            held, self._buffer[:] = list(self._buffer), []
            for event in held:
                caused.extend(self.observe(event))
        return caused

    def transport_complete(self, error: BaseException | None) -> bool:
        """Whether the transport ended cleanly: the framework raised nothing and, if the tap
        saw the stream, the stream itself ended without an error."""
        return error is None and self.state in ("none", "ok")

    # -- end -----------------------------------------------------------------------------------

    def end(self, error: BaseException | None = None, *, transport_complete: bool = True,
            note: str | None = None) -> Turn:
        """Decide the turn (idempotent): ``error`` is what ended the stream, if anything;
        ``transport_complete=False`` where the stream stopped short without one (a cancel).
        ``note``: why the shim could not judge the turn as it should, for the record.

        Where the tap saw the SDK raise, that exception is the evidence (DESIGN 4.4 reads a
        vendor error by the SDK's class): a framework may wrap it in its own class
        (``ChatGoogleGenerativeAIError``) or swallow it. A ``StreamIdleTimeout`` (the tap's
        idle guard cut the stream) fails every open call ``idle_timeout``."""
        if self.turn is not None:
            return self.turn
        complete = transport_complete and self.transport_complete(error)
        error = self._wire_error or error
        self._ending = True  # what commits from here on commits at the end of the stream
        self.error = error
        assembler = self.assembler
        if isinstance(error, StreamIdleTimeout):
            fail_unfinished(assembler, Reason.idle_timeout, str(error))
        if self._parent is not None and tracing_active():
            with trace_parent(self._parent()):
                turn = assembler.finish(transport_complete=complete, error=error)
        else:
            turn = assembler.finish(transport_complete=complete, error=error)
        self.turn = turn
        self.record = turn_record(turn, mode=self.mode, error=error, note=note)
        call_observer(self._on_turn, turn, log=self._log, what="on_turn")
        return turn

    def cancel(self, reason: str) -> Turn:
        """The consumer stopped (task cancelled, stream closed, a stop button): no open call
        may commit; every call not yet decided is ``cancelled`` with ``reason`` as detail."""
        if self.turn is None:
            self.assembler.cancel(reason)
        return self.end(transport_complete=False)

    def idle_timeout(self, seconds: float) -> Turn:
        """The stream stalled for ``seconds`` (a shim that guards a stream itself): the open
        calls fail ``idle_timeout`` and the turn ends on a ``StreamIdleTimeout``, which
        `raises` judges like any stream error."""
        return self.end(StreamIdleTimeout(seconds))

    # -- the verdict ---------------------------------------------------------------------------

    @property
    def committed(self) -> tuple[ToolCall, ...]:
        """The calls that may run: as they commit while the stream is open (pipelined tools,
        DESIGN 4.10), then every committed call of the decided turn, in its order."""
        return self.turn.committed if self.turn is not None else tuple(self._early)

    @property
    def rejected(self) -> tuple[ToolCall, ...]:
        return self.turn.rejected if self.turn is not None else ()

    def result_for(self, call: ToolCall) -> ErrorResult | None:
        """The error result that answers a rejected ``call`` (``Turn.result_for``)."""
        return self.turn.result_for(call) if self.turn is not None else None

    def error_results(self) -> list[ErrorResult]:
        return self.turn.error_results() if self.turn is not None else []

    @property
    def had_calls(self) -> bool:
        """Whether the stream started a client tool call (one the turn must answer)."""
        turn = self.turn
        return self.opened > 0 or (turn is not None and bool(turn.calls or turn.dropped))

    def raises(self, error: BaseException | None) -> bool:
        """The fault policy, once for every shim: whether ``error``, which ended the stream,
        propagates to the caller. It does under ``on_stream_error="raise"``, and always when
        no client call had started (nothing to answer: the framework's own error handling and
        retries apply, as without the gate). Otherwise the turn ends normally with every call
        rejected and answered, and the record keeps the error."""
        if error is None:
            return False
        return self.on_stream_error == "raise" or not self.had_calls

    # -- the rules a shim applies around a session, the same in every shim ----------------------

    @staticmethod
    def call_observer(callback: Callable[..., object] | None, *args: Any, log: logging.Logger,
                      what: str) -> None:
        """``call_observer``: a user's observer called, its failure logged, never raised."""
        call_observer(callback, *args, log=log, what=what)

    @staticmethod
    def rewrites_requests(provider: str) -> bool:
        """Whether the tap also changes what a ``provider`` request says (Anthropic's
        ``is_error``), so a shim sends even a whole request through its tapped copy."""
        return rewrites_requests(provider)

    @staticmethod
    def events_for_response(provider: str | None, raw: Any) -> list[Any] | None:
        """A whole (non-streamed) response as the events it stands for (``None``: not one the
        SDK knowledge recognises), for a shim that observes an untapped whole answer."""
        return events_for_response(provider, raw)

    @staticmethod
    def refuse_options(holder: str, **options: Any) -> None:
        """The one rule for an agent whose model is already gated: that gate is used, so gate
        options given to the agent as well (``tools=``, ``config=``, ``on_stream_error=``,
        ``history=``, ``on_turn=``, ``on_event=``; ``None`` means not given) would be silently
        ignored: a ``ValueError`` naming them and where they belong (``holder``)."""
        given = sorted(name for name, value in options.items() if value is not None)
        if given:
            raise ValueError(f"the agent's model is already gated by toolstream: give "
                             f"{', '.join(f'{name}=' for name in given)} to {holder} instead of the agent")



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
