"""The parity suite (issue 26.8): one table of fault scenarios x vendors, each row run through
BOTH agents, ``create_agent`` + ``ToolstreamMiddleware`` (LangChain) and
``ToolstreamFunctionAgent`` (LlamaIndex), with their real model classes and SDK clients over
HTTP against the emulator (``toolstream_core.testing.VendorEmulator``).

For each row the two runs must agree on what matters to a user:

- the same tools ran, with the same arguments;
- the gate rejected the same calls for the same reasons (every model call's ``Turn``, from
  ``on_turn``);
- the model was told the same thing: the error results in the requests the agents sent
  (read from the emulator's request log) are the same texts;
- every request after the first is legal, read from the request body each agent's class
  really sent: every call id answered exactly once, right after its call, in the calls'
  order, and no result without its call; and the emulator accepted it.

Collected only in the LlamaIndex env (``.[dev-llamaindex]``, which has LangChain as well):
tests/conftest.py does not collect tests/llamaindex where llama_index is not installed.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest
from flood_streams import APIS as FLOOD_APIS
from flood_streams import CONFIG as FLOOD_CONFIG
from flood_streams import FRAGMENTS, SEEN_AT_MOST, flood_body
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import AIMessageChunk, HumanMessage
from langchain_core.tools import StructuredTool
from langchain_models import make_model
from li_helpers import Recorder, make_llm, run_agent
from llama_index.core.agent.workflow import AgentStream
from toolstream_core import CallOpened, Turn
from toolstream_core.testing import SCENARIOS, VendorEmulator
from toolstream_core.testing._server import Hold
from workflows.errors import WorkflowCancelledByUser

from langchain_toolstream import ToolstreamMiddleware
from llamaindex_toolstream import ToolstreamFunctionAgent

# One event loop for the module: LangChain caches its SDK clients (and their pools) across calls.
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.asyncio(loop_scope="module")]

#: Every wire both frameworks have a class for. Not Cohere: LangChain's ``ChatCohere`` speaks
#: Cohere's v2 chat and LlamaIndex's ``Cohere`` the v1 chat, which has no call ids (a re-sent
#: call reads as a second call there, and an error text has no id to quote), so the two
#: agents never read the same stream; tests/llamaindex/test_li_cohere_v1.py covers the v1 class.
APIS = ("openai-chat", "openai-responses", "anthropic", "gemini", "bedrock-converse", "ollama")
SCENARIOS_ROWS = ("single_call", "parallel_calls", "resent_duplicate", "truncated_length",
                  "no_finish", "dropped_connection", "error_event")
ROWS = [(api, scenario) for scenario in SCENARIOS_ROWS for api in APIS
        if api in SCENARIOS[scenario].apis]

#: What marks a result the gate wrote (its error for a rejected call, "no result", or a call
#: not run again by the started-ledger).
GATE_TEXT = ("was not run:", "has no result:", "was not run again:")


@dataclass
class Outcome:
    """What one agent run did: the tools it ran, the gate's turns, the requests it sent."""

    runs: list[tuple[str, dict[str, Any]]]
    turns: list[Turn]
    requests: list[dict[str, Any]]
    statuses: list[int]
    error: BaseException | None
    timeline: list[str] = field(default_factory=list)
    hold: Hold | None = None
    #: The model chunks the framework saw (LangChain's message chunks, ``AgentStream`` events).
    chunks: int = 0

    @property
    def reasons(self) -> list[list[str]]:
        return [sorted(str(call.reason) for call in turn.rejected) for turn in self.turns]


#: The row of a stream that stalls after a call's first chunks (``queue_stall``), cut by an
#: idle timeout of ``IDLE``: not a named scenario, since a stall is no replayable stream.
STALLED = "stalled"
IDLE = {"assemble_idle_timeout_s": 0.5}
#: The stalled row's wires: the classes take ``timeout=``, the bound against a hang (never a
#: speed claim): were the idle timeout not honoured, the call would end there, cut.
IDLE_APIS = ("openai-chat", "anthropic")
GUARD_S = 20.0


def _settings(scenarios: tuple[str, ...]) -> dict[str, Any]:
    return {"timeout": GUARD_S} if scenarios[0] == STALLED else {}


