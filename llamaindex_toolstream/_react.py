"""``ToolstreamReActAgent``: a ``ReActAgent`` that never runs an action from a cut turn.

A ReAct agent's tool calls are text ("Action: ... / Action Input: {...}") parsed by its output
parser, the choice of users whose models have no native tool calling; a token limit can cut
the "Action Input" anywhere, and the stock parser repairs what is left into a call. Here the
LLM is gated (``ToolstreamLLM``), each model turn's verdict is kept (``_turn_failure``), and
the parser refuses an action whose turn did not end with the vendor's normal finish: the
agent answers that step as its own parse errors are answered (an observation naming the
reason, ``[stream_truncated]``) and asks again. An answer ("Answer: ...") from a cut turn is
handed on as a gated text answer is, by either agent.

Same constructor and behaviour as ``ReActAgent`` (plus the gate's ``config``, ``on_turn``,
``on_event`` and ``history``); it overrides the two methods that fetch the model's turn, each
a call to the upstream method and one line after it, and ``take_step``, which runs the
upstream step on a copy of the agent holding that step's own parser (the verdict travels
with the step, not through a context variable).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, cast

from llama_index.core.agent.react.output_parser import ReActOutputParser
from llama_index.core.agent.react.types import BaseReasoningStep
from llama_index.core.agent.workflow import AgentOutput, ReActAgent
from llama_index.core.agent.workflow.agent_context import AgentContext
from llama_index.core.base.llms.types import ChatMessage, ChatResponse
from llama_index.core.memory import BaseMemory
from llama_index.core.tools import AsyncBaseTool
from toolstream_core import AssemblerEvent, Turn
from toolstream_core.integration import HistoryPolicy, OnStreamError, StructuredOutput, StructuredOutputError

from ._llm import agent_llm
from ._messages import read_record
from ._tools import ConfigArg

_log = logging.getLogger(__name__)

#: Settings that act on committed tool calls, which a ReAct agent does not make: its actions
#: are text. Given to this agent, each is named in a warning rather than ignored.
_NOT_HERE = ("toolstream: ToolstreamReActAgent's actions are text, not tool calls the gate "
             "commits: %s has no effect on them (the gate still refuses an action from a cut "
             "turn); use ToolstreamFunctionAgent for a model with native tool calling")

__all__ = ["ToolstreamReActAgent", "ToolstreamReActOutputParser"]

_REFUSED = ("the action was not run because the response ended before the model finished it "
            "({detail}) [{reason}]; give the complete action again")


def _turn_failure(response: ChatResponse) -> StructuredOutputError | None:
    """Why ``response``'s turn is no output to act on (the core's rule: ended normally), or
    ``None``. A response without a record was not gated: nothing to say."""
    record = read_record(response)
    if record is None:
        return None
    try:
        StructuredOutput.judge_finished(record, raw=response.message.content)
    except StructuredOutputError as failure:
        return failure
    return None


class ToolstreamReActOutputParser(ReActOutputParser):
    """The agent's output parser, refusing an action from a turn that was cut."""

    def __init__(self, inner: ReActOutputParser | None = None) -> None:
        super().__init__()
        self._inner = inner if inner is not None else ReActOutputParser()
        #: The verdict on this step's model turn (``None``: it ended normally), set by the
        #: agent when the turn arrives (``_get_response``) and read by ``parse``.
        self.failure: StructuredOutputError | None = None

    def for_step(self) -> ToolstreamReActOutputParser:
        """A parser of its own for one agent step, around the same inner parser."""
        return ToolstreamReActOutputParser(self._inner)

    def parse(self, output: str, is_streaming: bool = False) -> BaseReasoningStep:
        step = self._inner.parse(output, is_streaming=is_streaming)
        failure = self.failure
        if failure is not None and not step.is_done:
            raise ValueError(_REFUSED.format(detail=failure.detail, reason=failure.reason.value))
        return step


def _warn_call_settings(llm: Any) -> None:
    """Name the run budget and pipelining when they are set: they count and start committed
    tool calls, and a ReAct action is parsed from text (DESIGN §6)."""
    config = llm.config
    unused = [name for name, on in (
        ("max_tool_calls_per_run", config.max_tool_calls_per_run is not None),
        ("execute_before_stream_end", config.execute_before_stream_end)) if on]
    if unused:
        _log.warning(_NOT_HERE, " and ".join(unused))


class ToolstreamReActAgent(ReActAgent):
    """A drop-in ``ReActAgent`` whose actions come only from turns the vendor finished."""

    def __init__(self, *args: Any, config: ConfigArg | None = None,
                 on_turn: Callable[[Turn], None] | None = None,
                 on_event: Callable[[AssemblerEvent], None] | None = None,
                 history: HistoryPolicy | None = None,
                 on_stream_error: OnStreamError | None = None, **kwargs: Any) -> None:
        """``ReActAgent``'s arguments plus the gate's (as for ``ToolstreamFunctionAgent``)."""
        super().__init__(*args, **kwargs)
        self.llm = agent_llm(self.llm, config=config, on_turn=on_turn, on_event=on_event,
                             history=history, on_stream_error=on_stream_error)
        if not isinstance(self.output_parser, ToolstreamReActOutputParser):
            self.output_parser = ToolstreamReActOutputParser(self.output_parser)
        _warn_call_settings(self.llm)

    async def take_step(self, ctx: AgentContext, llm_input: list[ChatMessage],
                        tools: Sequence[AsyncBaseTool], memory: BaseMemory) -> AgentOutput:
        """The upstream step, on a copy of this agent with a parser of the step's own, so the
        verdict on its model turn reaches its parser and no other step's."""
        parser = cast(ToolstreamReActOutputParser, self.output_parser).for_step()
        step = self.model_copy(update={"output_parser": parser})
        output: AgentOutput = await ReActAgent.take_step(step, ctx, llm_input, tools, memory)
        return output

    def _with_verdict(self, response: ChatResponse) -> ChatResponse:
        cast(ToolstreamReActOutputParser, self.output_parser).failure = _turn_failure(response)
        return response

    async def _get_response(self, current_llm_input: list[ChatMessage]) -> ChatResponse:
        return self._with_verdict(await super()._get_response(current_llm_input))

    async def _get_streaming_response(self, ctx: AgentContext,
                                      current_llm_input: list[ChatMessage]) -> ChatResponse:
        return self._with_verdict(await super()._get_streaming_response(ctx, current_llm_input))
