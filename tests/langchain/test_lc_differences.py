"""The deliberate differences from the stock agent (tests/conformance/deliberate.py): the list
is short, equal to docs/langchain.md's table, and each difference is tested here or where the
entry says.

The upstream suites themselves run in the nox session ``conformance``; these tests keep the
list honest inside the ordinary test run.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from langchain_openai import ChatOpenAI
from toolstream_core.testing import VendorEmulator

from langchain_toolstream import ToolstreamMiddleware, read_record, with_toolstream

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "conformance"))

from deliberate import DELIBERATE, OPEN  # noqa: E402

_ROW = re.compile(r"^\| (.+) \| (.+) \| (.+) \|$")


def _table() -> list[tuple[str, str, str]]:
    text = (ROOT / "docs" / "langchain.md").read_text(encoding="utf-8")
    after = text.split("<!-- differences: tests/conformance/deliberate.py -->", 1)[1]
    rows = []
    for line in after.strip().splitlines()[2:]:
        found = _ROW.match(line)
        if found is None:
            break
        rows.append((found[1], found[2], found[3]))
    return rows


def test_the_list_is_short_and_the_docs_table_is_the_list() -> None:
    assert 0 < len(DELIBERATE) <= 15
    assert _table() == [(d.differs, d.why, d.rule) for d in DELIBERATE]


def test_every_entry_names_a_rule_and_a_test_that_exists() -> None:
    for entry in DELIBERATE:
        assert entry.rule.startswith("§") and entry.tests
        path, _, name = entry.test.partition("::")
        tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
        assert name in {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}, entry.test
    for open_entry in OPEN:
        assert open_entry.tests and open_entry.issue > 0


def _echo_agent(middleware: list[Any]) -> Any:
    from langchain_core.language_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage

    model = FakeMessagesListChatModel(responses=[AIMessage("hi")])
    return create_agent(model, tools=[], middleware=middleware)


def test_the_graph_has_the_gates_node() -> None:
    """The snapshot difference: the gated graph is the stock graph plus the gate's own node."""
    stock = set(_echo_agent([]).get_graph().nodes)
    gated = set(_echo_agent([ToolstreamMiddleware()]).get_graph().nodes)
    assert stock < gated
    # a middleware that wraps tool calls brings the agent a tool node even with no tools
    assert gated - stock == {"ToolstreamMiddleware.before_agent", "ToolstreamMiddleware.after_model",
                             "ToolstreamMiddleware.after_agent", "tools"}
    # ... and with a tool node, LangChain routes a hook's jump_to (here an ``after_model`` hook
    # that declares no ``can_jump_to``) as it does in any agent with tools
    assert _model_calls_after_a_jump([], tools=False) == 1
    assert _model_calls_after_a_jump([], tools=True) == 2
    assert _model_calls_after_a_jump([ToolstreamMiddleware()], tools=False) == 2
    # ... and a run passes the gate's nodes too: more steps against ``recursion_limit``
    steps = [len(list(agent.stream({"messages": [HumanMessage("hi")]}, stream_mode="updates")))
             for agent in (_echo_agent([]), _echo_agent([ToolstreamMiddleware()]))]
    assert steps[1] > steps[0]


