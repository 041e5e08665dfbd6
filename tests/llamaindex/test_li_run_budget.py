"""``max_tool_calls_per_run`` in ``ToolstreamFunctionAgent`` (issue 26.2), and the executor's
refusal of a call the gate did not commit, counted (seed 004 metric).

The run's count of committed calls lives in the workflow ``Context`` (``ctx.store``), so
``Context.to_dict`` keeps it: a running context restored with ``from_dict`` (a new agent, as
another process would build it) goes on from the count it had, and a new ``run()`` starts at
zero. Real ``OpenAI`` over HTTP against the emulator; the request bodies read back are the
ones the class really sent.
"""

from __future__ import annotations

from typing import Any

import pytest
from li_helpers import (
    THIRD_PARTY_WARNINGS,
    Recorder,
    approved_after_restore,
    make_llm,
    run_agent,
    saved_while_waiting,
)
from llama_index.core.agent.workflow import AgentOutput
from llama_index.core.agent.workflow.workflow_events import ToolCallResult
from llama_index.core.llms.llm import ToolSelection
from llama_index.core.tools import FunctionTool
from llama_index.core.workflow import Context, HumanResponseEvent, InputRequiredEvent
from otel_util import metric_points, metric_reader
from toolstream_core.testing import VendorEmulator

from benchmarks.scale_out import pairing_problems
from llamaindex_toolstream import ToolstreamFunctionAgent

pytestmark = THIRD_PARTY_WARNINGS

BUDGET = {"max_tool_calls_per_run": 2}


def assert_every_request_legal(emu: VendorEmulator) -> None:
    assert emu.statuses and set(emu.statuses) == {200}
    assert [pairing_problems(r.body) for r in emu.requests] == [[]] * len(emu.requests)


def tool_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m.get("role") == "tool"]


def budget_agent(emu: VendorEmulator, tools: list[Any]) -> ToolstreamFunctionAgent:
    return ToolstreamFunctionAgent(tools=tools, llm=make_llm("openai-chat", emu.base_url),
                                   config=BUDGET)


async def test_a_third_call_across_turns_is_answered_and_never_runs(emu: VendorEmulator) -> None:
    recorder = Recorder()
    emu.queue("openai-chat", "single_call", "no_args", "parallel_calls", "text")
    outcome = await run_agent(budget_agent(emu, recorder.tools()), recorder, emu)
    assert outcome.error is None
    assert [name for name, _ in recorder.runs] == ["write_file", "get_time"]
    assert len(emu.requests) == 4
    over = tool_texts(emu.requests[3].body)[2:]
    assert len(over) == 2
    assert all(t.startswith("Tool call 'get_weather'") and "[run_budget_exceeded]" in t
               for t in over)
    assert_every_request_legal(emu)


async def test_a_new_run_starts_the_count_again(emu: VendorEmulator) -> None:
    recorder = Recorder()
    emu.queue("openai-chat", "single_call", "no_args", "text", "single_call", "text")
    agent = budget_agent(emu, recorder.tools())
    ctx = Context(agent)
    await run_agent(agent, recorder, emu, ctx=ctx)
    assert await ctx.store.get("toolstream_run_calls") == 2
    outcome = await run_agent(agent, recorder, emu, ctx=ctx, user_msg="again")
    assert outcome.error is None
    assert [name for name, _ in recorder.runs] == ["write_file", "get_time", "write_file"]
    assert not any("[run_budget_exceeded]" in t for r in emu.requests for t in tool_texts(r.body))
    assert_every_request_legal(emu)


def approval_tools(recorder: Recorder) -> list[Any]:
    """The recorder's tools, with ``get_time`` waiting for a person's answer first (a human in
    the loop: the run is saved while it waits and resumed elsewhere)."""

    async def get_time(ctx: Context) -> str:
        """Get the current time (no arguments)."""
        answer = await ctx.wait_for_event(HumanResponseEvent,
                                          waiter_event=InputRequiredEvent(prefix="allow?"))
        recorder.runs.append(("get_time", {"answer": answer.response}))
        return "12:00"

    get_time.__annotations__ = {"ctx": Context, "return": str}  # read by FunctionTool, not a string
    tools = [t for t in recorder.tools() if t.metadata.name != "get_time"]
    return [*tools, FunctionTool.from_defaults(async_fn=get_time)]


