"""The outgoing history, checked before it leaves: what the vendor would refuse with a 400.

A shim turns its framework's messages into ``HistoryEntry`` values (the neutral form: who
speaks, which calls a message makes, which id a result answers, and whether the vendor's
reasoning travels with the calls), then ``check_entries`` lists every ``HistoryProblem``.
One rule set serves both shims, so LangChain and LlamaIndex refuse the same histories.

Only an unanswered call id can be repaired without the model (answer it with an error
result); the rest are a lost part of the model's own output, which no client can recreate
(a thinking block's signature, a reasoning item, a Gemini ``thoughtSignature``), so the
shims raise ``HistoryError`` for them instead of sending a request the vendor refuses.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from ._results import unanswered_text

__all__ = [
    "DEFAULT_HISTORY",
    "HistoryCall",
    "HistoryEdit",
    "HistoryEntry",
    "HistoryError",
    "HistoryOp",
    "HistoryPlan",
    "HistoryPolicy",
    "HistoryProblem",
    "ProblemKind",
    "check_entries",
    "plan_history",
    "plan_request",
]

Role = Literal["system", "user", "assistant", "tool"]

ProblemKind = Literal[
    "unanswered",
    "missing_thinking",
    "missing_reasoning",
    "missing_thought_signature",
]


@dataclass(frozen=True, slots=True)
class HistoryCall:
    """One tool call an assistant message makes.

    ``signed``: the Gemini function-call part carries its ``thoughtSignature``.
    ``shown``: the framework's class sends it to the vendor as a call (LangChain's
    ``ChatGoogleGenerativeAI`` sends ``tool_calls`` only, not a rejected call); an answered
    call that is not shown must be shown, or its answer would have no call.
    """

    id: str | None
    name: str | None = None
    signed: bool = False
    shown: bool = True


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One message of the history, as the checks need it.

    ``answers``: the call id a tool result answers. ``reasoning``: the message carries the
    vendor's reasoning (an Anthropic thinking block, a Responses reasoning item, a Gemini
    thought signature). ``reasoning_first``: Anthropic only, a signed thinking block comes
    before the message's first ``tool_use``. ``paused``: a turn the vendor paused
    (Anthropic ``pause_turn``), sent back to be continued. ``gated``: the gate decided the
    message (its decision record lists calls). ``errors``: the ids of its calls that have an
    error result of their own (the gate rejected them, or the framework could not parse them).
    """

    role: Role
    calls: tuple[HistoryCall, ...] = ()
    answers: str | None = None
    reasoning: bool = False
    reasoning_first: bool = False
    paused: bool = False
    gated: bool = False
    errors: tuple[str, ...] = ()

    @staticmethod
    def signed_before_calls(blocks: Iterable[bool | None]) -> bool:
        """``HistoryEntry.reasoning_first`` from a message's reasoning and call blocks in order
        (other blocks left out): ``True``/``False`` for a reasoning block, signed or not, ``None``
        for a call. Anthropic's order: the first of them is a signed thinking block."""
        for signed in blocks:
            return bool(signed)
        return False


@dataclass(frozen=True, slots=True)
class HistoryProblem:
    """One thing the vendor would reject; ``index`` is the message's position."""

    kind: ProblemKind
    index: int
    call_id: str | None
    detail: str

    @property
    def repairable(self) -> bool:
        """Whether the shim can fix it alone (an unanswered id gets an error result)."""
        return self.kind == "unanswered"


class HistoryError(ValueError):
    """The history cannot go out as it is; ``problems`` says why, message by message."""

    def __init__(self, problems: Sequence[HistoryProblem], provider: str | None) -> None:
        self.problems = list(problems)
        self.provider = provider
        lines = "; ".join(f"message {p.index}: {p.detail}" for p in self.problems)
        super().__init__(f"this history would be rejected by {provider or 'the vendor'}: {lines}")


def check_entries(
    entries: Sequence[HistoryEntry],
    provider: str | None,
    *,
    reasoning: bool | None = None,
    stored: bool = True,
) -> list[HistoryProblem]:
    """Every problem in ``entries`` that ``provider`` would answer with a 400, in order.

    ``reasoning``: whether the model reasons (thinking on); ``None`` infers it from the
    history (any message that carries reasoning, or a signed call). ``stored``: Responses only; ``False`` when
    the vendor keeps nothing (``store=False``), so reasoning items must travel in the input.
    """
    thinking = reasoning if reasoning is not None else any(_reasons(e) for e in entries)
    problems = list(_unanswered(entries))
    if thinking:
        problems.extend(_reasoning_problems(entries, provider, stored))
    problems.sort(key=lambda p: p.index)
    return problems


def _reasons(entry: HistoryEntry) -> bool:
    return entry.reasoning or any(call.signed for call in entry.calls)


def _unanswered(entries: Sequence[HistoryEntry]) -> Iterable[HistoryProblem]:
    """A call id with no result among the tool messages right after its assistant message."""
    for index, entry in enumerate(entries):
        if entry.role != "assistant" or not entry.calls:
            continue
        answered: set[str | None] = set()
        for later in entries[index + 1:]:
            if later.role != "tool":
                break
            answered.add(later.answers)
        for call in entry.calls:
            if call.id not in answered:
                yield HistoryProblem("unanswered", index, call.id,
                                     f"tool call {call.name!r} (id {call.id}) has no result")


