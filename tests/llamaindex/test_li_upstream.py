"""``ToolstreamFunctionAgent`` overrides as little of ``FunctionAgent`` as it can (issue 26.4),
and the upstream code it stands on is pinned: a LlamaIndex upgrade that changes one of these
methods fails here, naming what to re-check, instead of diverging quietly.

Every method the agent overrides calls the upstream one (``super()``); what it relies on in
each is written next to its hash. After re-checking, update the hash (the test prints it).
"""

from __future__ import annotations

import hashlib
import inspect

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.agent.workflow.base_agent import BaseWorkflowAgent

from llamaindex_toolstream import ToolstreamFunctionAgent

#: (owner, method) -> (sha256 of its source, first 16 hex digits; what the agent relies on).
PINNED: dict[tuple[type, str], tuple[str, str]] = {
    (FunctionAgent, "take_step"): (
        "ae166d0eccf8d509",
        "reads the scratchpad from ctx.store, appends last_chat_response.message as its last "
        "element, and returns AgentOutput(response=that message, tool_calls=the LLM's "
        "get_tool_calls_from_response); ToolstreamFunctionAgent.take_step replaces that last "
        "element (paused turn, every-call message) and adds the rejected calls' selections"),
    (FunctionAgent, "handle_tool_call_results"): (
        "1d5090742445f324",
        "records results in the order given and stops after the first return_direct result "
        "(not 'handoff'), adding its content as an assistant message; the override passes the "
        "chosen direct result last and clears the flag of the others"),
    (FunctionAgent, "finalize"): (
        "e259cbe4342f9b47",
        "moves the scratchpad into memory and empties it; the override pairs it first"),
    (FunctionAgent, "_get_streaming_response"): (
        "94df23ff9d7eadd6",
        "not overridden: iterates the LLM's astream_chat_with_tools and writes one AgentStream "
        "per response before asking for the next, so the gate's progress events "
        "(ResponseStream.report, after each yield) follow the AgentStream of their response"),
    (FunctionAgent, "_get_response"): (
        "ed31b2ea2c8dd302",
        "not overridden: one achat_with_tools call, whose events the gate reports at its end"),
    (BaseWorkflowAgent, "call_tool"): (
        "196ee661ad9bb1a6",
        "the workflow's tool step: looks the tool up by ev.tool_name, runs it (_call_tool) with "
        "ev.tool_kwargs itself (the override hands the call's id and name in it: CallArguments, "
        "for the started-ledger) and returns one ToolCallResult with ev's id; the override "
        "answers a call the gate did not commit with its own ToolCallResult instead of calling it"),
    (BaseWorkflowAgent, "_init_context"): (
        "1c9ae54ebb6aae08",
        "sets up memory (ctx.store 'memory') without touching the scratchpad; the override "
        "then moves an interrupted run's scratchpad into memory, answered"),
    (BaseWorkflowAgent, "run"): (
        "a702ecd2741d1a85",
        "starts the workflow with ctx among its keyword arguments; the override only tells the "
        "run's steps whether a stopped run's context goes on as a new run or a resume (_resume)"),
    (BaseWorkflowAgent, "init_run"): (
        "c9d146f2009120ff",
        "puts the memory and the user message into ctx.store and returns AgentInput; the override "
        "calls it for a new run and, on a resume, only puts the memory back"),
    (BaseWorkflowAgent, "run_agent_step"): (
        "0a0a14c74a76901f",
        "reads 'memory' from ctx.store and calls take_step; the override puts the memory back "
        "when the context lost it and skips a stopped run's replayed model call"),
    (BaseWorkflowAgent, "_call_tool"): (
        "b816832d2326dc11",
        "runs one tool with its input and returns its ToolOutput; the override runs it behind "
        "the started-ledger (at most once)"),
}


def _digest(owner: type, name: str) -> str:
    source = inspect.getsource(getattr(owner, name))
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


@pytest.mark.parametrize(("owner", "name"), sorted(PINNED, key=lambda k: (k[0].__name__, k[1])),
                         ids=lambda v: getattr(v, "__name__", v))
def test_the_upstream_method_is_the_one_the_agent_was_written_against(owner: type,
                                                                     name: str) -> None:
    expected, relies_on = PINNED[owner, name]
    found = _digest(owner, name)
    assert found == expected, (
        f"{owner.__name__}.{name} changed in this LlamaIndex (hash {found}, pinned {expected}). "
        f"Re-check that ToolstreamFunctionAgent still holds: it {relies_on}. Then update the "
        f"hash in tests/llamaindex/test_li_upstream.py.")


def test_every_override_is_pinned() -> None:
    """A new override must be pinned too (``__init__`` calls ``super().__init__`` first)."""
    overrides = {name for name, value in vars(ToolstreamFunctionAgent).items()
                 if callable(value) and hasattr(FunctionAgent, name) and name != "__init__"}
    pinned = {name for _, name in PINNED}
    assert overrides <= pinned, sorted(overrides - pinned)
    assert overrides == {"take_step", "handle_tool_call_results", "finalize", "_init_context",
                         "call_tool", "run", "init_run", "run_agent_step", "_call_tool"}
