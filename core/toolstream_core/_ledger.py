"""The started-ledger's rule, once for both agents: a committed call runs at most once.

A framework that resumes a run after a crash, a cancel or a lost worker replays the step that
was running, and a tool that had already begun runs a second time: at least once, so a
``write_file`` or a payment can happen twice. The gate cannot undo a side effect, but it can
remember that one began. Each agent keeps the entries where its run's state lives (LangGraph:
the agent's ``BaseStore``; LlamaIndex: the workflow ``Context`` store); what an entry holds,
how it is keyed, what it decides and what the model is told are here, so the two agents
decide the same way and say the same words.

- Before a committed call's tool runs, its entry is written ``started``; when the tool
  returns, ``finished``.
- A call that reaches the executor again and finds an entry, in either state, is answered
  with the ``not_repeated`` error result and never runs (``may_run``).
- A tool declared safe to repeat (``REPEATABLE_KEY``) skips the ledger and runs again.

Sans-I/O: no store, no framework; the shims read and write the entries.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

__all__ = ["LedgerState", "StartedLedger"]

LedgerState = Literal["started", "finished"]
"""An entry's state: the tool began (it may have run in part or in full), or it returned."""

_NOT_REPEATED = (
    "Tool call {name!r} (id {id}) was not run again: it {what} in an earlier attempt that "
    "stopped before its result was recorded, and the tool is not declared safe to repeat. "
    "Check its effect before you call it again. [not_repeated]"
)
_WHAT = {"started": "started (it may have run in part or in full)",
         "finished": "ran to its end"}


class StartedLedger:
    """The ledger's rule in one place; each agent keeps the entries in its own store.

    Not instantiated: the rule has no state (the store is the shim's).
    """

    #: An entry's state (the type), and every state an entry can be in, in the order a call
    #: goes through them.
    State: TypeAlias = LedgerState
    STATES: tuple[LedgerState, ...] = ("started", "finished")

    #: A tool's flag (``BaseTool.metadata[REPEATABLE_KEY]``, or the attribute of that name on a
    #: LlamaIndex tool): running it twice for one call is safe, so it skips the ledger.
    REPEATABLE_KEY = "toolstream_repeatable"

    @staticmethod
    def key(scope: str, message_id: str | None, call_id: str) -> str:
        """The key of one call's entry: the run's scope (a LangGraph thread; a LlamaIndex agent
        within its context), the message that holds the call (``""`` where messages carry no id)
        and the call id. Never a framework's task id, which changes when a run is resumed."""
        return json.dumps([scope, message_id or "", call_id])

    @staticmethod
    def entry(scope: str, call_id: str, name: str | None, state: LedgerState) -> dict[str, Any]:
        """An entry's value, as both stores hold it (plain JSON)."""
        return {"thread_id": scope, "call_id": call_id, "name": name, "state": state}

    @staticmethod
    def may_run(earlier: Mapping[str, Any] | None) -> bool:
        """The decision: a call runs only when no earlier attempt left an entry. Any entry
        (started or finished) means an attempt began and its result was not recorded in the run's
        state, so running again could repeat its effect: answer ``not_repeated`` instead."""
        return earlier is None

    @staticmethod
    def not_repeated_text(name: str | None, call_id: str, earlier: Mapping[str, Any]) -> str:
        """The error result of a call not run again, saying what the earlier attempt got to."""
        state = str(earlier.get("state") or "started")
        return _NOT_REPEATED.format(name=name, id=call_id, what=_WHAT.get(state, state))

    @staticmethod
    def is_repeatable(flag: Any) -> bool:
        """Whether a tool's ``REPEATABLE_KEY`` value declares it safe to repeat (only ``True``)."""
        return flag is True
