"""Issue 28: ``create_agent(response_format=...)`` with the middleware keeps the promise.

``ToolStrategy`` (the schema as a tool call) and ``ProviderStrategy`` (the vendor's JSON
text) over the emulator, cut then whole: the cut output is answered (the gate's error result,
or a user message naming the reason) and asked again within the bounded retries;
``structured_response`` is never set from it, not even in an intermediate state of
``stream_mode="values"``; every request the agent sends is accepted (the emulator answers an
illegal history with the vendor's 400).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.structured_output import ProviderStrategy, ToolStrategy
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from lc_util import APIS, chat_body, make_model
from pydantic import BaseModel
from toolstream_core import Reason
from toolstream_core.testing import VendorEmulator

from langchain_toolstream import StructuredOutputError, ToolstreamMiddleware


class Weather(BaseModel):
    city: str
    unit: str


WHOLE = Weather(city="Paris", unit="celsius")
STRATEGIES = {"tool": ("structured_call", ToolStrategy), "provider": ("structured_json", ProviderStrategy)}
CASES = [(api, kind) for api in APIS for kind in STRATEGIES]
IDS = [f"{a}-{k}" for a, k in CASES]


def _agent(api: str, emu: VendorEmulator, kind: str, *scenarios: str, **middleware: Any) -> Any:
    emu.queue(api, *scenarios)
    strategy = STRATEGIES[kind][1](Weather)
    return create_agent(make_model(api, emu), tools=[], response_format=strategy,
                        middleware=[ToolstreamMiddleware(**middleware)])


def _answers(messages: list[Any]) -> list[str]:
    """What answered the cut output: the gate's error result, or the user message."""
    found = [m.content for m in messages if isinstance(m, ToolMessage) and m.status == "error"]
    found += [m.content for m in messages[1:] if isinstance(m, HumanMessage)]
    return [str(text) for text in found]


@pytest.mark.parametrize(("api", "kind"), CASES, ids=IDS)
def test_a_cut_output_is_answered_and_asked_again(emu: VendorEmulator, api: str,
                                                  kind: str) -> None:
    scenario = STRATEGIES[kind][0]
    agent = _agent(api, emu, kind, scenario + "_truncated", scenario)
    states = list(agent.stream({"messages": [HumanMessage("Weather in Paris?")]},
                               stream_mode="values"))
    seen = [s.get("structured_response") for s in states]
    assert seen[-1] == WHOLE
    assert all(v is None or v == WHOLE for v in seen)  # never an object from the cut output
    assert emu.statuses == [200, 200]  # the retry's history was legal
    answers = _answers(states[-1]["messages"])
    assert len(answers) == 1 and "stream_truncated" in answers[0]
    if kind == "provider":  # the cut text stays in the history, answered by the user message
        # (OpenAI chat's SDK raises at the cut, before LangChain has a message: none stays)
        cut = [m.text for m in states[-1]["messages"] if isinstance(m, AIMessage)][:-1]
        assert cut == ([] if api == "openai-chat" else ['{"city":"Paris","unit":"cel'])


@pytest.mark.parametrize(("api", "kind"), CASES, ids=IDS)
@pytest.mark.asyncio(loop_scope="session")
async def test_the_async_agent_retries_the_same_way(emu: VendorEmulator, api: str,
                                                    kind: str) -> None:
    scenario = STRATEGIES[kind][0]
    agent = _agent(api, emu, kind, scenario + "_truncated", scenario)
    result = await agent.ainvoke({"messages": [HumanMessage("Weather in Paris?")]})
    assert result["structured_response"] == WHOLE
    assert emu.statuses == [200, 200]


@pytest.mark.parametrize("kind", list(STRATEGIES))
def test_a_ui_stream_never_shows_an_object_from_the_cut_output(emu: VendorEmulator,
                                                               kind: str) -> None:
    """As a UI runs it: tokens (``messages``) and states (``values``) together."""
    scenario = STRATEGIES[kind][0]
    agent = _agent("openai-chat", emu, kind, scenario + "_truncated", scenario)
    seen = [data.get("structured_response") for mode, data in agent.stream(
        {"messages": [HumanMessage("Weather in Paris?")]}, stream_mode=["messages", "values"])
        if mode == "values"]
    assert seen[-1] == WHOLE and all(v in (None, WHOLE) for v in seen)