def _play(api: str, emu: VendorEmulator, scenarios: tuple[str, ...], held: bool,
          recorder: Recorder, turns: list[Turn], body: bytes | None = None) -> tuple[Hold | None, Any]:
    """Queue ``scenarios`` (the first one's end held until a tool starts, with ``held``; the
    first one ``STALLED``: a stall), after ``body`` (wire bytes for the first request) if
    given; the ``on_turn`` that keeps each turn and marks the end of its stream in the
    timeline."""
    emu.clear()
    if body is not None:
        emu.queue_body(api, body)
    hold = emu.queue_held(api, scenarios[0]) if held else None
    if scenarios[0] == STALLED:
        emu.queue_stall(api)
    rest = scenarios[1 if held or scenarios[0] == STALLED else 0:]
    if rest:
        emu.queue(api, *rest)
    recorder.release = hold.release if hold is not None else None

    def on_turn(turn: Turn) -> None:
        turns.append(turn)
        recorder.timeline.append("stream ended")
    return hold, on_turn


async def _langchain(api: str, emu: VendorEmulator, *scenarios: str,
                     config: dict[str, Any] | None = None, held: bool = False,
                     body: bytes | None = None, outer: tuple[Any, ...] = ()) -> Outcome:
    recorder = Recorder()
    turns: list[Turn] = []
    hold, on_turn = _play(api, emu, scenarios, held, recorder, turns, body)
    tools = [StructuredTool.from_function(coroutine=fn) for fn in recorder.functions()]
    agent = create_agent(make_model(api, emu, **_settings(scenarios)), tools=tools,
                         middleware=[*outer, ToolstreamMiddleware(on_turn=on_turn, config=config)])
    error: BaseException | None = None
    chunks = 0
    try:  # streamed as a UI reads it, so the chunks LangChain saw can be counted
        async for chunk, _meta in agent.astream({"messages": [HumanMessage("go")]},
                                                stream_mode="messages"):
            chunks += isinstance(chunk, AIMessageChunk)
    except Exception as exc:  # compared with the other agent's, never hidden
        error = exc
    return Outcome(recorder.runs, turns, [r.body for r in emu.requests],
                   emu.statuses, error, recorder.timeline, hold, chunks)


async def _llamaindex(api: str, emu: VendorEmulator, *scenarios: str,
                      config: dict[str, Any] | None = None, held: bool = False,
                      body: bytes | None = None,
                      agent_class: type[ToolstreamFunctionAgent] = ToolstreamFunctionAgent) -> Outcome:
    recorder = Recorder()
    turns: list[Turn] = []
    hold, on_turn = _play(api, emu, scenarios, held, recorder, turns, body)
    agent = agent_class(tools=recorder.tools(),
                        llm=make_llm(api, emu.base_url, **_settings(scenarios)),
                        on_turn=on_turn, config=config)
    outcome = await run_agent(agent, recorder)
    chunks = sum(isinstance(event, AgentStream) for event in outcome.events)
    return Outcome(recorder.runs, turns, [r.body for r in emu.requests],
                   emu.statuses, outcome.error, recorder.timeline, hold, chunks)


# -- the conversation in a request body, per wire ----------------------------------------------
# A body becomes steps: ("calls", [key, ...]) for a model turn's calls, ("results",
# [(key, value), ...]) for the results right after it, ("other", []) for anything else.

Step = tuple[str, list[Any]]


def _add(steps: list[Step], kind: str, items: list[Any]) -> None:
    if kind != "other" and not items:
        kind = "other"
    if kind != "other" and steps and steps[-1][0] == kind:
        steps[-1][1].extend(items)
    else:
        steps.append((kind, list(items)))


def _messages_steps(messages: list[Any], calls_of: Any, results_of: Any) -> list[Step]:
    steps: list[Step] = []
    for message in messages:
        calls, results = calls_of(message), results_of(message)
        if calls:
            steps.append(("calls", calls))
        elif results:
            _add(steps, "results", results)
        else:
            steps.append(("other", []))
    return steps


def _blocks(message: Any, kind: str) -> list[dict[str, Any]]:
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content or [] if isinstance(b, dict) and kind in (b.get("type"), *b)] \
        if isinstance(content, list) else []


def _chat_steps(body: dict[str, Any]) -> list[Step]:  # OpenAI chat, Cohere v2
    return _messages_steps(
        body.get("messages") or [],
        lambda m: [c["id"] for c in m.get("tool_calls") or []] if m.get("role") == "assistant" else [],
        lambda m: [(m.get("tool_call_id"), m.get("content"))] if m.get("role") == "tool" else [])


def _ollama_steps(body: dict[str, Any]) -> list[Step]:  # no ids on the wire: pairs by position
    return _messages_steps(
        body.get("messages") or [],
        lambda m: ["call"] * len(m.get("tool_calls") or []) if m.get("role") == "assistant" else [],
        lambda m: [("call", m.get("content"))] if m.get("role") == "tool" else [])


