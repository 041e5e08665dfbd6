"""The planned history applied with each framework's own messages: one dispatch for both.

``_history`` plans (which message is kept, shown, answered, and with what); a shim hands its
message constructors here as a :class:`MessageKit`, and :func:`apply_plan` builds the history
the plan asks for, so LangChain and LlamaIndex lay out the same one. The kit's methods are
the shims' three history paths: ``check`` (behind ``check_history``), ``prepare`` (the
history a gated request sends) and ``pair_orphans`` (behind ``pair_orphan_calls``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ._history import (
    HistoryEdit,
    HistoryEntry,
    HistoryPlan,
    HistoryPolicy,
    HistoryProblem,
    check_entries,
    plan_history,
    plan_request,
)

__all__ = ["MessageKit", "apply_plan", "pair_orphans", "thinking_enabled"]

M = TypeVar("M")


@dataclass(frozen=True, slots=True)
class MessageKit(Generic[M]):
    """How one framework builds the messages a plan asks for; the plan and its dispatch are
    the core's, so both shims lay out the same history.

    ``entries``: the messages in neutral form (one entry per message). ``paused``: a paused
    turn without its client calls. ``show``: an assistant message with the given call ids sent
    as calls. ``errors``: a message's own error results by the id each answers. ``no_result``:
    the result of a call that has none (``HistoryEdit.content``). ``exempt``: the problem
    kinds the framework's own class repairs on the wire, so ``prepare`` does not refuse them.
    """

    entries: Callable[[Sequence[M]], Sequence[HistoryEntry]]
    paused: Callable[[M], M]
    show: Callable[[M, tuple[str, ...]], M]
    errors: Callable[[M], Mapping[str, M]]
    no_result: Callable[[HistoryEdit], M]
    exempt: frozenset[str] = frozenset()

    def check(self, messages: Sequence[M], provider: str | None, *, reasoning: bool | None = None,
              stored: bool = True) -> list[HistoryProblem]:
        """What ``provider`` would reject in ``messages`` (``check_entries``)."""
        return check_entries(self.entries(messages), provider, reasoning=reasoning, stored=stored)

    def prepare(self, messages: list[M], provider: str | None, policy: HistoryPolicy, *,
                log: logging.Logger, thinking: Any = None, stored: bool = True,
                entries: Sequence[HistoryEntry] | None = None, appended: Sequence[M] = ()) -> list[M]:
        """The history a request sends under ``policy`` (``plan_request``, then applied);
        ``messages`` itself when nothing changes. ``thinking``: the model's thinking setting
        (``thinking_enabled``); ``entries``: ``messages`` in neutral form where the shim reads
        them with more than ``self.entries`` knows (the class it sends to); ``appended``: the
        messages the request adds after them, checked with them but not returned."""
        plan = plan_request(self.entries(messages) if entries is None else entries, provider, policy,
                            log=log, reasoning=thinking_enabled(thinking), stored=stored,
                            exempt=self.exempt, appended=self.entries(appended) if appended else ())
        return apply_plan(plan, messages, self)

    def pair_orphans(self, messages: Sequence[M], provider: str | None = None) -> list[M]:
        """``pair_orphans`` with this kit."""
        return pair_orphans(messages, self, provider)


def thinking_enabled(setting: Any) -> bool | None:
    """Whether a model's Anthropic thinking setting (``{"type": "enabled", ...}``, as both
    frameworks keep it) turns thinking on; ``None`` when there is no such setting, so the
    history decides (``check_entries``' ``reasoning=None``)."""
    if isinstance(setting, Mapping):
        return setting.get("type") in ("enabled", "adaptive")
    return None


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
