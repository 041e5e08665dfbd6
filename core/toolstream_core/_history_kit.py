"""One framework's messages as the core reads them, and the history it plans built from them.

A shim describes its framework once, as a :class:`MessageKit`: where a message keeps the
gate's record and the vendor's stop reason, what a message is in neutral form (its role, the
calls it makes and the reasoning beside them), which calls the framework itself could not
parse, and its constructors (an error result, a paused turn sent back, an assistant message
that shows a call). Everything decided from those readings is here, once for both shims: the
record read once per message (``RecordView``), whether a turn is paused, each call's error
result, the history entries, and the plan (``_history``) applied by :func:`apply_plan`. So
LangChain and LlamaIndex answer the same calls with the same words and send the same history.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from ._decision import DecisionRecord, RecordView
from ._history import (
    HistoryEntry,
    HistoryPlan,
    HistoryPolicy,
    HistoryProblem,
    check_entries,
    plan_history,
    plan_request,
)
from ._results import ungated_error_text

__all__ = ["InvalidCall", "MessageKit", "apply_plan", "thinking_enabled"]

M = TypeVar("M")
"""A framework's message."""
H = TypeVar("H")
"""What else holds a message's record (LlamaIndex: the ``ChatResponse`` around it)."""
R = TypeVar("R")
"""The framework's message that answers a call (LangChain's ``ToolMessage``)."""

InvalidCall = tuple[str | None, str | None, str | None]
"""A call the framework itself could not use, on a message the gate did not decide: its id,
its tool name, and why (``None``: the framework did not say)."""

#: How an ungated call without a reason is described (LangChain keeps none for some calls).
_NO_REASON = "invalid arguments"