async def test_the_count_survives_a_restored_context(emu: VendorEmulator) -> None:
    recorder = Recorder()
    emu.queue("openai-chat", "single_call", "no_args", "parallel_calls", "text")
    first = budget_agent(emu, approval_tools(recorder))
    saved, memory = await saved_while_waiting(first.run(user_msg="write my notes"))
    assert len(emu.requests) == 2

    # another process: a new agent, the context restored from its JSON
    await approved_after_restore(budget_agent(emu, approval_tools(recorder)), saved, memory)
    assert [name for name, _ in recorder.runs] == ["write_file", "get_time"]
    assert recorder.runs[1] == ("get_time", {"answer": "yes"})  # run after the restore
    assert len(emu.requests) == 4
    over = tool_texts(emu.requests[3].body)[2:]
    assert len(over) == 2 and all("[run_budget_exceeded]" in t for t in over)
    assert_every_request_legal(emu)


class _SpendsBudget(ToolstreamFunctionAgent):
    """Spends one call of the run's budget between the model's turn and its tools (as another
    branch of the run would): the check again at the tool step sees it."""

    async def take_step(self, ctx: Any, *args: Any, **kwargs: Any) -> AgentOutput:
        output = await super().take_step(ctx, *args, **kwargs)
        if output.tool_calls:
            used = await ctx.store.get("toolstream_run_calls", default=0)
            await ctx.store.set("toolstream_run_calls", used + 1)
        return output


async def test_the_budget_is_checked_again_when_a_call_runs(emu: VendorEmulator) -> None:
    """The run policy's one rule, as in LangChain (test_lc_run_budget's twin): both calls fit
    when they commit; one of them no longer does when the tool step comes to it."""
    recorder = Recorder()
    emu.queue("openai-chat", "parallel_calls", "text")
    agent = _SpendsBudget(tools=recorder.tools(), llm=make_llm("openai-chat", emu.base_url),
                          config=BUDGET)
    outcome = await run_agent(agent, recorder, emu)
    assert outcome.error is None
    assert len(recorder.runs) == 1
    answers = tool_texts(emu.requests[1].body)
    assert len(answers) == 2
    [over] = [t for t in answers if "[run_budget_exceeded]" in t]
    assert over.startswith("Tool call 'get_weather'")
    assert_every_request_legal(emu)


# -- the executor's refusal is counted -------------------------------------------------------


class _RunsTheCutCall(ToolstreamFunctionAgent):
    """A buggy subclass that sends a rejected call to its real tool instead of the responder."""

    async def take_step(self, *args: Any, **kwargs: Any) -> AgentOutput:
        output = await super().take_step(*args, **kwargs)
        output.tool_calls = [
            ToolSelection(tool_id=s.tool_id, tool_name=s.tool_kwargs["tool_name"],
                          tool_kwargs={"path": "/tmp/a"})
            if s.tool_kwargs.get("reason") == "stream_truncated" else s
            for s in output.tool_calls]
        return output


async def test_the_refusal_of_an_uncommitted_call_is_counted(
        emu: VendorEmulator, monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder()
    emu.queue("openai-chat", "truncated_length", "text")
    agent = _RunsTheCutCall(tools=recorder.tools(), llm=make_llm("openai-chat", emu.base_url),
                            config={"tenant": "acme"})
    with metric_reader(monkeypatch) as reader:
        outcome = await run_agent(agent, recorder, emu)
        points = metric_points(reader)
    assert outcome.error is None and recorder.runs == []
    [point] = points["tool_execute_rejected_not_committed_total"]
    assert point.value == 1
    assert dict(point.attributes) == {"provider": "openai-chat", "tool_name": "write_file",
                                      "tenant": "acme"}
    [result] = [e for e in outcome.events if isinstance(e, ToolCallResult)]
    assert result.tool_output.is_error and "[not_committed]" in result.tool_output.content
    assert_every_request_legal(emu)
