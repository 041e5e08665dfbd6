"""A sensitive tool in a LlamaIndex agent: the workflow's call events, their AG-UI form, the
trace and the shim's logs carry no argument text of it; the tool itself runs with it.

A scripted Chat Completions server streams ``login(password=<canary>)`` (committed, or with a
duplicate key whose parse message quotes the canary) to the real ``llama_index`` OpenAI class
inside a real ``ToolstreamFunctionAgent``.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from li_scripted import scripted_chat
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai import OpenAI
from otel_util import span_exporter, turn_spans
from toolstream_core.agui import AGUIToolCallEvents
from toolstream_core.testing import VendorEmulator

from llamaindex_toolstream import (
    CallCommittedEvent,
    CallProgressEvent,
    CallRejectedEvent,
    CallStreamEvent,
    ToolstreamFunctionAgent,
    ToolstreamStreamHandler,
)

CANARY = "canary-li-5d2e-SECRET"
ARGUMENTS = {"committed": json.dumps({"password": CANARY, "user": "ada"}),
             "unparseable": f'{{"{CANARY}": 1, "{CANARY}": 2}}'}


def _pieces(text: str) -> list[str]:
    return [text[i:i + 6] for i in range(0, len(text), 6)]


@pytest.mark.parametrize("outcome", ARGUMENTS)
@pytest.mark.parametrize("sensitive", [False, True], ids=["default", "sensitive"])
async def test_sensitive_tool_events_carry_no_argument_text(
        outcome: str, sensitive: bool, caplog: pytest.LogCaptureFixture, emu: VendorEmulator) -> None:
    ran: list[dict[str, Any]] = []

    def login(password: str, user: str = "") -> str:
        """Log in."""
        ran.append({"password": password, "user": user})
        return "ok"

    spans = span_exporter()
    caplog.set_level(logging.DEBUG)
    config = {"sensitive_tools": ["login"]} if sensitive else {}
    with scripted_chat(emu, [("call_1", "login", _pieces(ARGUMENTS[outcome]))]) as server:
        agent = ToolstreamFunctionAgent(
            tools=[FunctionTool.from_defaults(login)], config=config,
            llm=OpenAI(model="gpt-4o-mini", api_key="test", api_base=server.base_url + "/v1",
                       max_retries=0))
        handler = agent.run(user_msg="log me in")
        events = [e async for e in ToolstreamStreamHandler(handler)]
        await handler

    calls = [e for e in events if isinstance(e, CallStreamEvent)]
    agui = AGUIToolCallEvents()
    for event in calls:
        agui(event)
    seen = [e.model_dump_json() for e in calls] + [e.model_dump_json(by_alias=True) for e in agui.events]
    fragments = "".join(e.fragment or "" for e in calls if isinstance(e, CallProgressEvent))
    seen.append(fragments)
    if outcome == "committed":
        assert ran == [{"password": CANARY, "user": "ada"}]  # the tool gets the real arguments
        [committed] = [e for e in calls if isinstance(e, CallCommittedEvent)]
        assert committed.sensitive is sensitive
        assert committed.tool_kwargs == (None if sensitive else {"password": CANARY, "user": "ada"})
    else:
        assert ran == []
        [rejected] = [e for e in calls if isinstance(e, CallRejectedEvent)]
        assert rejected.reason == "invalid_json" and rejected.sensitive is sensitive
        assert (CANARY in rejected.content) is not sensitive  # what the model was told
    assert any(CANARY in text for text in seen) is not sensitive
    assert (CANARY in fragments) is not sensitive
    # content capture is off by default: no span holds it, sensitive or not
    span_text = json.dumps([[dict(e.attributes or {}) for e in s.events] for s in turn_spans(spans)])
    assert turn_spans(spans) and CANARY not in span_text
    ours = [r for r in caplog.records if r.name.startswith(("toolstream", "llamaindex_toolstream"))]
    assert not any(CANARY in r.getMessage() + repr(r.args) for r in ours)
