"""One call's bookkeeping while it streams, and the one table of the states it may move through.

Every state change of a call goes through ``move`` and the ``TRANSITIONS`` table (h11 style):
a change the table does not list is a bug in toolstream, never vendor data, and raises
``IllegalTransition``. The table is the diagram of DESIGN §4::

    open --close--> args_complete
    open | args_complete --commit--> committed
    open | args_complete --fail--> failed
    open | args_complete --cancel--> cancelled

``open --commit`` exists because most vendors never close a call on its own (OpenAI chat): the
turn's proven end is what completes it. Terminal states have no way out.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Hashable
from typing import Any

from ._finalize import NO_VALUE, Deferred
from ._models import CallKind, CallState, Reason, ToolCall
from ._strict_json import dump_structured

__all__ = ["BLOCK", "MOVE_TO", "ROOM", "TRANSITIONS", "Call", "IllegalTransition", "Move", "move"]

# Fragments wait in ``Call.parts`` and are joined into one string in blocks of about BLOCK
# fragments, counted in bytes so that ``CallTable.append`` makes one test per fragment: the
# next block's size is BLOCK times the last block's mean fragment, from BLOCK_BYTES (the first
# block; 256 fragments of 4 bytes, the common cut) to 64 * BLOCK_BYTES.
BLOCK = 256
BLOCK_BYTES = 1024
# How many fragments the hot call keeps between two looks of ``CallTable.append``, which
# counts their bytes then: reading each fragment's size as it comes cost a fifth of the
# per-chunk time (DESIGN §4.8 says what waits, and for how long).
ROOM = 32


class Move(enum.Enum):
    """What can happen to a call; ``TRANSITIONS`` says from which states."""

    close = "close"  # the vendor closed the call's arguments (block stop, done event, end marker)
    commit = "commit"  # proven complete and accepted by the one decision (rule 5)
    fail = "fail"  # rejected: taint, truncation, overflow, caps, the decision
    cancel = "cancel"  # the caller cancelled the turn


_OPEN, _ARGS, _DONE = CallState.open, CallState.args_complete, CallState.committed
TRANSITIONS: dict[tuple[CallState, Move], CallState] = {
    (_OPEN, Move.close): _ARGS,
    (_OPEN, Move.commit): _DONE,
    (_ARGS, Move.commit): _DONE,
    (_OPEN, Move.fail): CallState.failed,
    (_ARGS, Move.fail): CallState.failed,
    (_OPEN, Move.cancel): CallState.cancelled,
    (_ARGS, Move.cancel): CallState.cancelled,
}
# The move that reaches each terminal state (to mirror a call's end onto its re-sent copies).
MOVE_TO: dict[CallState, Move] = {_DONE: Move.commit, CallState.failed: Move.fail,
                                  CallState.cancelled: Move.cancel}


class IllegalTransition(RuntimeError):
    """A state change the table does not allow: a bug in toolstream, not bad vendor data."""


def move(call: Call, what: Move) -> CallState:
    """Apply ``what`` to ``call`` through ``TRANSITIONS``; the only place a state is written."""
    new = TRANSITIONS.get((call.state, what))
    if new is None:
        raise IllegalTransition(f"call {call.key!r}: {what.value} from {call.state.value}")
    call.state = new
    return new


class Call:
    """Mutable bookkeeping for one call while it streams. Never handed out (``final`` is).

    Identity and order:
      ``key``      the adapter's key for the call (shapes in ``_adapters/__init__.py``).
      ``seq``      arrival position in the stream (default sort, synthesized ids).
      ``index``    the vendor's position for ``ToolCall.index`` (None when unknown).
      ``order``    the sort key for ``finalize_order="provider_index"`` (a tuple or an int).
      ``kind``     ``function`` / ``custom`` (client calls) or ``server`` (rule 11).
      ``id``, ``name``  first non-empty value wins (rule 2); ``id`` is synthesized at the end
                   when the vendor sent none.
      ``anonymous`` the vendor's protocol has no ids (legacy chat ``function_call``): a missing
                   id is synthesized in strict mode too.
      ``state``    a ``CallState``, written only by ``move``.
    Arguments (exactly one of the three forms, or none):
      ``parts``, ``blocks``  streamed text fragments; ``parts`` collects about ``BLOCK``
                   of them, then they are joined into one string in ``blocks``.
      ``seal_at``  the ``nbytes`` at which ``parts`` is joined next.
      ``streamed`` a text fragment arrived (an empty one too): the text is the arguments.
      ``done_text`` the vendor's own final copy (Responses done events) when no deltas came.
      ``value``    structured arguments (``NO_VALUE`` when none; a ``Deferred`` while Gemini
                   ``partialArgs`` build it), ``value_text`` its compact JSON once known.
    Bounds (rule 8):
      ``nbytes``   UTF-8 bytes received for this call.
      ``twin_bytes`` bytes of its re-sent copies, a budget of the same size as the call's.
      ``room``     how many more fragments ``CallTable.append`` keeps for the hot call until
                   it looks (counts their bytes, checks the cap, seals, makes a delta), the
                   last one included: its one test. ``ROOM``, or 0 for a reader of deltas (a
                   look at each).
      ``counted``  how many of ``parts`` ``nbytes`` counts: the hot call's fragments are
                   counted at a look, or when the table flushes it (``count``).
    Re-sent copies (rule 7):
      ``primary``  the call this one copies (None for a first copy).
      ``twins``    the copies of this call.
    Outcome:
      ``taint``    (reason, detail): the call fails with it whatever the turn's outcome.
      ``final``    the ``ToolCall`` handed out once the call is terminal.
      ``dropped``  leave it out of ``Turn.calls`` (``drop_with_protocol_repair``).
      ``opened_at`` monotonic time of the first event (metrics and tracing).
      ``closed_at`` monotonic time the vendor closed the arguments (``None`` until then): a
                   pipelined commit's latency runs from it (DESIGN §4.12).
    """

    __slots__ = (
        "anonymous",
        "blocks",
        "closed_at",
        "counted",
        "done_text",
        "dropped",
        "final",
        "id",
        "index",
        "key",
        "kind",
        "name",
        "nbytes",
        "opened_at",
        "order",
        "parts",
        "primary",
        "room",
        "seal_at",
        "seq",
        "state",
        "streamed",
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
        # Each byte is copied once more by the block join, and memory stays near one byte per
        # byte instead of a ~50-byte str object per 1-4 byte fragment.
        self.parts: list[str] = []
        self.blocks: list[str] = []
        self.nbytes = 0
        self.seal_at = BLOCK_BYTES
        self.room = 0  # set by the table when the call becomes hot
        self.counted = 0
        # A proxy's re-send cannot push a legal call over the cap (rule 8), and memory per call
        # stays within twice the cap.
        self.twin_bytes = 0
        self.streamed = False
        self.value: Any = NO_VALUE
        self.value_text: str | None = None
        self.done_text: str | None = None
        self.taint: tuple[Reason, str] | None = None
        self.primary: Call | None = None
        self.twins: list[Call] = []
        self.final: ToolCall | None = None
        self.dropped = False
        self.opened_at = time.monotonic()
        self.closed_at: float | None = None

    def count(self) -> None:
        """Add the UTF-8 bytes of the fragments kept since the last count to ``nbytes``."""
        parts = self.parts
        n = len(parts)
        if self.counted < n:
            text = parts[-1] if n - self.counted == 1 else "".join(parts[self.counted:])
            self.nbytes += len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
            self.counted = n

    def push(self, fragment: str) -> None:
        """Keep one text fragment, already counted in ``nbytes`` (a re-sent copy's)."""
        self.parts.append(fragment)
        self.counted = len(self.parts)
        if self.nbytes >= self.seal_at:
            self.seal()

    def seal(self) -> None:
        """Join the waiting fragments into one block; the next one holds about ``BLOCK`` more.
        Called only just after a fragment was kept and counted, so ``parts`` is never empty
        here."""
        block = "".join(self.parts)
        self.blocks.append(block)
        window = len(block) * BLOCK // len(self.parts)
        self.seal_at = self.nbytes + min(max(window, BLOCK_BYTES), 64 * BLOCK_BYTES)
        self.parts.clear()
        self.counted = 0

    def text(self) -> str | None:
        """The exact argument text received; joined once and cached, so finalize stays linear."""
        if self.streamed:
            self.count()
            if self.blocks or len(self.parts) > 1:
                self.blocks.append("".join(self.parts))
                self.parts.clear()  # the tail's fragment objects go before the whole is joined
                self.parts.append("".join(self.blocks))
                self.blocks = []
                self.counted = 1
            return self.parts[0] if self.parts else ""
        return self.done_text

    def structured(self) -> Any:
        """The structured arguments, with a value still being built resolved now."""
        if isinstance(self.value, Deferred):
            self.value = self.value.resolve()
        return self.value

    def raw(self) -> str | None:
        text = self.text()
        if self.value is NO_VALUE or (text and self.streamed):
            return text
        if self.value_text is not None:
            return self.value_text
        return dump_structured(self.structured())[0]
