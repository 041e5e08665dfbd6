"""Running a context again after its run stopped part-way: the conversation and the steps.

``handler.cancel_run()`` (or a failure, or a worker lost mid-run) ends a run but leaves its
context saying it is still running: the steps that were in progress are kept, and LlamaIndex
replays them the next time the context runs, next to the new run's own start. Two things go
wrong there with a stock ``FunctionAgent``: the memory is not part of what the context saves
(it is not serialisable), so a replayed step finds none (``Path 'memory' not found in state``)
or a new run starts from an empty one; and the replayed steps of the stopped run race the new
run (two model calls, a tool run a second time).

``ToolstreamFunctionAgent`` continues such a context one of two ways, as LangGraph continues a
thread (``RunScope``):

- **a new run** (``agent.run(user_msg=..., ctx=ctx)``, or ``chat_history=``/``start_event=``):
  the stopped run is over. Its replayed steps do nothing (nothing of it runs, no model call
  is repeated); its unanswered calls are answered by the new run's history ("cancelled", the
  words LangChain's agent sends when a thread is given new input), and the new run goes on
  from the whole conversation. A call cancelled before it started runs only if the model
  commits it again.
- **a resume** (``agent.run(ctx=ctx)`` with no new input): the stopped run goes on from its
  replayed steps, as LangGraph resumes a thread given ``None``; a call whose tool had begun is
  answered ``not_repeated`` by the started-ledger (``_ledger``), never run again.

Either way the conversation comes back whole: the agent keeps a copy of it in the context
store (``CONVERSATION_KEY``, plain chat messages, which ``Context.to_dict`` keeps and a
durable runtime writes through), and a step that finds the memory missing, or shorter than the
copy, puts the copy back first. The copy is an append log: each write holds only the messages
added since the last one (a chunk under ``CONVERSATION_KEY``, its length in
``CONVERSATION_LENGTHS_KEY``), so a long run hands the store O(added) per step, not the whole
conversation; a conversation that no longer continues the copy (a memory that dropped old
messages, another history given) is written again as one chunk.

On DBOS the stored memory is written once, empty, and each step gets a copy of it that the
stock agent changes in place and never saves: without the copy a step after the first model
call (and every step after a recovery) sends the model a conversation without the user's
message. (A durable runtime re-encodes the whole state row on every store write, whatever
was written: there a write costs the state's size; the log keeps the writes few and small.)
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Literal

from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.memory import BaseMemory, ChatMemoryBuffer
from llama_index.core.workflow import Context

__all__ = ["CONVERSATION_KEY", "CONVERSATION_LENGTHS_KEY", "SCOPE", "RunScope",
           "keep_conversation", "memory_of", "model_input", "saved_conversation", "scope_for"]

_log = logging.getLogger(__name__)

#: The conversation as the agent last saw it, in ``ctx.store``: ``{"c0": [ChatMessage, ...],
#: "c1": [...], ...}``, the chunks of an append log in the order they were written.
CONVERSATION_KEY = "toolstream_conversation"

#: The length of each chunk of the copy, in order (their sum: the copy's length), kept apart so
#: a step learns where the copy ends without reading it.
CONVERSATION_LENGTHS_KEY = "toolstream_conversation_lengths"


@dataclass
class RunScope:
    """One ``run()`` of a context whose last run stopped part-way (shared by the run's steps:
    they inherit it from the ``run()`` call that started them)."""

    mode: Literal["new", "resume"]
    began: bool = False
    """The new run's ``init_run`` has begun: steps replayed from the stopped run start
    before it, so a model step that starts after it is the new run's."""
    queued: set[str] = field(default_factory=set)
    """Call ids this run's own model turns queued: any other ``ToolCall`` is a replay."""

    def replayed_step(self) -> bool:
        """A model step of the stopped run, replayed into a new run: it does nothing."""
        return self.mode == "new" and not self.began

    def replayed_call(self, call_id: str) -> bool:
        """A tool call of the stopped run, replayed into a new run: it never runs."""
        return self.mode == "new" and call_id not in self.queued


#: The scope of the run being started; ``None`` for a fresh context, a finished one, a
#: restored running one (LlamaIndex resumes it itself) or a run recovered by a durable
#: runtime in another process: there every replayed step is the run's own.
SCOPE: ContextVar[RunScope | None] = ContextVar("toolstream_run_scope", default=None)


