"""Test doubles (docs/decisions/0095-test-doubles-finished.md): LangChain's own fakes are finished without setup; a
project's own fake takes one line, ``declare_test_double``; any other model the gate cannot
read is still never trusted.

The fakes are real LangChain classes driven through the real agent: the tool counts say what
ran.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel, FakeMessagesListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import tool

from langchain_toolstream import ToolstreamMiddleware, declare_test_double, read_record, with_toolstream

_CALL = {"name": "add", "args": {"a": 1, "b": 2}, "id": "call_1", "type": "tool_call"}


def _runs() -> tuple[list[dict[str, int]], Any]:
    runs: list[dict[str, int]] = []

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        runs.append({"a": a, "b": b})
        return a + b

    return runs, add


class _Replay(BaseChatModel):
    """A project's own fake: replays AIMessages in chunks, with no finish signal at all."""

    replies: list[AIMessage]
    metadata_of_last: dict[str, Any] = {}
    index: int = 0

    @property
    def _llm_type(self) -> str:
        return "replay"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        reply = self.replies[self.index % len(self.replies)]
        self.index += 1
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _stream(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        reply = self.replies[self.index % len(self.replies)]
        self.index += 1
        yield ChatGenerationChunk(message=AIMessageChunk(content=reply.text))
        for position, call in enumerate(reply.tool_calls):
            yield ChatGenerationChunk(message=AIMessageChunk(content="", tool_call_chunks=[{
                "name": call["name"], "args": '{"a": 1, "b": 2}', "id": call["id"],
                "index": position, "type": "tool_call_chunk"}]))
        yield ChatGenerationChunk(message=AIMessageChunk(
            content="", response_metadata=dict(self.metadata_of_last), chunk_position="last"))


class _DeclaredReplay(_Replay):
    """The same fake, declared a test double (its own class, so the declaration stays local)."""


class _LengthReplay(_Replay):
    """A declared double that plays a token-limit cut: its own signal wins."""


declare_test_double(_DeclaredReplay)
declare_test_double(_LengthReplay)


def _agent_runs(model: BaseChatModel) -> list[dict[str, int]]:
    runs, add = _runs()
    agent = create_agent(model, tools=[add], middleware=[ToolstreamMiddleware()])
    agent.invoke({"messages": [HumanMessage("add 1 and 2")]})
    return runs


class _ToolFake(FakeMessagesListChatModel):
    """LangChain's fake as its own agent tests use it: with ``bind_tools``."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def test_langchains_own_fake_needs_no_setup() -> None:
    model = _ToolFake(responses=[AIMessage("", tool_calls=[_CALL]), AIMessage("3")])
    assert _agent_runs(model) == [{"a": 1, "b": 2}]


def test_a_projects_own_fake_without_the_line_is_not_trusted() -> None:
    model = _Replay(replies=[AIMessage("", tool_calls=[_CALL]), AIMessage("3")])
    message = with_toolstream(model.bind_tools([])).invoke([HumanMessage("go")])
    assert message.tool_calls == []
    assert [c["error"] for c in message.invalid_tool_calls] and "stream_truncated" in str(
        message.invalid_tool_calls[0]["error"])
    record = read_record(message)
    assert record is not None and "_Replay" in record.get("note", "")


def test_a_projects_own_fake_with_the_one_line_runs_its_calls() -> None:
    model = _DeclaredReplay(replies=[AIMessage("", tool_calls=[_CALL]), AIMessage("3")])
    assert _agent_runs(model) == [{"a": 1, "b": 2}]


@pytest.mark.parametrize("streaming", [True, False])
def test_a_double_that_shows_a_cut_is_judged_by_it(streaming: bool) -> None:
    model = _LengthReplay(replies=[AIMessage("", tool_calls=[_CALL],
                                             response_metadata={"finish_reason": "length"})],
                          metadata_of_last={"finish_reason": "length"},
                          disable_streaming=not streaming)
    message = with_toolstream(model).invoke([HumanMessage("go")])
    assert message.tool_calls == []
    assert "length" in str(message.invalid_tool_calls[0]["error"]) or "truncated" in str(
        message.invalid_tool_calls[0]["error"])


class _GenericToolFake(GenericFakeChatModel):
    """``GenericFakeChatModel`` as LangChain's middleware tests use it: its stream carries no
    ``tool_calls``, only its whole answer does."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def test_invoke_reads_a_doubles_whole_answer_as_the_stock_agent_does() -> None:
    model = _GenericToolFake(messages=iter([AIMessage("", tool_calls=[_CALL]), AIMessage("3")]))
    assert _agent_runs(model) == [{"a": 1, "b": 2}]


async def test_ainvoke_reads_a_doubles_whole_answer_too() -> None:
    runs, add = _runs()
    model = _GenericToolFake(messages=iter([AIMessage("", tool_calls=[_CALL]), AIMessage("3")]))
    agent = create_agent(model, tools=[add], middleware=[ToolstreamMiddleware()])
    await agent.ainvoke({"messages": [HumanMessage("add 1 and 2")]})
    assert runs == [{"a": 1, "b": 2}]


def test_a_doubles_stream_is_still_what_stream_reads() -> None:
    """``stream`` gates the double's stream: the calls it does not stream are not there."""
    model = _GenericToolFake(messages=iter([AIMessage("", tool_calls=[_CALL]), AIMessage("3")]))
    gated = with_toolstream(model, tools=[_runs()[1]])
    chunks = list(gated.stream([HumanMessage("go")]))
    assert not any(c.tool_call_chunks for c in chunks)


async def _stream_events(model: BaseChatModel) -> list[str]:
    """The ``astream_events`` a model call shows, by name (``on_chat_model_stream`` per token)."""
    return [e["event"] async for e in model.astream_events([HumanMessage("go")], version="v2")
            if e["event"].startswith("on_chat_model")]


async def test_a_model_that_cannot_stream_is_answered_whole_as_stock() -> None:
    """Upstream ``test_internal_whole_message_*``: a class with no ``_stream`` shows one whole
    message in the event log; gated, it shows the same events, not a stream of tokens."""
    stock = await _stream_events(_ToolFake(responses=[AIMessage("hi")]))
    gated = await _stream_events(with_toolstream(_ToolFake(responses=[AIMessage("hi")])))
    assert stock == ["on_chat_model_start", "on_chat_model_end"]
    assert gated == stock


async def test_a_model_that_streams_still_streams_gated() -> None:
    stock = await _stream_events(GenericFakeChatModel(messages=iter([AIMessage("hi there")])))
    gated = await _stream_events(with_toolstream(
        GenericFakeChatModel(messages=iter([AIMessage("hi there")]))))
    assert "on_chat_model_stream" in stock
    assert gated.count("on_chat_model_stream") >= 1
