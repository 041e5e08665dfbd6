"""The LangChain half of the shim mapping (docs/shims.md), checked where LlamaIndex is absent too.

``tests/llamaindex/test_li_mirror.py`` compares both shims on the same stream; this file keeps
the LangChain side covered in the latest env: the typed record survives JSON, ``on_event``
sees the core's events, wrapping twice raises, a YAML path is a config.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from lc_util import make_model
from toolstream_core import (
    AssembleConfig,
    AssemblerEvent,
    CallCommitted,
    CallOpened,
    CallRejected,
    Turn,
)
from toolstream_core.testing import TOOLS, VendorEmulator

from langchain_toolstream import (
    error_tool_messages,
    message_with_rejected_calls,
    pair_orphan_calls,
    read_record,
    with_toolstream,
)

TOOL_DICTS = [
    {"type": "function", "function": {"name": n, "description": n, "parameters": s}}
    for n, s in TOOLS.items()
]


@pytest.mark.parametrize("scenario", ["single_call", "truncated_length"])
def test_on_event_and_on_turn_see_the_decision_the_record_keeps(
    api: str, emu: VendorEmulator, scenario: str
) -> None:
    events: list[AssemblerEvent] = []
    turns: list[Turn] = []
    emu.queue(api, scenario)
    gated = with_toolstream(make_model(api, emu), on_stream_error="pair",
                            on_event=events.append, on_turn=turns.append)
    ai = gated.bind_tools(TOOL_DICTS).invoke("go")
    assert isinstance(ai, AIMessage)
    record = read_record(ai)
    assert record is not None and record["version"] == 1
    [turn] = turns
    opened = [e for e in events if isinstance(e, CallOpened)]
    committed = [e.call.id for e in events if isinstance(e, CallCommitted)]
    rejected = [e.call.id for e in events if isinstance(e, CallRejected)]
    assert len(opened) == len(turn.calls) >= 1
    assert committed == [c["id"] for c in record["committed"]] == [c.id for c in turn.committed]
    assert rejected == [c["id"] for c in record["rejected"]] == [c.id for c in turn.rejected]
    assert bool(rejected) == (scenario == "truncated_length")


def test_record_and_pairing_survive_a_json_round_trip(api: str, emu: VendorEmulator) -> None:
    emu.queue(api, "truncated_length")
    ai = with_toolstream(make_model(api, emu), on_stream_error="pair").bind_tools(
        TOOL_DICTS).invoke("go")
    back = AIMessage.model_validate_json(ai.model_dump_json())
    record = read_record(back)
    assert record is not None and record == read_record(ai)
    [entry] = record["rejected"]
    assert entry["tool_call_id"] == entry["id"] and entry["content"]
    errors = error_tool_messages(back)
    assert [(m.tool_call_id, m.content) for m in errors] == [(entry["id"], entry["content"])]
    # The returned message is already in its every-call form.
    assert message_with_rejected_calls(back) == back
    # A history that forgot the error results is repaired with the gate's own text.
    repaired = pair_orphan_calls([back])
    assert [(m.tool_call_id, m.content) for m in repaired[1:]] == [(entry["id"], entry["content"])]


def test_wrapping_an_already_gated_model_raises(emu: VendorEmulator) -> None:
    gated = with_toolstream(make_model("openai-chat", emu))
    with pytest.raises(TypeError, match="already gated by toolstream"):
        with_toolstream(gated)
    with pytest.raises(TypeError, match="already gated by toolstream"):
        with_toolstream(gated.bind_tools(TOOL_DICTS))  # type: ignore[call-overload]


@pytest.mark.parametrize("as_text", [False, True])
def test_a_yaml_path_is_a_config(tmp_path: Path, emu: VendorEmulator, as_text: bool) -> None:
    path = tmp_path / "toolstream.yaml"
    path.write_text("agent_stream_assemble:\n  max_tool_argument_bytes: 999\n", encoding="utf-8")
    given: Any = str(path) if as_text else path
    gated = with_toolstream(make_model("openai-chat", emu), config=given)
    assert gated.toolstream_config == AssembleConfig(max_tool_argument_bytes=999)


def _idless_record() -> dict[str, Any]:
    """A record whose rejected call arrived without an id (Gemini sends none): ``id`` is
    ``None`` and its error result answers the core's synthesized ``tool_call_id``, the shape
    ``toolstream_core._decision.RejectedEntry`` documents."""
    return {
        "version": 1, "mode": "tap", "provider": "gemini", "complete": False,
        "finish_reason": "MAX_TOKENS", "error": None, "committed": [],
        "rejected": [{"id": None, "name": "write_file", "tool_call_id": "toolstream_0",
                      "kind": "function", "output_type": None, "reason": "stream_truncated",
                      "detail": None, "args": "{}", "state": "failed",
                      "content": "Tool call 'write_file' was not run [stream_truncated]"}],
        "dropped": [], "server_calls": [], "anomalies": 0, "order": ["toolstream_0"],
    }


def test_a_rejected_call_without_an_id_is_answered_by_the_id_its_error_carries() -> None:
    """``error_tool_messages`` and the history plan read the same id off the record: before
    the record was read once (``RecordView``), one keyed on ``id`` and the other on
    ``tool_call_id``, so this history raised ``KeyError``."""
    ai = AIMessage(content="", response_metadata={"toolstream": _idless_record()})
    [error] = error_tool_messages(ai)
    assert error.tool_call_id == "toolstream_0" and "[stream_truncated]" in error.text
    full = message_with_rejected_calls(ai)
    assert [c["id"] for c in full.invalid_tool_calls] == ["toolstream_0"]  # type: ignore[attr-defined]
    history = pair_orphan_calls([HumanMessage("go"), full])
    assert [m.tool_call_id for m in history[2:]] == ["toolstream_0"]  # type: ignore[attr-defined]
    assert history[2].text == error.text
