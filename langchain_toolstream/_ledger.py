"""The started-ledger: a committed call runs at most once, across crashes and workers.

LangGraph saves a tool's result when its task ends. A process that dies while the tool runs
(after the call committed, before its result was written) leaves a checkpoint whose call has
no result, and the worker that resumes the thread runs the task again: at least once, so a
``write_file`` or a payment can happen twice. The gate cannot undo a side effect, but it can
remember that one began.

The rule (entry states, key, decision, the ``not_repeated`` words, repeatable tools) is
``toolstream_core``'s, shared with the LlamaIndex agent; this module keeps it in LangGraph's
store. Before a committed call runs, ``ToolstreamMiddleware.wrap_tool_call`` writes "started" for it
to the agent's store (``create_agent(store=...)``: LangGraph's ``BaseStore``, a
``PostgresStore`` in a deployment), and "finished" when the tool returns. A call that comes
back with an entry and no result in the state did not end cleanly last time: it is answered
with an error result (``not_repeated``) instead of running again. A tool declared safe to
repeat (``BaseTool(metadata={"toolstream_repeatable": True})``) skips the ledger and runs
again. Without a store there is no ledger, and a resumed call runs again, as in LangGraph;
a run on a thread (a checkpointer that can resume it) without a store says so once per
process (``NO_STORE_WARNING``), naming what is lost.

An entry is keyed by the thread, the AIMessage that holds the call and the call id (not by
LangGraph's task id, which changes when a thread is resumed). A tool that raises an interrupt
(``langgraph.types.interrupt``) is re-run by LangGraph on resume by design, so its entry is
removed again. The ledger orders attempts one after another; two workers running the same
thread at once are kept apart by the server (LangGraph's ``multitask_strategy``), not here.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import ToolMessage
from langgraph.errors import GraphInterrupt
from langgraph.store.base import BaseStore
from langgraph.types import Command
from toolstream_core.integration import StartedLedger

__all__ = ["LEDGER_NAMESPACE", "REPEATABLE_KEY", "CallLedger"]

_log = logging.getLogger(__name__)

#: Where the entries live in the store; each value holds ``thread_id``, ``call_id``, ``name``
#: and ``state`` (``"started"`` or ``"finished"``): ``toolstream_core``'s ``StartedLedger.entry``.
LEDGER_NAMESPACE = ("toolstream", "started")

#: ``BaseTool(metadata={REPEATABLE_KEY: True})``: running the tool twice for one call is safe.
REPEATABLE_KEY = StartedLedger.REPEATABLE_KEY

ToolResult = ToolMessage | Command[Any]


@dataclass(frozen=True)
class CallLedger:
    """The ledger entry of one committed call: claim it before the tool runs, finish it after."""

    store: BaseStore
    key: str
    entry: Mapping[str, Any]

    @classmethod
    def of(cls, request: ToolCallRequest, message_id: str | None) -> CallLedger | None:
        """The entry for this call, or ``None`` when there is no ledger: no store, no thread
        (nothing can resume it), or a tool declared safe to repeat."""
        runtime = getattr(request, "runtime", None)
        store = getattr(runtime, "store", None)
        config = getattr(runtime, "config", None) or {}
        thread_id = (config.get("configurable") or {}).get("thread_id")
        if _repeatable(request):
            return None
        if not isinstance(store, BaseStore):
            if thread_id is not None:
                _warn_no_store(str(thread_id))
            return None
        call = request.tool_call
        call_id = call.get("id")
        if thread_id is None or not call_id:
            return None
        key = StartedLedger.key(str(thread_id), message_id, call_id)
        return cls(store, key, {"scope": str(thread_id), "call_id": call_id,
                                "name": call.get("name")})

    # -- one attempt ---------------------------------------------------------------------------

    def attempt(self, request: ToolCallRequest,
                handler: Callable[[ToolCallRequest], ToolResult]) -> ToolResult:
        """Run the tool unless an earlier attempt began; record the attempt either way."""
        earlier = self.store.get(LEDGER_NAMESPACE, self.key)
        if earlier is not None and not StartedLedger.may_run(earlier.value):
            return self._not_repeated(earlier.value)
        self.store.put(LEDGER_NAMESPACE, self.key, self._value("started"), index=False)
        try:
            result = handler(request)
        except GraphInterrupt:
            self.store.delete(LEDGER_NAMESPACE, self.key)  # an interrupt: LangGraph re-runs it
            raise
        self.store.put(LEDGER_NAMESPACE, self.key, self._value("finished"), index=False)
        return result

    async def aattempt(self, request: ToolCallRequest,
                       handler: Callable[[ToolCallRequest], Awaitable[ToolResult]]) -> ToolResult:
        """``attempt`` for the async agent."""
        earlier = await self.store.aget(LEDGER_NAMESPACE, self.key)
        if earlier is not None and not StartedLedger.may_run(earlier.value):
            return self._not_repeated(earlier.value)
        await self.store.aput(LEDGER_NAMESPACE, self.key, self._value("started"), index=False)
        try:
            result = await handler(request)
        except GraphInterrupt:
            await self.store.adelete(LEDGER_NAMESPACE, self.key)
            raise
        await self.store.aput(LEDGER_NAMESPACE, self.key, self._value("finished"), index=False)
        return result

    def _value(self, state: StartedLedger.State) -> dict[str, Any]:
        return StartedLedger.entry(self.entry["scope"], self.entry["call_id"], self.entry["name"], state)

    def _not_repeated(self, earlier: Mapping[str, Any]) -> ToolMessage:
        state = str(earlier.get("state") or "started")
        name, call_id = self.entry["name"], self.entry["call_id"]
        _log.warning("toolstream: not running %s (%s) again: an earlier attempt %s", name, call_id,
                     state)
        return ToolMessage(
            content=StartedLedger.not_repeated_text(name, call_id, earlier),
            tool_call_id=call_id,
            name=name,
            status="error",
            artifact={"toolstream": {"reason": "not_repeated", "state": state}},
        )


#: Whether this process has said that a thread runs without the ledger (said once).
_SAID_NO_STORE: list[bool] = []

NO_STORE_WARNING = (
    "toolstream: thread {thread!r} has no store (create_agent(store=...)), so the started-"
    "ledger is off: a committed call whose tool was running when the worker died or the run "
    "was cancelled runs again when the thread is resumed (LangGraph runs the tool task again). "
    "Give the agent a store (a PostgresStore beside a PostgresSaver) to run each call at most "
    "once. Said once per process."
)


def _warn_no_store(thread: str) -> None:
    """Say once per process that a thread (so, a checkpointer that can resume it) runs without
    the ledger, naming what is lost; a thread id is how the middleware sees a checkpointer."""
    if not _SAID_NO_STORE:
        _SAID_NO_STORE.append(True)
        _log.warning(NO_STORE_WARNING.format(thread=thread))


def _repeatable(request: ToolCallRequest) -> bool:
    metadata = getattr(request.tool, "metadata", None)
    return isinstance(metadata, Mapping) and StartedLedger.is_repeatable(metadata.get(REPEATABLE_KEY))