@dataclass(frozen=True, slots=True)
class MessageKit(Generic[M, H, R]):
    """How one framework's messages hold what the core reads, and how it builds the messages
    the core asks for; every decision over them is a method here, the same for both shims.

    Readers: ``record_of`` the value a message (or ``H``) keeps under ``RECORD_KEY``;
    ``stop_reason_of`` the vendor's stop reason the framework kept; ``entry_of`` a message in
    neutral form as the framework shows it (role, ``answers``, calls, reasoning), given its
    record (``None``: ungated) and the SDK family it goes to (what the class leaves off the
    wire), where the paused, gated and error fields are left for the kit to fill;
    ``invalid_calls_of`` the calls the framework could not use, on an ungated message.
    Constructors: ``error_result(call_id, name, content, reason, state)`` a tool message
    that answers a call with an error; ``continued`` a paused turn as it goes back, without its
    client calls; ``shown`` an assistant message with the given call ids sent as calls.
    ``thinking_field``: the attribute of the framework's model class that holds its Anthropic
    thinking setting. ``exempt``: the problem kinds the framework's classes repair on the
    wire, so ``prepare`` does not refuse them. ``log``: where a refused history is logged.
    """

    record_of: Callable[[M | H], Any]
    stop_reason_of: Callable[[M | H], Any]
    entry_of: Callable[[M, RecordView | None, str | None], HistoryEntry]
    invalid_calls_of: Callable[[M | H], Iterable[InvalidCall]]
    error_result: Callable[[str, str | None, str, str | None, str | None], R]
    continued: Callable[[M], M]
    shown: Callable[[M, RecordView | None, tuple[str, ...]], M]
    thinking_field: str
    log: logging.Logger
    exempt: frozenset[str] = frozenset()

    # -- one message: its record, read once --------------------------------------------------

    def view(self, message: M | H) -> RecordView | None:
        """The record on ``message`` read once; ``None`` if it did not pass the gate."""
        value = self.record_of(message)
        return RecordView.read(value) if value is not None else None

    def record(self, message: M | H) -> DecisionRecord | None:
        """The gate's decision record on ``message`` (``read_record``); ``None`` if ungated."""
        view = self.view(message)
        return view.record if view is not None else None

    def paused_turn(self, message: M | H, view: RecordView | None = None) -> bool:
        """Whether ``message`` is a turn the vendor paused (Anthropic ``pause_turn``, a long
        server-tool turn), which goes back to be continued: from its record (``view``, when
        already read), else from the stop reason the framework kept."""
        view = view if view is not None else self.view(message)
        if view is not None:
            return view.paused
        return RecordView.paused_stop(self.stop_reason_of(message))

    def errors(self, message: M | H, view: RecordView | None = None) -> dict[str, R]:
        """``message``'s own error results by the id each answers, in order: each call the gate
        rejected (the record's words and ``tool_call_id``, the core's synthesized id for a call
        that arrived without one), or on an ungated message each call the framework could not
        use (``ungated_error_text``)."""
        view = view if view is not None else self.view(message)
        if view is not None:
            return {ident: self.error_result(ident, entry.get("name"), entry.get("content") or "",
                                             entry.get("reason"), entry.get("state"))
                    for ident, entry in view.rejected.items()}
        out: dict[str, R] = {}
        for ident, name, why in self.invalid_calls_of(message):
            if ident and ident not in out:
                text = ungated_error_text(name or "unknown", ident, why or _NO_REASON)
                out[ident] = self.error_result(ident, name, text, why, "failed")
        return out

    def error_results(self, message: M | H) -> list[R]:
        """``errors(message)`` as a list (``error_tool_messages``)."""
        return list(self.errors(message).values())

    def _entry(self, message: M, view: RecordView | None, provider: str | None) -> HistoryEntry:
        entry = self.entry_of(message, view, provider)
        if entry.role != "assistant":
            return entry
        errors = view.error_ids if view is not None else tuple(
            ident for ident, _, _ in self.invalid_calls_of(message) if ident)
        return HistoryEntry("assistant", entry.calls, entry.answers, entry.reasoning,
                            entry.reasoning_first, paused=self.paused_turn(message, view),
                            gated=view is not None and view.gated, errors=errors)

    # -- a history: read once, planned, built ------------------------------------------------

    def entries(self, messages: Sequence[M], provider: str | None = None) -> list[HistoryEntry]:
        """``messages`` in the core's neutral form (one entry per message, same positions);
        ``provider``: the SDK family they go to."""
        return [self._entry(m, self.view(m), provider) for m in messages]

    def check(self, messages: Sequence[M], provider: str | None, *, reasoning: bool | None = None,
              stored: bool = True) -> list[HistoryProblem]:
        """What ``provider`` would reject in ``messages`` (``check_history``)."""
        return check_entries(self.entries(messages), provider, reasoning=reasoning, stored=stored)

    def prepare(self, messages: Sequence[M], provider: str | None, policy: HistoryPolicy, model: Any,
                appended: Sequence[M] = ()) -> list[M | R]:
        """The history a gated request to ``model`` sends under ``policy`` (``plan_request``,
        then applied); the caller's list itself when nothing changes. ``appended``: messages
        the request adds after them (a ``user_msg``), checked with them but not returned."""
        history = messages if isinstance(messages, list) else list(messages)
        views = [self.view(m) for m in history]
        entries = [self._entry(m, v, provider) for m, v in zip(history, views, strict=True)]
        plan = plan_request(entries, provider, policy, log=self.log,
                            reasoning=thinking_enabled(getattr(model, self.thinking_field, None)),
                            stored=getattr(model, "store", None) is not False, exempt=self.exempt,
                            appended=self.entries(appended, provider) if appended else ())
        return apply_plan(plan, history, views, self)

    def pair_orphans(self, messages: Sequence[M], provider: str | None = None) -> list[M | R]:
        """``messages`` with every unanswered call answered (``plan_history`` with ``repair``,
        no vendor check): the one path behind both shims' ``pair_orphan_calls``.
        ``provider``: the wire the history goes to, when known (its words then leave out an id
        the model never saw, as on Gemini)."""
        history = list(messages)
        views = [self.view(m) for m in history]
        entries = [self._entry(m, v, provider) for m, v in zip(history, views, strict=True)]
        return apply_plan(plan_history(entries, provider), history, views, self)


def thinking_enabled(setting: Any) -> bool | None:
    """Whether a model's Anthropic thinking setting (``{"type": "enabled", ...}``, as both
    frameworks keep it) turns thinking on; ``None`` when there is no such setting, so the
    history decides (``check_entries``' ``reasoning=None``)."""
    if isinstance(setting, Mapping):
        return setting.get("type") in ("enabled", "adaptive")
    return None


def apply_plan(plan: HistoryPlan, messages: list[M], views: Sequence[RecordView | None],
               kit: MessageKit[M, Any, R]) -> list[M | R]:
    """The planned history built from ``messages`` (``views``: their records, read once) with
    ``kit``'s constructors; ``messages`` itself when the plan changes nothing. A call with no
    result is answered with an error result too (reason and state ``cancelled``)."""
    if not plan.changed:
        return cast("list[M | R]", messages)  # the caller's own list, as it is
    errors: dict[int, Mapping[str, R]] = {}
    out: list[M | R] = []
    for edit in plan.edits:
        message = messages[edit.index]
        if edit.op == "keep":
            out.append(message)
        elif edit.op == "paused":
            out.append(kit.continued(message))
        elif edit.op == "show":
            out.append(kit.shown(message, views[edit.index], edit.shown))
        elif edit.op == "error":
            if edit.index not in errors:
                errors[edit.index] = kit.errors(message, views[edit.index])
            out.append(errors[edit.index][edit.call_id or ""])
        else:
            out.append(kit.error_result(edit.call_id or "", edit.name, edit.content or "",
                                        "cancelled", "cancelled"))
    return out
