"""What one stream's call table holds, and what it hands out: UI events, metrics, the `Turn`.

The base of `CallTable` (``_table.py``): its state, the events a ``feed`` returns and
``on_event`` gets (a sensitive call's deltas carry no text), the §4.12 instruments, and the
`Turn` built from the decided calls. The other jobs build on it: `_Decisions`
(``_table_decide.py``), `_Arguments` (``_table_arguments.py``), then the vocabulary.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable
from typing import Any

from . import _results
from ._call import ROOM, Call, Move, move
from ._completion import Verdict
from ._config import AssembleConfig
from ._metrics import Instrument, metrics
from ._models import (
    ArgumentsDelta,
    AssemblerEvent,
    CallOpened,
    CallState,
    ErrorResult,
    Provider,
    Reason,
    ToolCall,
    Turn,
)
from ._registry import Registry

_log = logging.getLogger("toolstream_core._table")
_MAX_ANOMALIES = 64
_LIVE = (CallState.open, CallState.args_complete)
_OPEN = CallState.open
# ``CallTable._hot`` when no call is hot: its key is no adapter's, so ``append``'s short branch
# needs no ``None`` test.
_COLD = Call(object(), -1, None, None, "function")
_NO_SIGNAL = "the stream ended without a finish signal"
_ARGS_COMPLETE = CallState.args_complete


class _TableState:
    """Every call of one stream, by adapter key, and the turn-level facts the vendor sent."""

    def __init__(
        self,
        registry: Registry,
        config: AssembleConfig,
        on_event: Callable[[AssemblerEvent], None] | None,
        provider: Provider | None,
        max_output_tokens: int | None,
        deltas: bool = False,
    ) -> None:
        self.config = config
        self.provider: Provider | None = provider
        self.max_output_tokens = max_output_tokens
        self.structured_fragments = False
        self.calls: dict[Hashable, Call] = {}
        self._registry = registry
        self._on_event = on_event
        self.events: list[AssemblerEvent] = []  # what the current ``feed`` caused (``_emit``)
        self._ids: dict[str, Call] = {}
        self._seq = 0
        self._client_count = 0
        self._server_count = 0
        self._verdict: Verdict | None = None
        self._finish_reason: str | None = None
        self._error_detail: str | None = None
        self._output_tokens: int | None = None
        self._ending: tuple[Reason, str] | None = None  # why the turn did not end normally
        self._anomalies: list[str] = []
        self._max_bytes = config.max_tool_argument_bytes
        self._forward = config.ui_forward_partial_args
        self._plain = on_event is None and not registry.sensitive  # events need no more than a list
        # ArgumentsDelta, one per fragment, only for a reader: a callback, or ``deltas=True``
        # (DESIGN §3, issue 30: built for no one, it was a third of a chunk's cost)
        self._deltas = deltas or on_event is not None
        self._room = 0 if self._deltas else ROOM  # a reader of deltas gets a look at each fragment
        # The open first copy ``append`` wrote to last (a cache of the key lookup), or ``_COLD``:
        # ``_move`` and ``_link_twin`` cool it, so ``append`` need not look at state or copies.
        self._hot = _COLD
        self._ended_at: float | None = None  # when ``finish`` began: the end of the stream
        self.run_budget: int | None = None  # calls the run may still commit (set by the Assembler)
        self._commits = 0
        # Called once, the first time a call fails or is tainted while the stream is open: the
        # Assembler then has every later event's touches recorded (``_spent``), below.
        self.on_failure: Callable[[], None] | None = None
        # What the event being fed touched, recorded once ``on_failure`` ran: a call already
        # failed, and anything else (a live call, a turn-level word, content the gate ignores).
        self.touched_failed = False
        self.touched_other = False

    def taint(self, key: Hashable, reason: Reason, detail: str) -> None:
        """Mark one call as unprovable; it fails with ``reason`` whatever the turn's outcome."""
        call = self.calls.get(key)
        if call is not None and call.taint is None and not call.state.terminal:
            call.taint = (reason, detail)
            self._failed_midstream()
        self.anomaly(detail)

    def _failed_midstream(self) -> None:
        """A call's verdict became a failure while the stream is open: ``on_failure``, once."""
        hook = self.on_failure
        if hook is not None and self._ended_at is None:
            self.on_failure = None
            hook()

    def anomaly(self, detail: str) -> None:
        """Count odd vendor data; kept (bounded) for diagnosis, logged at debug level."""
        _log.debug("toolstream anomaly: %s", detail)
        if len(self._anomalies) < _MAX_ANOMALIES:
            self._anomalies.append(detail)

    def _client_calls(self) -> list[Call]:
        return [c for c in self.calls.values() if c.kind != "server" and c.primary is None]

    def _move(self, call: Call, what: Move) -> CallState:
        """``move``, and no call is hot after it: ``append``'s short branch trusts that the
        hot call is open and a first copy, without looking."""
        self._hot = _COLD
        return move(call, what)

    def _metric(self, name: Instrument, value: float, call: Call, **extra: str) -> None:
        """Record one of the §4.12 instruments for ``call``, with the config's tenant."""
        metrics.record(name, value, self.provider, call.name, self.config.tenant, extra)

    def _emit(self, event: AssemblerEvent) -> None:
        """Hand ``event`` back from ``Assembler.feed`` (``events``) and to ``on_event``."""
        if self._registry.sensitive and event.__class__ is ArgumentsDelta:
            event = self._private_delta(event)
        self.events.append(event)
        if self._on_event is not None:
            self._callback(event)

    def _callback(self, event: AssemblerEvent) -> None:
        assert self._on_event is not None
        try:
            self._on_event(event)
        except Exception:  # a UI callback must not break assembly
            _log.exception("toolstream on_event callback failed")

    def _private_delta(self, event: ArgumentsDelta) -> ArgumentsDelta:
        """A sensitive call's delta carries its byte count only (no path of half a JSON text
        can be masked); checked here, once, rather than at each of the delta's call sites."""
        call = self.calls.get(event.key)
        if event.fragment is None or call is None or self._registry.sensitivity(call.name) is False:
            return event
        return ArgumentsDelta(event.key, None, event.total_bytes)

    def _emit_opened(self, call: Call) -> None:
        self._emit(CallOpened(call.key, call.id, call.name))

    def _snapshot_server(self, call: Call) -> ToolCall:
        return ToolCall(
            key=call.key,
            index=call.index,
            id=call.id,
            name=call.name,
            kind="server",
            state=call.state,
            raw_arguments=call.raw(),
            provider=self.provider,
        )

    def _ordered(self, clients: list[Call]) -> list[Call]:
        """``clients`` in ``finalize_order``: the order of ``Turn.calls`` and of the queue."""
        if self.config.finalize_order == "provider_index":
            clients.sort(key=lambda c: (_order_key(c.order), c.seq))
        else:
            clients.sort(key=lambda c: c.seq)
        return clients

    def _build_turn(self, complete: bool, error: BaseException | None) -> Turn:
        clients = self._ordered(self._client_calls())
        calls: list[ToolCall] = []
        dropped: list[ToolCall] = []
        results: list[ErrorResult] = []
        for call in clients:
            final = call.final
            assert final is not None
            if call.dropped:
                dropped.append(final)
                continue
            calls.append(final)
            if final.state is not CallState.committed:
                assert final.id is not None
                echo = self._forward and final.sensitive is False
                results.append(_results.error_result(final, final.id, echo=echo))
        servers = [c for c in self.calls.values() if c.kind == "server"]
        servers.sort(key=lambda c: c.seq)
        complete = complete and error is None
        ending = None if complete else self._ending or (Reason.stream_truncated, _NO_SIGNAL)
        return Turn(
            calls=tuple(calls),
            server_calls=tuple(self._snapshot_server(c) for c in servers),
            dropped=tuple(dropped),
            complete=complete,
            finish_reason=self._finish_reason,
            error=error,
            provider=self.provider,
            anomalies=tuple(self._anomalies),
            end_reason=None if ending is None else ending[0],
            end_detail=None if ending is None else ending[1],
            run_budget_left=None if self.run_budget is None else self.run_budget - self._commits,
            _results=tuple(results),
        )


def _order_key(order: Any) -> tuple[Any, ...]:
    """Sort vendor positions; ``None`` (unknown position) sorts after every known one."""
    if isinstance(order, tuple):
        return tuple((1, 0) if part is None else (0, part) for part in order)
    return ((1, 0),) if order is None else ((0, order),)
