"""``ToolstreamFunctionAgent``: ``FunctionAgent`` that runs committed calls only.

Same constructor and behaviour as ``FunctionAgent`` (plus ``config=``), standalone or inside
``AgentWorkflow``. What changes:

- the LLM is wrapped in ``ToolstreamLLM`` (unless it already is), so the calls handed to the
  workflow's tool step are the core's committed calls, parsed strictly, never repaired;
- every rejected call travels through the same tool step under ``REJECTED_TOOL_NAME`` and
  comes back as an error tool result whose content is the core's ``ErrorResult.content``
  (the real reason, e.g. "cut off before the call was complete"), so the history pairs
  every call id and the model can retry;
- every result of a parallel turn is kept when one of them is a ``return_direct`` tool
  (the stock agent stops recording at the first such result, leaving the rest unpaired);
- a turn interrupted by ``cancel_run()`` never leaves an unanswered call behind: calls still
  streaming are cancelled by the core, and calls whose tools never returned are answered with
  a "cancelled" error result before the history is used again;
- call-progress events (``CallOpenedEvent`` ... ``CallRejectedEvent``) go into the workflow's
  event stream for UIs (see ``ToolstreamStreamHandler``);
- ``max_tool_calls_per_run``: the calls a run committed are counted in the workflow
  ``Context`` (``toolstream_run_calls`` in ``ctx.store``, so ``Context.to_dict`` keeps it and a
  restored running context goes on from it); each model call may commit what is left, the
  budget is checked again right before each call runs (the ``call_tool`` step, as
  ``ToolstreamMiddleware.wrap_tool_call`` does), and a call past it is answered
  ``run_budget_exceeded`` and never runs. A new ``run()`` starts the count at zero;
- a paused turn (Anthropic ``pause_turn``) is sent back to be continued at most
  ``MAX_PAUSED_CONTINUATIONS`` times in a row (the run policy's cap, the same in LangChain);
- pipelined execution (``execute_before_stream_end`` with an allow-listed tool): a call the
  core commits before the stream ends starts its tool at once, from the step still reading
  the stream; the ``call_tool`` step then hands on that result instead of running it again;
- the ``call_tool`` step refuses a call the gate did not commit (one sent by other code), with
  the ``not_committed`` error result, and a committed call whose name or arguments are not
  the ones the vendor finished (``arguments_changed``: the record's digest), and counts both
  in ``tool_execute_rejected_not_committed_total``;
- a committed call's tool runs at most once: the started-ledger in the ``Context`` store
  (``_ledger``, behind ``_call_tool``) answers a call that comes back after its tool began
  ``not_repeated`` (a replayed step, a recovered run);
- a context whose run stopped part-way (``cancel_run()``, a failure) goes on with new input as
  a new run, or without as a resume of the stopped run, with the conversation put back from
  the copy the agent keeps in the store (``_resume``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from typing import Any, cast
from weakref import WeakKeyDictionary

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.agent.workflow.agent_context import AgentContext
from llama_index.core.agent.workflow.workflow_events import (
    AgentInput,
    AgentOutput,
    AgentSetup,
    AgentWorkflowStartEvent,
    ToolCall,
    ToolCallResult,
)
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.llms.llm import ToolSelection
from llama_index.core.memory import BaseMemory
from llama_index.core.tools import AsyncBaseTool, ToolOutput
from llama_index.core.workflow import Context, step
from toolstream_core import AssemblerEvent, Turn
from toolstream_core import ToolCall as TsToolCall
from toolstream_core.integration import HistoryPolicy, OnStreamError, Pipeline, RunPolicy, RunState

from ._events import ProgressTranslator
from ._ledger import CallArguments, next_turn, run_once
from ._llm import ToolstreamLLM, agent_llm
from ._messages import MESSAGES, call_name, pair_orphan_calls
from ._resume import SCOPE, keep_conversation, memory_of, model_input, scope_for
from ._session import ResponseStream, StepSettings
from ._tools import REJECTED_TOOL_NAME, ConfigArg, RejectedCallTool

__all__ = ["ToolstreamFunctionAgent"]

logger = logging.getLogger(__name__)

#: Each run's pipelined calls (the core's ``Pipeline``), from the step that read the stream to
#: the ``call_tool`` step that takes the result, by the run's state store (``ctx.store``: each
#: step gets a ``Context`` object of its own, the run's store is one); an entry goes with its
#: run, and a new run on the same context drops what an interrupted one left.
_PIPELINES: WeakKeyDictionary[Any, Pipeline[ToolOutput]] = WeakKeyDictionary()


class ToolstreamFunctionAgent(FunctionAgent):
    """A drop-in ``FunctionAgent`` that runs only committed tool calls (see module doc)."""

    def __init__(self, *args: Any, config: ConfigArg | None = None,
                 on_turn: Callable[[Turn], None] | None = None,
                 on_event: Callable[[AssemblerEvent], None] | None = None,
                 history: HistoryPolicy | None = None,
                 on_stream_error: OnStreamError | None = None,
                 **kwargs: Any) -> None:
        """``FunctionAgent``'s arguments, plus the gate's options, with
        ``ToolstreamMiddleware``'s names and defaults: ``config``, ``on_turn``, ``on_event``
        (as for ``ToolstreamLLM``); ``history``: before every model call, answer each
        unanswered call id of the outgoing history with an error result, then raise
        ``HistoryError`` for what the vendor would reject and only the model could fix
        (``"check"``, the default; ``"repair"`` only answers; ``"off"``: as given);
        ``on_stream_error``: a stream that fails after a tool call started ends the turn with
        every call answered and the agent goes on (``"pair"``, the default), or raises
        (``"raise"``). An LLM that is already gated keeps its own gate; giving any of these
        options here as well is then a ``ValueError``."""
        super().__init__(*args, **kwargs)
        self.llm = agent_llm(self.llm, config=config, on_turn=on_turn, on_event=on_event,
                             history=history, on_stream_error=on_stream_error)
        # AgentWorkflow looks tools up in ``agent.tools`` directly, so the responder for
        # rejected calls lives there; take_step never offers it to the model.
        tools = list(self.tools or [])
        if not any(t.metadata.name == REJECTED_TOOL_NAME for t in tools):  # type: ignore[union-attr]
            tools.append(RejectedCallTool())
        self.tools = tools

    async def _init_context(self, ctx: Context, ev: Any) -> None:
        """A new run: a turn left behind by a cancelled run goes to memory, answered.

        Only an interrupted run leaves a non-empty scratchpad at the start of the next one.
        Moving it into memory *before* the new user message keeps the conversation in order;
        when memory is empty (a context restored without it) the turn is answered in place
        by ``take_step`` instead, so the history never opens with an assistant message.
        """
        await memory_of(ctx, self.llm, ev.get("memory", default=None))
        await super()._init_context(ctx, ev)
        await ctx.store.set(RunState.RUN_CALLS, 0)  # a new run; a restored running context skips this
        _PIPELINES.pop(ctx.store, None)
        scratchpad: list[ChatMessage] = await ctx.store.get(self.scratchpad_key, default=[])
        if not scratchpad:
            return
        memory: BaseMemory | None = await ctx.store.get("memory", default=None)
        if memory is not None and await memory.aget_all():
            paired = self._pair(scratchpad)
            await memory.aput_messages(paired)
            await ctx.store.set(self.scratchpad_key, [])
            await keep_conversation(ctx, paired, more=True)

    # -- a context whose last run stopped part-way (``_resume``) ------------------------------

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """``FunctionAgent.run``; on a context whose last run stopped part-way (cancelled,
        failed), the run's steps learn whether it is a new run or a resume (``_resume``)."""
        ctx = kwargs.get("ctx") or next((a for a in args if isinstance(a, Context)), None)
        token = SCOPE.set(scope_for(ctx, args, kwargs))
        try:
            return super().run(*args, **kwargs)
        finally:
            SCOPE.reset(token)

    @step
    async def init_run(self, ctx: Context, ev: AgentWorkflowStartEvent) -> AgentInput | None:
        """The stock start; a resume of a stopped run only puts its memory back: the run goes
        on from its replayed steps."""
        scope = SCOPE.get()
        if scope is not None:
            scope.began = True
            if scope.mode == "resume":
                await memory_of(ctx, self.llm, ev.get("memory", default=None))
                return None
        started: AgentInput = await super().init_run(ctx, ev)
        return started

    @step
    async def run_agent_step(self, ctx: Context, ev: AgentSetup) -> AgentOutput | None:
        """The stock model step, with the memory back if the context lost it; a step replayed
        from a stopped run into a new run does nothing (the new run asks the model)."""
        scope = SCOPE.get()
        if scope is not None and scope.replayed_step():
            logger.info("toolstream: not repeating the stopped run's model call")
            return None
        await memory_of(ctx, self.llm)
        ev.input = await model_input(ctx, ev.input)
        output: AgentOutput = await super().run_agent_step(ctx, ev)
        return output

    # -- the LLM turn ------------------------------------------------------------------------
    # ``FunctionAgent.take_step`` runs as it is (pinned: tests/llamaindex/test_li_upstream.py),
    # on a copy of this agent whose LLM is told the step's settings (``ToolstreamLLM.for_step``:
    # the run's budget, the pipeline, the step's UI events); around it the gate adds what
    # LlamaIndex has no hook for: a paused turn sent back to be continued, and the rejected calls.

    async def take_step(
        self,
        ctx: AgentContext,
        llm_input: list[ChatMessage],
        tools: Sequence[AsyncBaseTool],
        memory: BaseMemory,
    ) -> AgentOutput:
        """One LLM turn: committed calls go to the tool step, rejected ones to the responder."""
        offered = [t for t in tools if t.metadata.name != REJECTED_TOOL_NAME]
        await keep_conversation(cast(Context, ctx), self._conversation(llm_input))
        await next_turn(cast(Context, ctx))
        await self._store_scratchpad(ctx, self._pair)
        policy = self._policy
        state = await _run_state(ctx)
        watcher = _Step(self.name, ctx)
        pipeline = policy.pipeline(self._starter(ctx, offered))
        if pipeline is not None:
            _PIPELINES[ctx.store] = pipeline
        llm = cast(ToolstreamLLM, self.llm).for_step(StepSettings(
            policy.budget_left(state), pipeline, watcher.hand_on))
        agent = self.model_copy(update={"llm": llm})
        output = await FunctionAgent.take_step(agent, ctx, llm_input, offered, memory)
        while MESSAGES.paused_turn(output.response):
            after = policy.continue_paused(state)
            message = MESSAGES.continued(output.response)
            await self._store_scratchpad(ctx, _replace_last(message))
            if after is None:  # the cap: the turn ends with what the vendor has said so far
                output.response, output.tool_calls = message, []
                return output
            # A paused turn (Anthropic ``pause_turn``) goes back as it is, minus client calls,
            # and the vendor continues it; nothing from it runs before it has ended.
            state = after
            output = await FunctionAgent.take_step(agent, ctx, llm_input, offered, memory)
        stream = watcher.last
        # Every call, committed and rejected: each rejected id is answered by the responder.
        full = stream.message_with_rejected() if stream is not None else None
        if full is not None:
            await self._store_scratchpad(ctx, _replace_last(full))
            output.response = full
        view = MESSAGES.view(output.response)
        if view is not None and view.committed:  # the run's count, as it is now
            used = (await _run_state(ctx)).run_calls
            await ctx.store.set(RunState.RUN_CALLS, used + len(view.committed))
        output.tool_calls = [*output.tool_calls, *_rejected_selections(stream)]
        scope = SCOPE.get()
        if scope is not None:
            scope.queued.update(s.tool_id for s in output.tool_calls)
        return output

    def _conversation(self, llm_input: list[ChatMessage]) -> list[ChatMessage]:
        """The memory's messages a model step was given: its input less the system prompt
        ``setup_agent`` put first (the scratchpad is not in it)."""
        first = llm_input[0] if llm_input else None
        if (first is not None and self.system_prompt and first.role == MessageRole.SYSTEM
                and first.content == self.system_prompt):
            return list(llm_input[1:])
        return list(llm_input)

    def _pair(self, messages: list[ChatMessage]) -> list[ChatMessage]:
        """``messages`` with every call answered, in the words of this agent's wire."""
        return pair_orphan_calls(messages, self._gate_provider)

    @property
    def _gate_provider(self) -> str | None:
        provider: str | None = getattr(self.llm, "provider", None)
        return provider

    @property
    def _policy(self) -> RunPolicy:
        return RunPolicy(cast(ToolstreamLLM, self.llm).config)

    # -- tool calls --------------------------------------------------------------------------

    def _starter(self, ctx: Context | AgentContext,
                 tools: Sequence[AsyncBaseTool]) -> Callable[[TsToolCall], Future[ToolOutput] | None]:
        """How a call that commits before the stream ends starts: its tool runs as the
        ``call_tool`` step would run it (``_call_tool``), as a task on this loop, from
        whichever thread the stream is read (the core's ``Pipeline`` keeps what started)."""
        loop = asyncio.get_running_loop()
        by_name = {t.metadata.name: t for t in tools}

        def start(call: TsToolCall) -> Future[ToolOutput] | None:
            tool = by_name.get(call.name or "")
            if tool is None:
                return None
            return asyncio.run_coroutine_threadsafe(
                self._call_once(cast(Context, ctx), tool, dict(call.arguments or {}),
                                (call.id or "", call.name or "")), loop)
        return start

    @step
    async def call_tool(self, ctx: Context, ev: ToolCall) -> ToolCallResult | None:
        """The workflow's tool step, behind the run policy's last check (``RunPolicy.admit``):
        a call the gate did not commit (sent by other code) is refused, not run, and counted;
        a call past the run's budget is answered ``run_budget_exceeded``. A pipelined call
        already started is answered with its result, not run again."""
        scope = SCOPE.get()
        if scope is not None and scope.replayed_call(ev.tool_id):
            logger.info("toolstream: not running %s (%s) of the stopped run", ev.tool_name,
                        ev.tool_id)
            return None
        pipeline = _PIPELINES.get(ctx.store)
        started = pipeline.take(ev.tool_id) if pipeline is not None else None
        if started is not None:
            return await self._pipelined_result(ctx, ev, started)
        await memory_of(ctx, self.llm)
        refusal = await self._refused_result(ctx, ev)
        if refusal is None:
            if ev.tool_name != REJECTED_TOOL_NAME:  # the call travels with its input (``_ledger``)
                ev = ev.model_copy(update={"tool_kwargs": CallArguments(ev.tool_kwargs,
                                                                        (ev.tool_id, ev.tool_name))})
            result: ToolCallResult = await super().call_tool(ctx, ev)
            return result
        ctx.write_event_to_stream(refusal)
        return refusal

    async def _call_tool(self, ctx: Context, tool: AsyncBaseTool,
                         tool_input: dict[str, Any]) -> ToolOutput:
        """The stock way to run one tool, behind the started-ledger (``_ledger``)."""
        call = super()._call_tool
        return await run_once(ctx, self.name, tool, tool_input,
                              lambda: call(ctx, tool, tool_input))

    async def _call_once(self, ctx: Context, tool: AsyncBaseTool, tool_input: dict[str, Any],
                         call: tuple[str, str]) -> ToolOutput:
        """``_call_tool`` for ``call`` (id, name), outside the tool step (pipelined)."""
        return await self._call_tool(ctx, tool, CallArguments(tool_input, call))

    async def _pipelined_result(self, ctx: Context, ev: ToolCall,
                                started: Future[ToolOutput]) -> ToolCallResult:
        ctx.write_event_to_stream(ToolCall(tool_name=ev.tool_name, tool_kwargs=ev.tool_kwargs,
                                           tool_id=ev.tool_id))
        output = await asyncio.wrap_future(started)
        tool = next((t for t in await self.get_tools(ev.tool_name)
                     if t.metadata.name == ev.tool_name), None)
        result = ToolCallResult(tool_name=ev.tool_name, tool_kwargs=ev.tool_kwargs,
                                tool_id=ev.tool_id, tool_output=output,
                                return_direct=bool(tool is not None and tool.metadata.return_direct))
        ctx.write_event_to_stream(result)
        return result

    async def _refused_result(self, ctx: Context, ev: ToolCall) -> ToolCallResult | None:
        """The run policy's answer for a call about to run (``RunPolicy.admit``: committed by
        the gate, with the arguments the vendor finished, within the run's budget), as a tool
        result; ``None``: run it."""
        if ev.tool_name == REJECTED_TOOL_NAME:
            return None
        scratchpad: list[ChatMessage] = await ctx.store.get(self.scratchpad_key, default=[])
        turn = next((m for m in reversed(scratchpad) if m.role == MessageRole.ASSISTANT), None)
        refusal = self._policy.admit(MESSAGES.view(turn) if turn is not None else None,
                                     ev.tool_id, ev.tool_name, await _run_state(ctx),
                                     dict(ev.tool_kwargs))
        if refusal is None:
            return None
        output = ToolOutput(content=refusal.content, tool_name=ev.tool_name,
                            raw_input=dict(ev.tool_kwargs), raw_output=refusal.content,
                            is_error=True)
        return ToolCallResult(tool_name=ev.tool_name, tool_kwargs=ev.tool_kwargs,
                              tool_id=ev.tool_id, tool_output=output, return_direct=False)

    async def _store_scratchpad(self, ctx: Context | AgentContext,
                                edit: Callable[[list[ChatMessage]], list[ChatMessage]]) -> None:
        scratchpad: list[ChatMessage] = await ctx.store.get(self.scratchpad_key, default=[])
        edited = edit(scratchpad)
        if edited != scratchpad:
            await ctx.store.set(self.scratchpad_key, edited)

    # -- results -----------------------------------------------------------------------------

    async def handle_tool_call_results(
        self, ctx: Context, results: list[ToolCallResult], memory: BaseMemory
    ) -> None:
        """Record every result of the turn, then the ``return_direct`` answer if there is one.

        The stock agent stops recording at the first ``return_direct`` result, which leaves
        the other calls of a parallel turn unanswered; so it is handed the results with that
        one (the first that succeeded) last and the others' flag cleared. The history sent
        next lays results out in the calls' order again.
        """
        direct = next((r for r in results if r.return_direct and r.tool_name != "handoff"
                       and not r.tool_output.is_error), None)
        rest = [r.model_copy(update={"return_direct": False}) if r.return_direct else r
                for r in results if r is not direct]
        await super().handle_tool_call_results(ctx, [*rest, *([direct] if direct else [])],
                                               memory)

    async def finalize(self, ctx: Context, output: AgentOutput, memory: BaseMemory) -> AgentOutput:
        """Flush the turn to memory with every call answered."""
        scratchpad: list[ChatMessage] = await ctx.store.get(self.scratchpad_key, default=[])
        paired = self._pair(scratchpad)
        await ctx.store.set(self.scratchpad_key, paired)
        finished = await super().finalize(ctx, output, memory)
        await keep_conversation(ctx, paired, more=True)
        return finished


