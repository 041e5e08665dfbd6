"""Every bundled cassette, replayed offline through a gated ``create_agent``.

The cassettes (``cassettes/<api>/<scenario>.yaml``) hold the vendor's streamed answer and the
plain-text answer to the agent's follow-up request; the real SDK clients read them through
vcrpy at the vendors' default URLs (``@pytest.mark.toolstream_cassette``, the project's pytest
plugin). The outcome each scenario must have is the emulator's own ``SCENARIOS[...].expect``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from lc_util import Recorder, ai_messages, assert_history_paired, make_model, recording_tools
from lc_util import tool_messages as tool_msgs
from toolstream_core.testing import SCENARIOS

from langchain_toolstream import ToolstreamMiddleware

CASSETTES = Path(__file__).resolve().parents[2] / "cassettes"


def _cases() -> list[Any]:
    cases = []
    for path in sorted(CASSETTES.glob("*/*.yaml")):
        api, scenario = path.parent.name, path.stem
        if scenario not in SCENARIOS:
            continue
        cases.append(pytest.param(api, scenario, id=f"{api}/{scenario}",
                                  marks=pytest.mark.toolstream_cassette(f"{api}/{scenario}")))
    return cases


CASES = _cases()


def test_every_api_has_cassettes() -> None:
    apis = {case.values[0] for case in CASES}
    assert apis == {"openai-chat", "openai-responses", "anthropic", "gemini",
                    "bedrock-converse", "ollama", "cohere"}
    assert len(CASES) >= 40


@pytest.mark.parametrize(("api", "scenario"), CASES)
def test_cassette_through_a_gated_agent(api: str, scenario: str, toolstream_cassette: Any) -> None:
    expect = SCENARIOS[scenario].expect
    recorder = Recorder()
    agent = create_agent(make_model(api), tools=recording_tools(recorder),
                         middleware=[ToolstreamMiddleware(max_retries=1)])
    messages = agent.invoke({"messages": [HumanMessage("Write the notes file.")]})["messages"]

    assert sorted(recorder.names) == sorted(expect.committed)  # only committed calls ran
    first = ai_messages(messages)[0]
    assert [c["name"] for c in first.invalid_tool_calls] == list(expect.rejected)
    assert {c["error"] for c in first.invalid_tool_calls} <= set(expect.reasons)
    errors = [m for m in tool_msgs(messages) if m.status == "error"]
    assert [m.tool_call_id for m in errors] == [c["id"] for c in first.invalid_tool_calls]
    assert first.response_metadata["toolstream"]["complete"] is expect.complete
    assert_history_paired(messages)
    assert toolstream_cassette.all_played  # the follow-up request was made, and accepted
    assert messages[-1].text
