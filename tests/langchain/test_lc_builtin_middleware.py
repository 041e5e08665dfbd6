"""Every built-in middleware of ``langchain.agents.middleware`` keeps doing its job beside the
gate, in either order (issue 36).

Differential: the same scenario runs on the stock agent, with ``ToolstreamMiddleware()`` before
the built-in and after it; what the user sees must be the same: which tools ran with which
arguments, and each message's kind, text and tool-call names (the gate's decision record is
metadata, not compared). The model is LangChain's own fake (a test double, decision 0095),
the agent and the middlewares are LangChain's. The built-ins whose scenarios need a vendor
(auto mode, the router, provider tool search, the shell, tool selection, the refusal
middleware) run in the nox session ``conformance``: their own upstream tests, gate first and
last (``UPSTREAM``); a built-in in neither place fails ``test_every_builtin_is_covered``.
"""

from __future__ import annotations

import inspect
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import (
    AgentMiddleware,
    ContextEditingMiddleware,
    FilesystemFileSearchMiddleware,
    HumanInTheLoopMiddleware,
    LLMToolEmulator,
    ModelCallLimitMiddleware,
    ModelFallbackMiddleware,
    ModelRetryMiddleware,
    PIIMiddleware,
    SummarizationMiddleware,
    TodoListMiddleware,
    ToolCallLimitMiddleware,
    ToolErrorMiddleware,
    ToolRetryMiddleware,
)
from langchain_core.language_models import FakeListChatModel, FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from langchain_toolstream import ToolstreamMiddleware

_FILES = Path(tempfile.mkdtemp(prefix="toolstream-file-search-"))
(_FILES / "notes.txt").write_text("hello\n", encoding="utf-8")


class _Fake(FakeMessagesListChatModel):
    """LangChain's fake with ``bind_tools``; its first ``failures`` calls raise."""

    failures: int = 0

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(self, *args: Any, **kwargs: Any) -> Any:
        if self.failures:
            self.failures -= 1
            raise RuntimeError("model down")
        return super()._generate(*args, **kwargs)


def _call(name: str, call_id: str, **args: Any) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


