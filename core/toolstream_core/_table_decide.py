"""A call's end: completion (rule 4), the one decision (rules 5 and 7), the run budget (4.8).

`_Decisions` is `CallTable`'s second layer: ``finish`` proves the turn complete or not and
decides every live call, in queue order so the run budget goes first come first served;
``_terminate`` is the one way a client call ends (one move, its copies mirrored, the
``ToolCall`` built, announced and measured).
"""

from __future__ import annotations

import time
from typing import Any

from ._call import MOVE_TO, Call, Move
from ._completion import Verdict, is_vendor_error
from ._finalize import NO_VALUE, decide, same_copy
from ._models import (
    CallCommitted,
    CallRejected,
    CallState,
    Reason,
    ToolCall,
    Turn,
)
from ._strict_json import dump_structured
from ._table_state import _LIVE, _NO_SIGNAL, _TableState


class _Decisions(_TableState):
    """Rules 4, 5, 7 and the run budget over the table's state."""

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
            self._failed_midstream()

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