class _Step:
    """One agent step's view of its model calls: their UI events go to the workflow's stream
    (one ``ProgressTranslator`` per call), and the last call is the one the step ends with."""

    def __init__(self, agent_name: str, ctx: Context | AgentContext) -> None:
        self._agent = agent_name
        self._ctx = ctx
        self._translators: dict[ResponseStream, ProgressTranslator] = {}
        self.last: ResponseStream | None = None

    def hand_on(self, stream: ResponseStream) -> None:
        """Hand ``stream``'s waiting UI events to the workflow's event stream."""
        self.last = stream
        translator = self._translators.get(stream)
        if translator is None:
            translator = self._translators[stream] = ProgressTranslator(
                self._agent, stream.result_for, forward_args=stream.config.ui_forward_partial_args)
        for event in translator.translate(stream.drain_events()):
            self._ctx.write_event_to_stream(event)


async def _run_state(ctx: Context | AgentContext) -> RunState:
    """The run's counts in the workflow ``Context`` (``ctx.store``)."""
    return RunState.read({RunState.RUN_CALLS: await ctx.store.get(RunState.RUN_CALLS, default=0)})


def _replace_last(message: ChatMessage) -> Callable[[list[ChatMessage]], list[ChatMessage]]:
    """The scratchpad with its last message (the one ``take_step`` just added) replaced."""
    def edit(scratchpad: list[ChatMessage]) -> list[ChatMessage]:
        return [*scratchpad[:-1], message]
    return edit


def _rejected_selections(stream: ResponseStream | None) -> list[ToolSelection]:
    """One responder call per rejected id, carrying the core's error result."""
    if stream is None or stream.gate.turn is None:
        return []
    selections: list[ToolSelection] = []
    seen: set[str] = set()
    for call in stream.gate.turn.rejected:
        result = stream.gate.turn.result_for(call)
        if result is None or result.tool_call_id in seen:
            continue
        seen.add(result.tool_call_id)
        selections.append(ToolSelection(
            tool_id=result.tool_call_id,
            tool_name=REJECTED_TOOL_NAME,
            tool_kwargs={"tool_name": call_name(call), "reason": result.reason.value,
                         "content": result.content},
        ))
    return selections
