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
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Hashable
from typing import Any

from . import _results
from ._call import MOVE_TO, ROOM, Call, Move, move
from ._completion import Verdict, is_vendor_error
from ._config import AssembleConfig
from ._finalize import NO_VALUE, Deferred, decide, same_copy
from ._metrics import Instrument, metrics
from ._models import (
    ArgumentsDelta,
    AssemblerEvent,
    CallCommitted,
    CallKind,
    CallOpened,
    CallRejected,
    CallState,
    ErrorResult,
    Provider,
    Reason,
    ToolCall,
    Turn,
)
from ._registry import Registry
from ._strict_json import dump_structured

__all__ = ["CallTable"]

_log = logging.getLogger(__name__)
_MAX_ANOMALIES = 64
_LIVE = (CallState.open, CallState.args_complete)
_OPEN = CallState.open
# ``CallTable._hot`` when no call is hot: its key is no adapter's, so ``append``'s short branch
# needs no ``None`` test.
_COLD = Call(object(), -1, None, None, "function")
_NO_SIGNAL = "the stream ended without a finish signal"
_ARGS_COMPLETE = CallState.args_complete


class CallTable:
    """Every call of one stream, by adapter key, and the turn-level facts the vendor sent.

    Internal: made by ``Assembler`` and handed to one adapter. Attributes the adapter may set:
    ``structured_fragments`` (OpenAI chat: a non-string fragment is structured arguments).
    """

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

    # -- what the Assembler asks --------------------------------------------------------------

    def cancel(self, reason: str) -> None:
        """Cancel every client call not yet terminal."""
        self.flush()
        self._ending = self._ending or (Reason.cancelled, reason)
        for call in self._client_calls():
            if call.state in _LIVE:
                self._terminate(call, Move.cancel, Reason.cancelled, reason)

    def finish(self, transport_complete: bool, error: BaseException | None, *, cancelled: bool) -> Turn:
        """Decide every live call (rule 4, then rules 5 and 7 per call) and build the Turn."""
        self._ended_at = time.monotonic()
        complete = False
        if not cancelled:
            complete, reason, detail = self._completion(transport_complete, error)
            if not complete:
                self._ending = self._ending or (reason, detail)
            # Only the finish signal is missing: ToolSpec.strict decides per tool (DESIGN §3);
            # Turn.complete stays the config mode's answer.
            unsignalled = reason is Reason.stream_truncated and detail is _NO_SIGNAL
            default_strict = self.config.mode == "strict"
            for call in self._ordered(self._client_calls()):  # the run budget goes in queue order
                if call.state not in _LIVE:
                    continue
                proven = complete
                if unsignalled:
                    proven = not self._registry.strict_for(call.name, default_strict)
                if proven:
                    self._finalize(call)
                else:
                    self._terminate(call, Move.fail, reason, detail)
        return self._build_turn(complete, error)

    def fail_unfinished(self, reason: Reason, detail: str) -> None:
        """Fail every client call not yet decided with ``reason`` now (drivers: ``idle_timeout``)."""
        self.flush()
        self._ending = self._ending or (reason, detail)
        for call in self._client_calls():
            if call.state in _LIVE:
                self._terminate(call, Move.fail, reason, detail)

    # -- the vocabulary adapters speak -------------------------------------------------------

    def fail_live(self, detail: str, where: Callable[[Hashable], bool] | None = None, *,
                  why: str = "a vendor event for this stream was unreadable") -> None:
        """DESIGN §5: data that may have belonged to a live call but cannot be attributed to
        one (a malformed event, an orphan fragment, a lost event) fails every live call it
        could have touched (``where`` narrows them by key), with ``upstream_error`` and ``why``
        as the call's detail. Counted once."""
        self.anomaly(detail)
        for call in self.calls.values():
            if call.state in _LIVE and call.taint is None and (where is None or where(call.key)):
                call.taint = (Reason.upstream_error, why)

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

    def append(self, key: Hashable, fragment: Any) -> None:
        """Rule 3: concatenate in arrival order, never look inside. Rule 8: count UTF-8 bytes.

        The first branch is the streaming common case, kept short: a text fragment for the
        hot call (``_hot``: the open first copy appended to last; it stops being hot when it
        moves or becomes a copy) is kept, and ``Call.room`` counted down: the one test. Its
        bytes are counted at the look when the room is gone (``_look``), or before anything
        else the table does (``flush``); everything else is ``_append_other``'s.
        """
        call = self._hot
        if call.key is key and fragment.__class__ is str:
            call.parts.append(fragment)
            room = call.room = call.room - 1
            if room <= 0:
                self._look(call, fragment)
            return
        self._append_other(key, fragment)

    def flush(self) -> None:
        """Count the hot call's waiting fragments, and fail it if they took it past the cap
        (rule 8). Every way into the table but the hot branch of ``append`` comes through
        here first, so each decision sees every byte that arrived before it."""
        call = self._hot
        if call.counted < len(call.parts):
            call.count()
            if call.nbytes > self._max_bytes:
                self._overflow(call)

    def _look(self, call: Call, fragment: str) -> None:
        """``append`` when the hot call's room is gone: its bytes counted, then over the cap
        (rule 8), a block to join, or a reader who wants an ``ArgumentsDelta`` for every
        fragment (whose room is 0, so ``fragment`` is the only one waiting)."""
        call.count()
        nbytes = call.nbytes
        if nbytes > self._max_bytes:
            self._overflow(call)
            return
        if nbytes >= call.seal_at:
            call.seal()
        if self._deltas and fragment:
            delta = ArgumentsDelta(call.key, fragment if self._forward else None, nbytes + call.twin_bytes)
            if self._plain:  # ``_emit``, inline: nothing to mask and no callback
                self.events.append(delta)
            else:
                self._emit(delta)
        call.room = self._room

    def _append_other(self, key: Hashable, fragment: Any) -> None:
        """``append`` for a call not hot, a structured fragment, a closed or decided call, or a
        re-sent copy."""
        self.flush()
        call = self.calls.get(key)
        if call is None:
            self.anomaly(f"argument fragment for unknown call {key!r} dropped")
            return
        if isinstance(fragment, str) and fragment.__class__ is not str:
            fragment = str(fragment)  # a str subclass is kept as the plain text it holds
        if fragment.__class__ is str and call.state is _OPEN and call.primary is None:
            call.streamed = True
            self._hot = call
            call.room = self._room
            self.append(call.key, fragment)  # the key the hot branch compares by identity
            return
        if not isinstance(fragment, str):
            if self.structured_fragments and call.kind == "function":
                self.set_value(key, fragment)
            else:
                self.taint(key, Reason.upstream_error, f"argument fragment of type {type(fragment).__name__}")
            return
        state = call.state
        if state is not _OPEN:
            if state is _ARGS_COMPLETE and fragment:
                # The vendor closed this call and then sent more: what it meant is unprovable.
                self.taint(key, Reason.upstream_error, "argument text arrived after the call was closed")
            return
        owner = call.primary
        assert owner is not None  # the common branch took every first copy
        if owner.state is not _OPEN and owner.state is not _ARGS_COMPLETE:
            return
        call.streamed = True
        if not fragment:
            return
        size = len(fragment) if fragment.isascii() else len(fragment.encode("utf-8", "surrogatepass"))
        call.nbytes += size
        owner.twin_bytes += size
        if owner.twin_bytes > self._max_bytes:
            self._overflow(owner)
            return
        call.push(fragment)
        # A re-sent copy is the same call to a UI: report it under the call it copies.
        if self._deltas:
            self._emit(ArgumentsDelta(owner.key, fragment if self._forward else None,
                                      owner.nbytes + owner.twin_bytes))

    def count_structured(self, key: Hashable, fragment: Any, total_bytes: int) -> None:
        """Rule 8 for structured streaming arguments (Gemini ``partialArgs``).

        ``total_bytes`` is the size of the compact JSON built so far, kept by the adapter, so a
        value streamed in pieces is counted exactly as the same value sent whole.
        """
        call = self.calls.get(key)
        if call is None or call.state.terminal:
            return
        call.nbytes = total_bytes
        if call.nbytes > self._max_bytes:
            self._overflow(call)
        elif self._deltas and fragment != "":
            text = fragment if isinstance(fragment, str) else dump_structured(fragment)[0]
            self._emit(ArgumentsDelta(key, text if self._forward else None, call.nbytes))

    def set_value(self, key: Hashable, value: Any, *, count: bool = True) -> None:
        """Structured arguments (Gemini ``args``, a complete Anthropic ``input``, an OpenAI chat
        ``arguments`` object), taken as is. ``count=False``: a value still being built
        (``Deferred``), counted by ``count_structured`` as it grows.

        DESIGN §5: the value gets the strict verdict its text would get (no NaN, no lone
        surrogate). A second, different value for the same call is a conflicting re-send.
        """
        call = self.calls.get(key)
        if call is None or call.state.terminal:
            return
        if not count:
            call.value = value
            call.value_text = None
            return
        text, error = dump_structured(value)
        if call.value is not NO_VALUE and not isinstance(call.value, Deferred):
            if text != call.value_text or error is not None:
                self.taint(key, Reason.duplicate_conflict, "structured arguments sent twice, differently")
            return
        call.value = value
        call.value_text = text
        if error is not None:
            self.taint(key, Reason.invalid_json, error)
            return
        assert text is not None
        size = len(text) if text.isascii() else len(text.encode("utf-8"))
        call.nbytes = size
        if size > self._max_bytes:
            self._overflow(call)
        elif self._deltas:
            self._emit(ArgumentsDelta(key, text if self._forward else None, size))

    def done_arguments(self, key: Hashable, text: Any) -> None:
        """A vendor's own final copy of the arguments (Responses done events).

        With no deltas it *is* the arguments; with deltas it must agree with them, and a
        contradiction means the vendor itself is unsure what it sent.
        """
        call = self.calls.get(key)
        if call is None or call.state.terminal or text is None:
            return
        if not isinstance(text, str):
            self.taint(key, Reason.upstream_error, f"the done event's arguments are a {type(text).__name__}")
            return
        if not call.streamed:
            if call.done_text is None:
                size = len(text.encode("utf-8", "surrogatepass"))
                if size > self._max_bytes:
                    call.nbytes = size
                    self._overflow(call)
                    return
                call.done_text = text
                call.nbytes = size
            elif call.done_text != text:
                self.taint(key, Reason.upstream_error, "the vendor's done events disagree on the arguments")
        elif call.text() != text:
            self.taint(key, Reason.upstream_error, "the done event contradicts the streamed arguments")

    def has_fragments(self, key: Hashable) -> bool:
        call = self.calls.get(key)
        return call is not None and call.streamed

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

    def taint(self, key: Hashable, reason: Reason, detail: str) -> None:
        """Mark one call as unprovable; it fails with ``reason`` whatever the turn's outcome."""
        call = self.calls.get(key)
        if call is not None and call.taint is None and not call.state.terminal:
            call.taint = (reason, detail)
        self.anomaly(detail)

    def anomaly(self, detail: str) -> None:
        """Count odd vendor data; kept (bounded) for diagnosis, logged at debug level."""
        _log.debug("toolstream anomaly: %s", detail)
        if len(self._anomalies) < _MAX_ANOMALIES:
            self._anomalies.append(detail)

    def call_id(self, key: Hashable) -> str | None:
        call = self.calls.get(key)
        return call.id if call is not None else None

    # -- internals ---------------------------------------------------------------------------

    def _client_calls(self) -> list[Call]:
        return [c for c in self.calls.values() if c.kind != "server" and c.primary is None]

    def _move(self, call: Call, what: Move) -> CallState:
        """``move``, and no call is hot after it: ``append``'s short branch trusts that the
        hot call is open and a first copy, without looking."""
        self._hot = _COLD
        return move(call, what)

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

    def _completion(self, transport_complete: bool, error: BaseException | None) -> tuple[bool, Reason, str]:
        """Rule 4: the transport ended *and* the vendor said the turn ended normally."""
        verdict = self._verdict
        if verdict is Verdict.error:
            detail = self._error_detail or f"the vendor ended the turn with {self._finish_reason!r}"
            return False, Reason.upstream_error, detail
        if error is not None and is_vendor_error(error):
            return False, Reason.upstream_error, f"the vendor reported an error: {type(error).__name__}: {error}"
        if not transport_complete:
            cause = f" ({type(error).__name__}: {error})" if error is not None else ""
            return False, Reason.stream_truncated, f"the stream ended before the vendor finished{cause}"
        if verdict is Verdict.truncated:
            return False, Reason.stream_truncated, f"the vendor stopped early ({self._finish_reason!r})"
        limit, used = self.max_output_tokens, self._output_tokens
        if limit is not None and used is not None and used >= limit:
            # DESIGN §5 backstop: some servers report a normal finish when max_tokens cut the
            # call (vLLM), and a cut can land where the JSON happens to parse.
            return False, Reason.stream_truncated, (
                f"the output reached the token limit ({used} of {limit}) whatever the finish "
                f"reason ({self._finish_reason!r}) says")
        if verdict is None:
            return self.config.mode == "lenient", Reason.stream_truncated, _NO_SIGNAL
        return True, Reason.stream_truncated, ""

    def _finalize(self, call: Call) -> None:
        if call.taint is not None:
            self._terminate(call, Move.fail, *call.taint)
            return
        text = call.text()
        if call.value is not NO_VALUE:
            if text and call.streamed:
                self._terminate(call, Move.fail, Reason.upstream_error,
                                "the call's arguments arrived both as text and as a structured value")
                return
            # Structured arguments: their compact JSON is the text that gets the verdict.
            text, error = dump_structured(call.structured())
            call.value_text = text
            if error is not None:
                self._reject_invalid_json(call, error)
                return
        raw = call.raw()
        for twin in call.twins:
            twin_raw = twin.raw()
            if twin.name != call.name or not same_copy(twin_raw, raw):
                self._metric("duplicate", 1, call)
                self._terminate(
                    call, Move.fail, Reason.duplicate_conflict,
                    f"call id {call.id!r} was sent again with different arguments",
                )
                return
        strict = self._registry.strict_for(call.name, self.config.mode == "strict")
        decision = decide(
            name=call.name,
            has_id=call.id is not None or call.anonymous,
            kind=call.kind,
            provider=self.provider,
            text=text,
            registry=self._registry,
            strict=strict,
            must_be_object=self.config.arguments_must_be_object,
        )
        if call.twins or decision.deduplicated:
            self._metric("duplicate", 1, call)
        if decision.reason is None and not self._within_budget():
            self._terminate(call, Move.fail, Reason.run_budget_exceeded,
                            f"the run's tool-call budget allowed {self.run_budget} more call(s) in this "
                            "turn, all committed")
            return
        if decision.reason is None:
            self._commit_latency(call)  # before the commit's event: a slow callback is not ours
            self._terminate(call, Move.commit, arguments=decision.arguments)
            return
        if decision.reason is Reason.invalid_json:
            self._reject_invalid_json(call, decision.detail or "invalid JSON")
            return
        self._terminate(call, Move.fail, decision.reason, decision.detail)

    def _within_budget(self) -> bool:
        """Seed gate step 5, the last check before a call is queued: one more commit fits the
        run's budget (DESIGN 4.8). Counted here, so early (pipelined) commits count first."""
        if self.run_budget is not None and self._commits >= self.run_budget:
            return False
        self._commits += 1
        return True

    def _reject_invalid_json(self, call: Call, detail: str) -> None:
        self._metric("invalid_json", 1, call)
        call.dropped = self.config.on_invalid_json == "drop_with_protocol_repair"
        self._terminate(call, Move.fail, Reason.invalid_json, detail)

    def _overflow(self, call: Call) -> None:
        self._metric("overflow", 1, call)
        call.parts = []  # rule 8: release the buffer now, not at the end of the stream
        call.counted = 0
        call.blocks = []
        call.done_text = None
        call.value = NO_VALUE
        call.dropped = self.config.on_args_overflow == "drop_with_protocol_repair"
        if call.kind == "server":
            self._move(call, Move.fail)
            return
        self._terminate(
            call, Move.fail, Reason.arguments_exceed_max_bytes,
            f"arguments passed {self._max_bytes} bytes",
        )

    def _terminate(
        self,
        call: Call,
        what: Move,
        reason: Reason | None = None,
        detail: str | None = None,
        arguments: Any = None,
    ) -> None:
        """A client call's end: one move through the table, its copies mirrored, the
        ``ToolCall`` built and announced."""
        state = self._move(call, what)
        if call.id is None:
            call.id = self._synthesized_id(call)
        raw = None if reason is Reason.arguments_exceed_max_bytes else call.raw()
        for twin in call.twins:
            if not twin.state.terminal:  # a copy that overflowed on its own stays failed
                self._move(twin, MOVE_TO[state])
            twin_raw = twin.raw()
            if raw is not None and twin_raw is not None:
                raw += twin_raw
        call.final = ToolCall(
            key=call.key,
            index=call.index,
            id=call.id,
            name=call.name,
            kind=call.kind,
            state=state,
            raw_arguments=raw,
            arguments=arguments if state is CallState.committed else None,
            reason=reason,
            detail=detail,
            provider=self.provider,
            sensitive=self._registry.sensitivity(call.name),
        )
        self._metric("bytes", call.nbytes + call.twin_bytes, call, state=state.value)
        if state is CallState.committed:
            self._emit(CallCommitted(call.final))
        else:
            self._metric("rejected", 1, call, reason=(reason or Reason.upstream_error).value)
            self._emit(CallRejected(call.final))

    def _metric(self, name: Instrument, value: float, call: Call, **extra: str) -> None:
        """Record one of the §4.12 instruments for ``call``, with the config's tenant."""
        metrics.record(name, value, self.provider, call.name, self.config.tenant, extra)

    def _commit_latency(self, call: Call) -> None:
        """§4.12: a commit's latency from the end of the stream (``finish``), or, for a call
        committed before it (pipelining, 4.10), from the vendor's close of its arguments;
        and, under its own name, from the call's first event."""
        now = time.monotonic()
        start = self._ended_at if self._ended_at is not None else call.closed_at
        if start is not None:
            self._metric("to_commit", max(0.0, now - start), call)
        self._metric("open_to_commit", now - call.opened_at, call)

    def _synthesized_id(self, call: Call) -> str:
        """Stable across re-chunking (arrival order, name, bytes), unique within the stream."""
        import hashlib  # here, not at import (OpenSSL): only a call with no id needs it

        digest = hashlib.sha1(f"{self.provider}|{call.seq}|{call.name}|{call.raw()}".encode(
            "utf-8", "surrogatepass")).hexdigest()[:16]
        return f"call_ts{call.seq}_{digest}"

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


def _mistyped(id: Any, name: Any) -> str | None:
    """DESIGN §5.2: why an id or name of the wrong type cannot identify a call (the name's
    reason wins when both are wrong), or None when both are a str or absent."""
    mistyped = None
    if id is not None and id.__class__ is not str and not isinstance(id, str):
        mistyped = f"call id is a {type(id).__name__}"
    if name is not None and name.__class__ is not str and not isinstance(name, str):
        mistyped = f"tool name is a {type(name).__name__}"
    return mistyped
