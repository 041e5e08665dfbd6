"""The planned history applied with each framework's own messages: one dispatch for both.

``_history`` plans (which message is kept, shown, answered, and with what); a shim hands its
message constructors here as a :class:`MessageKit`, and :func:`apply_plan` builds the history
the plan asks for, so LangChain and LlamaIndex lay out the same one. :func:`pair_orphans` is
the one path behind both shims' ``pair_orphan_calls``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ._history import HistoryEdit, HistoryEntry, HistoryPlan, plan_history

__all__ = ["MessageKit", "apply_plan", "pair_orphans"]

M = TypeVar("M")


@dataclass(frozen=True, slots=True)
class MessageKit(Generic[M]):
    """How one framework builds the messages a plan asks for; the plan and its dispatch are
    the core's, so both shims lay out the same history.

    ``entries``: the messages in neutral form (one entry per message). ``paused``: a paused
    turn without its client calls. ``show``: an assistant message with the given call ids sent
    as calls. ``errors``: a message's own error results by the id each answers. ``no_result``:
    the result of a call that has none (``HistoryEdit.content``).
    """

    entries: Callable[[Sequence[M]], Sequence[HistoryEntry]]
    paused: Callable[[M], M]
    show: Callable[[M, tuple[str, ...]], M]
    errors: Callable[[M], Mapping[str, M]]
    no_result: Callable[[HistoryEdit], M]


def apply_plan(plan: HistoryPlan, messages: list[M], kit: MessageKit[M]) -> list[M]:
    """The planned history built from ``messages`` with ``kit``'s constructors; ``messages``
    itself when the plan changes nothing."""
    if not plan.changed:
        return messages
    errors: dict[int, Mapping[str, M]] = {}
    out: list[M] = []
    for edit in plan.edits:
        message = messages[edit.index]
        if edit.op == "keep":
            out.append(message)
        elif edit.op == "paused":
            out.append(kit.paused(message))
        elif edit.op == "show":
            out.append(kit.show(message, edit.shown))
        elif edit.op == "error":
            if edit.index not in errors:
                errors[edit.index] = kit.errors(message)
            out.append(errors[edit.index][edit.call_id or ""])
        else:
            out.append(kit.no_result(edit))
    return out


def pair_orphans(messages: Sequence[M], kit: MessageKit[M], provider: str | None = None) -> list[M]:
    """``messages`` with every unanswered call answered (``plan_history`` with ``repair``, no
    vendor check): the one path behind both shims' ``pair_orphan_calls``. ``provider``: the
    wire the history goes to, when known (its words then leave out an id the model never saw,
    as on Gemini)."""
    history = list(messages)
    return apply_plan(plan_history(kit.entries(history), provider), history, kit)
