"""Where ``ToolstreamFunctionAgent`` differs from the stock ``FunctionAgent`` on purpose: one
test per row of the "Differences from the stock agent" table of docs/llamaindex.md, each run
on both agents so the difference itself is what is checked (decision 0100).

The scenarios are those of ``test_li_drop_in.py`` (llama-index-core's workflow tests), over
LlamaIndex's own ``MockFunctionCallingLLM``, where the gate's contract asks for something else.
"""

# No ``from __future__ import annotations``: LlamaIndex reads tool annotations as objects.
import logging
from collections.abc import Sequence
from typing import Any

import pytest
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent, ToolCallResult
from llama_index.core.base.llms.types import (
    ChatResponse,
    ChatResponseAsyncGen,
    LLMMetadata,
    MessageRole,
    ToolCallBlock,
)
from llama_index.core.llms import LLM
from llama_index.core.llms.llm import ToolSelection
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.tools import FunctionTool
from llama_index.core.types import Model
from pydantic import BaseModel
from test_li_drop_in import calling, drain, says, scripted

from llamaindex_toolstream import ToolstreamFunctionAgent, declare_test_double, read_record
from llamaindex_toolstream._tools import REJECTED_TOOL_NAME

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning")]

AGENTS = pytest.mark.parametrize("agent_class", [FunctionAgent, ToolstreamFunctionAgent],
                                 ids=["stock", "gated"])


def _gated(agent_class: type[FunctionAgent]) -> bool:
    return agent_class is ToolstreamFunctionAgent


@AGENTS
async def test_a_call_that_breaks_the_tool_schema_never_runs(
        agent_class: type[FunctionAgent]) -> None:
    """Rule 4.5 (a call runs only if valid for its tool). ``MockFunctionCallingLLM``'s own
    generator calls each tool with its default arguments only: ``multiply`` without ``a``
    and ``b``. Stock runs it (the function raises); the gate answers the call with the schema
    error and runs nothing. Both runs then end with the double's answer."""
    runs: list[dict[str, Any]] = []

    def multiply(a: int, b: int) -> int:
        """Multiply two numbers."""
        runs.append({"a": a, "b": b})
        return a * b

    tool = FunctionTool.from_defaults(fn=multiply)
    agent = agent_class(name="a", description="t", tools=[tool], llm=MockFunctionCallingLLM())
    handler = agent.run(user_msg="Hello, can you help me?")
    events = await drain(handler)
    response = await handler

    assert response.response.content == "Tool calls complete."
    results = [e for e in events if isinstance(e, ToolCallResult)]
    assert len(results) == 1 and results[0].tool_output.is_error
    assert runs == []  # the function was never entered: stock raises on the call itself
    if _gated(agent_class):
        assert results[0].tool_name == REJECTED_TOOL_NAME
        assert "violates 'required'" in str(results[0].tool_output.content)
    else:
        assert results[0].tool_name == "multiply"
        assert "missing" in str(results[0].tool_output.content)


@AGENTS
async def test_a_call_to_an_unknown_tool_is_answered_by_the_gate(
        agent_class: type[FunctionAgent]) -> None:
    """Rule 4.5 (unknown names are rejected before anything runs) and 4.9 (every call
    answered): stock answers "Tool ... not found" from its tool step; the gate rejects the
    call ``unknown_tool`` and answers it with its own error result."""
    agent = agent_class(name="a", description="t", tools=[lambda: "x"],
                        llm=MockFunctionCallingLLM(response_generator=scripted(
                            [calling("no_such_tool"), says("done")])))
    handler = agent.run(user_msg="go")
    events = await drain(handler)
    assert (await handler).response.content == "done"
    [result] = [e for e in events if isinstance(e, ToolCallResult)]
    assert result.tool_output.is_error
    assert result.tool_id == "one"
    if _gated(agent_class):
        assert result.tool_name == REJECTED_TOOL_NAME
        assert result.tool_kwargs["reason"] == "unknown_tool"
    else:
        assert "not found" in str(result.tool_output.content)


