"""Issue 28 item 4: a ReAct agent never runs an action from a turn the vendor did not finish.

The model's ReAct text is streamed by the emulator (``queue_body``: the real wire of OpenAI
chat and Anthropic, rendered by the emulator's own renderers), cut by the token limit inside
the "Action Input". Stock ``ReActAgent``'s parser falls back to a regex that keeps the keys it
can read, so it runs ``write_file(path="/tmp/notes.txt")`` with an empty content; the gated
agent answers the step with the reason and runs only the complete action.
"""

from __future__ import annotations

import json
import random
from types import ModuleType

import pytest
from li_helpers import THIRD_PARTY_WARNINGS, Recorder, make_llm, run_agent
from llama_index.core.agent.workflow import ReActAgent
from toolstream_core.testing import VendorEmulator, _wire_anthropic, _wire_openai_chat
from toolstream_core.testing._scenarios import Ending, Script

from llamaindex_toolstream import ToolstreamLLM, ToolstreamReActAgent

pytestmark = THIRD_PARTY_WARNINGS

CUT = ('Thought: I will save the note.\nAction: write_file\nAction Input: {"path": '
       '"/tmp/notes.txt", "content": "Dear {name}, the meeting moved to')
WHOLE = CUT + ' Friday."}'
ANSWER = "Thought: I can answer without using any more tools.\nAnswer: The note is saved."
WIRES: dict[str, ModuleType] = {"openai-chat": _wire_openai_chat, "anthropic": _wire_anthropic}
SAVED = ("write_file", {"path": "/tmp/notes.txt",
                        "content": "Dear {name}, the meeting moved to Friday."})


def _queue(emu: VendorEmulator, api: str, *turns: tuple[str, Ending],
           streaming: bool = True) -> None:
    """Each turn as the vendor sends a text answer ending ``length`` or ``stop``, streamed or
    whole."""
    for number, (text, ending) in enumerate(turns):
        script = Script("react", text, (), ending)
        if streaming:
            rendered = WIRES[api].render_stream(script, random.Random(number), "model", {})
            emu.queue_body(api, b"".join(rendered.frames))
        else:
            reply = WIRES[api].render_complete(script, random.Random(number), "model", {})
            emu.queue_body(api, json.dumps(reply.body).encode(),
                           headers={"Content-Type": "application/json"})


@pytest.mark.parametrize("api", list(WIRES))
@pytest.mark.parametrize("streaming", [True, False])
@pytest.mark.asyncio(loop_scope="session")
async def test_an_action_cut_by_the_token_limit_never_runs(emu: VendorEmulator, api: str,
                                                           streaming: bool) -> None:
    _queue(emu, api, (CUT, "length"), (WHOLE, "stop"), (ANSWER, "stop"), streaming=streaming)
    recorder = Recorder()
    agent = ToolstreamReActAgent(tools=recorder.tools(), llm=make_llm(api, emu.base_url),
                                 streaming=streaming)
    outcome = await run_agent(agent, recorder, emu)
    assert outcome.error is None, outcome.error
    assert recorder.runs == [SAVED]  # only the complete action ran
    assert emu.statuses == [200, 200, 200]
    retry = json.dumps(emu.requests[1].body)
    assert "[stream_truncated]" in retry and "was not run" in retry  # the step's answer


@pytest.mark.parametrize("api", list(WIRES))
@pytest.mark.asyncio(loop_scope="session")
async def test_stock_react_runs_what_its_parser_could_read(emu: VendorEmulator, api: str) -> None:
    """What the gate prevents: the cut action runs with the keys the fallback regex read."""
    _queue(emu, api, (CUT, "length"), (ANSWER, "stop"))
    recorder = Recorder()
    outcome = await run_agent(ReActAgent(tools=recorder.tools(), llm=make_llm(api, emu.base_url)),
                              recorder, emu)
    assert recorder.runs == [("write_file", {"path": "/tmp/notes.txt", "content": ""})]
    assert outcome.error is None


@pytest.mark.asyncio(loop_scope="session")
async def test_a_finished_action_runs_and_a_cut_answer_is_still_an_answer(
        emu: VendorEmulator) -> None:
    """Only actions are refused: an answer cut by the limit ends the run as a gated text
    answer does in every agent (nothing runs from it)."""
    _queue(emu, "openai-chat", (WHOLE, "stop"), (ANSWER[:-3], "length"))
    recorder = Recorder()
    agent = ToolstreamReActAgent(tools=recorder.tools(),
                                 llm=make_llm("openai-chat", emu.base_url))
    outcome = await run_agent(agent, recorder, emu)
    assert recorder.runs == [SAVED] and len(emu.requests) == 2
    assert "The note is sa" in str(outcome.result)


def test_the_agent_is_a_react_agent_with_its_arguments() -> None:
    with VendorEmulator() as emu:
        llm = make_llm("openai-chat", emu.base_url)
        agent = ToolstreamReActAgent(tools=Recorder().tools(), llm=llm, name="notes",
                                     system_prompt="Be brief.")
        assert isinstance(agent, ReActAgent) and isinstance(agent.llm, ToolstreamLLM)
        assert agent.name == "notes" and "Be brief." in (agent.formatter.context or "")
        gated = ToolstreamLLM(llm)
        assert ToolstreamReActAgent(tools=[], llm=gated).llm is gated
        with pytest.raises(ValueError, match="already gated"):
            ToolstreamReActAgent(tools=[], llm=gated, config={"mode": "strict"})


@pytest.mark.parametrize("setting", [{"max_tool_calls_per_run": 2},
                                     {"execute_before_stream_end": True}])
def test_a_setting_for_committed_calls_is_named_not_ignored(
        setting: dict[str, object], caplog: pytest.LogCaptureFixture) -> None:
    """The run budget and pipelining act on committed tool calls; a ReAct action is text.
    Given to this agent, the setting is named in a warning (the gate cannot apply it here)."""
    with VendorEmulator() as emu:
        llm = make_llm("openai-chat", emu.base_url)
        with caplog.at_level("WARNING", logger="llamaindex_toolstream._react"):
            ToolstreamReActAgent(tools=[], llm=llm, config=setting)
            ToolstreamReActAgent(tools=[], llm=llm)  # nothing set: nothing said
    [record] = caplog.records
    assert next(iter(setting)) in record.getMessage()
    assert "ToolstreamFunctionAgent" in record.getMessage()