def _anthropic_steps(body: dict[str, Any]) -> list[Step]:
    return _messages_steps(
        body.get("messages") or [],
        lambda m: [b["id"] for b in _blocks(m, "tool_use")],
        lambda m: [(b["tool_use_id"], b.get("content")) for b in _blocks(m, "tool_result")])


def _bedrock_steps(body: dict[str, Any]) -> list[Step]:
    return _messages_steps(
        body.get("messages") or [],
        lambda m: [b["toolUse"]["toolUseId"] for b in _blocks(m, "toolUse")],
        lambda m: [(b["toolResult"]["toolUseId"], b["toolResult"].get("content"))
                   for b in _blocks(m, "toolResult")])


def _gemini_steps(body: dict[str, Any]) -> list[Step]:  # Gemini pairs by name and position
    def parts(content: Any, key: str) -> list[dict[str, Any]]:
        snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in key)
        return [p.get(key) or p.get(snake) for p in content.get("parts") or []
                if isinstance(p, dict) and (p.get(key) or p.get(snake))]

    return _messages_steps(
        body.get("contents") or [],
        lambda c: [f["name"] for f in parts(c, "functionCall")],
        lambda c: [(f["name"], f.get("response")) for f in parts(c, "functionResponse")])


def _responses_steps(body: dict[str, Any]) -> list[Step]:
    steps: list[Step] = []
    for item in body.get("input") or []:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "function_call":
            _add(steps, "calls", [item["call_id"]])
        elif kind == "function_call_output":
            _add(steps, "results", [(item["call_id"], item.get("output"))])
        elif kind != "reasoning":  # a reasoning item travels with the calls it produced
            steps.append(("other", []))
    return steps


def conversation(api: str, body: dict[str, Any]) -> list[Step]:
    readers = {"openai-chat": _chat_steps, "openai-responses": _responses_steps,
               "anthropic": _anthropic_steps, "gemini": _gemini_steps,
               "bedrock-converse": _bedrock_steps, "ollama": _ollama_steps}
    return readers[api](body)


def assert_legal(api: str, body: dict[str, Any]) -> None:
    """Every call answered exactly once, right after its call, in the calls' order; no result
    without its call."""
    steps = conversation(api, body)
    for position, (kind, items) in enumerate(steps):
        if kind == "calls":
            after = steps[position + 1] if position + 1 < len(steps) else ("other", [])
            assert after[0] == "results", f"{items} are not answered right after: {steps}"
            assert [k for k, _ in after[1]] == items, f"{items} answered as {after[1]}"
        elif kind == "results":
            assert position > 0 and steps[position - 1][0] == "calls", f"results without calls: {steps}"


def _strings(value: Any) -> list[str]:
    """Every text inside a result's value (parts, documents, JSON text included)."""
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except ValueError:
            return [value]
        return _strings(decoded) if not isinstance(decoded, str) else [decoded]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def gate_texts(api: str, body: dict[str, Any]) -> list[str]:
    """The texts of the gate's own results in a request, in order."""
    return [text for kind, items in conversation(api, body) if kind == "results"
            for _, value in items for text in _strings(value)
            if any(mark in text for mark in GATE_TEXT)]


# -- the table ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("api", "scenario"), ROWS, ids=[f"{a}-{s}" for a, s in ROWS])
async def test_both_agents_end_a_row_the_same_way(api: str, scenario: str,
                                                  emu: VendorEmulator) -> None:
    lc = await _langchain(api, emu, scenario)
    li = await _llamaindex(api, emu, scenario)
    expect = SCENARIOS[scenario].expect

    assert (lc.error, li.error) == (None, None)
    # the same tools ran, with the same arguments (and only calls the vendor finished)
    assert Counter(map(repr, lc.runs)) == Counter(map(repr, li.runs))
    assert sorted(name for name, _ in li.runs) == sorted(expect.committed)
    # the same calls were rejected, for the same reasons
    assert lc.reasons == li.reasons
    assert {r for turn in li.reasons for r in turn} <= set(expect.reasons)
    assert len(lc.reasons[0]) == len(expect.rejected)
    # the model was told the same thing, and every request after the first is legal
    assert len(lc.requests) == len(li.requests) == 2
    lc_texts = [t for body in lc.requests[1:] for t in gate_texts(api, body)]
    li_texts = [t for body in li.requests[1:] for t in gate_texts(api, body)]
    assert lc_texts == li_texts
    assert len(li_texts) == len(expect.rejected)
    for outcome in (lc, li):
        for body in outcome.requests[1:]:
            assert_legal(api, body)
        assert outcome.statuses[1:] == [200]