def _model_calls_after_a_jump(middleware: list[Any], *, tools: bool) -> int:
    """How many model calls an agent makes when an ``after_model`` hook asks once for
    ``jump_to="model"`` without declaring it."""
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.language_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    class _Bound(FakeMessagesListChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    class _JumpOnce(AgentMiddleware[Any, Any, Any]):
        jumped = False
        calls = 0

        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            self.calls += 1
            return handler(request)

        def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            if self.jumped:
                return None
            self.jumped = True
            return {"jump_to": "model"}

    @tool
    def noop() -> str:
        """Do nothing."""
        return ""

    jump = _JumpOnce()
    agent = create_agent(_Bound(responses=[AIMessage("hi"), AIMessage("again")]),
                         tools=[noop] if tools else [], middleware=[jump, *middleware])
    agent.invoke({"messages": [HumanMessage("hi")]})
    return jump.calls


@pytest.mark.parametrize("disable_streaming", [False, True])
def test_invoke_streams_and_disable_streaming_does_not(emu: VendorEmulator, disable_streaming: bool) -> None:
    """The cassette difference: a real model's ``invoke`` through the gate streams; with the
    model's own ``disable_streaming=True`` the gate sends the stock (whole) request."""
    emu.queue("openai-chat", "text")
    model = ChatOpenAI(model="gpt-4.1-mini", api_key="test",  # type: ignore[arg-type]
                       base_url=emu.base_url + "/v1", disable_streaming=disable_streaming)
    stock_body = None
    if disable_streaming:
        model.invoke([HumanMessage("hi")])
        stock_body = emu.requests[-1].body
        emu.queue("openai-chat", "text")
    message = with_toolstream(model).invoke([HumanMessage("hi")])
    assert message.text
    body = emu.requests[-1].body
    assert bool(body.get("stream")) is not disable_streaming
    if stock_body is not None:
        assert body == stock_body


def test_a_gated_message_carries_its_record() -> None:
    """The record difference: the same text, plus the record and the stream's last chunk."""
    from langchain_core.language_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage

    def fake() -> GenericFakeChatModel:
        return GenericFakeChatModel(messages=iter([AIMessage("hello world")]))

    stock = fake().invoke("hi")
    gated = with_toolstream(fake()).invoke("hi")
    assert gated.text == stock.text and "toolstream" not in stock.response_metadata
    assert read_record(gated) is not None
    stock_chunks = list(fake().stream("hi"))
    gated_chunks = list(with_toolstream(fake()).stream("hi"))
    assert [c.text for c in gated_chunks] == [*(c.text for c in stock_chunks), ""]
    assert "toolstream" in gated_chunks[-1].response_metadata


def test_a_call_is_changed_after_the_gate_not_before() -> None:
    """The changed-call difference (decision 0111): a middleware listed before the gate that
    changes a committed call (in place or with ``request.override``) hands the gate arguments
    no vendor finished: refused. Listed after the gate (``ToolstreamMiddleware`` first), its
    change runs, as in the stock agent."""
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.language_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    class _Bound(FakeMessagesListChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    class _Modify(AgentMiddleware[Any, Any, Any]):
        def __init__(self, in_place: bool) -> None:
            super().__init__()
            self.in_place = in_place

        def wrap_tool_call(self, request: Any, handler: Any) -> Any:
            if self.in_place:
                request.tool_call["args"]["query"] = "modified"
                return handler(request)
            args = {**request.tool_call["args"], "query": "modified"}
            return handler(request.override(tool_call={**request.tool_call, "args": args}))

    def answer(in_place: bool, gate: str) -> str:
        @tool
        def search(query: str) -> str:
            """Search."""
            return f"results for {query}"

        call = {"name": "search", "args": {"query": "original"}, "id": "1", "type": "tool_call"}
        model = _Bound(responses=[AIMessage("", tool_calls=[call]), AIMessage("done")])
        modify = _Modify(in_place)
        middleware: list[Any] = {"stock": [modify], "before": [modify, ToolstreamMiddleware()],
                                 "after": [ToolstreamMiddleware(), modify]}[gate]
        state = create_agent(model, tools=[search], middleware=middleware).invoke(
            {"messages": [HumanMessage("go")]})
        return next(m.text for m in state["messages"] if m.type == "tool")

    for in_place in (True, False):
        assert answer(in_place, "stock") == answer(in_place, "after") == "results for modified"
        assert answer(in_place, "before").endswith("[arguments_changed]")

def test_an_unregistered_tool_is_answered_not_raised() -> None:
    """The dynamic-tool difference: LangChain raises its ``ValueError`` for a tool a middleware
    added without registering or handling it only where no middleware wraps tool calls; the
    gate wraps them, so a gated agent answers the call as the stock agent with any such
    middleware does ("not a valid tool")."""
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.language_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    @tool
    def dynamic(value: str) -> str:
        """Added by a middleware, never registered."""
        return value

    class _Bound(FakeMessagesListChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    class _Adds(AgentMiddleware[Any, Any, Any]):
        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            return handler(request.override(tools=[*request.tools, dynamic]))

    class _Wraps(AgentMiddleware[Any, Any, Any]):
        def wrap_tool_call(self, request: Any, handler: Any) -> Any:
            return handler(request)

    def run(extra: list[Any]) -> str:
        call = {"name": "dynamic", "args": {"value": "x"}, "id": "1", "type": "tool_call"}
        model = _Bound(responses=[AIMessage("", tool_calls=[call]), AIMessage("done")])
        state = create_agent(model, tools=[], middleware=[_Adds(), *extra]).invoke(
            {"messages": [HumanMessage("go")]})
        return next(m.text for m in state["messages"] if m.type == "tool")

    with pytest.raises(ValueError, match="Middleware added tools"):
        run([])
    assert "dynamic is not a valid tool" in run([_Wraps()])
    assert run([ToolstreamMiddleware()]) == run([_Wraps()])


@pytest.mark.parametrize("missing", [None, ""], ids=["none", "empty"])
def test_an_id_less_call_is_refused_before_the_reviewer(missing: str | None) -> None:
    """The id-less difference: a call that reaches the gate with no id (``None``, or ``""``)
    on a wire whose protocol has ids fails ``missing_id_or_name`` (DESIGN 4.5, step 2) and
    becomes LangChain's invalid tool call under the gate's synthesized id (decision 0112): it
    never runs and per-call ``HumanInTheLoopMiddleware`` never sees it, where the stock agent
    raises "has no ID" (``None``) or pauses on ``""``."""
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langchain_core.language_models import FakeMessagesListChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver

    ran: list[str] = []

    @tool
    def send_email(to: str) -> str:
        """Send an email."""
        ran.append(to)
        return f"sent to {to}"

    class _Bound(FakeMessagesListChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    def agent(extra: list[Any]) -> Any:
        call = {"name": "send_email", "args": {"to": "alice"}, "id": missing, "type": "tool_call"}
        model = _Bound(responses=[AIMessage("", tool_calls=[call]), AIMessage("done")])
        hitl = HumanInTheLoopMiddleware({"send_email": True}, interrupt_mode="per_call")
        return create_agent(model, tools=[send_email], middleware=[hitl, *extra],
                            checkpointer=InMemorySaver())

    config: Any = {"configurable": {"thread_id": "t"}}
    if missing is None:
        with pytest.raises(ValueError, match="has no ID"):
            agent([]).invoke({"messages": [HumanMessage("go")]}, config)
    else:
        [paused] = agent([]).invoke({"messages": [HumanMessage("go")]}, config)["__interrupt__"]
        assert paused.value["tool_call_id"] == ""

    state = agent([ToolstreamMiddleware()]).invoke({"messages": [HumanMessage("go")]}, config)
    assert "__interrupt__" not in state and ran == []
    [message] = [m for m in state["messages"] if m.type == "ai"]
    assert message.tool_calls == []
    [invalid] = message.invalid_tool_calls
    assert invalid["error"] == "missing_id_or_name" and invalid["id"].startswith("call_ts")
    [rejected] = read_record(message)["rejected"]
    assert (rejected["tool_call_id"], rejected["reason"]) == (invalid["id"], "missing_id_or_name")
