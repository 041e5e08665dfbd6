"""The LlamaIndex shim against OpenAI-compatible servers (issue 13.4): every profile x scenario.

LlamaIndex's ``OpenAI(api_base=<emulator with that server's profile>)`` drives the real OpenAI
SDK (``OpenAILike`` is the same class with the model checks relaxed; it is not installed
here). ``ToolstreamFunctionAgent`` runs tools that record what they are asked to do;
``ToolstreamLLM`` is checked on its own through ``astream_chat`` and
``get_tool_calls_from_response``. On every server: no tool runs on a call the stream did not
prove, and the next request is legal (the emulator answers an unpaired history with OpenAI's
400, which would fail the run).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from li_helpers import Recorder, run_agent, unpaired
from llama_index.core.llms import ChatMessage
from llama_index.llms.openai import OpenAI
from profile_util import profile_emulators, proven, sorted_calls
from toolstream_core.testing import PROFILES, SCENARIOS, TOOLS, VendorEmulator

from llamaindex_toolstream import ToolstreamFunctionAgent, ToolstreamLLM

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning:inspect")]

CHAT = [n for n, s in SCENARIOS.items() if "openai-chat" in s.apis]
CASES = [(p, n) for p in PROFILES for n in CHAT]
IDS = [f"{p}-{n}" for p, n in CASES]


@pytest.fixture(scope="module")
def emus() -> Iterator[dict[str, VendorEmulator]]:
    with profile_emulators() as started:
        yield started


def llm(emu: VendorEmulator) -> OpenAI:
    return OpenAI(model="gpt-4o-mini", api_key="test", api_base=emu.base_url + "/v1",
                  max_retries=0, max_tokens=777)


@pytest.mark.parametrize(("profile", "scenario"), CASES, ids=IDS)
async def test_agent_runs_only_proven_calls_and_the_next_request_is_legal(
        emus: dict[str, VendorEmulator], profile: str, scenario: str) -> None:
    emu = emus[profile]
    emu.clear()
    recorder = Recorder()
    agent = ToolstreamFunctionAgent(tools=recorder.tools(), llm=llm(emu))
    emu.queue("openai-chat", scenario)  # then "text": the run ends after one round of tools
    outcome = await run_agent(agent, recorder, emu)
    assert sorted_calls(outcome.runs) == sorted_calls(proven(scenario))
    assert unpaired(outcome.memory) == []
    # A stream that breaks mid-call is answered and the agent goes on (on_stream_error="pair").
    assert outcome.error is None, outcome.error
    expect = SCENARIOS[scenario].expect  # a turn with calls has a follow-up, accepted
    assert outcome.requests == (2 if expect.committed or expect.rejected else 1)


@pytest.mark.parametrize(("profile", "scenario"), CASES, ids=IDS)
async def test_llm_hands_out_only_committed_calls(
        emus: dict[str, VendorEmulator], profile: str, scenario: str) -> None:
    emu = emus[profile]
    emu.clear()
    emu.queue("openai-chat", scenario)
    recorder = Recorder()
    gated = ToolstreamLLM(llm(emu), tools=TOOLS)
    response = None
    stream = await gated.astream_chat_with_tools(
        recorder.tools(), chat_history=[ChatMessage(role="user", content="go")])
    async for item in stream:  # a broken stream ends with its calls rejected, not raised
        response = item
    assert response is not None
    selected = gated.get_tool_calls_from_response(response, error_on_no_tool_call=False)
    got = [(s.tool_name, dict(s.tool_kwargs)) for s in selected]
    for name, args in got:
        if name == "write_file":
            args.setdefault("content", "")
    assert sorted_calls(got) == sorted_calls(proven(scenario))


OBJECT_ARGUMENTS = "litellm-ollama"  # the profile whose tool-call arguments are JSON objects


@pytest.mark.parametrize("scenario", ["parallel_calls", "resent_duplicate"])
async def test_plain_llamaindex_breaks_on_object_arguments_that_the_gate_commits(
        emus: dict[str, VendorEmulator], scenario: str) -> None:
    """Why the tap hands LlamaIndex a copy: its stream merge adds the two objects.

    Every call here is at index 0, so the second call's arguments are merged into the first
    (``dict += dict``). The gated run of the same stream commits the scenario's calls.
    """
    emu = emus[OBJECT_ARGUMENTS]
    emu.clear()
    emu.queue("openai-chat", scenario)
    recorder = Recorder()
    plain = llm(emu)
    history = [ChatMessage(role="user", content="go")]
    with pytest.raises(TypeError, match=r"\+=: 'dict' and 'dict'"):
        async for _ in await plain.astream_chat_with_tools(recorder.tools(), chat_history=history):
            pass
    emu.queue("openai-chat", scenario)
    gated = ToolstreamLLM(plain, tools=TOOLS)
    response = None
    async for item in await gated.astream_chat_with_tools(recorder.tools(), chat_history=history):
        response = item
    assert response is not None
    got = [(s.tool_name, dict(s.tool_kwargs)) for s in gated.get_tool_calls_from_response(response)]
    assert sorted_calls(got) == sorted_calls(proven(scenario))