#: The run budget row (issue 26.2): two calls across two turns fit, the third turn's two do not.
BUDGET_RUN = ("single_call", "no_args", "parallel_calls", "text")


@pytest.mark.parametrize("api", APIS)
async def test_both_agents_stop_a_third_call_with_the_run_budget(api: str,
                                                                  emu: VendorEmulator) -> None:
    config = {"max_tool_calls_per_run": 2}
    lc = await _langchain(api, emu, *BUDGET_RUN, config=config)
    li = await _llamaindex(api, emu, *BUDGET_RUN, config=config)
    assert (lc.error, li.error) == (None, None)
    assert Counter(map(repr, lc.runs)) == Counter(map(repr, li.runs))
    assert [name for name, _ in li.runs] == ["write_file", "get_time"]
    assert lc.reasons == li.reasons == [[], [], ["run_budget_exceeded"] * 2, []]
    assert len(lc.requests) == len(li.requests) == 4
    lc_texts = gate_texts(api, lc.requests[3])
    li_texts = gate_texts(api, li.requests[3])
    assert lc_texts == li_texts and len(li_texts) == 2
    assert all("[run_budget_exceeded]" in t for t in li_texts)
    for outcome in (lc, li):
        for body in outcome.requests[1:]:
            assert_legal(api, body)
        assert outcome.statuses == [200] * 4


#: Arguments other code put on a committed call, under its id (issue 38.4).
EVIL = {"path": "/tmp/evil.txt", "content": "pwned"}


class ChangeArguments(AgentMiddleware[Any, Any, Any]):
    """Listed before the gate: hands it a committed call with other arguments."""

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        return await handler(request.override(tool_call={**request.tool_call, "args": EVIL}))


class ChangingAgent(ToolstreamFunctionAgent):
    """Changes the committed calls' arguments between the model turn and the tool step."""

    async def take_step(self, *args: Any, **kwargs: Any) -> Any:
        output = await super().take_step(*args, **kwargs)
        output.tool_calls = [c.model_copy(update={"tool_kwargs": EVIL}) if c.tool_name == "write_file"
                             else c for c in output.tool_calls]
        return output


def _assert_both_answered_changed(api: str, lc: Outcome, li: Outcome) -> None:
    """Nothing ran; the one follow-up of each agent answers the call ``[arguments_changed]``
    in the same words, legally, and was accepted."""
    assert lc.runs == li.runs == []
    assert len(lc.requests) == len(li.requests) == 2
    lc_texts, li_texts = gate_texts(api, lc.requests[1]), gate_texts(api, li.requests[1])
    assert lc_texts == li_texts and len(li_texts) == 1
    assert li_texts[0].endswith("[arguments_changed]")
    for outcome in (lc, li):
        assert_legal(api, outcome.requests[1])
        assert outcome.statuses == [200, 200]


@pytest.mark.parametrize("api", APIS)
async def test_both_agents_refuse_a_committed_call_whose_arguments_changed(
        api: str, emu: VendorEmulator) -> None:
    lc = await _langchain(api, emu, "single_call", "text", outer=(ChangeArguments(),))
    li = await _llamaindex(api, emu, "single_call", "text", agent_class=ChangingAgent)
    assert (lc.error, li.error) == (None, None)
    assert lc.runs == li.runs == []
    assert lc.reasons == li.reasons == [[], []]
    _assert_both_answered_changed(api, lc, li)


#: Pipelining (issue 26.2, DESIGN 4.10): get_weather may start when its call commits.
PIPELINE = {"execute_before_stream_end": True, "allow_pipelined_execute": ["get_weather"]}
#: The wires whose parallel_calls stream commits a call before its last frame (never OpenAI chat).
PIPELINED_APIS = ("anthropic", "openai-responses", "bedrock-converse")


