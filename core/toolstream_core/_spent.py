"""Which calls an event touched, once a call failed mid-stream: what a framework need not see.

Once the gate has failed a call while the stream is open (its arguments passed the cap, an
unreadable event tainted it, DESIGN 4.8), the rest of that call's bytes decide nothing: its
verdict is fixed and the framework's view of the call is never run. A framework still pays for
each of them (LlamaIndex's OpenAI class rebuilds the whole argument string per chunk,
quadratic; LangChain keeps a chunk per fragment until the end). So the core says, with each
event, whether it touched *only* calls that already failed (``Assembler.spent``), and the
session withholds such an event from the framework (issue 37.3), on every wire alike.

How: at the first mid-stream failure the table becomes a `SpentTable` (its class changes, so
every adapter holding it speaks to the recording words at once) and the Assembler stops using
its adapter's fast path, so every event takes the full path, where an adapter also says when
an event carries content the gate does not read (``carries``: text, reasoning, a refusal).
Each word an adapter says then records what it touched: an argument word (``append``,
``set_value``, ``count_structured``, ``done_arguments``) the call it names, failed or not; any
other word (a call opened or closed, a finish, an error, content) something else. ``usage`` is
neither: the next event the framework gets carries the vendor's running count. A healthy
stream never comes here and pays nothing for it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from ._completion import Verdict
from ._models import CallKind, CallState, Reason
from ._table import CallTable

__all__ = ["SpentTable"]

_COMMITTED = CallState.committed


class SpentTable(CallTable):
    """`CallTable` recording what each event touched (``touched_failed``, ``touched_other``),
    reset by the Assembler before each event."""

    recording = True

    def _touch(self, key: Hashable) -> None:
        call = self.calls.get(key)
        if call is not None:
            owner = call.primary if call.primary is not None else call
            state = owner.state
            if owner.taint is not None or (state.terminal and state is not _COMMITTED):
                self.touched_failed = True
                return
        self.touched_other = True

    # -- argument words: the call they name --------------------------------------------------

    def append(self, key: Hashable, fragment: Any) -> None:
        self._touch(key)
        super().append(key, fragment)

    def set_value(self, key: Hashable, value: Any, *, count: bool = True) -> None:
        self._touch(key)
        super().set_value(key, value, count=count)

    def count_structured(self, key: Hashable, fragment: Any, total_bytes: int) -> bool:
        self._touch(key)
        return super().count_structured(key, fragment, total_bytes)

    def done_arguments(self, key: Hashable, text: Any) -> None:
        self._touch(key)
        super().done_arguments(key, text)

    # -- every other word: something the framework needs --------------------------------------

    def open(self, key: Hashable, *, index: int | None, id: Any = None, name: Any = None,
             kind: CallKind = "function", order: Any = None, anonymous: bool = False) -> None:
        self.touched_other = True
        super().open(key, index=index, id=id, name=name, kind=kind, order=order, anonymous=anonymous)

    def close_arguments(self, key: Hashable) -> None:
        self.touched_other = True
        super().close_arguments(key)

    def settle(self, key: Hashable) -> None:
        self.touched_other = True
        super().settle(key)

    def end_turn(self, finish_reason: str | None, verdict: Verdict | None) -> None:
        self.touched_other = True
        super().end_turn(finish_reason, verdict)

    def upstream_error(self, detail: str) -> None:
        self.touched_other = True
        super().upstream_error(detail)

    def taint(self, key: Hashable, reason: Reason, detail: str) -> None:
        self.touched_other = True
        super().taint(key, reason, detail)

    def fail_live(self, detail: str, where: Callable[[Hashable], bool] | None = None, *,
                  why: str = "a vendor event for this stream was unreadable") -> None:
        self.touched_other = True
        super().fail_live(detail, where, why=why)

    def anomaly(self, detail: str) -> None:
        self.touched_other = True
        super().anomaly(detail)

    def carries(self) -> None:
        self.touched_other = True