def _current_turn(entries: Sequence[HistoryEntry]) -> range:
    """Positions after the last user message: the tool loop the request continues."""
    start = 0
    for index, entry in enumerate(entries):
        if entry.role == "user":
            start = index + 1
    return range(start, len(entries))


def _reasoning_problems(entries: Sequence[HistoryEntry], provider: str | None,
                        stored: bool) -> Iterable[HistoryProblem]:
    if provider == "anthropic":
        yield from _anthropic_thinking(entries)
    elif provider == "openai-responses" and not stored:
        yield from _responses_reasoning(entries)
    elif provider == "gemini":
        yield from _gemini_signatures(entries)


_ANTHROPIC: tuple[ProblemKind, str] = (
    "missing_thinking",
    "tool_use {name!r} (id {id}) is not preceded by its thinking block and signature, which "
    "Anthropic requires while thinking is on")
_RESPONSES: tuple[ProblemKind, str] = (
    "missing_reasoning",
    "function_call {name!r} (id {id}) is sent without the reasoning item it was produced "
    "with, and nothing is stored (store=False)")
_GEMINI: tuple[ProblemKind, str] = (
    "missing_thought_signature",
    "function call {name!r} lost its thoughtSignature, which Gemini requires on a step's first "
    "function call while thinking is on")


def _anthropic_thinking(entries: Sequence[HistoryEntry]) -> Iterable[HistoryProblem]:
    """With thinking on, the assistant messages of the current tool loop start with their
    signed thinking block (Anthropic: "Expected `thinking` ... but found `tool_use`")."""
    return _first_calls(entries, _current_turn(entries), lambda e: e.reasoning_first, _ANTHROPIC)


def _responses_reasoning(entries: Sequence[HistoryEntry]) -> Iterable[HistoryProblem]:
    """With nothing stored, a function call goes back with the reasoning item beside it."""
    return _first_calls(entries, range(len(entries)), lambda e: e.reasoning, _RESPONSES)


def _gemini_signatures(entries: Sequence[HistoryEntry]) -> Iterable[HistoryProblem]:
    """In the current turn, each step's first function call keeps its ``thoughtSignature``."""
    return _first_calls(entries, _current_turn(entries), lambda e: e.calls[0].signed, _GEMINI)


def _first_calls(entries: Sequence[HistoryEntry], where: range,
                 holds: Callable[[HistoryEntry], bool],
                 rule: tuple[ProblemKind, str]) -> Iterable[HistoryProblem]:
    """One problem per assistant message in ``where`` with calls for which ``holds`` fails,
    named after its first call (the one the vendor's error points at)."""
    kind, text = rule
    for index in where:
        entry = entries[index]
        if entry.role == "assistant" and entry.calls and not holds(entry):
            first = entry.calls[0]
            yield HistoryProblem(kind, index, first.id, text.format(name=first.name, id=first.id))


# -- the plan: what the outgoing history becomes -----------------------------------------------

HistoryOp = Literal["keep", "paused", "show", "error", "no_result"]
"""One planned message: ``keep`` the input message as it is; ``paused`` the paused turn minus
its client calls; ``show`` the assistant message with the ``shown`` calls shown as calls;
``error`` the error result of assistant message ``index``'s call ``call_id`` (its own: the
gate's, or the framework's parse error); ``no_result`` a new result saying the call has none
(``content``)."""


@dataclass(frozen=True, slots=True)
class HistoryEdit:
    """One message of the planned history; ``index`` is the input message it comes from (for
    ``error`` and ``no_result``: the assistant message whose call it answers)."""

    op: HistoryOp
    index: int
    call_id: str | None = None
    name: str | None = None
    content: str | None = None
    shown: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class HistoryPlan:
    """The history as the vendor must see it: ``edits`` in order, the same history as neutral
    ``entries`` (what the checks read), and whether anything differs from the input."""

    edits: tuple[HistoryEdit, ...]
    entries: tuple[HistoryEntry, ...]
    changed: bool


