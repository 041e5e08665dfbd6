"""The state machine's front: vendor events in, decided tool calls out. No I/O, no framework.

``Assembler`` is all a caller sees: ``feed``, ``cancel``, ``finish`` and read-only state. Behind
it, one adapter per vendor (``_adapters/``) translates wire events into the vocabulary of the
call table (``_table.CallTable``, typed for adapters as ``_adapters.Sink``), and every call's
state changes go through the one transition table in ``_call``:

    open --append*--> open --close--> args_complete --commit (finish/settle)--> committed
      \\______________ cancel / overflow / too many / truncation / taint ______/--> failed | cancelled

Rule 2 (first write wins) is ``CallTable.open``; rule 3 (opaque arguments) is ``append``; rule
4 is ``finish`` with ``_completion``; rules 5 and 7 are ``_finalize``; rule 8 is ``append`` /
``open``; rule 9 is ``_results``; rule 10 is ``settle``. DESIGN §5: ``feed`` turns a malformed
event (``Malformed`` or any exception from an adapter) into ``fail_live``, as adapters do for
a fragment they cannot attribute; structured arguments meet the text's strict verdict in
``_finalize``; ``usage`` and ``max_output_tokens`` are the max-token backstop in
``_completion``. ``ToolSpec.strict`` decides per tool in ``finish`` when only the finish signal
is missing (DESIGN §3).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import _tracing
from ._adapters import Adapter, detect_provider, fast_path, make_adapter, takes_nothing, unwrap
from ._adapters._access import Malformed, is_record
from ._config import AssembleConfig
from ._models import (
    PROVIDERS,
    AssemblerClosed,
    AssemblerEvent,
    Provider,
    Reason,
    Turn,
)
from ._registry import Registry, ToolsArg
from ._spent import SpentTable
from ._table import CallTable

__all__ = ["Assembler", "fail_unfinished"]

_DEFAULT_CONFIG = AssembleConfig()


class Assembler:
    """Feed it one vendor stream; ask it, at the end, which tool calls are safe to run.

    Sans-I/O: it never reads a socket, sleeps or imports a framework. ``feed`` never raises on
    vendor data (DESIGN §5); it raises ``AssemblerClosed`` only when the caller feeds a finished
    turn.

    ``max_output_tokens``: the request's output-token limit, when the caller knows it (the
    backstop of DESIGN §5: a turn whose reported output tokens reached it was cut, whatever
    its finish reason says). Settable until ``finish`` for callers that learn it late.

    ``run_budget``: how many more calls may commit in this agent run (seed 004 gate step 5;
    the core never sees the run, so the agent says what is left, and ``Turn.run_budget_left``
    is the next turn's value). A call that passes every other check but would commit past it
    fails ``run_budget_exceeded``, checked at each commit (early, pipelined commits included).
    ``None``: the config's ``max_tool_calls_per_run``, itself ``None`` (unbounded) by default.
    ``deltas``: make an ``ArgumentsDelta`` per fragment for a caller that reads ``feed``'s
    return value without an ``on_event`` (with one, they are always made): built for no one,
    they were a third of the per-chunk cost.
    """

    __slots__ = ("_adapter", "_cancelled", "_config", "_fast", "_feeding", "_record_class", "_table", "_turn")

    def __init__(
        self,
        *,
        tools: ToolsArg = None,
        config: AssembleConfig | None = None,
        provider: Provider | None = None,
        on_event: Callable[[AssemblerEvent], None] | None = None,
        max_output_tokens: int | None = None,
        run_budget: int | None = None,
        deltas: bool = False,
    ) -> None:
        if provider is not None and provider not in PROVIDERS:
            raise ValueError(f"provider must be one of {', '.join(PROVIDERS)}, got {provider!r}")
        self._config = config if config is not None else _DEFAULT_CONFIG
        registry = Registry(tools, self._config.allow_pipelined_execute, self._config.sensitive_tools)
        self._table = CallTable(registry, self._config, on_event, provider, _token_limit(max_output_tokens),
                                deltas)
        self._table.run_budget = _run_budget(run_budget, self._config.max_tool_calls_per_run)
        self._table.on_failure = self._account
        self._adapter: Adapter = make_adapter(provider, self._table) if provider else _Detect(self)
        self._fast = fast_path(self._adapter)  # bound once: ``feed`` calls it for every chunk
        self._cancelled = False
        self._feeding = True  # neither finished nor cancelled: one read on the per-chunk path
        self._turn: Turn | None = None
        self._record_class: type = dict  # the class of the last SDK object that was a record

    def feed(self, chunk: Any) -> list[AssemblerEvent]:
        """Take one vendor chunk or event (SDK object or dict parsed from the wire), and return
        the UI events it caused, in order (empty when none): the caller forwards them in the
        same step instead of buffering what ``on_event`` pushed. ``on_event`` still gets each
        one as it happens; the events of ``cancel`` and ``finish`` go only there (and into the
        ``Turn``). ``ArgumentsDelta`` events are among them when someone reads them: with an
        ``on_event``, or ``deltas=True``."""
        if not self._feeding:
            if self._turn is not None:
                raise AssemblerClosed("feed() after finish(): start a new Assembler for a new stream")
            return []  # cancelled: absorbed
        events: list[AssemblerEvent] = []
        self._table.events = events
        fast = self._fast  # an attribute read, then a call (a method-call read of it is slower)
        try:
            if not fast(chunk):  # the common event goes no further (DESIGN §9)
                self._feed_event(chunk)
        except Exception as exc:  # DESIGN §5: absorb, count, and refuse to prove anything open
            self._table.fail_live(f"unreadable event ({type(exc).__name__}: {exc})")
            self._table.touched_other = True
        return events

    @property
    def spent(self) -> bool:
        """Whether the event last fed touched nothing but calls that had already failed (their
        arguments past the cap, tainted): its bytes decide nothing, so no one downstream needs
        it (``_spent``; the SDK tap withholds it from the framework, issue 37.3). Read right
        after ``feed``. Always ``False`` until a call fails mid-stream, and for an event that
        also carried anything else: text, a call opened or closed, a finish, an error."""
        table = self._table
        return table.touched_failed and not table.touched_other

    def _account(self) -> None:
        """A call failed mid-stream (the table's ``on_failure``): from now on record what each
        event touches (``SpentTable``), every event on the full path, where adapters say when
        an event carries content the gate does not read. A healthy stream never pays this."""
        self._table.__class__ = SpentTable
        self._fast = takes_nothing

    def _feed_event(self, chunk: Any) -> None:
        """``feed`` past the fast path: an envelope unwrapped, what is not an event refused,
        then the adapter's full path (its fast path first, for an envelope's contents). The
        table is flushed first: the full path decides with every byte counted."""
        table = self._table
        table.touched_failed = table.touched_other = False  # what this event touches (``spent``)
        table.flush()
        if chunk.__class__ is dict:
            if len(chunk) <= 2:  # an envelope, a marker, or a small event: no envelope is bigger
                chunk = unwrap(chunk)
                if chunk is None:
                    return
                if chunk.__class__ is not dict and not is_record(chunk):
                    raise Malformed(f"a {type(chunk).__name__} is not a vendor event")
                if self._fast(chunk):
                    return
        elif chunk.__class__ is not self._record_class:  # SDK objects: one class per stream, mostly
            if not is_record(chunk):  # None, a list, text, bytes, a number: not an event
                raise Malformed(f"a {type(chunk).__name__} is not a vendor event")
            self._record_class = chunk.__class__
        self._adapter.feed(chunk)

    def cancel(self, reason: str = "cancelled") -> None:
        """Cancel every call not yet terminal; later ``feed`` calls are absorbed."""
        if self._turn is not None or self._cancelled:
            return
        self._cancelled = True
        self._feeding = False
        self._table.touched_failed = False  # nothing fed from here on is spent: it is absorbed
        self._table.events = []  # not the list the last feed returned: its caller holds it
        self._table.cancel(reason)

    def finish(self, *, transport_complete: bool = True, error: BaseException | None = None) -> Turn:
        """Decide every call and return the Turn. Idempotent."""
        if self._turn is not None:
            return self._turn
        self._table.events = []  # not the list the last feed returned: its caller holds it
        self._table.flush()  # the adapter's end of stream decides with every byte counted
        if not self._cancelled:
            end_of_stream = getattr(self._adapter, "end_of_stream", None)
            if end_of_stream is not None:
                end_of_stream()
        self._feeding = False
        self._turn = self._table.finish(transport_complete, error, cancelled=self._cancelled)
        if _tracing.active():  # one span per turn, only with a tracer provider configured
            _tracing.record_turn(self._table, self._turn)
        return self._turn

    @property
    def finished(self) -> bool:
        return self._turn is not None

    @property
    def provider(self) -> Provider | None:
        """The vendor family: as given, or detected from the first event (None until then)."""
        return self._table.provider

    @property
    def config(self) -> AssembleConfig:
        return self._config

    @property
    def max_output_tokens(self) -> int | None:
        return self._table.max_output_tokens

    @max_output_tokens.setter
    def max_output_tokens(self, value: int | None) -> None:
        self._table.max_output_tokens = _token_limit(value)


class _Detect:
    """The adapter of an ``Assembler`` given no provider: tells the vendor from the first event
    it can, then hands that event and the rest to the vendor's adapter."""

    __slots__ = ("_assembler",)

    def __init__(self, assembler: Assembler) -> None:
        self._assembler = assembler

    def feed(self, event: Any) -> None:
        table = self._assembler._table
        provider = detect_provider(event)
        if provider is None:
            table.anomaly(f"cannot tell the vendor from a {type(event).__name__} event")
            return
        table.provider = provider
        adapter = self._assembler._adapter = make_adapter(provider, table)
        self._assembler._fast = fast_path(adapter)
        adapter.feed(event)


def fail_unfinished(assembler: Assembler, reason: Reason, detail: str) -> None:
    """Fail every call not yet decided with ``reason`` now: the drivers' ``idle_timeout``.

    A function of the core's drivers, not a method: callers outside the core decide a turn
    with ``finish`` (and ``transport_complete=False``) instead.
    """
    if assembler._turn is None and not assembler._cancelled:
        assembler._table.fail_unfinished(reason, detail)


def _run_budget(value: Any, per_run: int | None) -> int | None:
    """The calls this turn may commit: what the caller says the run has left, never more than
    the config's ``max_tool_calls_per_run``; that maximum alone when the caller says nothing
    (a turn is at least part of a run)."""
    if value is not None and (value.__class__ is not int or value < 0):
        raise ValueError(f"run_budget must be a non-negative integer or None, got {value!r}")
    if value is None or per_run is None:
        return per_run if value is None else value
    return min(value, per_run)


def _token_limit(value: Any) -> int | None:
    if value is None or (value.__class__ is int and value > 0):
        return value
    raise ValueError(f"max_output_tokens must be a positive integer or None, got {value!r}")
