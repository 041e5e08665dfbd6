"""The call table: the vocabulary adapters speak, and everything a call goes through after it.

Adapters (``_adapters/``) never see the ``Assembler``: they get this table, typed as the
``Sink`` protocol of ``_adapters/__init__.py``, and translate each vendor's wire events into
its words:

    open       start or identify a call (rule 2: first write wins; rule 8: call-count cap)
    append     a text fragment (rule 3: concatenate, never look inside; rule 8: byte cap)
    set_value / count_structured   structured arguments, whole or being built (DESIGN §5.3)
    done_arguments   the vendor's own final copy of the arguments (Responses)
    close_arguments  the vendor closed one call's arguments           (open -> args_complete)
    settle     rule 10: the vendor can no longer change this call; pipeline it if allowed
    end_turn   the vendor's end-of-turn signal and its verdict (rule 4)
    usage      output tokens so far (the DESIGN §5.5 backstop)
    upstream_error / taint / fail_live / anomaly   DESIGN §5: what cannot be proven fails
    has_fragments / call_id   the two questions adapters ask back

and ``flush``, which the ``Assembler`` calls before an event's full path and at ``finish``:
the hot call's fragments are counted in runs (rule 8, ``append``), and every decision sees
every byte that came before it.

and the ``Assembler`` uses the rest: ``finish`` (rules 4, 5, 7, 9 with ``_completion``,
``_finalize``, ``_results``), ``cancel`` and ``fail_unfinished`` (drivers' ``idle_timeout``).
Every state change goes through ``_call.move`` and its one transition table.

One job per module, each class built on the one before: `_TableState` (``_table_state.py``:
the state, UI events, metrics, the `Turn`), `_Decisions` (``_table_decide.py``: completion,
finalisation, the run budget), `_Arguments` (``_table_arguments.py``: fragments and bounds, the
hot path), and here the rest of the vocabulary: identity (rule 2), copies (rule 7), the
vendor's turn-level signals.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from typing import Any

from ._call import Call, Move
from ._completion import Verdict
from ._models import (
    CallKind,
    CallState,
    Reason,
)
from ._table_arguments import _Arguments
from ._table_state import _COLD, _LIVE, _OPEN

__all__ = ["CallTable"]


class CallTable(_Arguments):
    """Every call of one stream, by adapter key, and the turn-level facts the vendor sent.

    Internal: made by ``Assembler`` and handed to one adapter. Attributes the adapter may set:
    ``structured_fragments`` (OpenAI chat: a non-string fragment is structured arguments).
    """

    def cancel(self, reason: str) -> None:
        """Cancel every client call not yet terminal."""
        self.flush()
        self._ending = self._ending or (Reason.cancelled, reason)
        for call in self._client_calls():
            if call.state in _LIVE:
                self._terminate(call, Move.cancel, Reason.cancelled, reason)

    def fail_unfinished(self, reason: Reason, detail: str) -> None:
        """Fail every client call not yet decided with ``reason`` now (drivers: ``idle_timeout``)."""
        self.flush()
        self._ending = self._ending or (reason, detail)
        for call in self._client_calls():
            if call.state in _LIVE:
                self._terminate(call, Move.fail, reason, detail)

    def fail_live(self, detail: str, where: Callable[[Hashable], bool] | None = None, *,
                  why: str = "a vendor event for this stream was unreadable") -> None:
        """DESIGN §5: data that may have belonged to a live call but cannot be attributed to
        one (a malformed event, an orphan fragment, a lost event) fails every live call it
        could have touched (``where`` narrows them by key), with ``upstream_error`` and ``why``
        as the call's detail. Counted once."""
        self.anomaly(detail)
        tainted = False
        for call in self.calls.values():
            if call.state in _LIVE and call.taint is None and (where is None or where(call.key)):
                call.taint = (Reason.upstream_error, why)
                tainted = True
        if tainted:
            self._failed_midstream()

    #: ``carries`` is not listened to until a call fails (``SpentTable``).
    recording = False

    def carries(self) -> None:
        """The event carries something the gate does not read but a framework does (text,
        reasoning, a refusal) beside its calls: nothing to do here; recorded once a call
        failed (``_spent``), so such an event is never withheld."""

    def open(
        self,
        key: Hashable,
        *,
        index: int | None,
        id: Any = None,  # vendor data: a str when well-formed (DESIGN §5.2 below)
        name: Any = None,
        kind: CallKind = "function",
        order: Any = None,
        anonymous: bool = False,
    ) -> None:
        """Start or identify a call. Rule 2: the first non-empty id and name win.

        ``anonymous``: the vendor's protocol has no call ids (legacy chat ``function_call``),
        so a missing id is synthesized even in strict mode.

        An id or name of the wrong type (DESIGN §5.2) is ignored for identity and fails the
        call (``upstream_error``): whatever the vendor meant by it cannot be proven.
        """
        mistyped = _mistyped(id, name)
        if mistyped is not None:
            id = id if isinstance(id, str) else None
            name = name if isinstance(name, str) else None
        call = self.calls.get(key)
        if call is None:
            self._open_new(key, index, id, name, kind, order, anonymous)
        else:
            self._identify(call, id, name)
        if mistyped is not None:
            self.taint(key, Reason.upstream_error, mistyped)

    def _open_new(self, key: Hashable, index: int | None, id: str | None, name: str | None,
                  kind: CallKind, order: Any, anonymous: bool) -> None:
        """``open`` for a key not seen before: the call is created, linked to a twin or
        announced, and counted against ``max_tool_calls_in_flight_assemble``."""
        call = Call(key, self._seq, index, order if order is not None else index, kind)
        call.anonymous = anonymous
        self._seq += 1
        self.calls[key] = call
        if id:
            call.id = id
        if name:
            call.name = name
        limit = self.config.max_tool_calls_in_flight_assemble
        if kind == "server":
            self._server_count += 1
            if self._server_count > limit:
                self._move(call, Move.fail)
            return
        if call.id is not None and self._link_twin(call):
            return
        self._client_count += 1
        self._emit_opened(call)
        if self._client_count > limit:
            self._terminate(call, Move.fail, Reason.too_many_tool_calls, f"more than {limit} calls in one stream")

    def _identify(self, call: Call, id: str | None, name: str | None) -> None:
        """``open`` for a known call: rule 2, the first non-empty id and name win; a second,
        different one is an anomaly and is dropped."""
        if id and id != call.id:
            if call.id is None:
                call.id = id
                if call.kind != "server":
                    self._link_twin(call)
            else:
                self.anomaly(f"call {call.id!r} was sent a second id {id!r}; the first is kept")
        if name and name != call.name:
            if call.name is None:
                call.name = name
            else:
                self.anomaly(f"call {call.id!r} was sent a second name {name!r}; the first is kept")

    def close_arguments(self, key: Hashable) -> None:
        """The vendor closed this call's arguments (block stop, done event, end of call)."""
        call = self.calls.get(key)
        if call is not None and call.state is _OPEN:
            self._move(call, Move.close)
            call.closed_at = time.monotonic()

    def settle(self, key: Hashable) -> None:
        """Rule 10: a point where the vendor can no longer change this call; pipeline if allowed."""
        call = self.calls.get(key)
        if (
            call is None
            or call.state is not CallState.args_complete
            or call.kind == "server"
            or call.primary is not None
            or not self.config.execute_before_stream_end
            or self.provider == "openai-chat"
            or call.name not in self._registry.pipelined
            or (self._verdict is not None and self._verdict is not Verdict.complete)
        ):
            return
        self._finalize(call)

    def end_turn(self, finish_reason: str | None, verdict: Verdict | None) -> None:
        """The vendor's end-of-turn signal. The worst verdict seen is the one that counts."""
        if finish_reason is not None:
            self._finish_reason = str(finish_reason)
        if verdict is not None and (self._verdict is None or verdict > self._verdict):
            self._verdict = verdict

    def usage(self, output_tokens: Any) -> None:
        """The vendor's count of output tokens so far (cumulative); the largest report counts."""
        if output_tokens is None:
            return
        if output_tokens.__class__ is not int or output_tokens < 0:
            self.anomaly(f"output token count {output_tokens!r} is not a count")
            return
        if self._output_tokens is None or output_tokens > self._output_tokens:
            self._output_tokens = output_tokens

    def upstream_error(self, detail: str) -> None:
        """An error event or error object: nothing open can be proven any more."""
        self._verdict = Verdict.error
        if self._error_detail is None:
            self._error_detail = detail[:500]
        self.anomaly(f"upstream error: {detail[:200]}")

    def call_id(self, key: Hashable) -> str | None:
        call = self.calls.get(key)
        return call.id if call is not None else None

    def _link_twin(self, call: Call) -> bool:
        """Rule 7: a second call with an id already seen is a copy of the first, not a new call."""
        assert call.id is not None
        first = self._ids.get(call.id)
        if first is None:
            self._ids[call.id] = call
            return False
        if first is call:
            return False
        call.primary = first
        self._hot = _COLD  # a copy is never hot
        first.twins.append(call)
        first.twin_bytes += call.nbytes
        return True


def _mistyped(id: Any, name: Any) -> str | None:
    """DESIGN §5.2: why an id or name of the wrong type cannot identify a call (the name's
    reason wins when both are wrong), or None when both are a str or absent."""
    mistyped = None
    if id is not None and id.__class__ is not str and not isinstance(id, str):
        mistyped = f"call id is a {type(id).__name__}"
    if name is not None and name.__class__ is not str and not isinstance(name, str):
        mistyped = f"tool name is a {type(name).__name__}"
    return mistyped
