"""The drop-in promise on LlamaIndex's own test doubles (issue 36): what llama-index-core's
``tests/agent/workflow`` checks, run on the stock agents and on the gated ones alike.

llama-index-core's sdist ships no tests, so these are written from what its workflow tests
check (``test_single_agent_workflow.py``, ``test_multi_agent_workflow.py``,
``test_agent_with_structured_output.py``, ``test_thinking_delta.py``): the same scenarios over
``MockFunctionCallingLLM`` / ``MockLLM``, the same assertions. Each test takes ``kinds``, the
stock agents or the gated ones imported the documented way (``ToolstreamFunctionAgent as
FunctionAgent``), with no other line of setup: the one swap must keep a user's suite green.
Where the gate differs from stock on purpose, the test of the difference is
``test_li_drop_in_differences.py`` (the table in docs/llamaindex.md).
"""

# No ``from __future__ import annotations``: LlamaIndex finds a tool's ``Context`` parameter by
# its annotation object, as in the upstream tests.
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from llama_index.core.agent.workflow import (
    AgentInput,
    AgentOutput,
    AgentStream,
    AgentStreamStructuredOutput,
    AgentWorkflow,
    FunctionAgent,
    ReActAgent,
    ToolCallResult,
)
from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    LLMMetadata,
    MessageRole,
    TextBlock,
    ToolCallBlock,
)
from llama_index.core.llms import MockLLM
from llama_index.core.llms.llm import ToolSelection
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.tools import FunctionTool
from llama_index.core.workflow import Context, HumanResponseEvent, InputRequiredEvent
from llama_index.core.workflow.errors import WorkflowRuntimeError
from pydantic import BaseModel

from llamaindex_toolstream import ToolstreamFunctionAgent, ToolstreamReActAgent

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning")]


@dataclass(frozen=True)
class Kinds:
    """The agent classes a user's test imports: stock, or gated by the one documented swap."""

    function: type[FunctionAgent]
    react: type[ReActAgent]
    gated: bool


@pytest.fixture(params=["stock", "gated"])
def kinds(request: pytest.FixtureRequest) -> Kinds:
    if request.param == "stock":
        return Kinds(FunctionAgent, ReActAgent, gated=False)
    return Kinds(ToolstreamFunctionAgent, ToolstreamReActAgent, gated=True)


def scripted(responses: Sequence[ChatMessage]) -> Callable[..., ChatMessage]:
    """The upstream tests' response generator: the scripted answers in turn, cycling."""
    position = 0

    def generate(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        nonlocal position
        if not responses:
            return ChatMessage(role=MessageRole.ASSISTANT, content=None)
        message = responses[position]
        position = (position + 1) % len(responses)
        return message

    return generate


def calling(name: str, call_id: str = "one", content: str = "calling", **kwargs: Any) -> ChatMessage:
    """An assistant message with one call, the way the upstream tests script it."""
    selection = ToolSelection(tool_id=call_id, tool_name=name, tool_kwargs=kwargs)
    return ChatMessage(role=MessageRole.ASSISTANT, content=content,
                       additional_kwargs={"tool_calls": [selection]})


def says(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, content=text)


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def subtract(a: int, b: int) -> int:
    """Subtract two numbers."""
    return a - b


async def drain(handler: Any) -> list[Any]:
    return [event async for event in handler.stream_events()]


# -- a single agent --------------------------------------------------------------------------


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "whole"])
async def test_single_function_agent_answers(kinds: Kinds, streaming: bool) -> None:
    agent = kinds.function(name="retriever", description="Manages data retrieval",
                           system_prompt="You are a retrieval assistant.", streaming=streaming,
                           llm=MockFunctionCallingLLM(response_generator=scripted(
                               [says("Success with the FunctionAgent")])))
    handler = agent.run(user_msg="test")
    await drain(handler)
    response = await handler
    assert "Success with the FunctionAgent" in str(response.response)


async def test_empty_tool_arguments_run_once_streamed_or_not(kinds: Kinds) -> None:
    async def run(streaming: bool) -> str:
        runs = 0

        def empty_tool() -> str:
            nonlocal runs
            runs += 1
            return "empty tool result"

        agent = kinds.function(name="agent", description="test", tools=[empty_tool],
                               streaming=streaming, llm=MockFunctionCallingLLM(
                                   response_generator=scripted(
                                       [calling("empty_tool", "empty-call"), says("finished")])))
        handler = agent.run(user_msg="Run the empty tool")
        await drain(handler)
        response = await handler
        assert runs == 1
        return response.response.content or ""

    assert await run(streaming=True) == "finished"
    assert await run(streaming=False) == "finished"


