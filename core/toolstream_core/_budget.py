"""Seed 004 gate step 5 as an agent sees it: the run's tool-call budget across model turns.

The core sees one turn (``Assembler(run_budget=)`` refuses a commit past what the run has
left, ``run_budget_exceeded``); the run is the agent's, so the agent keeps the count of calls
its run committed in its own state (a LangGraph state key, a LlamaIndex ``Context`` store
entry) and asks here, once, what is left and whether a call about to be queued still fits.
"""

from __future__ import annotations

from ._config import AssembleConfig
from ._models import CallState, ErrorResult, Provider, Reason, ToolCall
from ._results import error_result

__all__ = ["RUN_CALLS_KEY", "budget_refusal", "over_budget", "run_budget_left"]

#: The name of the count of calls the current run committed, in every agent's state.
RUN_CALLS_KEY = "toolstream_run_calls"


def run_budget_left(config: AssembleConfig, used: int) -> int | None:
    """The ``Assembler``'s ``run_budget`` for the next model turn of a run that has committed
    ``used`` calls: ``None`` when the config sets no ``max_tool_calls_per_run``."""
    limit = config.max_tool_calls_per_run
    return None if limit is None else max(0, limit - max(0, used))


def over_budget(config: AssembleConfig, ordinal: int) -> bool:
    """Whether the run's ``ordinal``-th committed call (1-based) is past the budget: the
    check again right before a call is queued to run (seed 004 gate step 5)."""
    limit = config.max_tool_calls_per_run
    return limit is not None and ordinal > limit


def budget_refusal(name: str | None, tool_call_id: str, *,
                   provider: Provider | None = None) -> ErrorResult:
    """The error result of a call refused at the queue for the run's budget: the words the
    core gives a call it refused at commit (``run_budget_exceeded``), so both agents and both
    checks tell the model the same thing."""
    call = ToolCall(key=tool_call_id, index=None, id=tool_call_id, name=name, kind="function",
                    state=CallState.failed, raw_arguments=None,
                    reason=Reason.run_budget_exceeded, provider=provider)
    return error_result(call, tool_call_id)
