"""A reviewer's decisions on committed calls, recorded; the edit a tool call will run.

``HumanInTheLoopMiddleware`` (batched, its default mode) decides in its ``after_model`` node:
an ``edit`` is kept in the agent state (``hitl_edited_tool_calls``: call id -> the reviewer's
name and arguments) and substituted by its ``wrap_tool_call`` as the tool starts; a ``reject``
(or ``respond``) answers the call with a ``ToolMessage`` in place of the tool. With
``ToolstreamMiddleware`` listed before it, the gate's ``after_model`` node runs after the
reviewer's and writes those decisions into the decision record of the turn's message
(``toolstream_core.integration.RunPolicy.with_reviews``); the gate's ``wrap_tool_call`` then asks the run
policy (``RunPolicy.admit``) with the call as it stands and the edit still to be substituted:
a call runs only as the vendor finished it or as the recorded edit says, the edit judged like
a vendor's arguments, and never a call a reviewer rejected, whatever happened to its answer.

Listed after it, the gate's ``after_model`` runs first and sees no decision: the run policy
then judges the edit still in the state as the tool starts (``admission_view``), the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import AIMessage, ToolMessage
from toolstream_core.integration import RECORD_KEY, RecordView, RunPolicy

from ._messages import MESSAGES, read_record
from ._tools import Registry, registry_from_tools

__all__ = ["HITL_EDITS", "HITL_SOURCE", "admission_view", "edit_tools", "pending_edit",
           "reviews_update"]

_log = logging.getLogger(__name__)

#: The agent-state key where ``HumanInTheLoopMiddleware`` keeps the reviewer's edits (its
#: module's ``_EDITED_TOOL_CALLS_KEY``; tests/langchain/test_lc_bound.py holds them equal).
HITL_EDITS = "hitl_edited_tool_calls"
#: What ``HumanInTheLoopMiddleware`` marks its answer to a rejected (or responded) call with:
#: ``langchain_core.messages.add_notification_metadata(source=...)``.
HITL_SOURCE = "hitl_interrupt_decision"


def _edits(state: Any) -> dict[str, tuple[str | None, Any]]:
    found = state.get(HITL_EDITS) if isinstance(state, Mapping) else None
    if not isinstance(found, Mapping):
        return {}
    return {str(call_id): (action.get("name"), action.get("args"))
            for call_id, action in found.items() if isinstance(action, Mapping)}


def _reviewed(message: AIMessage, state: Any) -> dict[str, Any] | None:
    """``message``'s record with the reviewer's decisions in ``state`` on its committed calls
    added; ``None`` when there is nothing new to record."""
    record = read_record(message)
    if record is None or not record.get("committed"):
        return None
    messages = state.get("messages") if isinstance(state, Mapping) else None
    after = list(messages or [])
    position = next((i for i in range(len(after) - 1, -1, -1) if after[i] is message), None)
    later = after[position + 1:] if position is not None else []
    answered = [m.tool_call_id for m in later if isinstance(m, ToolMessage)
                and m.additional_kwargs.get("lc_source") == HITL_SOURCE]
    return RunPolicy.with_reviews(record, edits=_edits(state), answered=answered)


def reviews_update(state: Any) -> dict[str, Any] | None:
    """The state update that records the reviewer's decisions on the last turn's committed
    calls in its message's decision record; ``None`` when there is nothing new."""
    messages = state.get("messages") if isinstance(state, Mapping) else None
    if not messages:
        return None
    message = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    if message is None:
        return None
    updated = _reviewed(message, state)
    if updated is None:
        return None
    for entry in updated["committed"]:
        if "review" in entry:
            _log.info("toolstream: a reviewer's %s of %s (%s) recorded",
                      entry["review"].get("decision"), entry.get("name"), entry.get("id"))
    metadata = {**message.response_metadata, RECORD_KEY: updated}
    return {"messages": [message.model_copy(update={"response_metadata": metadata})]}


def admission_view(message: AIMessage, state: Any) -> RecordView | None:
    """The record the run policy admits a call of ``message`` by: as stored, plus the
    reviewer's decisions in ``state`` not recorded yet.

    Listed after ``HumanInTheLoopMiddleware``, the gate's ``after_model`` node runs before the
    reviewer's and records nothing; the edit it keeps in the state (``HITL_EDITS``, written only
    by its ``after_model``) is then judged here, as the tool starts, exactly as a recorded one
    would be (the arguments must be the edit's and valid for the tool it names)."""
    updated = _reviewed(message, state)
    return RecordView.read(updated) if updated is not None else MESSAGES.view(message)


def pending_edit(request: ToolCallRequest) -> tuple[str | None, Any] | None:
    """The reviewer's edit of this call the framework will substitute as the tool starts."""
    return _edits(request.state).get(str(request.tool_call.get("id")))


def edit_tools(request: ToolCallRequest) -> Callable[[str | None], Registry]:
    """``name -> the schemas of the agent's tools of that name``, for judging an edit (a
    reviewer may name another tool than the model did)."""
    def of(name: str | None) -> Registry:
        tools = [t for t in (getattr(request.runtime, "tools", None) or [request.tool])
                 if getattr(t, "name", None) == name]
        return registry_from_tools(tools) or {}
    return of