@AGENTS
async def test_memory_keeps_the_gate_calls_and_its_record(
        agent_class: type[FunctionAgent]) -> None:
    """§6 (the decision record on the message; the history holds the calls the core decided):
    the gated assistant message carries its calls as ``ToolCallBlock``s with strictly parsed
    arguments and the record, in place of the double's ``additional_kwargs["tool_calls"]``."""
    def lookup(city: str) -> str:
        """Look a city up."""
        return city.upper()

    agent = agent_class(name="a", description="t", tools=[lookup],
                        llm=MockFunctionCallingLLM(response_generator=scripted(
                            [calling("lookup", city="paris"), says("done")])))
    handler = agent.run(user_msg="go")
    await drain(handler)
    await handler
    memory = await handler.ctx.store.get("memory")
    [turn] = [m for m in await memory.aget_all()
              if m.role == MessageRole.ASSISTANT and m.content == "calling"]
    blocks = [b for b in turn.blocks if isinstance(b, ToolCallBlock)]
    if _gated(agent_class):
        assert [(b.tool_call_id, b.tool_name, b.tool_kwargs) for b in blocks] == \
            [("one", "lookup", {"city": "paris"})]
        record = read_record(turn)
        assert record is not None and record["mode"] == "chunks"
        assert [c["id"] for c in record["committed"]] == ["one"]
    else:
        assert blocks == []
        assert [s.tool_id for s in turn.additional_kwargs["tool_calls"]] == ["one"]


class Structure(BaseModel):
    hello: str
    world: int


