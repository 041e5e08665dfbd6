"""The started-ledger in the workflow ``Context``: a committed call runs at most once.

A LlamaIndex workflow keeps the steps that were running when a run stopped (``cancel_run()``,
a crash, a lost worker) and replays them when the context runs again: on DBOS when another
process recovers the workflow, in one process when a stopped context is resumed. A replayed
``call_tool`` step would run a tool that had already begun a second time.

The rule is ``toolstream_core``'s, shared with the LangChain middleware (entry states, key,
decision, the ``not_repeated`` words); this module keeps its entries where LlamaIndex keeps a
run's state: the ``Context`` store, one entry per call under ``toolstream_started``, which
``Context.to_dict`` keeps and a durable runtime (DBOS) writes through on every set. Before a
committed call's tool runs its entry is written ``started``, ``finished`` when the tool
returns; a call that comes back with an entry is answered ``not_repeated`` and never runs. A
tool declared safe to repeat (the attribute ``toolstream_repeatable = True`` on the tool)
skips the ledger. A tool that waits for a human (``ctx.wait_for_event``) is paused by the
workflow and re-run by design when the answer comes, so its entry is removed again, as
LangGraph's ``interrupt`` is in the LangChain ledger.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from llama_index.core.tools import AsyncBaseTool, ToolOutput
from llama_index.core.workflow import Context
from toolstream_core.integration import StartedLedger
from workflows.runtime.types.results import WaitingForEvent

__all__ = ["LEDGER_KEY", "TURNS_KEY", "CallArguments", "next_turn", "run_once"]

_log = logging.getLogger(__name__)

#: Where the entries live in ``ctx.store``: ``{digest of the key: entry}``, each entry
#: ``toolstream_core``'s ``StartedLedger.entry`` (``thread_id`` holds the agent's name).
LEDGER_KEY = "toolstream_started"

#: The model turns the context has taken, in ``ctx.store``: an entry is keyed by the turn its
#: call came in, since a call id alone may come back in a later turn (the emulator's, a
#: synthesized one: the same call with the same arguments gets the same id).
TURNS_KEY = "toolstream_turns"


class CallArguments(dict[str, Any]):
    """A committed call's arguments, carrying the call they belong to (``call``: id, name).

    LlamaIndex's tool step hands ``_call_tool`` the tool and its input only, so the call
    travels with its input: the agent's ``call_tool`` step (and a pipelined start) gives the
    input as this dict, the tool gets the same keyword arguments, and anything LlamaIndex
    builds from it (its events, ``ToolOutput.raw_input``) validates it into a plain dict. A
    pickled copy is a plain dict too (``__reduce__``)."""

    __slots__ = ("call",)

    def __init__(self, arguments: Mapping[str, Any], call: tuple[str, str]) -> None:
        super().__init__(arguments)
        self.call = call

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (dict(self),))


def _path(scope: str, turn: int, call_id: str) -> str:
    # ``ctx.store`` paths are dot-separated; a call id may hold anything, so its key is hashed.
    key = StartedLedger.key(scope, f"turn-{turn}", call_id)
    return f"{LEDGER_KEY}.{hashlib.sha256(key.encode()).hexdigest()[:32]}"


async def next_turn(ctx: Context) -> None:
    """A model turn begins: the calls it commits are keyed by it."""
    await ctx.store.set(TURNS_KEY, int(await ctx.store.get(TURNS_KEY, default=0)) + 1)


async def run_once(ctx: Context, scope: str, tool: AsyncBaseTool, tool_input: dict[str, Any],
                   run: Callable[[], Awaitable[ToolOutput]]) -> ToolOutput:
    """``run()`` the tool of the call ``tool_input`` belongs to (``CallArguments``) unless an
    earlier attempt began; record the attempt either way. Input of no call (a caller outside
    the tool step, the responder of rejected calls) or a repeatable tool: run."""
    call = tool_input.call if isinstance(tool_input, CallArguments) else None
    if call is None or StartedLedger.is_repeatable(getattr(tool, StartedLedger.REPEATABLE_KEY, None)):
        return await run()
    call_id, name = call
    path = _path(scope, int(await ctx.store.get(TURNS_KEY, default=0)), call_id)
    earlier = await ctx.store.get(path, default=None)
    if not StartedLedger.may_run(earlier):
        _log.warning("toolstream: not running %s (%s) again: an earlier attempt %s", name,
                     call_id, earlier.get("state"))
        text = StartedLedger.not_repeated_text(name, call_id, earlier)
        return ToolOutput(content=text, tool_name=name, raw_input=dict(tool_input),
                          raw_output=text, is_error=True)
    await _write(ctx, path, scope, call_id, name, "started")
    try:
        output = await run()
    except WaitingForEvent:
        await ctx.store.set(path, None)  # paused for a human: the workflow runs it again
        raise
    await _write(ctx, path, scope, call_id, name, "finished")
    return output


async def _write(ctx: Context, path: str, scope: str, call_id: str, name: str,
                 state: StartedLedger.State) -> None:
    await ctx.store.set(path, StartedLedger.entry(scope, call_id, name, state))
