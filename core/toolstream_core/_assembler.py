"""The state machine: vendor events in, decided tool calls out. No I/O, no framework.

Adapters (``_adapters/``) translate each vendor's wire events into the small vocabulary below
(open, append, set_value, close, settle, end, usage, upstream_error, taint, fail_live);
everything a call goes through after that lives in this file:

    open --append*--> open --close--> args_complete --finish/settle--> committed | failed
      \\______________ cancel / overflow / too many / truncation ______/--> failed | cancelled

Rule 2 (first write wins) is ``open``; rule 3 (opaque arguments) is ``append``; rule 4 is
``finish`` with ``_completion``; rules 5 and 7 are ``_finalize``; rule 8 is ``append``/``open``;
rule 9 is ``_results``; rule 10 is ``settle``. DESIGN §5: ``feed`` turns a malformed event
(``Malformed`` or any exception from an adapter) into ``fail_live``, as adapters do for a
fragment they cannot attribute; structured arguments meet the text's strict verdict in
``_finalize``; ``usage`` and ``max_output_tokens`` are the max-token backstop in
``_completion``. ``ToolSpec.strict`` decides per tool in ``finish`` when only the finish
signal is missing (DESIGN §3).
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

from . import _results, _tracing
from ._adapters import Adapter, detect_provider, make_adapter, unwrap
from ._adapters._access import Malformed, is_record
from ._completion import Verdict, is_vendor_error
from ._config import AssembleConfig
from ._finalize import NO_VALUE, Deferred, decide, same_copy
from ._metrics import metrics
from ._models import (
    PROVIDERS,
    ArgumentsDelta,
    AssemblerClosed,
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
    ToolSpec,
    Turn,
)
from ._registry import Registry
from ._strict_json import dump_structured

__all__ = ["Assembler"]

_log = logging.getLogger("toolstream")
_MAX_ANOMALIES = 64
_LIVE = (CallState.open, CallState.args_complete)
_BLOCK = 256
_DEFAULT_CONFIG = AssembleConfig()
_OPEN = CallState.open
_NO_SIGNAL = "the stream ended without a finish signal"
_ARGS_COMPLETE = CallState.args_complete


class _Call:
    """Mutable bookkeeping for one call while it streams. Never handed out."""

    __slots__ = (
        "anonymous",
        "blocks",
        "done_text",
        "dropped",
        "final",
        "id",
        "index",
        "key",
        "kind",
        "name",
        "nbytes",
        "nfrag",
        "opened_at",
        "order",
        "parts",
        "primary",
        "seq",
        "state",
        "taint",
        "twin_bytes",
        "twins",
        "value",
        "value_text",
    )

    def __init__(self, key: Hashable, seq: int, index: int | None, order: Any, kind: CallKind) -> None:
        self.key = key
        self.seq = seq
        self.index = index
        self.order = order
        self.kind: CallKind = kind
        self.anonymous = False
        self.id: str | None = None
        self.name: str | None = None
        self.state = CallState.open
        # Fragments wait in ``parts``; every _BLOCK of them are joined into one string in
        # ``blocks``. Each byte is copied once more, and memory stays near one byte per byte
        # instead of a ~50-byte str object per 1-4 byte fragment.
        self.parts: list[str] = []
        self.blocks: list[str] = []
        self.nbytes = 0
        # Bytes of re-sent copies (rule 7). They have a budget of their own, the same size as
        # the call's, so a proxy's re-send cannot push a legal call over the cap (rule 8) and
        # memory per call stays within twice the cap.
        self.twin_bytes = 0
        self.nfrag = 0
        self.value: Any = NO_VALUE
        self.value_text: str | None = None  # compact JSON of a complete structured value
        self.done_text: str | None = None
        self.taint: tuple[Reason, str] | None = None
        self.primary: _Call | None = None
        self.twins: list[_Call] = []
        self.final: ToolCall | None = None
        self.dropped = False
        self.opened_at = time.monotonic()

    def text(self) -> str | None:
        """The exact argument text received; joined once and cached, so finalize stays linear."""
        if self.nfrag:
            if self.blocks or len(self.parts) > 1:
                self.blocks.append("".join(self.parts))
                self.parts = ["".join(self.blocks)]
                self.blocks = []
            return self.parts[0] if self.parts else ""
        return self.done_text

    def structured(self) -> Any:
        """The structured arguments, with a value still being built resolved now."""
        if isinstance(self.value, Deferred):
            self.value = self.value.resolve()
        return self.value

    def raw(self) -> str | None:
        text = self.text()
        if self.value is NO_VALUE or (text and self.nfrag):
            return text
        if self.value_text is not None:
            return self.value_text
        return dump_structured(self.structured())[0]


class Assembler:
    """Feed it one vendor stream; ask it, at the end, which tool calls are safe to run.

    Sans-I/O: it never reads a socket, sleeps or imports a framework. ``feed`` never raises on
    vendor data (DESIGN §5); it raises ``AssemblerClosed`` only when the caller feeds a finished
    turn.

    ``max_output_tokens``: the request's output-token limit, when the caller knows it (the
    backstop of DESIGN §5: a turn whose reported output tokens reached it was cut, whatever
    its finish reason says). Settable until ``finish`` for callers that learn it late.
    """

    def __init__(
        self,
        *,
        tools: Mapping[str, Mapping[str, Any] | ToolSpec] | Iterable[ToolSpec] | None = None,
        config: AssembleConfig | None = None,
        provider: Provider | None = None,
        on_event: Callable[[AssemblerEvent], None] | None = None,
        max_output_tokens: int | None = None,
    ) -> None:
        if provider is not None and provider not in PROVIDERS:
            raise ValueError(f"provider must be one of {', '.join(PROVIDERS)}, got {provider!r}")
        self._max_output_tokens = _token_limit(max_output_tokens)
        self._output_tokens: int | None = None
        self.config = config if config is not None else _DEFAULT_CONFIG
        self.provider: Provider | None = provider
        self._registry = Registry(tools, self.config.allow_pipelined_execute)
        self._on_event = on_event
        # Set by adapters whose vendors may send a fragment as a JSON value (OpenAI chat).
        self.structured_fragments = False
        self._adapter: Adapter | None = make_adapter(provider, self) if provider else None
        self._calls: dict[Hashable, _Call] = {}
        self._ids: dict[str, _Call] = {}
        self._seq = 0
        self._client_count = 0
        self._server_count = 0
        self._verdict: Verdict | None = None
        self._finish_reason: str | None = None
        self._error_detail: str | None = None
        self._anomalies: list[str] = []
        self._cancelled = False
        self._turn: Turn | None = None
        self._max_bytes = self.config.max_tool_argument_bytes
        self._forward = self.config.ui_forward_partial_args

    # -- public API --------------------------------------------------------------------------

    def feed(self, chunk: Any) -> None:
        """Take one vendor chunk or event (SDK object or dict parsed from the wire)."""
        if self._turn is not None:
            raise AssemblerClosed("feed() after finish(): start a new Assembler for a new stream")
        if self._cancelled:
            return
        try:
            event = chunk
            if chunk.__class__ is not dict:
                if not is_record(chunk):  # None, a list, text, bytes, a number: not an event
                    raise Malformed(f"a {type(chunk).__name__} is not a vendor event")
            elif len(chunk) <= 2:  # only small dicts can be an envelope
                event = unwrap(chunk)
                if event is None:
                    return
                if event.__class__ is not dict and not is_record(event):
                    raise Malformed(f"a {type(event).__name__} is not a vendor event")
            adapter = self._adapter
            if adapter is None:
                provider = detect_provider(event)
                if provider is None:
                    self.anomaly(f"cannot tell the vendor from a {type(event).__name__} event")
                    return
                self.provider = provider
                adapter = self._adapter = make_adapter(provider, self)
            adapter.feed(event)
        except Exception as exc:  # DESIGN §5: absorb, count, and refuse to prove anything open
            self.fail_live(f"unreadable event ({type(exc).__name__}: {exc})")

    def fail_live(self, detail: str, where: Callable[[Hashable], bool] | None = None) -> None:
        """DESIGN §5: data that may have belonged to a live call but cannot be attributed to
        one (a malformed event, an orphan fragment) fails every live call it could have
        touched (``where`` narrows them by key), with ``upstream_error``. Counted once."""
        self.anomaly(detail)
        for call in self._calls.values():
            if call.state in _LIVE and call.taint is None and (where is None or where(call.key)):
                call.taint = (Reason.upstream_error, "a vendor event for this stream was unreadable")

    def cancel(self, reason: str = "cancelled") -> None:
        """Cancel every call not yet terminal; later ``feed`` calls are absorbed."""
        if self._turn is not None or self._cancelled:
            return
        self._cancelled = True
        for call in self._client_calls():
            if call.state in _LIVE:
                self._terminate(call, CallState.cancelled, Reason.cancelled, reason)

    def finish(self, *, transport_complete: bool = True, error: BaseException | None = None) -> Turn:
        """Decide every call and return the Turn. Idempotent."""
        if self._turn is not None:
            return self._turn
        complete = False
        if not self._cancelled:
            end_of_stream = getattr(self._adapter, "end_of_stream", None)
            if end_of_stream is not None:
                end_of_stream()
            complete, reason, detail = self._completion(transport_complete, error)
            # Only the finish signal is missing: ToolSpec.strict decides per tool (DESIGN §3);
            # Turn.complete stays the config mode's answer.
            unsignalled = reason is Reason.stream_truncated and detail is _NO_SIGNAL
            default_strict = self.config.mode == "strict"
            for call in self._client_calls():
                if call.state not in _LIVE:
                    continue
                proven = complete
                if unsignalled:
                    proven = not self._registry.strict_for(call.name, default_strict)
                if proven:
                    self._finalize(call)
                else:
                    self._terminate(call, CallState.failed, reason, detail)
        self._turn = self._build_turn(complete, error)
        if _tracing.active():  # one span per turn, only with a tracer provider configured
            _tracing.record_turn(self, self._turn)
        return self._turn

    def fail_open(self, reason: Reason, detail: str) -> None:
        """Fail every live call with ``reason`` now (used by drivers for ``idle_timeout``)."""
        for call in self._client_calls():
            if call.state in _LIVE:
                self._terminate(call, CallState.failed, reason, detail)

    @property
    def finished(self) -> bool:
        return self._turn is not None

    @property
    def max_output_tokens(self) -> int | None:
        return self._max_output_tokens

    @max_output_tokens.setter
    def max_output_tokens(self, value: int | None) -> None:
        self._max_output_tokens = _token_limit(value)

    # -- the vocabulary adapters speak -------------------------------------------------------

    def open(
        self,
        key: Hashable,
        *,
        index: int | None,
        id: str | None = None,
        name: str | None = None,
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
        call = self._calls.get(key)
        mistyped = None
        if id is not None and id.__class__ is not str and not isinstance(id, str):
            mistyped = f"call id is a {type(id).__name__}"
        if name is not None and name.__class__ is not str and not isinstance(name, str):
            mistyped = f"tool name is a {type(name).__name__}"
        if mistyped is not None:
            self.open(key, index=index, id=id if isinstance(id, str) else None,
                      name=name if isinstance(name, str) else None, kind=kind, order=order,
                      anonymous=anonymous)
            self.taint(key, Reason.upstream_error, mistyped)
            return
        if call is None:
            call = _Call(key, self._seq, index, order if order is not None else index, kind)
            call.anonymous = anonymous
            self._seq += 1
            self._calls[key] = call
            if isinstance(id, str) and id:
                call.id = id
            if isinstance(name, str) and name:
                call.name = name
            if kind == "server":
                self._server_count += 1
                if self._server_count > self.config.max_tool_calls_in_flight_assemble:
                    call.state = CallState.failed
                return
            if call.id is not None and self._link_twin(call):
                return
            self._client_count += 1
            self._emit_opened(call)
            if self._client_count > self.config.max_tool_calls_in_flight_assemble:
                limit = self.config.max_tool_calls_in_flight_assemble
                self._terminate(
                    call, CallState.failed, Reason.too_many_tool_calls, f"more than {limit} calls in one stream"
                )
            return
        if isinstance(id, str) and id and id != call.id:
            if call.id is None:
                call.id = id
                if call.kind != "server":
                    self._link_twin(call)
            else:
                self.anomaly(f"call {call.id!r} was sent a second id {id!r}; the first is kept")
        if isinstance(name, str) and name and name != call.name:
            if call.name is None:
                call.name = name
            else:
                self.anomaly(f"call {call.id!r} was sent a second name {name!r}; the first is kept")

    def append(self, key: Hashable, fragment: Any) -> None:
        """Rule 3: concatenate in arrival order, never look inside. Rule 8: count UTF-8 bytes."""
        call = self._calls.get(key)
        if call is None:
            self.anomaly(f"argument fragment for unknown call {key!r} dropped")
            return
        if fragment.__class__ is not str and not isinstance(fragment, str):
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
        if owner is None:
            owner = call
        elif owner.state is not _OPEN and owner.state is not _ARGS_COMPLETE:
            return
        call.nfrag += 1
        if not fragment:
            return
        size = len(fragment) if fragment.isascii() else len(fragment.encode("utf-8", "surrogatepass"))
        call.nbytes += size
        if owner is call:
            if call.nbytes > self._max_bytes:
                self._overflow(call)
                return
        else:
            owner.twin_bytes += size
            if owner.twin_bytes > self._max_bytes:
                self._overflow(owner)
                return
        parts = call.parts
        parts.append(fragment)
        if len(parts) >= _BLOCK:
            call.blocks.append("".join(parts))
            parts.clear()
        if self._on_event is not None:
            # A re-sent copy is the same call to a UI: report it under the call it copies.
            self._emit(ArgumentsDelta(owner.key, fragment if self._forward else None,
                                      owner.nbytes + owner.twin_bytes))

    def count_structured(self, key: Hashable, fragment: Any, total_bytes: int) -> None:
        """Rule 8 for structured streaming arguments (Gemini ``partialArgs``).

        ``total_bytes`` is the size of the compact JSON built so far, kept by the adapter, so a
        value streamed in pieces is counted exactly as the same value sent whole.
        """
        call = self._calls.get(key)
        if call is None or call.state.terminal:
            return
        call.nbytes = total_bytes
        if call.nbytes > self._max_bytes:
            self._overflow(call)
        elif self._on_event is not None and fragment != "":
            text = fragment if isinstance(fragment, str) else dump_structured(fragment)[0]
            self._emit(ArgumentsDelta(key, text if self._forward else None, call.nbytes))

    def set_value(self, key: Hashable, value: Any, *, count: bool = True) -> None:
        """Structured arguments (Gemini ``args``, a complete Anthropic ``input``, an OpenAI chat
        ``arguments`` object), taken as is. ``count=False``: a value still being built
        (``Deferred``), counted by ``count_structured`` as it grows.

        DESIGN §5: the value gets the strict verdict its text would get (no NaN, no lone
        surrogate). A second, different value for the same call is a conflicting re-send.
        """
        call = self._calls.get(key)
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
        elif self._on_event is not None:
            self._emit(ArgumentsDelta(key, text if self._forward else None, size))

    def done_arguments(self, key: Hashable, text: Any) -> None:
        """A vendor's own final copy of the arguments (Responses done events).

        With no deltas it *is* the arguments; with deltas it must agree with them, and a
        contradiction means the vendor itself is unsure what it sent.
        """
        call = self._calls.get(key)
        if call is None or call.state.terminal or text is None:
            return
        if not isinstance(text, str):
            self.taint(key, Reason.upstream_error, f"the done event's arguments are a {type(text).__name__}")
            return
        if call.nfrag == 0:
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
        call = self._calls.get(key)
        return call is not None and call.nfrag > 0

    def close(self, key: Hashable) -> None:
        """The vendor closed this call's arguments (block stop, done event, end of call)."""
        call = self._calls.get(key)
        if call is not None and call.state is CallState.open:
            call.state = CallState.args_complete

    def settle(self, key: Hashable) -> None:
        """Rule 10: a point where the vendor can no longer change this call; pipeline if allowed."""
        call = self._calls.get(key)
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

    def end(self, finish_reason: str | None, verdict: Verdict | None) -> None:
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
        call = self._calls.get(key)
        if call is not None and call.taint is None and not call.state.terminal:
            call.taint = (reason, detail)
        self.anomaly(detail)

    def anomaly(self, detail: str) -> None:
        """Count odd vendor data; kept (bounded) for diagnosis, logged at debug level."""
        _log.debug("toolstream anomaly: %s", detail)
        if len(self._anomalies) < _MAX_ANOMALIES:
            self._anomalies.append(detail)

    def call_id(self, key: Hashable) -> str | None:
        call = self._calls.get(key)
        return call.id if call is not None else None

    # -- internals ---------------------------------------------------------------------------

    def _client_calls(self) -> list[_Call]:
        return [c for c in self._calls.values() if c.kind != "server" and c.primary is None]

    def _link_twin(self, call: _Call) -> bool:
        """Rule 7: a second call with an id already seen is a copy of the first, not a new call."""
        assert call.id is not None
        first = self._ids.get(call.id)
        if first is None:
            self._ids[call.id] = call
            return False
        if first is call:
            return False
        call.primary = first
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
        limit, used = self._max_output_tokens, self._output_tokens
        if limit is not None and used is not None and used >= limit:
            # DESIGN §5 backstop: some servers report a normal finish when max_tokens cut the
            # call (vLLM), and a cut can land where the JSON happens to parse.
            return False, Reason.stream_truncated, (
                f"the output reached the token limit ({used} of {limit}) whatever the finish "
                f"reason ({self._finish_reason!r}) says")
        if verdict is None:
            return self.config.mode == "lenient", Reason.stream_truncated, _NO_SIGNAL
        return True, Reason.stream_truncated, ""

    def _finalize(self, call: _Call) -> None:
        if call.taint is not None:
            self._terminate(call, CallState.failed, *call.taint)
            return
        text = call.text()
        if call.value is not NO_VALUE:
            if text and call.nfrag:
                self._terminate(call, CallState.failed, Reason.upstream_error,
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
                metrics.duplicate(self.provider, call.name)
                self._terminate(
                    call, CallState.failed, Reason.duplicate_conflict,
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
            metrics.duplicate(self.provider, call.name)
        if decision.reason is None:
            metrics.args_bytes(call.nbytes, self.provider, call.name)
            metrics.to_commit(time.monotonic() - call.opened_at, self.provider, call.name)
            self._terminate(call, CallState.committed, arguments=decision.arguments)
            return
        if decision.reason is Reason.invalid_json:
            self._reject_invalid_json(call, decision.detail or "invalid JSON")
            return
        self._terminate(call, CallState.failed, decision.reason, decision.detail)

    def _reject_invalid_json(self, call: _Call, detail: str) -> None:
        metrics.invalid_json(self.provider, call.name)
        call.dropped = self.config.on_invalid_json == "drop_with_protocol_repair"
        self._terminate(call, CallState.failed, Reason.invalid_json, detail)

    def _overflow(self, call: _Call) -> None:
        metrics.overflow(self.provider, call.name)
        call.parts = []  # rule 8: release the buffer now, not at the end of the stream
        call.blocks = []
        call.done_text = None
        call.value = NO_VALUE
        call.dropped = self.config.on_args_overflow == "drop_with_protocol_repair"
        if call.kind == "server":
            call.state = CallState.failed
            return
        self._terminate(
            call, CallState.failed, Reason.arguments_exceed_max_bytes,
            f"arguments passed {self._max_bytes} bytes",
        )

    def _terminate(
        self,
        call: _Call,
        state: CallState,
        reason: Reason | None = None,
        detail: str | None = None,
        arguments: Any = None,
    ) -> None:
        call.state = state
        if call.id is None:
            call.id = self._synthesized_id(call)
        raw = None if reason is Reason.arguments_exceed_max_bytes else call.raw()
        for twin in call.twins:
            twin.state = state
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
        )
        if state is CallState.committed:
            self._emit(CallCommitted(call.final))
        else:
            metrics.rejected(self.provider, call.name)
            self._emit(CallRejected(call.final))

    def _synthesized_id(self, call: _Call) -> str:
        """Stable across re-chunking (arrival order, name, bytes), unique within the stream."""
        digest = hashlib.sha1(f"{self.provider}|{call.seq}|{call.name}|{call.raw()}".encode(
            "utf-8", "surrogatepass")).hexdigest()[:16]
        return f"call_ts{call.seq}_{digest}"

    def _emit(self, event: AssemblerEvent) -> None:
        if self._on_event is None:
            return
        try:
            self._on_event(event)
        except Exception:  # a UI callback must not break assembly
            _log.exception("toolstream on_event callback failed")

    def _emit_opened(self, call: _Call) -> None:
        if self._on_event is not None:
            self._emit(CallOpened(call.key, call.id, call.name))

    def _snapshot_server(self, call: _Call) -> ToolCall:
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

    def _build_turn(self, complete: bool, error: BaseException | None) -> Turn:
        clients = self._client_calls()
        if self.config.finalize_order == "provider_index":
            clients.sort(key=lambda c: (_order_key(c.order), c.seq))
        else:
            clients.sort(key=lambda c: c.seq)
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
                results.append(_results.error_result(final, final.id, echo=self._forward))
        servers = [c for c in self._calls.values() if c.kind == "server"]
        servers.sort(key=lambda c: c.seq)
        return Turn(
            calls=tuple(calls),
            server_calls=tuple(self._snapshot_server(c) for c in servers),
            dropped=tuple(dropped),
            complete=complete and error is None,
            finish_reason=self._finish_reason,
            error=error,
            provider=self.provider,
            anomalies=tuple(self._anomalies),
            _results=tuple(results),
        )


def _token_limit(value: Any) -> int | None:
    if value is None or (value.__class__ is int and value > 0):
        return value
    raise ValueError(f"max_output_tokens must be a positive integer or None, got {value!r}")


def _order_key(order: Any) -> tuple[Any, ...]:
    """Sort vendor positions; ``None`` (unknown position) sorts after every known one."""
    if isinstance(order, tuple):
        return tuple((1, 0) if part is None else (0, part) for part in order)
    return ((1, 0),) if order is None else ((0, order),)
