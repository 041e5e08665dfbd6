"""LlamaIndex's ``Cohere`` (Cohere's v1 chat, ``cohere.Client``) gated from its own wire:
the real class and the real cohere SDK against the emulator's ``/v1/chat``.

Complete parallel calls run exactly once with the vendor's arguments; a call cut by the
max-token stop, or by a stream without its ``stream-end``, never runs, and the follow-up the
agent sends answers it (the emulator refuses an unanswered call with a 400).
"""

from __future__ import annotations

from typing import Any

import pytest
from li_helpers import Recorder, make_llm, run_agent
from toolstream_core.testing import VendorEmulator, history_pairing

from llamaindex_toolstream import ToolstreamFunctionAgent, ToolstreamLLM, read_record

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning")]
pytest.importorskip("llama_index.llms.cohere")

PARALLEL = [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})]


def _cohere(base_url: str) -> Any:
    return make_llm("cohere", base_url)


def _v1_requests(emu: VendorEmulator) -> list[Any]:
    return [r for r in emu.requests if r.path == "/v1/chat"]


async def _run(scenario: str, streaming: bool, emu: VendorEmulator) -> Any:
    recorder = Recorder()
    agent = ToolstreamFunctionAgent(tools=recorder.tools(), llm=_cohere(emu.base_url),
                                    streaming=streaming)
    emu.queue("cohere", scenario)
    return await run_agent(agent, recorder, emu)


def test_the_class_is_read_as_cohere() -> None:
    assert ToolstreamLLM(_cohere("http://127.0.0.1:9")).provider == "cohere"


@pytest.mark.parametrize(("scenario", "expected"), [("parallel_calls", PARALLEL),
                                                    ("truncated_length", []),
                                                    ("no_finish", [])])
def test_sync_stream_through_the_llm(scenario: str, expected: list[Any],
                                     emu: VendorEmulator) -> None:
    """The sync twin, through ``ToolstreamLLM`` alone: LlamaIndex's stream yields text only,
    the calls come from the tapped v1 events."""
    gated = ToolstreamLLM(_cohere(emu.base_url))
    emu.queue("cohere", scenario)
    *_, last = gated.stream_chat_with_tools(Recorder().tools(), user_msg="go")
    selections = gated.get_tool_calls_from_response(last, error_on_no_tool_call=False)
    turn = gated.turn_of(last)
    assert turn is not None and read_record(last)["mode"] == "tap"  # type: ignore[index]
    assert ([(s.tool_name, s.tool_kwargs) for s in selections], len(turn.rejected)) == (
        expected, 0 if expected else 1)
    assert len(_v1_requests(emu)) == 1


@pytest.mark.parametrize("streaming", [True, False], ids=["stream", "whole"])
async def test_complete_parallel_calls_run_once(streaming: bool,
                                                emu: VendorEmulator) -> None:
    outcome = await _run("parallel_calls", streaming, emu)
    assert outcome.error is None, outcome.error
    assert outcome.runs == PARALLEL
    assert len(_v1_requests(emu)) == 2
    _assert_sent_paired(emu)


@pytest.mark.parametrize("scenario", ["truncated_length", "no_finish"])
async def test_unproven_call_never_runs_and_is_answered(
        scenario: str, emu: VendorEmulator) -> None:
    outcome = await _run(scenario, True, emu)
    assert outcome.error is None, outcome.error
    assert outcome.runs == []
    [message] = outcome.tool_messages
    assert "[stream_truncated]" in str(message.content)
    requests = _v1_requests(emu)
    assert len(requests) == 2  # the follow-up was sent, and accepted (answered)
    results = requests[-1].body.get("tool_results") or []
    assert [r["call"]["name"] for r in results] == ["write_file"]  # the cut call, answered
    _assert_sent_paired(emu)


def _assert_sent_paired(emu: VendorEmulator) -> None:
    """Every v1 request pairs each ``CHATBOT`` call with one tool result, both ways."""
    for received in _v1_requests(emu):
        assert history_pairing(received.api, received.body, path=received.path) == [], received.body


async def test_whole_cut_answer_runs_nothing(emu: VendorEmulator) -> None:
    outcome = await _run("truncated_length", False, emu)
    assert outcome.error is None, outcome.error
    assert outcome.runs == [] and outcome.tool_messages == []


async def test_a_turn_that_went_through_json_is_sent_as_the_class_needs(
        emu: VendorEmulator) -> None:
    """A saved context or a run a durable runtime recovered holds the turn's
    ``cohere.ToolCall`` objects as plain dicts, on which the class itself raises; the gate
    hands them back as objects, and the results pair with their calls."""
    from llama_index.core.base.llms.types import ChatMessage

    outcome = await _run("parallel_calls", True, emu)
    assert outcome.error is None and outcome.runs == PARALLEL
    turn = outcome.memory[:-1]  # the user's message, the calls, their results
    restored = [ChatMessage.model_validate_json(m.model_dump_json()) for m in turn]
    [calls] = [m.additional_kwargs["tool_calls"] for m in restored if m.role == "assistant"]
    assert all(isinstance(c, dict) for c in calls)  # what JSON leaves of them
    emu.queue("cohere", "text")
    *_, last = [r async for r in await ToolstreamLLM(_cohere(emu.base_url)).astream_chat(restored)]
    assert last.message.content
    sent = _v1_requests(emu)[-1]
    assert [r["call"]["name"] for r in sent.body["tool_results"]] == ["get_weather"] * 2
    _assert_sent_paired(emu)