@pytest.mark.parametrize("api", PIPELINED_APIS)
async def test_both_agents_start_a_pipelined_tool_before_the_stream_ends(
        api: str, emu: VendorEmulator) -> None:
    lc = await _langchain(api, emu, "parallel_calls", "text", config=PIPELINE, held=True)
    li = await _llamaindex(api, emu, "parallel_calls", "text", config=PIPELINE, held=True)
    assert (lc.error, li.error) == (None, None)
    for outcome in (lc, li):
        assert outcome.hold is not None and outcome.hold.released is True  # a tool, not the timeout
        assert outcome.timeline[0] == "started get_weather"
        assert outcome.timeline.index("stream ended") > 0
        assert len(outcome.requests) == 2 and outcome.statuses == [200, 200]
        assert_legal(api, outcome.requests[1])
    assert Counter(map(repr, lc.runs)) == Counter(map(repr, li.runs))
    assert len(li.runs) == 2  # each call ran once
    assert lc.reasons == li.reasons == [[], []]
    assert gate_texts(api, lc.requests[1]) == gate_texts(api, li.requests[1]) == []


@pytest.mark.parametrize("api", IDLE_APIS)
async def test_both_agents_end_a_stalled_stream_the_same_way(api: str, emu: VendorEmulator) -> None:
    """The idle timeout's row: a stream that stalls after a call's first chunks is cut in both
    agents, the call answered ``idle_timeout`` (the fault policy's "pair", as for a dropped
    connection), nothing runs, both connections closed, and the same legal next request."""
    lc = await _langchain(api, emu, STALLED, config=IDLE)
    lc_closed = [s.closed.wait(GUARD_S) for s in emu.stalls]
    li = await _llamaindex(api, emu, STALLED, config=IDLE)
    li_closed = [s.closed.wait(GUARD_S) for s in emu.stalls]

    assert (lc.error, li.error) == (None, None)
    assert lc.runs == li.runs == []
    assert lc.reasons == li.reasons == [["idle_timeout"], []]
    assert lc_closed == li_closed == [True]  # each agent really cut its connection
    assert len(lc.requests) == len(li.requests) == 2
    lc_texts, li_texts = gate_texts(api, lc.requests[1]), gate_texts(api, li.requests[1])
    assert lc_texts == li_texts and len(li_texts) == 1 and "idle_timeout" in li_texts[0]
    for outcome in (lc, li):
        assert_legal(api, outcome.requests[1])
        assert outcome.statuses[1:] == [200]


@pytest.mark.parametrize("api", FLOOD_APIS)
async def test_both_agents_reject_a_capped_flood_the_same_way(api: str, emu: VendorEmulator) -> None:
    """The capped flood's row (issue 37.3): a call whose arguments run 64 times past the cap
    is rejected for it in both agents, nothing runs, the model is told the same text in the
    same legal next request, and neither framework saw the fragments after the failure."""
    lc = await _langchain(api, emu, "text", config=FLOOD_CONFIG, body=flood_body(api))
    li = await _llamaindex(api, emu, "text", config=FLOOD_CONFIG, body=flood_body(api))
    assert (lc.error, li.error) == (None, None)
    assert lc.runs == li.runs == []
    assert lc.reasons == li.reasons == [["arguments_exceed_max_bytes"], []]
    for outcome in (lc, li):
        assert 0 < outcome.chunks <= SEEN_AT_MOST < FRAGMENTS
        assert len(outcome.requests) == 2 and outcome.statuses == [200, 200]
        assert_legal(api, outcome.requests[1])
    lc_texts, li_texts = gate_texts(api, lc.requests[1]), gate_texts(api, li.requests[1])
    assert lc_texts == li_texts and len(li_texts) == 1
    assert "[arguments_exceed_max_bytes]" in li_texts[0]


#: The capped flood on every wire: ``large_args`` (one write_file call of about 200 KB, in
#: about 800 fragments where the wire streams them) under a 2 KiB cap.
LARGE_CAP = {"max_tool_argument_bytes": 2048}
#: The most model chunks a framework may see of it: the fragments up to the cap (pieces of up
#: to 500 characters), the table's lazy count past it (``_call.ROOM``: 32) and the stream's
#: other events; a framework that got every fragment sees about 800.
LARGE_SEEN_AT_MOST = 80


@pytest.mark.parametrize("api", APIS)
async def test_both_agents_reject_a_large_call_past_the_cap_on_every_wire(
        api: str, emu: VendorEmulator) -> None:
    """The capped flood's row on every wire (issue 37.3): the call is rejected for its cap in
    both agents, nothing runs, the same text in the same legal next request, and neither
    framework was handed the fragments after the failure (the core says which events touched
    only the failed call, ``Assembler.spent``, and the tap withholds them)."""
    lc = await _langchain(api, emu, "large_args", "text", config=LARGE_CAP)
    li = await _llamaindex(api, emu, "large_args", "text", config=LARGE_CAP)
    assert (lc.error, li.error) == (None, None)
    assert lc.runs == li.runs == []
    assert lc.reasons == li.reasons == [["arguments_exceed_max_bytes"], []]
    for outcome in (lc, li):
        assert 0 < outcome.chunks <= LARGE_SEEN_AT_MOST, outcome.chunks
        assert len(outcome.requests) == 2 and outcome.statuses == [200, 200]
        assert_legal(api, outcome.requests[1])
    lc_texts, li_texts = gate_texts(api, lc.requests[1]), gate_texts(api, li.requests[1])
    assert lc_texts == li_texts and len(li_texts) == 1
    assert "[arguments_exceed_max_bytes]" in li_texts[0]