def plan_history(entries: Sequence[HistoryEntry], provider: str | None, *,
                 repair: bool = True) -> HistoryPlan:
    """The edits that make ``entries`` a history ``provider`` accepts, whatever left a call
    unanswered (the gate's rejection, a tool that raised, a denied approval, an interrupt, a
    resumed checkpoint). Each shim turns its messages into entries and applies the edits with
    its own message constructors, so both frameworks send the same history.

    For each assistant message with calls, its results are laid out right after it, one per
    call id, in the calls' order (Gemini pairs results by position, the frameworks answer in
    their own order): the existing answer, else the call's own error result, else (``repair``)
    a "no result" error; a second answer to one id is left out; answers to other messages'
    calls stay after them. Without ``repair`` only a message the gate decided is laid out, and
    only its own errors are added (the gate's promise either way). An answered call the class
    does not send is shown as a call. A paused turn goes back as it is, minus its client calls
    (an answer would end the turn the vendor is continuing).
    """
    edits: list[HistoryEdit] = []
    position = 0
    while position < len(entries):
        entry = entries[position]
        index = position
        position += 1
        if entry.role != "assistant" or not entry.calls:
            edits.append(HistoryEdit("keep", index))
        elif entry.paused:
            edits.append(HistoryEdit("paused", index))
        elif not (repair or entry.gated):
            edits.append(HistoryEdit("keep", index))
        else:
            answers = position
            while position < len(entries) and entries[position].role == "tool":
                position += 1
            edits.extend(_laid_out(entries, index, range(answers, position), provider, repair))
    planned = tuple(_planned_entry(entries, edit) for edit in edits)
    changed = any(edit.op != "keep" or edit.index != n for n, edit in enumerate(edits))
    return HistoryPlan(tuple(edits), planned, changed)


def _laid_out(entries: Sequence[HistoryEntry], index: int, answers: range, provider: str | None,
              repair: bool) -> list[HistoryEdit]:
    """Assistant message ``index`` and its results, one per call id in the calls' order, then
    the answers to other messages' calls."""
    entry = entries[index]
    calls = [call for call in entry.calls if call.id]
    ids = {call.id for call in calls}
    mine: dict[str, int] = {}
    others: list[HistoryEdit] = []
    for position in answers:
        answered = entries[position].answers
        if answered not in ids:
            others.append(HistoryEdit("keep", position))
        elif answered is not None and answered not in mine:
            mine[answered] = position
    results: list[HistoryEdit] = []
    for call in calls:
        ident = call.id or ""
        if ident in mine:
            results.append(HistoryEdit("keep", mine[ident]))
        elif ident in entry.errors:
            results.append(HistoryEdit("error", index, ident, call.name))
        elif repair:
            text = unanswered_text(call.name or "unknown", ident,
                                   quote_id=False if provider == "gemini" else None)
            results.append(HistoryEdit("no_result", index, ident, call.name, text))
    answered_ids = {edit.call_id if edit.op != "keep" else entries[edit.index].answers
                    for edit in results}
    hidden = tuple(call.id or "" for call in calls if not call.shown and call.id in answered_ids)
    head = HistoryEdit("show", index, shown=hidden) if hidden else HistoryEdit("keep", index)
    return [head, *results, *others]


def _planned_entry(entries: Sequence[HistoryEntry], edit: HistoryEdit) -> HistoryEntry:
    if edit.op in ("error", "no_result"):
        return HistoryEntry("tool", answers=edit.call_id)
    entry = entries[edit.index]
    if edit.op == "paused":
        return replace(entry, calls=())
    if edit.op == "show":
        shown = set(edit.shown)
        return replace(entry, calls=tuple(replace(c, shown=True) if c.id in shown else c
                                          for c in entry.calls))
    return entry


# -- the plan under a ``history=`` policy ---------------------------------------------------------

HistoryPolicy = Literal["repair", "check", "off"]
"""What a gated model does with the outgoing history before each request: ``"repair"``
answers every unanswered call id; ``"check"`` repairs, then raises ``HistoryError`` for what
only the model could fix; ``"off"`` answers only the calls the gate itself rejected."""

#: The one default of ``history=`` in every shim entry point (DESIGN 6).
DEFAULT_HISTORY: HistoryPolicy = "check"


def plan_request(entries: Sequence[HistoryEntry], provider: str | None, policy: HistoryPolicy, *,
                 log: logging.Logger, reasoning: bool | None = None, stored: bool = True,
                 exempt: Collection[str] = (), appended: Sequence[HistoryEntry] = ()) -> HistoryPlan:
    """The outgoing history under ``policy``, planned (``plan_history``); under ``"check"``,
    ``HistoryError`` for what the vendor would still refuse (``_refuse_history``: ``exempt``
    are the problem kinds the framework's class repairs itself). ``appended``: messages the
    request adds after the history (a ``user_msg``), checked with it but not planned."""
    if policy not in ("repair", "check", "off"):
        raise ValueError(f"history must be 'repair', 'check' or 'off', not {policy!r}")
    plan = plan_history(entries, provider, repair=policy != "off")
    if policy == "check":
        problems = check_entries([*plan.entries, *appended], provider, reasoning=reasoning,
                                 stored=stored)
        _refuse_history(problems, provider, exempt=exempt, log=log)
    return plan


def _refuse_history(problems: Iterable[HistoryProblem], provider: str | None, *,
                   exempt: Collection[str], log: logging.Logger) -> None:
    """Raise ``HistoryError`` for the ``problems`` whose kind is not in ``exempt`` (those the
    framework's own class repairs on the wire), logging them first: the vendor's 400, refused
    before the request is sent. Nothing to raise: returns."""
    refused = [p for p in problems if p.kind not in exempt]
    if refused:
        log.warning("toolstream: refusing to send a history the vendor would reject: %s",
                    "; ".join(p.detail for p in refused))
        raise HistoryError(refused, provider)