class _FunctionCallingDouble(LLM):
    """What the doubles below share: metadata that says the LLM calls functions, and no chat
    (only the streamed function-calling path is asked)."""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(is_function_calling_model=True)

    def _prepare_chat_with_tools(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return {}

    def chat(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    achat = astream_chat = stream_chat = complete = acomplete = chat
    stream_complete = astream_complete = chat


class OwnStructuredLLM(_FunctionCallingDouble):
    """Upstream's structured-output double: an ``LLM`` whose metadata says it calls functions
    and which answers ``astructured_predict`` itself, with no chat behind it."""

    async def astream_chat_with_tools(self, tools: Sequence[Any], chat_history: Any = None,
                                      **kwargs: Any) -> ChatResponseAsyncGen:
        async def gen() -> ChatResponseAsyncGen:
            yield ChatResponse(message=says("Success"), delta="Success",
                               raw={"content": "Success"})
        return gen()

    def get_tool_calls_from_response(self, response: ChatResponse,
                                     **kwargs: Any) -> list[ToolSelection]:
        return []

    async def astructured_predict(self, output_cls: type[Model], prompt: Any,
                                  llm_kwargs: Any = None, **prompt_args: Any) -> Model:
        return output_cls.model_validate_json('{"hello": "hello", "world": 1}')


@AGENTS
async def test_structured_output_is_asked_through_the_gate(
        agent_class: type[FunctionAgent], caplog: pytest.LogCaptureFixture) -> None:
    """§6 Structured output (an object only from an output the vendor provably finished): an
    LLM that answers ``astructured_predict`` itself, with no output to judge, is not asked;
    the gate asks its chat for the forced call, which this double cannot give, so the agent
    ends with no structured response and LlamaIndex's warning."""
    agent = agent_class(name="a", description="t", llm=OwnStructuredLLM(), output_cls=Structure)
    with caplog.at_level(logging.WARNING):
        if _gated(agent_class):
            with pytest.warns(UserWarning, match="problem with the generation"):
                response = await agent.run(user_msg="test")
        else:
            response = await agent.run(user_msg="test")
    assert "Success" in str(response.response)
    if _gated(agent_class):
        assert response.structured_response is None
    else:
        assert response.get_pydantic_model(Structure) == Structure(hello="hello", world=1)


class OwnDouble(_FunctionCallingDouble):
    """A user's own double, not a subclass of LlamaIndex's mocks: a call, then an answer."""

    async def astream_chat_with_tools(self, tools: Sequence[Any], chat_history: Any = None,
                                      **kwargs: Any) -> ChatResponseAsyncGen:
        answered = any(m.role == MessageRole.TOOL for m in chat_history or [])
        message = says("done") if answered else calling("echo", text="hi")

        async def gen() -> ChatResponseAsyncGen:
            yield ChatResponse(message=message, delta=message.content)
        return gen()

    def get_tool_calls_from_response(self, response: ChatResponse,
                                     **kwargs: Any) -> list[ToolSelection]:
        return list(response.message.additional_kwargs.get("tool_calls", []))


@pytest.mark.parametrize("declared", [False, True], ids=["as-is", "one-line"])
@AGENTS
async def test_a_users_own_double_is_declared_in_one_line(
        agent_class: type[FunctionAgent], declared: bool,
        caplog: pytest.LogCaptureFixture) -> None:
    """Rule 4.4 (completion needs proof): a double the gate does not know shows no finish, so
    its call is rejected and answered, with a warning naming what to declare; with the one
    conftest line (``declare_test_double(MyLLM)``) it runs as on stock."""
    runs: list[str] = []

    def echo(text: str) -> str:
        """Echo."""
        runs.append(text)
        return text

    double = type(f"MyLLM{agent_class.__name__}{declared}", (OwnDouble,), {})
    if declared:
        declare_test_double(double)
    agent = agent_class(name="a", description="t", tools=[echo], llm=double())
    with caplog.at_level(logging.WARNING, logger="llamaindex_toolstream"):
        response = await agent.run(user_msg="go")
    assert response.response.content == "done"
    if _gated(agent_class) and not declared:
        assert runs == []
        assert "llamaindex_toolstream.declare_finish_signal" in caplog.text
    else:
        assert runs == ["hi"]


class CutDouble(OwnDouble):
    """A declared double that plays a vendor's cut: its stream says ``finish_reason: length``."""

    async def astream_chat_with_tools(self, tools: Sequence[Any], chat_history: Any = None,
                                      **kwargs: Any) -> ChatResponseAsyncGen:
        answered = any(m.role == MessageRole.TOOL for m in chat_history or [])
        message = says("done") if answered else calling("echo", text="hi")

        async def gen() -> ChatResponseAsyncGen:
            yield ChatResponse(message=message, delta=message.content,
                               additional_kwargs={"finish_reason": "length"})
        return gen()


@AGENTS
async def test_a_doubles_own_finish_signal_still_decides(agent_class: type[FunctionAgent]) -> None:
    """Rule 4.4: a test double's clean end is its finish only where it shows none; one that
    plays ``length`` has its call rejected as the vendor's cut would be (stock runs it)."""
    runs: list[str] = []

    def echo(text: str) -> str:
        """Echo."""
        runs.append(text)
        return text

    declare_test_double(CutDouble)
    response = await agent_class(name="a", description="t", tools=[echo],
                                 llm=CutDouble()).run(user_msg="go")
    assert response.response.content == "done"
    assert runs == ([] if _gated(agent_class) else ["hi"])


@AGENTS
async def test_from_tools_or_functions_builds_stock_agents(
        agent_class: type[FunctionAgent]) -> None:
    """``AgentWorkflow.from_tools_or_functions`` builds LlamaIndex's own ``FunctionAgent``,
    whatever is imported: its calls are not gated. The gated workflow names its agent
    (``AgentWorkflow(agents=[ToolstreamFunctionAgent(...)])``), as the drop-in tests do."""
    llm = MockFunctionCallingLLM(response_generator=scripted([says("hi")]))
    workflow = AgentWorkflow.from_tools_or_functions(tools_or_functions=[lambda: "x"], llm=llm)
    [agent] = workflow.agents.values()
    assert type(agent) is FunctionAgent
    named = AgentWorkflow(agents=[agent_class(llm=llm)])
    assert type(next(iter(named.agents.values()))) is agent_class
