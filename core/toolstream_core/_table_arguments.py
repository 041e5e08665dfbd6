"""Argument text and values into a call: rule 3 (opaque, in arrival order) and rule 8 (bounds).

`_Arguments` is `CallTable`'s third layer and holds the per-chunk hot path, ``append``: its
first branch is the one test a streamed fragment pays (decisions 0085, 0086).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from ._call import Call, Move
from ._finalize import NO_VALUE, Deferred
from ._models import (
    ArgumentsDelta,
    Reason,
)
from ._strict_json import dump_structured
from ._table_decide import _Decisions
from ._table_state import _ARGS_COMPLETE, _OPEN


class _Arguments(_Decisions):
    """Fragments, structured values and the vendor's final copies of a call's arguments."""

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

    def count_structured(self, key: Hashable, fragment: Any, total_bytes: int) -> bool:
        """Rule 8 for structured streaming arguments (Gemini ``partialArgs``).

        ``total_bytes`` is the size of the compact JSON built so far, kept by the adapter, so a
        value streamed in pieces is counted exactly as the same value sent whole. ``False``
        when the call is decided (or unknown): the adapter stops building its value, so a
        call past the cap holds no memory however long its stream goes on (rule 8).
        """
        call = self.calls.get(key)
        if call is None or call.state.terminal:
            return False
        call.nbytes = total_bytes
        if call.nbytes > self._max_bytes:
            self._overflow(call)
            return False
        if self._deltas and fragment != "":
            text = fragment if isinstance(fragment, str) else dump_structured(fragment)[0]
            self._emit(ArgumentsDelta(key, text if self._forward else None, call.nbytes))
        return True

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