def scope_for(ctx: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> RunScope | None:
    """The scope of ``run(*args, **kwargs)`` on ``ctx``: ``None`` unless ``ctx`` is a context
    whose last run stopped part-way (its saved running flag is still set while no run is
    going on); then a new run when new input is given, else a resume."""
    if not isinstance(ctx, Context) or ctx.is_running:
        return None
    if not ctx.to_dict(include_state=False).get("is_running"):
        return None
    given = any(kwargs.get(name) is not None
                for name in ("user_msg", "chat_history", "start_event"))
    positional = [a for a in args if not isinstance(a, Context)]
    return RunScope("new" if given or any(a is not None for a in positional) else "resume")


async def keep_conversation(ctx: Context, messages: Sequence[ChatMessage], *,
                            more: bool = False) -> None:
    """Keep ``messages`` as the conversation's copy in the context store (``more``: they follow
    the copy). Taken from what the steps really pass on (the model's input, the turn flushed to
    memory), never read back from the stored memory, which a durable runtime hands out as a
    copy that the stock agent then changes in place and never saves.

    Only what the copy lacks is written, as one new chunk: the messages past its end when
    ``messages`` continues it (its message at the copy's last position is the copy's last),
    nothing when they add none; a conversation that does not continue the copy replaces it."""
    lengths: list[int] = list(await ctx.store.get(CONVERSATION_LENGTHS_KEY, default=None) or [])
    added = list(messages)
    if not more and lengths:
        kept = sum(lengths)
        last = await ctx.store.get(f"{CONVERSATION_KEY}.c{len(lengths) - 1}", default=None)
        if last and len(added) >= kept and _same(added[kept - 1], last[-1]):
            added = added[kept:]
        else:
            lengths = []  # diverged: written again, whole
    if not added:
        return
    if not lengths:
        await ctx.store.set(CONVERSATION_KEY, {"c0": added})
    else:
        await ctx.store.set(f"{CONVERSATION_KEY}.c{len(lengths)}", added)
    await ctx.store.set(CONVERSATION_LENGTHS_KEY, [*lengths, len(added)])


async def saved_conversation(ctx: Context) -> list[ChatMessage]:
    """The conversation's copy, its chunks joined (empty: none kept)."""
    lengths: list[int] = await ctx.store.get(CONVERSATION_LENGTHS_KEY, default=None) or []
    chunks: dict[str, list[ChatMessage]] = await ctx.store.get(CONVERSATION_KEY, default=None) or {}
    return [m for i in range(len(lengths)) for m in chunks.get(f"c{i}", [])]


def _same(one: ChatMessage, other: ChatMessage) -> bool:
    """The same message, whether live or read back from JSON (a durable runtime's store keeps
    an SDK object of ``additional_kwargs`` as a plain dict)."""
    return one is other or one.model_dump(mode="json") == other.model_dump(mode="json")


async def memory_of(ctx: Context, llm: Any, given: BaseMemory | None = None) -> BaseMemory | None:
    """The run's memory, put back from the conversation's copy when the context lost it.

    A memory in the store is used; else ``given`` (the run's ``memory=``, the caller's, used
    as it is); else, when there is a copy, a new ``ChatMemoryBuffer`` (the stock agent's
    default) holding it. A memory in the store shorter than the copy lost messages (it was
    saved before they were added, then changed in place): the copy goes back into it.
    ``None``: no memory and no copy (a fresh run; the stock agent makes one)."""
    held: BaseMemory | None = await ctx.store.get("memory", default=None)
    if held is None and given is not None:
        await ctx.store.set("memory", given)  # the caller's memory is theirs: used as it is
        return given
    kept = sum(await ctx.store.get(CONVERSATION_LENGTHS_KEY, default=None) or [])
    if held is not None and len(await held.aget_all()) >= kept:
        return held
    if not kept:
        return None
    saved = await saved_conversation(ctx)
    _log.info("toolstream: the context lost its memory; putting back %d messages", len(saved))
    if held is not None:
        await held.aset(list(saved))  # in place: a durable store may not take it back whole
        return held
    memory = ChatMemoryBuffer.from_defaults(llm=llm)
    await memory.aset(list(saved))
    await ctx.store.set("memory", memory)
    return memory


async def model_input(ctx: Context, llm_input: list[ChatMessage]) -> list[ChatMessage]:
    """A model step's input, with the conversation's copy in place of a conversation that lost
    every user message (a memory a durable runtime handed out empty): the system messages it
    starts with are kept, then the copy."""
    if any(m.role == MessageRole.USER for m in llm_input):
        return llm_input
    saved = await saved_conversation(ctx)
    if not any(m.role == MessageRole.USER for m in saved):
        return llm_input
    head = [m for m in llm_input[:1] if m.role == MessageRole.SYSTEM]
    return [*head, *(m for m in saved if m not in head)]