async def test_context_and_chat_message_input(kinds: Kinds) -> None:
    def echo(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        text = "".join(b.text for b in messages[-1].blocks if isinstance(b, TextBlock))
        return says(text or "<empty>")

    def noop() -> str:
        """A no-op function."""
        return "noop executed"

    agent = kinds.function(llm=MockFunctionCallingLLM(response_generator=echo),
                           tools=[FunctionTool.from_defaults(fn=noop)],
                           system_prompt="You are a mathematical assistant.")
    message = ChatMessage(role=MessageRole.USER, blocks=[
        TextBlock(text="Can you help me with a calculation?"), TextBlock(text="It's one plus one.")])
    response = str(await agent.run(user_msg=message, ctx=Context(agent)))
    assert "Can you help me with a calculation?" in response
    assert "It's one plus one." in response


async def test_run_id_is_passed_through(kinds: Kinds) -> None:
    agent = kinds.function(llm=MockFunctionCallingLLM(response_generator=scripted([says("hi")])))
    handler = agent.run(user_msg="hello", run_id="test-run-id-12345")
    assert handler.run_id == "test-run-id-12345"
    await handler


async def test_an_llm_that_calls_no_functions_is_refused_as_stock_refuses_it(kinds: Kinds) -> None:
    """The agent is built over any LLM; one whose metadata says it calls no functions fails
    at its first step with the stock error (the agent reads the metadata, not the class)."""
    agent = kinds.function(llm=MockLLM())
    with pytest.raises(ValueError, match="LLM must be a FunctionCallingLLM"):
        await agent.run(user_msg="hello")


# -- iterations and early stopping -----------------------------------------------------------


def _looping(kinds: Kinds, responses: Sequence[ChatMessage], **kwargs: Any) -> FunctionAgent:
    def random_tool() -> str:
        return "random"

    return kinds.function(name="agent", description="test", tools=[random_tool],
                          llm=MockFunctionCallingLLM(response_generator=scripted(responses)),
                          **kwargs)


async def test_max_iterations_stops_the_run(kinds: Kinds) -> None:
    agent = _looping(kinds, [calling("random_tool", content="handing off")] * 100)
    with pytest.raises(WorkflowRuntimeError, match="Either something went wrong"):
        await agent.run(user_msg="test")


async def test_max_iterations_in_a_workflow(kinds: Kinds) -> None:
    agent = _looping(kinds, [calling("random_tool")])
    workflow = AgentWorkflow(agents=[agent])
    with pytest.raises(WorkflowRuntimeError, match="Either something went wrong"):
        await workflow.run(user_msg="test")
    with pytest.raises(WorkflowRuntimeError, match="Max iterations of 2 reached"):
        await workflow.run(user_msg="test", ctx=Context(workflow), max_iterations=2)


async def test_early_stopping_generate_answers_after_the_last_iteration(kinds: Kinds) -> None:
    final = says("Here is my final summary based on the information gathered.")
    agent = _looping(kinds, [calling("random_tool")] * 5 + [final],
                     early_stopping_method="generate")
    handler = agent.run(user_msg="test", max_iterations=5)
    await drain(handler)
    response = await handler
    assert "final summary" in str(response.response).lower()


async def test_early_stopping_force_raises(kinds: Kinds) -> None:
    agent = _looping(kinds, [calling("random_tool")] * 100, early_stopping_method="force")
    with pytest.raises(WorkflowRuntimeError, match="early_stopping_method='generate'"):
        await agent.run(user_msg="test", max_iterations=5)


async def test_early_stopping_method_set_in_run(kinds: Kinds) -> None:
    final = says("Final response after early stopping.")
    agent = _looping(kinds, [calling("random_tool")] * 5 + [final], early_stopping_method="force")
    handler = agent.run(user_msg="test", max_iterations=5, early_stopping_method="generate")
    await drain(handler)
    assert "Final response after early stopping" in str((await handler).response)


# -- several agents --------------------------------------------------------------------------


def _calculator(kinds: Kinds, responses: Sequence[ChatMessage]) -> ReActAgent:
    return kinds.react(name="calculator", description="Performs basic arithmetic operations",
                       system_prompt="You are a calculator assistant.",
                       tools=[FunctionTool.from_defaults(fn=add),
                              FunctionTool.from_defaults(fn=subtract)],
                       llm=MockFunctionCallingLLM(response_generator=scripted(responses)))


_ADD = says('Thought: I need to add these numbers\nAction: add\nAction Input: {"a": 5, "b": 3}\n')
_SUM = says("Thought: The result is 8\nAnswer: The sum is 8")


def _retriever(kinds: Kinds, responses: Sequence[ChatMessage] | None = None) -> FunctionAgent:
    handoff = calling("handoff", content="I'll hand this off to the calculator.",
                      to_agent="calculator", reason="This requires arithmetic operations.")
    return kinds.function(name="retriever", description="Manages data retrieval",
                          system_prompt="You are a retrieval assistant.",
                          llm=MockFunctionCallingLLM(response_generator=scripted(
                              [handoff] if responses is None else responses)))


async def test_handoff_between_agents(kinds: Kinds) -> None:
    workflow = AgentWorkflow(agents=[_calculator(kinds, [_ADD, _SUM]), _retriever(kinds)],
                             root_agent="retriever")
    handler = workflow.run(user_msg="Can you add 5 and 3?", memory=ChatMemoryBuffer.from_defaults())
    events = await drain(handler)
    response = await handler
    names = {getattr(event, "current_agent_name", None) for event in events}
    assert {"retriever", "calculator"} <= names
    assert "8" in str(response.response)
    results = [e for e in events if isinstance(e, ToolCallResult) and e.tool_name == "add"]
    assert [r.tool_output.content for r in results] == ["8"]


async def test_an_empty_answer_is_sent_back_as_a_failure(kinds: Kinds) -> None:
    workflow = AgentWorkflow(agents=[_calculator(kinds, []), _retriever(kinds)],
                             root_agent="retriever")
    handler = workflow.run(user_msg="Can you add 5 and 3?", memory=ChatMemoryBuffer.from_defaults())
    flagged = False
    async for event in handler.stream_events():
        if isinstance(event, AgentInput) and \
                "FAILURE: Your previous response was empty" in (event.input[-1].content or ""):
            flagged = True
            break
    assert flagged
    await handler.cancel_run()


async def test_a_react_parse_error_is_answered_and_retried(kinds: Kinds) -> None:
    broken = says('Thought: I need to add these numbers\nAction: add\n{"a": 5 "b": 3}\n')
    agent = _calculator(kinds, [broken, _ADD, _SUM])
    handler = agent.run(user_msg="Can you add 5 and 3?", memory=ChatMemoryBuffer.from_defaults())
    events = await drain(handler)
    assert any(isinstance(e, AgentInput) and "Error while parsing the output"
               in (e.input[-1].content or "") for e in events)
    assert "8" in str((await handler).response)


async def test_handoff_from_an_agent_with_nothing_to_say(kinds: Kinds) -> None:
    workflow = AgentWorkflow(agents=[_calculator(kinds, [_ADD, _SUM]), _retriever(kinds, [])],
                             root_agent="retriever")
    handler = workflow.run(user_msg="Can you add 5 and 3?", memory=ChatMemoryBuffer.from_defaults())
    await drain(handler)
    assert (await handler).response.content is None


async def test_handoff_to_an_unknown_agent_is_answered(kinds: Kinds) -> None:
    first = kinds.function(name="agent1", description="test", llm=MockFunctionCallingLLM(
        response_generator=scripted([calling("handoff", to_agent="invalid_agent",
                                             reason="Because reasons"),
                                     says("guess im stuck here")])))
    second = kinds.function(name="agent2", description="test",
                            llm=MockFunctionCallingLLM(response_generator=scripted([])))
    workflow = AgentWorkflow(agents=[first, second], root_agent="agent1")
    handler = workflow.run(user_msg="test")
    events = await drain(handler)
    await handler
    assert "Agent invalid_agent not found" in str(events)


async def test_a_tool_changes_the_workflow_state(kinds: Kinds) -> None:
    async def modify_state(random_arg: str, ctx_val: Context) -> str:
        state = await ctx_val.store.get("state")
        state["counter"] += 1
        await ctx_val.store.set("state", state)
        return f"State updated to {state}"

    agent = kinds.function(name="agent", description="test", tools=[modify_state],
                           llm=MockFunctionCallingLLM(response_generator=scripted(
                               [calling("modify_state", random_arg="hello"),
                                says("Current state processed")])))
    workflow = AgentWorkflow(agents=[agent], initial_state={"counter": 0},
                             state_prompt="Current state: {state}. User message: {msg}")
    handler = workflow.run(user_msg="test")
    async for event in handler.stream_events():
        if isinstance(event, AgentInput):
            for message in event.input:
                if message.role == MessageRole.USER:
                    assert len((message.content or "").split("Current state:")) == 2
    assert await handler is not None
    assert (await handler.ctx.store.get("state"))["counter"] == 1


async def test_human_in_the_loop_inside_a_tool(kinds: Kinds) -> None:
    """A tool waits for a human (``InputRequiredEvent``); the answer arrives from the stream's
    consumer (``HumanResponseEvent``) and the run goes on. (Upstream also saves and restores
    the context mid-wait; llama-index-core 0.14.25 drops the memory from a saved context,
    stock and gated alike, so that half waits for the release that keeps it.)"""
    async def hitl(ctx: Context) -> str:
        answer = await ctx.wait_for_event(
            HumanResponseEvent, waiter_event=InputRequiredEvent(prefix="What is your name?"))
        return f"Your name is {answer.response}"

    agent = kinds.function(name="agent", description="test", tools=[hitl],
                           llm=MockFunctionCallingLLM(response_generator=scripted(
                               [calling("hitl", content="asking"), says("HITL successful")])))
    workflow = AgentWorkflow(agents=[agent], root_agent="agent")
    handler = workflow.run(user_msg="test")
    events = []
    async for event in handler.stream_events():
        events.append(event)
        if isinstance(event, InputRequiredEvent):
            handler.ctx.send_event(HumanResponseEvent(response="John Doe"))
    assert "HITL successful" in str(await handler)
    results = [e for e in events if isinstance(e, ToolCallResult) and e.tool_name == "hitl"]
    assert [r.tool_output.content for r in results] == ["Your name is John Doe"]


# -- structured output -----------------------------------------------------------------------


class Structure(BaseModel):
    hello: str
    world: int


def _structured_llm(answer: str, structure: dict[str, Any]) -> MockFunctionCallingLLM:
    """Answers the run with text, and a request offering the ``Structure`` tool (the way both
    the stock and the gated structured output ask a function-calling LLM) with that call."""
    def generate(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        tools = kwargs.get("tools") or []
        if any(t.metadata.name == "Structure" for t in tools):
            return ChatMessage(role=MessageRole.ASSISTANT, blocks=[ToolCallBlock(
                tool_call_id="structured", tool_name="Structure", tool_kwargs=structure)])
        return says(answer)

    return MockFunctionCallingLLM(response_generator=generate)


def structured_fn(messages: list[ChatMessage]) -> dict[str, Any]:
    return Structure(hello="bonjour", world=2).model_dump()


async def astructured_fn(messages: list[ChatMessage]) -> dict[str, Any]:
    return Structure(hello="guten tag", world=3).model_dump()


@pytest.mark.parametrize(("settings", "expected"), [
    ({"output_cls": Structure}, Structure(hello="hello", world=1)),
    ({"structured_output_fn": structured_fn}, Structure(hello="bonjour", world=2)),
    ({"structured_output_fn": astructured_fn}, Structure(hello="guten tag", world=3)),
], ids=["output_cls", "fn", "async-fn"])
@pytest.mark.parametrize("where", ["agent", "workflow"])
async def test_structured_output(kinds: Kinds, settings: dict[str, Any], expected: Structure,
                                 where: str) -> None:
    llm = _structured_llm("Success with the FunctionAgent", {"hello": "hello", "world": 1})
    if where == "agent":
        runner: Any = kinds.function(name="retriever", description="Manages data retrieval",
                                     llm=llm, **settings)
    else:
        agent = kinds.function(name="retriever", description="Manages data retrieval", llm=llm,
                               output_cls=Structure)
        runner = AgentWorkflow(agents=[agent], root_agent="retriever", **settings)
    handler = runner.run(user_msg="test")
    events = await drain(handler)
    response = await handler
    assert "Success with the FunctionAgent" in str(response.response)
    assert response.get_pydantic_model(Structure) == expected
    if "output_cls" in settings or where == "workflow":
        assert any(isinstance(e, AgentStreamStructuredOutput) for e in events)


async def test_a_structured_output_that_fails_its_schema_is_not_asked_again(kinds: Kinds) -> None:
    """A finished output that fails the schema is the framework's failure, as without the
    gate (decision 0113): one request, a warning, no structured response. Only an output the
    vendor did not finish is answered and asked again (``test_li_structured_agent``)."""
    asked: list[int] = []
    inner = _structured_llm("Done", {"hello": "hello"})  # ``world`` is missing
    generate = inner.response_generator

    def counting(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        if any(t.metadata.name == "Structure" for t in kwargs.get("tools") or []):
            asked.append(1)
        return generate(messages, **kwargs)

    agent = kinds.function(name="retriever", description="Manages data retrieval",
                           llm=MockFunctionCallingLLM(response_generator=counting),
                           output_cls=Structure)
    with pytest.warns(UserWarning, match="problem with the generation of the structured output"):
        response = await agent.run(user_msg="test")
    assert "Done" in str(response.response)
    assert response.structured_response is None
    assert len(asked) == 1


async def test_structured_output_from_tools_or_functions(kinds: Kinds) -> None:
    def multiply(x: int, j: int) -> int:
        """Multiply two numbers together."""
        return x * j

    workflow = AgentWorkflow.from_tools_or_functions(
        tools_or_functions=[multiply], system_prompt="You are an agent.", output_cls=Structure,
        llm=_structured_llm("Success with the workflow!", {"hello": "hello", "world": 3}))
    if kinds.gated:  # the documented swap for from_tools_or_functions: the gated agent class
        workflow = AgentWorkflow(agents=[kinds.function(
            tools=[multiply], system_prompt="You are an agent.",
            llm=_structured_llm("Success with the workflow!", {"hello": "hello", "world": 3}))],
            output_cls=Structure)
    response = await workflow.run(user_msg="Hello world!")
    assert "Success with the workflow!" in str(response.response)
    assert response.get_pydantic_model(Structure) == Structure(hello="hello", world=3)


# -- thinking deltas -------------------------------------------------------------------------


class ThinkingLLM(MockLLM):
    """Upstream's thinking double: a ``MockLLM`` whose metadata says it calls functions, and
    whose stream carries ``thinking_delta`` in ``additional_kwargs``."""

    def __init__(self, thinking: list[str | None], deltas: list[str | None]) -> None:
        super().__init__()
        self._thinking = thinking
        self._deltas = deltas

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(is_function_calling_model=True)

    async def astream_chat_with_tools(self, tools: list[Any], chat_history: list[ChatMessage],
                                      **kwargs: Any) -> AsyncGenerator[ChatResponse, None]:
        async def gen() -> AsyncGenerator[ChatResponse, None]:
            for delta, thinking in zip(self._deltas, self._thinking, strict=True):
                extra = {} if thinking == "absent" else {"thinking_delta": thinking}
                yield ChatResponse(message=ChatMessage(role="assistant", content=delta),
                                   delta=delta, additional_kwargs=extra,
                                   raw={"message": {"content": delta, "thinking": thinking}})
        return gen()

    def get_tool_calls_from_response(self, response: ChatResponse,
                                     error_on_no_tool_call: bool = False) -> list[ToolSelection]:
        return []


@pytest.mark.parametrize(("thinking", "deltas"), [
    (["", "I need to think about this...", " Let me consider the options."],
     ["Hello", " there", "!"]),
    ([None], [None]),
    (["absent"], ["Hello!"]),
], ids=["deltas", "none", "missing"])
async def test_thinking_deltas_reach_the_stream(kinds: Kinds, thinking: list[str | None],
                                                deltas: list[str | None]) -> None:
    agent = kinds.function(llm=ThinkingLLM(thinking, deltas), streaming=True)
    handler = agent.run(user_msg="test")
    streams = [e for e in await drain(handler) if isinstance(e, AgentStream)]
    await handler
    expected = [None if t == "absent" else t for t in thinking]
    assert [s.thinking_delta for s in streams] == expected
    assert [s.delta for s in streams] == [d or "" for d in deltas]


# -- the event stream ------------------------------------------------------------------------


async def test_the_workflow_events_are_the_stock_ones(kinds: Kinds) -> None:
    """The stock events, in the stock order; the gate only adds its own call-progress events
    (``CallStreamEvent``), which a consumer that does not know them skips."""
    from llamaindex_toolstream import CallStreamEvent

    agent = _looping(kinds, [calling("random_tool"), says("done")])
    handler = agent.run(user_msg="go")
    events = await drain(handler)
    output = await handler
    stock = [type(e).__name__ for e in events if not isinstance(e, CallStreamEvent)]
    assert stock == ["AgentInput", "AgentStream", "AgentOutput", "ToolCall", "ToolCallResult",
                     "AgentInput", "AgentStream", "AgentOutput", "StopEvent"]
    assert isinstance(output, AgentOutput)
    assert output.response.content == "done"
    added = [type(e).__name__ for e in events if isinstance(e, CallStreamEvent)]
    assert added == (["CallOpenedEvent", "CallProgressEvent", "CallCommittedEvent"]
                     if kinds.gated else [])
