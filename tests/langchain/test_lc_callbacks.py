"""``ToolstreamCallbackHandler``: progress events per run, for gated and plain models."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
from lc_util import aggregate, make_model
from toolstream_core import ArgumentsDelta, CallCommitted, CallOpened, CallRejected
from toolstream_core.testing import TOOLS, VendorEmulator

from langchain_toolstream import ToolstreamCallbackHandler, with_toolstream

TOOL_DICTS = [
    {"type": "function", "function": {"name": n, "description": n, "parameters": s}}
    for n, s in TOOLS.items()
]


class Events:
    """An ``on_event`` that records each event with the run the handler says it belongs to."""

    def __init__(self) -> None:
        self.items: list[tuple[UUID | None, Any]] = []
        self.handler: ToolstreamCallbackHandler | None = None

    def watch(self, handler: ToolstreamCallbackHandler) -> ToolstreamCallbackHandler:
        self.handler = handler
        return handler

    def __call__(self, event: Any) -> None:
        assert self.handler is not None
        self.items.append((self.handler.run_id, event))

    def kinds(self) -> list[str]:
        out: list[str] = []
        for _, event in self.items:
            name = type(event).__name__
            if not (out and out[-1] == name == "ArgumentsDelta"):
                out.append(name)
        return out


@pytest.mark.parametrize("style", ["invoke", "stream"])
def test_gated_run_reports_the_cores_events(api: str, style: str, emu: VendorEmulator) -> None:
    events = Events()
    handler = events.watch(ToolstreamCallbackHandler(events))
    gated = with_toolstream(make_model(api, emu)).bind_tools(TOOL_DICTS)
    emu.queue(api, "single_call")
    config: Any = {"callbacks": [handler]}
    message = (gated.invoke("x", config) if style == "invoke"
               else aggregate(list(gated.stream("x", config))))
    assert events.kinds() == ["CallOpened", "ArgumentsDelta", "CallCommitted"]
    [run_id] = {rid for rid, _ in events.items}
    stats = handler.stats[run_id]
    assert stats.gated and stats.opened == 1 and stats.committed == 1 and stats.rejected == 0
    committed = events.items[-1][1]
    assert isinstance(committed, CallCommitted)
    assert committed.call.arguments == message.tool_calls[0]["args"]
    assert stats.argument_bytes == len(committed.call.raw_arguments.encode("utf-8"))
    deltas = [e for _, e in events.items if isinstance(e, ArgumentsDelta)]
    if api == "gemini":  # structured arguments: one delta, their compact JSON (DESIGN §3, issue 9)
        assert [(d.fragment, d.total_bytes) for d in deltas] == [(committed.call.raw_arguments,
                                                                  stats.argument_bytes)]
    else:  # the UI sees exactly the text the vendor streamed, fragment by fragment
        assert "".join(d.fragment or "" for d in deltas) == committed.call.raw_arguments
        assert len(deltas) > 1


def test_gated_rejection_is_reported_with_its_reason(emu: VendorEmulator) -> None:
    events = Events()
    handler = events.watch(ToolstreamCallbackHandler(events))
    emu.queue("anthropic", "truncated_length")
    with_toolstream(make_model("anthropic", emu)).bind_tools(TOOL_DICTS).invoke(
        "x", {"callbacks": [handler]})
    rejected = [e for _, e in events.items if isinstance(e, CallRejected)]
    assert [(e.call.name, str(e.call.reason)) for e in rejected] == [
        ("write_file", "stream_truncated")]
    [stats] = handler.stats.values()
    assert stats.reasons == {"stream_truncated": 1}


def test_plain_model_is_observed_without_changing_its_result(emu: VendorEmulator) -> None:
    # The handler on an ungated ChatOpenAI sees the same call commit from LangChain's chunks,
    # and the message plain LangChain returns is untouched (observing never gates).
    events = Events()
    handler = events.watch(ToolstreamCallbackHandler(events))
    emu.queue("openai-chat", "truncated_length")
    plain = make_model("openai-chat", emu).bind_tools(TOOL_DICTS)
    message = aggregate(list(plain.stream("x", {"callbacks": [handler]})))
    assert message.tool_calls[0]["args"] == {"path": "/tmp/a"}  # plain LangChain's repair
    kinds = events.kinds()
    assert kinds[0] == "CallOpened" and kinds[-1] == "CallRejected"
    rejected = events.items[-1][1]
    assert str(rejected.call.reason) == "stream_truncated"
    [stats] = handler.stats.values()
    assert stats.gated is False and stats.rejected == 1


def test_a_failing_ui_callback_never_breaks_the_model_call(emu: VendorEmulator) -> None:
    def broken(event: Any) -> None:
        raise RuntimeError("UI bug")

    emu.queue("gemini", "single_call")
    message = with_toolstream(make_model("gemini", emu)).bind_tools(TOOL_DICTS).invoke(
        "x", {"callbacks": [ToolstreamCallbackHandler(broken)]})
    assert [c["name"] for c in message.tool_calls] == ["write_file"]


def test_cancel_one_run_by_id(emu: VendorEmulator) -> None:
    events = Events()
    handler = events.watch(ToolstreamCallbackHandler(events))
    seen_runs: list[UUID] = []

    def cancel_when_opened(event: Any) -> None:
        events(event)
        run_id = handler.run_id  # the run this event belongs to, while the callback runs
        assert run_id is not None
        if isinstance(event, CallOpened) and run_id not in seen_runs:
            seen_runs.append(run_id)
            handler.cancel(run_id, reason="user pressed stop")

    handler.on_event = cancel_when_opened
    emu.queue("openai-responses", "large_args")
    message = with_toolstream(make_model("openai-responses", emu)).bind_tools(TOOL_DICTS).invoke(
        "x", {"callbacks": [handler]})
    assert message.tool_calls == []
    [bad] = message.invalid_tool_calls
    assert bad["error"] == "cancelled"
    assert message.response_metadata["toolstream"]["rejected"][0]["detail"] == "user pressed stop"
    deltas = [e for _, e in events.items if isinstance(e, ArgumentsDelta)]
    assert sum(len(e.fragment or "") for e in deltas) < 200_000  # it stopped reading early


def test_a_run_started_while_a_gated_chunk_is_handed_on_is_its_own(emu: VendorEmulator) -> None:
    # The gated run names the chunk it is handing on in the context; a plain model streamed
    # from the consumer's loop meanwhile (the same context) is observed as a plain run, not
    # bound to the gated one, and each run keeps its own events (decision 0118).
    events = Events()
    handler = events.watch(ToolstreamCallbackHandler(events))
    config: Any = {"callbacks": [handler]}
    gated = with_toolstream(make_model("openai-chat", emu)).bind_tools(TOOL_DICTS)
    plain = make_model("openai-chat", emu).bind_tools(TOOL_DICTS)
    emu.queue("openai-chat", "single_call")
    emu.queue("openai-chat", "truncated_length")
    chunks, inner = [], None
    for chunk in gated.stream("x", config):
        chunks.append(chunk)
        if inner is None:
            inner = aggregate(list(plain.stream("y", config)))
    assert inner is not None and inner.tool_calls[0]["args"] == {"path": "/tmp/a"}
    assert [c["name"] for c in aggregate(chunks).tool_calls] == ["write_file"]
    by_gated = {stats.gated: run_id for run_id, stats in handler.stats.items()}
    assert set(by_gated) == {True, False}
    gated_run, plain_run = by_gated[True], by_gated[False]
    assert handler.stats[gated_run].committed == 1 and handler.stats[gated_run].rejected == 0
    assert handler.stats[plain_run].rejected == 1 and handler.stats[plain_run].committed == 0
    assert {type(e).__name__ for rid, e in events.items if rid == plain_run} >= {"CallRejected"}