@pytest.mark.parametrize(("api", "kind"), CASES, ids=IDS)
def test_after_the_bounded_retries_the_run_raises_the_reason(emu: VendorEmulator, api: str,
                                                             kind: str) -> None:
    cut = STRATEGIES[kind][0] + "_truncated"
    agent = _agent(api, emu, kind, cut, cut, max_retries=1)
    with pytest.raises(StructuredOutputError) as caught:
        agent.invoke({"messages": [HumanMessage("Weather in Paris?")]})
    assert caught.value.reason is Reason.stream_truncated
    assert len(emu.requests) == 2 and emu.statuses == [200, 200]


# -- a finished output is the strategy's (issue 36): the same outcome as the stock agent ---------

def _call_body(args: str) -> bytes:
    """A finished OpenAI chat turn: one call to ``Weather`` with ``args``."""
    return chat_body(call=("call_so", "Weather", args), finish="tool_calls")


def _text(text: str) -> bytes:
    return chat_body(text=text)


def _outcome(emu: VendorEmulator, bodies: list[bytes], strategy: Any, *, gated: bool) -> Any:
    """What one agent run gives: its structured response and every answer in its messages, or
    the error it raised; and how many requests it sent."""
    emu.clear()
    for body in bodies:
        emu.queue_body("openai-chat", body)
    middleware = [ToolstreamMiddleware()] if gated else []
    agent = create_agent(make_model("openai-chat", emu, streaming=True), tools=[get_time],
                         response_format=strategy, middleware=middleware)
    try:
        result = agent.invoke({"messages": [HumanMessage("Weather in Paris?")]})
    except Exception as error:  # the outcome compared is the error's type and words
        return type(error), str(error).split(" (call ")[0], len(emu.requests)
    answers = [str(m.content) for m in result["messages"] if isinstance(m, ToolMessage)]
    return result.get("structured_response"), answers, len(emu.requests)


@tool
def get_time() -> str:
    """Get the current time (an ordinary tool beside the structured response)."""
    return "noon"


FINISHED = {
    # a finished call that fails the schema: the strategy's retry message, then its object
    "tool-retry": ([_call_body('{"city":"Paris"}'), _call_body(json.dumps(WHOLE.model_dump()))],
                   lambda: ToolStrategy(Weather)),
    "tool-own-words": ([_call_body('{"city":"Paris"}'), _call_body(json.dumps(WHOLE.model_dump()))],
                       lambda: ToolStrategy(Weather, handle_errors="Give city and unit.")),
    # handle_errors=False: LangChain's own StructuredOutputValidationError
    "tool-raise": ([_call_body('{"city":"Paris"}')],
                   lambda: ToolStrategy(Weather, handle_errors=False)),
    # a text answer to a forced call: the run ends without a structured response
    "tool-text": ([_text("It is sunny.")], lambda: ToolStrategy(Weather)),
    # a finished JSON text that fails the schema: LangChain's own error
    "provider-invalid": ([_text('{"city":"Paris"}')], lambda: ProviderStrategy(Weather)),
}


@pytest.mark.parametrize("case", list(FINISHED))
def test_a_finished_output_is_the_strategys(emu: VendorEmulator, case: str) -> None:
    """The gate judges only what the vendor did not finish: a finished output that fails its
    schema, or none at all, goes through the strategy's own parse, errors and retries,
    exactly as without the gate (the structured-output tool's schema is not the gate's to
    check)."""
    bodies, strategy = FINISHED[case]
    stock = _outcome(emu, bodies, strategy(), gated=False)
    gated = _outcome(emu, bodies, strategy(), gated=True)
    assert gated == stock
    if case.startswith("tool-") and case != "tool-raise":
        assert stock[2] == (1 if case == "tool-text" else 2)


def test_an_agent_without_a_response_format_is_unchanged(emu: VendorEmulator) -> None:
    emu.queue("openai-chat", "structured_json_truncated")
    agent = create_agent(make_model("openai-chat", emu), tools=[],
                         middleware=[ToolstreamMiddleware()])
    result = agent.invoke({"messages": [HumanMessage("Weather in Paris?")]})
    assert "structured_response" not in result and len(emu.requests) == 1