class _World:
    """The tools of one run and what they did."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []
        self.flaky_failures = 1
        from langchain_core.tools import tool

        @tool
        def add(a: int, b: int) -> int:
            """Add two numbers."""
            self.ran.append(("add", {"a": a, "b": b}))
            return a + b

        @tool
        def flaky(x: int) -> str:
            """Fails the first time."""
            self.ran.append(("flaky", {"x": x}))
            if self.flaky_failures:
                self.flaky_failures -= 1
                raise RuntimeError("flaky failed")
            return "ok"

        self.tools = [add, flaky]


_TWO_ADDS = [AIMessage("", tool_calls=[_call("add", "c1", a=1, b=2), _call("add", "c2", a=3, b=4)]),
             AIMessage("done")]
_ONE_ADD = [AIMessage("", tool_calls=[_call("add", "c1", a=1, b=2)]), AIMessage("done")]

# name -> (the built-in, the model's replies, the user's message, how many calls fail first)
Case = tuple[Callable[[], AgentMiddleware[Any, Any]], list[Any], str, int]
CASES: dict[str, Case] = {
    "ModelCallLimitMiddleware": (lambda: ModelCallLimitMiddleware(run_limit=1), _ONE_ADD, "add", 0),
    "ToolCallLimitMiddleware": (lambda: ToolCallLimitMiddleware(tool_name="add", run_limit=1),
                                _TWO_ADDS, "add twice", 0),
    "ToolRetryMiddleware": (lambda: ToolRetryMiddleware(max_retries=1, initial_delay=0, jitter=False),
                            [AIMessage("", tool_calls=[_call("flaky", "f1", x=1)]), AIMessage("done")],
                            "flaky", 0),
    "ToolErrorMiddleware": (lambda: ToolErrorMiddleware(lambda exc, request: f"handled: {exc}"),
                            [AIMessage("", tool_calls=[_call("flaky", "f1", x=1)]), AIMessage("done")],
                            "flaky", 0),
    "ModelRetryMiddleware": (lambda: ModelRetryMiddleware(max_retries=1, initial_delay=0, jitter=False),
                             _ONE_ADD, "add", 1),
    "ModelFallbackMiddleware": (lambda: ModelFallbackMiddleware(_Fake(responses=_ONE_ADD)),
                                _ONE_ADD, "add", 100),
    "LLMToolEmulator": (lambda: LLMToolEmulator(tools=["add"], model=FakeListChatModel(responses=["42"])),
                        _ONE_ADD, "add", 0),
    "TodoListMiddleware": (TodoListMiddleware, _ONE_ADD, "add", 0),
    "ContextEditingMiddleware": (ContextEditingMiddleware, _ONE_ADD, "add", 0),
    "PIIMiddleware": (lambda: PIIMiddleware("email", strategy="redact"), _ONE_ADD,
                      "add, and mail me at someone@example.com", 0),
    "FilesystemFileSearchMiddleware": (
        lambda: FilesystemFileSearchMiddleware(root_path=str(_FILES), use_ripgrep=False),
        [AIMessage("", tool_calls=[_call("glob_search", "g1", pattern="*.txt")]), AIMessage("done")],
        "find my notes", 0),
    "SummarizationMiddleware": (lambda: SummarizationMiddleware(
        model=FakeListChatModel(responses=["a summary"]), trigger=("messages", 3), keep=("messages", 2)),
                                _TWO_ADDS, "add twice", 0),
}


def _seen(messages: list[BaseMessage]) -> list[tuple[str, str, list[str]]]:
    return [(m.type, m.text, [c["name"] for c in getattr(m, "tool_calls", [])]) for m in messages]


def _run(order: str, case: Case) -> tuple[list[Any], list[Any]]:
    make, replies, text, failures = case
    world = _World()
    builtin = make()
    middleware: list[Any] = {"stock": [builtin], "gate before": [ToolstreamMiddleware(), builtin],
                             "gate after": [builtin, ToolstreamMiddleware()]}[order]
    agent = create_agent(_Fake(responses=list(replies), failures=failures), tools=world.tools,
                         middleware=middleware, checkpointer=InMemorySaver())
    state = agent.invoke({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": "t"}})
    # The tool node runs a turn's calls concurrently: which of two calls starts first is not
    # an outcome, so the runs are compared as a multiset; the messages keep the calls' order.
    return sorted(world.ran, key=repr), _seen(state["messages"])


@pytest.mark.parametrize("order", ["gate before", "gate after"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_the_builtin_does_its_job_beside_the_gate(name: str, order: str) -> None:
    stock = _run("stock", CASES[name])
    assert stock[0] or name in {"LLMToolEmulator", "ModelCallLimitMiddleware",
                                "FilesystemFileSearchMiddleware"}, "the scenario runs a tool"
    if name == "FilesystemFileSearchMiddleware":  # its own tool ran: its answer names the file
        assert any("notes.txt" in text for kind, text, _ in stock[1] if kind == "tool")
    assert _run(order, CASES[name]) == stock


@pytest.mark.parametrize("order", ["gate before", "gate after"])
def test_human_in_the_loop_beside_the_gate(order: str) -> None:
    """The approval interrupts before the tool runs, and the approved call runs once."""
    outcomes = {}
    for run in ("stock", order):
        world = _World()
        hitl = HumanInTheLoopMiddleware(interrupt_on={"add": True})
        middleware: list[Any] = {"stock": [hitl], "gate before": [ToolstreamMiddleware(), hitl],
                                 "gate after": [hitl, ToolstreamMiddleware()]}[run]
        agent = create_agent(_Fake(responses=list(_ONE_ADD)), tools=world.tools, middleware=middleware,
                             checkpointer=InMemorySaver())
        config: Any = {"configurable": {"thread_id": "t"}}
        first = agent.invoke({"messages": [HumanMessage("add")]}, config)
        before = list(world.ran)
        state = agent.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
        outcomes[run] = ("__interrupt__" in first, before, world.ran, _seen(state["messages"]))
    assert outcomes[order] == outcomes["stock"]
    assert outcomes["stock"][:3] == (True, [], [("add", {"a": 1, "b": 2})])


def _edited(edit_args: dict[str, Any]) -> tuple[list[Any], list[BaseMessage]]:
    """The gate listed after ``HumanInTheLoopMiddleware`` (its ``after_model`` runs before the
    reviewer's); one add call, edited to ``edit_args``: what ran and the final messages."""
    world = _World()
    hitl = HumanInTheLoopMiddleware(interrupt_on={"add": True})
    agent = create_agent(_Fake(responses=list(_ONE_ADD)), tools=world.tools,
                         middleware=[hitl, ToolstreamMiddleware()], checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t"}}
    assert "__interrupt__" in agent.invoke({"messages": [HumanMessage("add")]}, config)
    edit = {"type": "edit", "edited_action": {"name": "add", "args": edit_args}}
    state = agent.invoke(Command(resume={"decisions": [edit]}), config)
    return world.ran, state["messages"]


def test_a_reviewers_edit_runs_once_with_the_gate_listed_after_the_review() -> None:
    ran, messages = _edited({"a": 5, "b": 6})
    assert ran == [("add", {"a": 5, "b": 6})]
    [answer] = [m for m in messages if m.type == "tool"]
    assert answer.status == "success" and "11" in answer.text


def test_a_reviewers_edit_that_breaks_the_schema_never_runs_with_the_gate_after() -> None:
    ran, messages = _edited({"a": "not a number"})
    assert ran == []
    [answer] = [m for m in messages if m.type == "tool"]
    assert answer.status == "error" and answer.text.endswith("[schema_violation]")


@pytest.mark.parametrize("order", ["stock", "gate before", "gate after"])
def test_a_retried_turn_passes_the_model_call_limit(order: str) -> None:
    """An all-rejected turn goes back to the model the way a tool round does: past every
    ``after_model`` hook (``ModelCallLimitMiddleware`` counts the call there) to the first
    ``before_model`` hook (where it stops the run at its limit). Stock, the bad call reaches
    the tool and fails there; gated, the gate answers it; either way the limit ends the run."""
    world = _World()
    limit = ModelCallLimitMiddleware(run_limit=1)
    middleware: list[Any] = {"stock": [limit], "gate before": [ToolstreamMiddleware(), limit],
                             "gate after": [limit, ToolstreamMiddleware()]}[order]
    model = _Fake(responses=[AIMessage("", tool_calls=[_call("add", "c1", a="x", b=2)]),
                             AIMessage("done")])
    agent = create_agent(model, tools=world.tools, middleware=middleware,
                         checkpointer=InMemorySaver())
    state = agent.invoke({"messages": [HumanMessage("add")]}, {"configurable": {"thread_id": "t"}})
    assert world.ran == []
    assert [m.type for m in state["messages"]] == ["human", "ai", "tool", "ai"]
    assert "run limit" in state["messages"][-1].text
    assert model.i == 1  # one model call: the limit stopped the second
    assert set(state) == {"messages"}  # the gate's own state keys stay private


def _per_call(order: str, edit_args: dict[str, Any]) -> tuple[list[Any], list[BaseMessage]]:
    """``HumanInTheLoopMiddleware(interrupt_mode="per_call")``: the reviewer's edit is handed
    on in its ``wrap_tool_call`` (``request.override``), with no trace in the state."""
    world = _World()
    hitl = HumanInTheLoopMiddleware(interrupt_on={"add": True}, interrupt_mode="per_call")
    middleware: list[Any] = {"stock": [hitl], "gate before": [ToolstreamMiddleware(), hitl],
                             "gate after": [hitl, ToolstreamMiddleware()]}[order]
    agent = create_agent(_Fake(responses=list(_ONE_ADD)), tools=world.tools, middleware=middleware,
                         checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t"}}
    [pause] = agent.invoke({"messages": [HumanMessage("add")]}, config)["__interrupt__"]
    edit = {"type": "edit", "edited_action": {"name": "add", "args": edit_args}}
    state = agent.invoke(Command(resume={pause.id: edit}), config)
    return world.ran, state["messages"]


def test_a_per_call_edit_runs_once_with_the_gate_first() -> None:
    """Listed before the reviewer, the gate admits the committed call and the reviewer's
    per-call edit is substituted inside it, as in the stock agent."""
    ran, messages = _per_call("gate before", {"a": 5, "b": 6})
    assert ran == _per_call("stock", {"a": 5, "b": 6})[0] == [("add", {"a": 5, "b": 6})]
    [answer] = [m for m in messages if m.type == "tool"]
    assert answer.status == "success" and "11" in answer.text


def test_a_per_call_edit_is_refused_with_the_gate_after() -> None:
    """Listed after it, the gate is handed arguments no vendor finished and no recorded
    decision chose (a per-call edit leaves none in the state): refused (decision 0111)."""
    ran, messages = _per_call("gate after", {"a": 5, "b": 6})
    assert ran == []
    [answer] = [m for m in messages if m.type == "tool"]
    assert answer.status == "error" and answer.text.endswith("[arguments_changed]")


class _Handing(AgentMiddleware[Any, Any, Any]):
    """A developer's middleware that hands on the call changed (``request.override``)."""

    def __init__(self, args: dict[str, Any]) -> None:
        super().__init__()
        self.args = args

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        return handler(request.override(tool_call={**request.tool_call, "args": self.args}))


def _handed(args: dict[str, Any], *, gate: str) -> tuple[list[Any], str]:
    world = _World()
    handing = _Handing(args)
    middleware: list[Any] = {"stock": [handing], "gate before": [ToolstreamMiddleware(), handing],
                             "gate after": [handing, ToolstreamMiddleware()]}[gate]
    agent = create_agent(_Fake(responses=list(_ONE_ADD)), tools=world.tools, middleware=middleware,
                         checkpointer=InMemorySaver())
    state = agent.invoke({"messages": [HumanMessage("add")]}, {"configurable": {"thread_id": "t"}})
    [answer] = [m for m in state["messages"] if m.type == "tool"]
    return world.ran, answer.text


def test_a_call_changed_inside_the_gate_runs_as_stock() -> None:
    stock = _handed({"a": 7, "b": 8}, gate="stock")
    assert _handed({"a": 7, "b": 8}, gate="gate before") == stock == ([("add", {"a": 7, "b": 8})], "15")


def test_a_call_changed_before_the_gate_never_runs() -> None:
    ran, text = _handed({"a": 7, "b": 8}, gate="gate after")
    assert ran == [] and text.endswith("[arguments_changed]")

# Built-ins whose scenarios need a vendor, a shell or a selection model: their own upstream
# test files run with the gate first and last in the nox session ``conformance``
# (tests/conformance/run.py, ``tests/unit_tests/agents`` of the installed langchain's sdist).
UPSTREAM: dict[str, str] = {
    "AutoModeMiddleware": "middleware/implementations/test_auto_mode.py",
    "LLMToolSelectorMiddleware": "middleware/implementations/test_tool_selection.py",
    "ModelRefusalMiddleware": "middleware/implementations/test_model_refusal.py",
    "ModelRouterMiddleware": "middleware/implementations/test_model_router.py",
    "ProviderToolSearchMiddleware": "middleware/implementations/test_provider_tool_search.py",
    "ShellToolMiddleware": "middleware/implementations/test_shell_tool.py",
}


def test_every_builtin_is_covered() -> None:
    """Every middleware class ``langchain.agents.middleware`` exports has its test with the
    gate before and after it: here (``CASES``, the HITL tests) or upstream (``UPSTREAM``). A
    built-in a new LangChain adds fails here until it has one."""
    import langchain.agents.middleware as builtins

    exported = {name for name in builtins.__all__
                if inspect.isclass(cls := getattr(builtins, name))
                and issubclass(cls, AgentMiddleware) and cls is not AgentMiddleware}
    here = {*CASES, "HumanInTheLoopMiddleware"}
    assert exported == here | set(UPSTREAM)
    assert not here & set(UPSTREAM)
