"""The agent run's policy: seed 004's gate as an agent applies it, and the run around it.

Sans-I/O: a shim reads the run's state where its framework keeps it (a LangGraph state, a
LlamaIndex ``Context.store``) into a ``RunState``, reads the turn's decision record once
(``RecordView``), asks here, and writes the answer back the same way. Nothing here imports a
framework, runs a tool or sleeps, so both agents decide the same input the same way.

Seed 004's gate, top to bottom (a call runs only when all five hold):

1. The transport completed: the vendor proved the call finished (the ``Assembler``, per turn).
2. Its identity is whole: an id and a name, the name among the tools offered (``Assembler``).
3. Its arguments parse, strictly, as a JSON object (``Assembler``).
4. They pass the tool's schema (``Assembler``).
   A call that passes 1-4 is *committed* and the turn's record lists it. At the tool runner
   ``RunPolicy.admit`` asks only that: a call the record did not commit reached the runner
   some other way and is refused ``not_committed`` (and counted,
   ``tool_execute_rejected_not_committed_total``).
5. The run's budget allows it (``max_tool_calls_per_run``): each model turn may commit what
   the run has left (``RunPolicy.budget_left``, the ``Assembler``'s ``run_budget``), and
   ``admit`` checks again right before the call runs, on the count in the run's state then
   (another branch of the run may have spent it meanwhile), ``run_budget_exceeded``.

Then the started-ledger (a call that began in an earlier attempt is answered, not run again)
is consulted by the shim after ``admit`` lets a call through: the one seam where it plugs in.

Around the gate, the run: a paused turn is continued at most ``MAX_PAUSED_CONTINUATIONS``
times in a row (``continue_paused``); consecutive model turns that committed nothing send the
agent back to the model at most ``max_retries`` times (``after_turn``); a call committed before
the stream ends starts its tool at once where the config allows it (``Pipeline``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from ._binding import binding_refusal, edit_problem, with_reviews
from ._config import AssembleConfig
from ._decision import RecordView
from ._metrics import record_refused_execution
from ._models import CallState, Reason, ToolCall
from ._registry import ToolsArg
from ._results import error_result, not_committed_text

__all__ = [
    "MAX_PAUSED_CONTINUATIONS",
    "Pipeline",
    "Refusal",
    "RunPolicy",
    "RunState",
    "TurnOutcome",
]

_log = logging.getLogger("toolstream_core.run")

#: ``admit`` was not given the arguments (a caller from before digests): checked by id.
_UNCHECKED: Any = object()

#: How many times in a row a paused turn (Anthropic ``pause_turn``) is sent back to be
#: continued before the agent ends the turn with what the vendor has said so far.
MAX_PAUSED_CONTINUATIONS = 10

R = TypeVar("R")


def _count(store: Mapping[str, Any], key: str) -> int:
    value = store.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


@dataclass(frozen=True, slots=True)
class RunState:
    """The run's counts, as plain values read from where the framework keeps them.

    ``run_calls``: the calls the run committed so far (the budget's count).
    ``failed_turns``: consecutive model turns that committed nothing. ``paused_turns``:
    consecutive paused turns sent back to be continued.
    """

    #: The keys under which a run keeps its counts, in every agent's state.
    RUN_CALLS = "toolstream_run_calls"
    FAILED_TURNS = "toolstream_failed_turns"
    PAUSED_TURNS = "toolstream_paused_turns"

    run_calls: int = 0
    failed_turns: int = 0
    paused_turns: int = 0

    @classmethod
    def read(cls, store: Any) -> RunState:
        """The counts in ``store`` (a mapping; anything else, or a missing or bad value, reads
        as zero)."""
        if not isinstance(store, Mapping):
            return cls()
        return cls(_count(store, cls.RUN_CALLS), _count(store, cls.FAILED_TURNS),
                   _count(store, cls.PAUSED_TURNS))

    def changes(self, before: RunState) -> dict[str, int]:
        """The keys to write back: those whose count differs from ``before``."""
        keys = ((self.RUN_CALLS, self.run_calls, before.run_calls),
                (self.FAILED_TURNS, self.failed_turns, before.failed_turns),
                (self.PAUSED_TURNS, self.paused_turns, before.paused_turns))
        return {key: now for key, now, then in keys if now != then}


@dataclass(frozen=True, slots=True)
class Refusal:
    """A call the runner must not run, and what answers it (the same words in both agents).
    ``reason``: ``not_committed``, ``arguments_changed``, ``human_rejected`` or
    ``run_budget_exceeded``."""

    tool_call_id: str
    name: str | None
    reason: str
    content: str


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    """What follows a model turn: the run's counts to write back (``state``), whether the
    agent goes back to the model (``retry``: the turn committed nothing and retries are
    left), and whether it gives up (``give_up``: nothing committed and no retry left; a
    structured output that was asked for then raises). A cancelled turn does neither."""

    state: RunState
    failed: bool
    retry: bool
    give_up: bool


class RunPolicy:
    """The run's decisions for one agent (its config, its retry bound, its guard)."""

    #: A record with a reviewer's decisions on its committed calls added (the binding's rule:
    #: an edit or a rejection is a recorded decision ``admit`` then honours).
    with_reviews = staticmethod(with_reviews)

    def __init__(self, config: AssembleConfig, *, max_retries: int | None = None,
                 guard: bool = True) -> None:
        """``max_retries``: consecutive model turns without a committed call that send the
        agent back to the model (``None``: no bound here, the framework's loop bounds it).
        ``guard``: refuse to run a call the gate did not commit."""
        if max_retries is not None and max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self.config = config
        self.max_retries = max_retries
        self.guard = guard

    # -- before a model turn (gate step 5, at commit) --------------------------------------------

    def budget_left(self, state: RunState) -> int | None:
        """The ``Assembler``'s ``run_budget`` for the next model turn: what the run may still
        commit (``None``: no ``max_tool_calls_per_run``)."""
        limit = self.config.max_tool_calls_per_run
        return None if limit is None else max(0, limit - state.run_calls)

    def pipeline(self, start: Callable[[ToolCall], Future[R] | None]) -> Pipeline[R] | None:
        """The registry of this model call's early starts, where the config lets a call
        commit before the stream ends; ``start``: how the shim starts a tool."""
        return Pipeline(start) if self.config.execute_before_stream_end else None

    # -- after a model turn ----------------------------------------------------------------------

    def continue_paused(self, state: RunState) -> RunState | None:
        """The state after sending a paused turn back to be continued, or ``None`` when
        ``MAX_PAUSED_CONTINUATIONS`` in a row were sent: the turn then ends as it is, without
        its client calls (none of them runs from an unfinished turn)."""
        if state.paused_turns >= MAX_PAUSED_CONTINUATIONS:
            _log.warning("toolstream: still paused after %d continuations; ending the turn",
                         state.paused_turns)
            return None
        return replace(state, paused_turns=state.paused_turns + 1)

    def after_turn(self, state: RunState, *, committed: int, runs: int, errors: int,
                   cancelled: bool = False, unstructured: bool = False) -> TurnOutcome:
        """The run after a model turn that was not paused. ``committed``: calls the gate
        committed (the budget's count); ``runs``: calls that will run; ``errors``: error
        results the turn added; ``cancelled``: the user stopped it (every rejection is a
        cancellation); ``unstructured``: a structured response was asked for and not given.
        A turn fails when it leaves nothing to run but errors to answer, or no structured
        response: the agent goes back to the model while ``max_retries`` allow."""
        failed = (errors > 0 and runs == 0) or unstructured
        retry = failed and not cancelled and self._may_retry(state.failed_turns)
        after = RunState(state.run_calls + committed, state.failed_turns + 1 if retry else 0, 0)
        return TurnOutcome(after, failed, retry, failed and not retry and not cancelled)

    def _may_retry(self, failed_before: int) -> bool:
        if self.max_retries is not None and failed_before >= self.max_retries:
            _log.info("toolstream: %d model turns without a committed call; not retrying",
                      failed_before + 1)
            return False
        return True

    # -- at the tool runner (gate steps 1-5, checked where the call is about to run) -------------

    def admit(self, view: RecordView | None, call_id: str | None, name: str | None,
              state: RunState, arguments: Any = _UNCHECKED, *,
              pending_edit: tuple[str | None, Any] | None = None,
              edit_tools: Callable[[str | None], ToolsArg] | None = None) -> Refusal | None:
        """Whether the call ``call_id`` of the turn ``view`` may run now: ``None`` (run it, the
        started-ledger next) or its ``Refusal``. ``view``: the record of the message holding
        the call (``None``: the message did not pass the gate, e.g. a history the caller
        passed in, which is run as it is). ``state``: the run's counts now, this turn's
        commits included. ``arguments``: what the call is about to run with, bound to the
        record's digest (``_binding``), with ``pending_edit``: a reviewer's edit the framework
        substitutes further in; a recorded edit that runs is judged as strictly as a vendor's
        arguments, against ``edit_tools(name)`` (the schema of the tool it names)."""
        if view is None:
            return None
        if call_id is None or call_id not in view.committed:  # steps 1-4: committed by the gate
            if not self.guard:
                return None
            _log.warning("toolstream: refusing to run %s (%s): not committed", name, call_id)
            record_refused_execution(name, provider=view.provider, config=self.config)
            return Refusal(call_id or "", name, "not_committed", not_committed_text(name, call_id))
        if arguments is not _UNCHECKED:  # the arguments the vendor finished, or a recorded edit
            unbound = binding_refusal(view.entry(call_id), name, arguments,
                                      pending_edit=pending_edit)
            if unbound is None and edit_tools is not None and _edited(view.entry(call_id)):
                edit = pending_edit if pending_edit is not None else (name, arguments)
                unbound = edit_problem(edit[0], edit[1], edit_tools(edit[0]), call_id=call_id)
            if unbound is not None:
                _log.warning("toolstream: refusing to run %s (%s): %s", name, call_id,
                             unbound.reason)
                record_refused_execution(name, provider=view.provider, config=self.config)
                return Refusal(call_id, name, unbound.reason, unbound.content)
        limit = self.config.max_tool_calls_per_run  # step 5: the run's budget, again
        ordinal = state.run_calls - len(view.committed) + view.committed.index(call_id) + 1
        if limit is None or ordinal <= limit:
            return None
        _log.warning("toolstream: refusing to run %s (%s): over the run's budget", name, call_id)
        return _budget_refusal(name, call_id)


def _edited(entry: Mapping[str, Any]) -> bool:
    review = entry.get("review")
    return isinstance(review, Mapping) and review.get("decision") == "edit"


def _budget_refusal(name: str | None, tool_call_id: str) -> Refusal:
    """The refusal of a call past the run's budget: the words the core gives a call it
    refused at commit (``run_budget_exceeded``), so both checks tell the model the same."""
    call = ToolCall(key=tool_call_id, index=None, id=tool_call_id, name=name, kind="function",
                    state=CallState.failed, raw_arguments=None,
                    reason=Reason.run_budget_exceeded)
    result = error_result(call, tool_call_id)
    return Refusal(result.tool_call_id, name, result.reason.value, result.content)


class Pipeline(Generic[R]):
    """The tools of one model call started as their calls commit, before the stream ends
    (DESIGN 4.10): the registry both agents keep, by call id, with each shim's ``start``
    (how its framework starts a tool: a task on the agent's loop, a worker thread). Used as
    the gate session's ``on_early_commit``; not thread-safe: calls come from the stream's
    reader, ``take`` / ``results`` after it."""

    def __init__(self, start: Callable[[ToolCall], Future[R] | None]) -> None:
        self._start = start
        self._started: dict[str, Future[R]] = {}

    def __call__(self, call: ToolCall) -> None:
        """Start ``call``'s tool now, once per call id (``start`` may decline: ``None``)."""
        if call.id is None or call.id in self._started:
            return
        started = self._start(call)
        if started is not None:
            self._started[call.id] = started
            _log.debug("toolstream: started %s (%s) before the stream ended", call.name, call.id)

    @property
    def started(self) -> list[str]:
        """The ids started, in the order their calls committed."""
        return list(self._started)

    def take(self, call_id: str) -> Future[R] | None:
        """The started tool of ``call_id``, handed over once (``None``: not started here)."""
        return self._started.pop(call_id, None)

    def results(self) -> dict[str, R]:
        """Every started tool's result by call id, waiting for those still running."""
        return {call_id: future.result() for call_id, future in self._started.items()}

    async def aresults(self) -> dict[str, R]:
        """``results`` awaited on the running loop."""
        return {call_id: await asyncio.wrap_future(future)
                for call_id, future in self._started.items()}
