"""Injected parameters are never required of the model (issue 36): the gate checks a call
against the schema the model is shown, minus what the agent's ``ToolNode`` fills in.

Real ``create_agent`` over LangChain's own fake (a test double, decision 0095); what ran is
counted in the tools.
"""

from __future__ import annotations

from typing import Annotated, Any

from langchain.agents import create_agent
from langchain.tools import InjectedState, ToolRuntime
from langchain_core.language_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from langchain_toolstream import ToolstreamMiddleware


class _Fake(FakeMessagesListChatModel):
    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self


def _call(args: dict[str, Any], name: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": "c1", "type": "tool_call"}])


def _run(tool_: Any, args: dict[str, Any]) -> list[Any]:
    model = _Fake(responses=[_call(args, tool_.name), AIMessage("done")])
    agent = create_agent(model, tools=[tool_], middleware=[ToolstreamMiddleware()])
    messages = agent.invoke({"messages": [HumanMessage("go")]})["messages"]
    return [m for m in messages if isinstance(m, ToolMessage)]


def test_a_parameter_injected_by_name_is_not_asked_of_the_model() -> None:
    seen: list[Any] = []

    @tool
    def by_name(x: int, runtime: Any) -> str:
        """Runtime injected by its name alone."""
        seen.append((x, isinstance(runtime, ToolRuntime)))
        return f"got {x}"

    answers = _run(by_name, {"x": 42})
    assert seen == [(42, True)]
    assert [a.content for a in answers] == ["got 42"]


def test_parameters_injected_by_annotation_are_not_asked_of_the_model() -> None:
    seen: list[Any] = []

    @tool
    def by_annotation(x: int, runtime: ToolRuntime, messages: Annotated[list[Any], InjectedState("messages")]) -> str:
        """Runtime and state injected by annotation."""
        seen.append((x, bool(messages)))
        return "ok"

    _run(by_annotation, {"x": 1})
    assert seen == [(1, True)]


def test_the_models_own_parameters_are_still_checked() -> None:
    seen: list[Any] = []

    @tool
    def by_name(x: int, runtime: Any) -> str:
        """Runtime injected by its name alone."""
        seen.append(x)
        return "ran"

    answers = _run(by_name, {"y": 1})
    assert seen == []
    assert answers and answers[0].status == "error" and "schema" in str(answers[0].content)
