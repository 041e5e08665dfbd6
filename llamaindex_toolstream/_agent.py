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
  event stream for UIs (see ``ToolstreamStreamHandler``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.agent.workflow.agent_context import AgentContext
from llama_index.core.agent.workflow.workflow_events import (
    AgentInput,
    AgentOutput,
    AgentStream,
    ToolCallResult,
)
from llama_index.core.base.llms.types import ChatMessage, ChatResponse
from llama_index.core.bridge.pydantic import BaseModel
from llama_index.core.llms.llm import ToolSelection
from llama_index.core.memory import BaseMemory
from llama_index.core.tools import AsyncBaseTool
from llama_index.core.workflow import Context
from toolstream_core import AssemblerEvent, Turn

from ._events import ProgressTranslator
from ._history import HistoryPolicy
from ._llm import agent_llm
from ._messages import call_name, is_paused, pair_orphan_calls, paused_message
from ._session import StreamSession, session_of
from ._tools import REJECTED_TOOL_NAME, ConfigArg, RejectedCallTool

__all__ = ["ToolstreamFunctionAgent"]

logger = logging.getLogger(__name__)

#: How many times in a row a paused turn (Anthropic ``pause_turn``) is sent back to continue
#: it within one step before the step ends with what the vendor has said so far.
MAX_PAUSED_CONTINUATIONS = 10

class ToolstreamFunctionAgent(FunctionAgent):
    """A drop-in ``FunctionAgent`` that runs only committed tool calls (see module doc)."""

    def __init__(self, *args: Any, config: ConfigArg | None = None,
                 on_turn: Callable[[Turn], None] | None = None,
                 on_event: Callable[[AssemblerEvent], None] | None = None,
                 history: HistoryPolicy = "check",
                 **kwargs: Any) -> None:
        """``FunctionAgent``'s arguments, plus the gate's ``config``, ``on_turn``, ``on_event``
        (as for ``ToolstreamLLM``) and ``history``: before every model call, answer each
        unanswered call id of the outgoing history with an error result, then raise
        ``HistoryError`` for what the vendor would reject and only the model could fix
        (``"check"``, the default, as for ``ToolstreamMiddleware``; ``"repair"`` only answers;
        ``"off"``: as given). An LLM that is already gated keeps its own gate, history policy
        included; giving ``config`` or the callbacks here as well is then an error (as for
        ``ToolstreamMiddleware``)."""
        super().__init__(*args, **kwargs)
        self.llm = agent_llm(self.llm, config=config, on_turn=on_turn, on_event=on_event,
                             history=history)
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
        await super()._init_context(ctx, ev)
        scratchpad: list[ChatMessage] = await ctx.store.get(self.scratchpad_key, default=[])
        if not scratchpad:
            return
        memory: BaseMemory | None = await ctx.store.get("memory", default=None)
        if memory is not None and await memory.aget_all():
            await memory.aput_messages(pair_orphan_calls(scratchpad))
            await ctx.store.set(self.scratchpad_key, [])

    # -- the LLM turn ------------------------------------------------------------------------

    def _emit(self, ctx: Context | AgentContext, session: StreamSession | None,
              translator: ProgressTranslator | None) -> None:
        if session is None or translator is None:
            return
        for event in translator.translate(session.drain_events()):
            ctx.write_event_to_stream(event)

    async def _get_streaming_response(
        self,
        ctx: AgentContext,
        current_llm_input: list[ChatMessage],
        tools: Sequence[AsyncBaseTool],
    ) -> ChatResponse:
        chat_kwargs: dict[str, Any] = {
            "chat_history": current_llm_input,
            "tools": tools,
            "allow_parallel_tool_calls": self.allow_parallel_tool_calls,
        }
        if self.initial_tool_choice is not None and current_llm_input[-1].role == "user":
            chat_kwargs["tool_choice"] = self.initial_tool_choice

        response = await self.llm.astream_chat_with_tools(**chat_kwargs)  # type: ignore[attr-defined]
        last_chat_response = ChatResponse(message=ChatMessage())
        session: StreamSession | None = None
        translator: ProgressTranslator | None = None
        try:
            async for last_chat_response in response:
                if session is None:
                    session = session_of(last_chat_response)
                    if session is not None:
                        translator = ProgressTranslator(
                            self.name, session.result_for,
                            forward_args=session.config.ui_forward_partial_args)
                raw = (
                    last_chat_response.raw.model_dump()
                    if isinstance(last_chat_response.raw, BaseModel)
                    else last_chat_response.raw
                )
                ctx.write_event_to_stream(
                    AgentStream(
                        delta=last_chat_response.delta or "",
                        response=last_chat_response.message.content or "",
                        # O(1) while streaming: nothing is proven before the stream ends.
                        tool_calls=[],
                        raw=raw,
                        current_agent_name=self.name,
                        thinking_delta=last_chat_response.additional_kwargs.get(
                            "thinking_delta", None
                        ),
                    )
                )
                self._emit(ctx, session, translator)
        finally:
            self._emit(ctx, session, translator)
        return last_chat_response

    async def take_step(
        self,
        ctx: AgentContext,
        llm_input: list[ChatMessage],
        tools: Sequence[AsyncBaseTool],
        memory: BaseMemory,
    ) -> AgentOutput:
        """One LLM turn: committed calls go to the tool step, rejected ones to the responder."""
        if not self.llm.metadata.is_function_calling_model:
            raise ValueError("LLM must be a FunctionCallingLLM")
        offered = [t for t in tools if t.metadata.name != REJECTED_TOOL_NAME]

        scratchpad: list[ChatMessage] = await ctx.store.get(self.scratchpad_key, default=[])
        scratchpad = pair_orphan_calls(scratchpad)
        current_llm_input = [*llm_input, *scratchpad]
        ctx.write_event_to_stream(
            AgentInput(input=current_llm_input, current_agent_name=self.name)
        )

        last_chat_response = await self._model_turn(ctx, current_llm_input, offered)
        for _ in range(MAX_PAUSED_CONTINUATIONS):
            if not is_paused(last_chat_response):
                break
            # A paused turn (Anthropic ``pause_turn``) goes back as it is, minus client calls,
            # and the vendor continues it; nothing from it runs before the turn has ended.
            paused = paused_message(last_chat_response.message)
            scratchpad.append(paused)
            await ctx.store.set(self.scratchpad_key, scratchpad)
            current_llm_input = [*current_llm_input, paused]
            last_chat_response = await self._model_turn(ctx, current_llm_input, offered)
        if is_paused(last_chat_response):
            logger.warning("toolstream: still paused after %d continuations; ending the turn",
                           MAX_PAUSED_CONTINUATIONS)
            output = self._paused_output(last_chat_response, scratchpad)
            await ctx.store.set(self.scratchpad_key, scratchpad)
            return output

        tool_calls = self.llm.get_tool_calls_from_response(  # type: ignore[attr-defined]
            last_chat_response, error_on_no_tool_call=False
        )
        tool_calls = [*tool_calls, *self._rejected_selections(last_chat_response)]

        # Every call, committed and rejected: each rejected id is answered by the responder.
        session = session_of(last_chat_response)
        full = session.message_with_rejected() if session is not None else None
        message = full if full is not None else last_chat_response.message
        scratchpad.append(message)
        await ctx.store.set(self.scratchpad_key, scratchpad)

        raw = (
            last_chat_response.raw.model_dump()
            if isinstance(last_chat_response.raw, BaseModel)
            else last_chat_response.raw
        )
        return AgentOutput(
            response=message,
            tool_calls=tool_calls,
            raw=raw,
            current_agent_name=self.name,
        )

    async def _model_turn(self, ctx: AgentContext, current_llm_input: list[ChatMessage],
                          offered: Sequence[AsyncBaseTool]) -> ChatResponse:
        """One model request, streamed or not, with its progress events emitted."""
        if self.streaming:
            return await self._get_streaming_response(ctx, current_llm_input, offered)
        response = await self._get_response(current_llm_input, offered)
        session = session_of(response)
        if session is not None:
            self._emit(ctx, session, ProgressTranslator(
                self.name, session.result_for, forward_args=session.config.ui_forward_partial_args))
        return response

    def _paused_output(self, response: ChatResponse, scratchpad: list[ChatMessage]) -> AgentOutput:
        message = paused_message(response.message)
        scratchpad.append(message)
        raw = response.raw.model_dump() if isinstance(response.raw, BaseModel) else response.raw
        return AgentOutput(response=message, tool_calls=[], raw=raw, current_agent_name=self.name)

    @staticmethod
    def _rejected_selections(response: ChatResponse) -> list[ToolSelection]:
        """One responder call per rejected id, carrying the core's error result."""
        session = session_of(response)
        if session is None or session.turn is None:
            return []
        selections: list[ToolSelection] = []
        seen: set[str] = set()
        for call in session.turn.rejected:
            result = session.turn.result_for(call)
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

    # -- results -----------------------------------------------------------------------------

    async def handle_tool_call_results(
        self, ctx: Context, results: list[ToolCallResult], memory: BaseMemory
    ) -> None:
        """Record every result of the turn, then the ``return_direct`` answer if there is one."""
        scratchpad: list[ChatMessage] = await ctx.store.get(self.scratchpad_key, default=[])
        direct: ToolCallResult | None = None
        for result in results:
            scratchpad.append(
                ChatMessage(
                    role="tool",
                    blocks=result.tool_output.blocks,
                    additional_kwargs={"tool_call_id": result.tool_id},
                )
            )
            if (direct is None and result.return_direct and result.tool_name != "handoff"
                    and not result.tool_output.is_error):
                direct = result
        if direct is not None:
            scratchpad.append(
                ChatMessage(
                    role="assistant",
                    content=str(direct.tool_output.content),
                    additional_kwargs={"tool_call_id": direct.tool_id},
                )
            )
        await ctx.store.set(self.scratchpad_key, scratchpad)

    async def finalize(self, ctx: Context, output: AgentOutput, memory: BaseMemory) -> AgentOutput:
        """Flush the turn to memory with every call answered."""
        scratchpad: list[ChatMessage] = await ctx.store.get(self.scratchpad_key, default=[])
        await ctx.store.set(self.scratchpad_key, pair_orphan_calls(scratchpad))
        return await super().finalize(ctx, output, memory)