def test_the_legality_check_can_fail() -> None:
    """``assert_legal`` is only worth something if it refuses what a vendor refuses."""
    call = {"role": "assistant", "tool_calls": [{"id": "a"}, {"id": "b"}]}
    a, b = ({"role": "tool", "tool_call_id": i} for i in "ab")
    bad = [
        [call, a],                       # b unanswered
        [call, b, a],                    # out of the calls' order
        [call, a, b, b],                 # b answered twice
        [call, {"role": "user"}, a, b],  # not right after
        [{"role": "user"}, a],           # a result without its call
    ]
    for messages in bad:
        with pytest.raises(AssertionError):
            assert_legal("openai-chat", {"messages": messages})
    assert_legal("openai-chat", {"messages": [call, a, b]})


# -- cancel and continue (issue 37) -------------------------------------------------------------
#: The matrix of issue 37: each agent stopped at four points of a run, then continued on the
#: same thread (LangChain, with a checkpointer and a store, as docs/deploy.md says) or the same
#: Context (LlamaIndex): a resume (LangGraph ``ainvoke(None)``, LlamaIndex ``run(ctx=ctx)``) or
#: new input. LangChain's run is stopped by cancelling the task that consumes it, LlamaIndex's
#: by ``handler.cancel_run()``, each framework's own stop.
CONTINUE_APIS = ("openai-chat", "anthropic", "gemini")
POINTS = ("before_first_chunk", "mid_arguments", "after_finish", "during_tool")
#: Where a run is stopped: the stream stalls there (``queue_stall``), so the stop lands there
#: whatever the machine's speed. ``(scenario, frames sent)``; a tool's run is held instead.
STALLS: dict[str, tuple[str, int | None]] = {
    "before_first_chunk": ("single_call", 0),
    "mid_arguments": ("single_call", 6),  # the call opened, its arguments a few fragments in
    "after_finish": ("single_call", -1),  # the finish sent, the stream's last frame not
}
#: Gemini streams single_call's arguments whole, in the one frame that also finishes it.
GEMINI_STALLS = {"mid_arguments": ("partial_args", 6), "after_finish": ("single_call", None)}


def _stall(api: str, emu: VendorEmulator, point: str) -> None:
    scenario, frames = (GEMINI_STALLS if api == "gemini" else {}).get(point, STALLS[point])
    emu.queue_stall(api, scenario=scenario, frames=frames)


async def _reach(point: str, emu: VendorEmulator, seen: list[Any], recorder: Recorder) -> None:
    """Wait (bounded) until the run is at ``point``: the request sent, the call opened, its
    arguments and finish read, or the tool started."""
    def there() -> bool:
        if point == "before_first_chunk":
            return bool(emu.requests)
        if point == "during_tool":
            return bool(recorder.runs)
        return any(isinstance(event, CallOpened) for event in seen)

    for _ in range(int(GUARD_S / 0.01)):
        if there():
            break
        await asyncio.sleep(0.01)
    else:
        raise AssertionError(f"the run never got to {point}")
    if point in ("mid_arguments", "after_finish"):
        # The rest of the frames before the stall are on the wire: let them be read, so the
        # stop lands on a read waiting at the stall. (A cancel that lands as a read completes
        # is lost to ``asyncio.wait_for`` on Python 3.11, which langchain-openai wraps each
        # chunk's read in: that run reads on until the SDK's read timeout, gate or not.)
        await asyncio.sleep(0.3)


def _start(api: str, emu: VendorEmulator, point: str) -> tuple[Recorder, list[Turn], list[Any], Any]:
    recorder = Recorder(delay=5.0 if point == "during_tool" else 0.0)
    turns: list[Turn] = []
    emu.clear()
    if point == "during_tool":
        emu.queue(api, "single_call")
    else:
        _stall(api, emu, point)

    def on_turn(turn: Turn) -> None:
        turns.append(turn)
    return recorder, turns, [], on_turn


