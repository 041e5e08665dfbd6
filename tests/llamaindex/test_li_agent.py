"""ToolstreamFunctionAgent vs the stock FunctionAgent, same LLM classes, same emulator scenario.

Every test runs the stock agent on the same input and asserts what it does (measured with
llama-index-core 0.14 and its openai/anthropic/google-genai LLM packages), then asserts the
toolstream agent's behaviour: a tool runs only on a committed call, every other call gets one
error result with the real reason, and the next vendor request is accepted (no 400).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from li_helpers import APIS, THIRD_PARTY_WARNINGS, Outcome, Recorder, make_llm, run_agent, unpaired
from li_scripted import scripted_chat
from llama_index.core.agent.workflow import FunctionAgent, ToolCall
from llama_index.llms.openai import OpenAI
from toolstream_core.testing import VendorEmulator

from llamaindex_toolstream import ToolstreamFunctionAgent, ToolstreamLLM
from llamaindex_toolstream._tools import REJECTED_TOOL_NAME

pytestmark = THIRD_PARTY_WARNINGS


WRITE = {"path": "/tmp/notes.txt",
         "content": 'Shopping list:\n- "fresh" bread\n- tea\tgreen\nC:\\temp is not a path here.\n'}


async def _both(api: str, scenario: str, emu: VendorEmulator,
                **recorder_kw: Any) -> tuple[Outcome, Outcome]:
    """(stock, toolstream) outcomes of one scenario."""
    outcomes = []
    for cls in (FunctionAgent, ToolstreamFunctionAgent):
        recorder = Recorder(**recorder_kw)
        agent = cls(tools=recorder.tools(), llm=make_llm(api, emu.base_url))
        emu.queue(api, scenario)
        outcomes.append(await run_agent(agent, recorder, emu))
    return outcomes[0], outcomes[1]


def _error_contents(outcome: Outcome) -> list[str]:
    return [str(m.content) for m in outcome.tool_messages]


# -- happy path ----------------------------------------------------------------------------------

HAPPY = {
    "single_call": [("write_file", WRITE)],
    "parallel_calls": [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})],
    "no_args": [("get_time", {})],
}


@pytest.mark.parametrize("scenario", sorted(HAPPY))
@pytest.mark.parametrize("api", APIS)
async def test_happy_path_runs_every_call_once(api: str, scenario: str,
                                               emu: VendorEmulator) -> None:
    stock, ours = await _both(api, scenario, emu)
    assert ours.error is None
    assert ours.runs == HAPPY[scenario]
    assert ours.requests == 2 and "All done" in str(ours.result)
    assert unpaired(ours.memory) == []
    # Stock: the same, except OpenAI chat's interleaved parallel calls (index 0, 1, 0, 1...):
    # its merge-by-last-index builds four partial calls, runs none, and the next request is
    # the vendor's 400 ("must be followed by tool messages").
    if (api, scenario) == ("openai-chat", "parallel_calls"):
        assert stock.runs == [] and "400" in str(stock.error)
    else:
        assert stock.runs == HAPPY[scenario] and stock.error is None


# -- the stream ends without proof -------------------------------------------------------------

#: Stock outcome per API for a call cut at {"path":"/tmp/a by the max-token limit.
STOCK_TRUNCATED = {
    "openai-chat": [("write_file", {"path": None, "content": ""})],  # parse_partial_json repair
    "openai-responses": [],  # its last chunk (response.incomplete) carries no tool-call block
    "anthropic": [("write_file", {"path": None, "content": ""})],
    "gemini": [],  # its LLM class raises "Response was terminated early: MAX_TOKENS"
}


@pytest.mark.parametrize("api", APIS)
async def test_truncated_length_never_runs(api: str, emu: VendorEmulator) -> None:
    stock, ours = await _both(api, "truncated_length", emu)
    assert stock.runs == STOCK_TRUNCATED[api]
    assert (stock.error is not None) == (api == "gemini")

    assert ours.runs == []
    assert ours.error is None  # the model is told, and may retry; the run goes on
    assert ours.requests == 2  # the next vendor request was accepted: no 400
    [content] = _error_contents(ours)
    assert "cut off" in content and "[stream_truncated]" in content and "not found" not in content
    assert unpaired(ours.memory) == []


#: Stock runs a call whose arguments parse even though the vendor never ended the turn.
STOCK_NO_FINISH = {api: [("write_file", WRITE)] for api in APIS} | {"openai-responses": []}


@pytest.mark.parametrize("api", APIS)
async def test_no_finish_signal_never_runs(api: str, emu: VendorEmulator) -> None:
    stock, ours = await _both(api, "no_finish", emu)
    assert stock.runs == STOCK_NO_FINISH[api]
    assert ours.runs == [] and ours.error is None and ours.requests == 2
    [content] = _error_contents(ours)
    assert "[stream_truncated]" in content
    assert unpaired(ours.memory) == []


@pytest.mark.parametrize("scenario", ["dropped_connection", "error_event"])
@pytest.mark.parametrize("api", APIS)
async def test_transport_and_vendor_errors_are_answered_and_run_nothing(
    api: str, scenario: str, emu: VendorEmulator
) -> None:
    # Stock raises the SDK's error (RemoteProtocolError / ClientPayloadError / APIError ...)
    # and runs nothing. The gate answers the call in flight with its error and the agent goes
    # on, as create_agent + ToolstreamMiddleware does (DESIGN 6: on_stream_error="pair").
    stock, ours = await _both(api, scenario, emu)
    assert stock.runs == [] and stock.error is not None
    assert ours.runs == [] and ours.error is None and ours.requests == 2
    assert unpaired(ours.memory) == []
    rejected = [e for e in ours.events if type(e).__name__ == "CallRejectedEvent"]
    # the vendor's error event arrives as an SDK exception; the shim hands it back to the core
    expected = "upstream_error" if scenario == "error_event" else "stream_truncated"
    assert [(e.tool_name, e.reason) for e in rejected] == [("write_file", expected)]
    [content] = _error_contents(ours)
    assert f"[{expected}]" in content


@pytest.mark.parametrize("api", ["openai-chat", "anthropic"])
async def test_transport_errors_raise_on_request(api: str, emu: VendorEmulator) -> None:
    recorder = Recorder()
    agent = ToolstreamFunctionAgent(tools=recorder.tools(), llm=make_llm(api, emu.base_url),
                                    on_stream_error="raise")
    emu.queue(api, "dropped_connection")
    outcome = await run_agent(agent, recorder, emu)
    assert outcome.runs == [] and outcome.error is not None and outcome.requests == 1
    assert unpaired(outcome.memory) == []


# -- identity faults -----------------------------------------------------------------------------

#: Stock on a whole call sent twice: OpenAI chat concatenates {..}{..}, parse_partial_json
#: fails, get_weather is called with {} and fails; Responses and Gemini run it twice.
STOCK_DUPLICATE = {
    "openai-chat": [],
    "openai-responses": [("get_weather", {"city": "Paris"})] * 2,
    "anthropic": [("get_weather", {"city": "Paris"})],
    "gemini": [("get_weather", {"city": "Paris"})] * 2,
}


@pytest.mark.parametrize("api", APIS)
async def test_resent_duplicate_runs_once(api: str, emu: VendorEmulator) -> None:
    stock, ours = await _both(api, "resent_duplicate", emu)
    assert stock.runs == STOCK_DUPLICATE[api]
    assert ours.runs == [("get_weather", {"city": "Paris"})]
    assert ours.requests == 2 and unpaired(ours.memory) == []
    assert len(ours.tool_messages) == 1


async def test_missing_index_keeps_calls_apart(emu: VendorEmulator) -> None:
    # Stock merges the two index-less calls into one garbled call and runs nothing.
    stock, ours = await _both("openai-chat", "missing_index", emu)
    assert stock.runs == []
    assert ours.runs == [("get_weather", {"city": "Paris"}), ("write_file", WRITE)]
    assert ours.requests == 2 and unpaired(ours.memory) == []


# -- arguments that are not valid ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "fragments", "stock_runs", "reason"),
    [
        # parse_partial_json fails -> stock uses {} and runs get_time() anyway
        ("get_time", ['{"tz": "UT', 'C",}'], [("get_time", {})], "invalid_json"),
        # duplicate keys: stock keeps the last value
        ("get_weather", ['{"city": "Paris", ', '"city": "Rome"}'],
         [("get_weather", {"city": "Rome"})], "invalid_json"),
        # valid JSON, wrong type: stock runs get_weather(city=42)
        ("get_weather", ['{"city"', ": 42}"], [("get_weather", {"city": 42})], "schema_violation"),
    ],
)
async def test_invalid_arguments_are_answered_not_run(
    name: str, fragments: list[str], stock_runs: list[Any], reason: str,
    emu: VendorEmulator,
) -> None:
    outcomes = []
    for cls in (FunctionAgent, ToolstreamFunctionAgent):
        recorder = Recorder()
        with scripted_chat(emu, [("call_bad", name, fragments)]) as server:
            llm = OpenAI(model="gpt-4o-mini", api_key="test", api_base=server.base_url + "/v1",
                         max_retries=0)
            outcome = await run_agent(cls(tools=recorder.tools(), llm=llm), recorder)
            outcomes.append((outcome, list(server.statuses)))
    (stock, _), (ours, statuses) = outcomes
    assert stock.runs == stock_runs
    assert ours.runs == []
    assert statuses == [200, 200]  # the follow-up request pairs call_bad: no 400
    [message] = ours.tool_messages
    assert message.additional_kwargs["tool_call_id"] == "call_bad"
    assert f"[{reason}]" in str(message.content)


# -- pairing gaps of the stock agent ------------------------------------------------------------


@pytest.mark.parametrize("api", ["openai-responses", "anthropic", "gemini"])
async def test_parallel_call_beside_return_direct_is_paired(
    api: str, emu: VendorEmulator
) -> None:
    # get_weather is return_direct and called twice in one turn. Stock records the first
    # result, stops, and the second call id stays unanswered in memory: the next run's first
    # request is the vendor's 400.
    stock, ours = await _both(api, "parallel_calls", emu,
                              return_direct=frozenset({"get_weather"}))
    assert len(unpaired(stock.memory)) == 1
    assert len(unpaired(ours.memory)) == 0
    assert len(ours.runs) == 2 and str(ours.result).startswith("sunny in")


@pytest.mark.parametrize("api", ["openai-chat", "anthropic"])
async def test_cancel_during_tools_leaves_history_usable(
    api: str, emu: VendorEmulator
) -> None:
    # cancel_run() while write_file runs. Stock leaves the assistant message with the call in
    # the context's scratchpad, unanswered: re-running on the same context sends it and gets
    # the vendor's 400. The shim answers it ("cancelled") before the history is used again.
    results = {}
    for cls in (FunctionAgent, ToolstreamFunctionAgent):
        recorder = Recorder(delay=5.0)
        agent = cls(tools=recorder.tools(), llm=make_llm(api, emu.base_url))
        emu.queue(api, "single_call")
        handler = agent.run(user_msg="go")
        async for event in handler.stream_events():
            if isinstance(event, ToolCall):
                await handler.cancel_run()
                break
        with pytest.raises(BaseException):  # noqa: B017 - the cancelled run ends either way
            await asyncio.wait_for(handler, 5)
        again = await run_agent(agent, Recorder(), emu, user_msg="again",
                                ctx=handler.ctx)
        results[cls] = again
    stock, ours = results[FunctionAgent], results[ToolstreamFunctionAgent]
    assert stock.error is not None and "400" in str(stock.error)
    assert ours.error is None and ours.requests == 1
    # the conversation goes on whole: the first message, the cancelled call answered, then "again"
    sent = [str(m.content) for m in ours.memory if m.role == "user"]
    assert sent == ["go", "again"]
    assert unpaired(ours.memory) == []
    cancelled = [m for m in ours.tool_messages if "[cancelled]" in str(m.content)]
    assert len(cancelled) == 1


async def test_cancel_during_stream_records_no_call(emu: VendorEmulator) -> None:
    recorder = Recorder()
    agent = ToolstreamFunctionAgent(tools=recorder.tools(),
                                    llm=make_llm("anthropic", emu.base_url))
    emu.queue("anthropic", "large_args")
    handler = agent.run(user_msg="go")
    async for event in handler.stream_events():
        if type(event).__name__ == "CallProgressEvent":
            await handler.cancel_run()
            break
    with pytest.raises(BaseException):  # noqa: B017
        await asyncio.wait_for(handler, 5)
    memory = await handler.ctx.store.get("memory")
    scratchpad = await handler.ctx.store.get("scratchpad", default=[])
    assert recorder.runs == []
    assert unpaired([*(await memory.aget_all()), *scratchpad]) == []


# -- drop-in shape -------------------------------------------------------------------------------


def test_drop_in_constructor_and_hidden_responder(emu: VendorEmulator) -> None:
    recorder = Recorder()
    agent = ToolstreamFunctionAgent(
        name="writer", description="writes", system_prompt="be brief",
        tools=recorder.tools(), llm=make_llm("openai-chat", emu.base_url),
        config={"mode": "strict", "max_tool_argument_bytes": 1024},
    )
    assert isinstance(agent.llm, ToolstreamLLM)
    assert agent.llm.config.max_tool_argument_bytes == 1024
    assert REJECTED_TOOL_NAME in [t.metadata.name for t in agent.tools or []]
    for option in ({"config": {"mode": "lenient"}}, {"history": "repair"},
                   {"on_stream_error": "raise"}, {"on_turn": print}):
        with pytest.raises(ValueError, match=f"give {next(iter(option))}= to ToolstreamLLM"):
            ToolstreamFunctionAgent(tools=recorder.tools(), llm=agent.llm, **option)


async def test_oversized_arguments_are_answered(emu: VendorEmulator) -> None:
    # Stock runs write_file with the whole 200 KB; a 64 KB cap makes the shim refuse it.
    recorder = Recorder()
    agent = ToolstreamFunctionAgent(tools=recorder.tools(),
                                    llm=make_llm("openai-chat", emu.base_url),
                                    config={"max_tool_argument_bytes": 65536})
    emu.queue("openai-chat", "large_args")
    outcome = await run_agent(agent, recorder, emu)
    assert outcome.runs == [] and outcome.requests == 2
    [message] = outcome.tool_messages
    assert "[arguments_exceed_max_bytes]" in str(message.content)


@pytest.mark.parametrize("api", ["openai-chat", "anthropic"])
async def test_toolstream_llm_under_the_stock_agent_stays_legal(
    api: str, emu: VendorEmulator
) -> None:
    # Only the LLM swapped: the stock agent gets committed calls only, and the message it
    # stores carries only those, so nothing is left unanswered (the model is not told why;
    # ToolstreamFunctionAgent does that).
    recorder = Recorder()
    agent = FunctionAgent(tools=recorder.tools(),
                          llm=ToolstreamLLM(make_llm(api, emu.base_url)))
    emu.queue(api, "truncated_length")
    outcome = await run_agent(agent, recorder, emu)
    assert outcome.runs == [] and outcome.error is None
    assert unpaired(outcome.memory) == []
    emu.queue(api, "single_call")
    again = await run_agent(agent, recorder, emu, user_msg="again")
    assert again.error is None and again.runs == [("write_file", WRITE)]


@pytest.mark.parametrize("api", ["openai-chat", "anthropic"])
async def test_non_streaming_agent_is_gated_too(api: str,
                                                emu: VendorEmulator) -> None:
    # streaming=False: whole responses go through the same proof. On OpenAI chat the
    # emulator's non-streamed answer keeps the cut arguments with finish_reason "length":
    # stock repairs them to {"path": None} and runs write_file. (Anthropic's whole message
    # cannot hold partial JSON, so the cut call is simply absent there.)
    stock_recorder, recorder = Recorder(), Recorder()
    stock = FunctionAgent(tools=stock_recorder.tools(), streaming=False,
                          llm=make_llm(api, emu.base_url))
    emu.queue(api, "truncated_length")
    stock_outcome = await run_agent(stock, stock_recorder, emu)
    ours = ToolstreamFunctionAgent(tools=recorder.tools(), streaming=False,
                                   llm=make_llm(api, emu.base_url))
    emu.queue(api, "truncated_length")
    outcome = await run_agent(ours, recorder, emu)
    if api == "openai-chat":
        assert stock_outcome.runs == [("write_file", {"path": None, "content": ""})]
        [message] = outcome.tool_messages
        assert "[stream_truncated]" in str(message.content)
    else:
        assert stock_outcome.runs == []
    assert outcome.runs == [] and outcome.error is None
    assert unpaired(outcome.memory) == []