def _continued(api: str, emu: VendorEmulator, point: str, recorder: Recorder) -> None:
    """What the model answers after the stop: the call again where it was never run."""
    emu.clear()
    emu.queue(api, *(("text",) if point == "during_tool" else ("single_call", "text")))
    recorder.delay = 0.0


async def _langchain_stopped(api: str, emu: VendorEmulator, point: str, mode: str) -> Outcome:
    """LangChain: the consuming task cancelled at ``point``, then the same thread continued
    (an in-memory checkpointer and store: the started-ledger's home)."""
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.store.memory import InMemoryStore

    recorder, turns, seen, on_turn = _start(api, emu, point)
    tools = [StructuredTool.from_function(coroutine=fn) for fn in recorder.functions()]
    agent = create_agent(make_model(api, emu, timeout=GUARD_S), tools=tools,
                         middleware=[ToolstreamMiddleware(on_turn=on_turn, on_event=seen.append)],
                         checkpointer=InMemorySaver(), store=InMemoryStore())
    config: Any = {"configurable": {"thread_id": f"stop-{api}-{point}-{mode}"}}
    task = asyncio.ensure_future(agent.ainvoke({"messages": [HumanMessage("go")]}, config))
    await _reach(point, emu, seen, recorder)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    _continued(api, emu, point, recorder)
    error: BaseException | None = None
    try:
        await agent.ainvoke(None if mode == "resume" else {"messages": [HumanMessage("again")]},
                            config)
    except Exception as exc:  # compared with the other agent's, never hidden
        error = exc
    return Outcome(recorder.runs, turns, [r.body for r in emu.requests], emu.statuses, error)


async def _llamaindex_stopped(api: str, emu: VendorEmulator, point: str, mode: str,
                              stop: str = "cancel_run") -> Outcome:
    """LlamaIndex: stopped at ``point`` by ``cancel_run()``, or by cancelling the task that
    awaits the handler (``stop="task"``), then the same context continued."""
    recorder, turns, seen, on_turn = _start(api, emu, point)
    agent = ToolstreamFunctionAgent(tools=recorder.tools(),
                                    llm=make_llm(api, emu.base_url, timeout=GUARD_S),
                                    on_turn=on_turn, on_event=seen.append)
    handler = agent.run(user_msg="go")

    async def consume() -> Any:
        return await handler

    task = asyncio.ensure_future(consume())
    await _reach(point, emu, seen, recorder)
    if stop == "task":
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert handler.done()  # the run is over, as cancel_run() leaves it
    else:
        await handler.cancel_run()
        with pytest.raises(WorkflowCancelledByUser):
            await task
    _continued(api, emu, point, recorder)
    again = agent.run(ctx=handler.ctx) if mode == "resume" else \
        agent.run(user_msg="again", ctx=handler.ctx)
    error: BaseException | None = None
    try:
        await again
    except Exception as exc:  # compared with the other agent's, never hidden
        error = exc
    return Outcome(recorder.runs, turns, [r.body for r in emu.requests], emu.statuses, error)


#: LlamaIndex's two stops: ``cancel_run()`` and the awaiting task cancelled (docs/llamaindex.md).
MATRIX = [(api, point, mode, stop) for point in POINTS for api in CONTINUE_APIS
          for mode in ("resume", "new") for stop in ("cancel_run", "task")]


@pytest.mark.parametrize(("api", "point", "mode", "stop"), MATRIX,
                         ids=["-".join(row) for row in MATRIX])
async def test_both_agents_continue_a_run_stopped_at_any_point(api: str, point: str, mode: str,
                                                               stop: str,
                                                               emu: VendorEmulator) -> None:
    lc = await _langchain_stopped(api, emu, point, mode)
    li = await _llamaindex_stopped(api, emu, point, mode, stop)
    assert (lc.error, li.error) == (None, None)
    # the stopped model call: a call open at the stop was cancelled, never run
    stopped = [] if point in ("before_first_chunk", "during_tool") else ["cancelled"]
    assert lc.reasons[0] == stopped
    if stop == "cancel_run":  # the awaiting task cancelled mid-stream: the workflow leaves the
        assert li.reasons[0] == stopped  # step's stream unclosed, so that turn is not decided
    # write_file ran once in all, across the stop and the continue, the same way in both
    assert Counter(map(repr, lc.runs)) == Counter(map(repr, li.runs))
    assert [name for name, _ in li.runs] == ["write_file"]
    # the continue's requests: the same number, each legal, the model told the same thing
    assert len(lc.requests) == len(li.requests) == (1 if point == "during_tool" else 2)
    lc_texts = [t for body in lc.requests for t in gate_texts(api, body)]
    li_texts = [t for body in li.requests for t in gate_texts(api, body)]
    assert lc_texts == li_texts
    if point == "during_tool":
        marker = "[not_repeated]" if mode == "resume" else "has no result"
        assert len(li_texts) == 1 and marker in li_texts[0]
    for outcome in (lc, li):
        for body in outcome.requests:
            assert_legal(api, body)
        assert outcome.statuses == [200] * len(outcome.requests)


# -- a committed call's arguments edited in state saved to PostgreSQL (issue 38.4) -------------
# LangChain: the thread on LangGraph's PostgresSaver, stopped before its tools, the paused
# message's arguments replaced through ``update_state`` (same id). LlamaIndex: the workflow
# context saved as JSON in a PostgreSQL table while the tool waits for a person, the same
# arguments replaced there, restored. A call a reviewer rejected has no LlamaIndex
# counterpart (LlamaIndex's human in the loop is the tool's own wait: no decision the gate
# records), so that row is LangChain's alone (tests/langchain/test_lc_bound.py).

EDITED_APIS = ("openai-chat", "anthropic")


def _langchain_edited(api: str, emu: VendorEmulator, pg_url: str) -> Outcome:
    from langchain_core.tools import tool
    from langgraph.checkpoint.postgres import PostgresSaver

    from benchmarks.postgres import setup_langgraph_tables

    runs: list[tuple[str, dict[str, Any]]] = []

    @tool
    def write_file(path: str, content: str = "") -> str:
        """Write a text file."""
        runs.append(("write_file", {"path": path, "content": content}))
        return f"wrote {len(content)} characters to {path}"

    emu.clear()
    emu.queue(api, "single_call", "text")
    setup_langgraph_tables(pg_url)
    config: Any = {"configurable": {"thread_id": "edited"}}
    with PostgresSaver.from_conn_string(pg_url) as saver:
        agent = create_agent(make_model(api, emu), tools=[write_file], checkpointer=saver,
                             middleware=[ToolstreamMiddleware()])
        agent.invoke({"messages": [HumanMessage("go")]}, config, durability="sync",
                     interrupt_before=["tools"])
        message = agent.get_state(config).values["messages"][-1]
        [call] = message.tool_calls
        agent.update_state(config, {"messages": [
            message.model_copy(update={"tool_calls": [{**call, "args": EVIL}]})]})
        agent.invoke(None, config, durability="sync")
    return Outcome(runs, [], [r.body for r in emu.requests], emu.statuses, None)


async def _llamaindex_edited(api: str, emu: VendorEmulator, pg_url: str, notes: Any) -> Outcome:
    import psycopg
    from li_helpers import approved_after_restore, saved_while_waiting
    from test_li_bound import approved_write

    emu.clear()
    emu.queue(api, "single_call", "text")
    first = ToolstreamFunctionAgent(tools=[approved_write(notes)], llm=make_llm(api, emu.base_url))
    saved, memory = await saved_while_waiting(first.run(user_msg="go"))
    text = json.dumps(saved)
    edited = text.replace("/tmp/notes.txt", EVIL["path"])
    assert edited != text
    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute("CREATE TABLE contexts (thread text PRIMARY KEY, data jsonb)")
        db.execute("INSERT INTO contexts VALUES ('edited', %s)", (text,))
        db.execute("UPDATE contexts SET data = %s WHERE thread = 'edited'", (edited,))
        [(stored,)] = db.execute("SELECT data FROM contexts WHERE thread = 'edited'").fetchall()
    second = ToolstreamFunctionAgent(tools=[approved_write(notes)], llm=make_llm(api, emu.base_url))
    await approved_after_restore(second, stored, memory)
    runs = [("write_file", {"path": p.name}) for p in notes.iterdir()]
    return Outcome(runs, [], [r.body for r in emu.requests], emu.statuses, None)


@pytest.mark.parametrize("api", EDITED_APIS)
async def test_both_agents_refuse_arguments_edited_in_state_saved_to_postgres(
        api: str, emu: VendorEmulator, pg_url: str, tmp_path: Any) -> None:
    lc = await asyncio.to_thread(_langchain_edited, api, emu, pg_url)
    li = await _llamaindex_edited(api, emu, pg_url, tmp_path)
    _assert_both_answered_changed(api, lc, li)
