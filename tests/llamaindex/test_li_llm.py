"""ToolstreamLLM through the real LlamaIndex LLM classes and SDK clients, against the emulator.

Stock LlamaIndex on the same input, measured with the same classes: its
``get_tool_calls_from_response`` runs ``parse_partial_json`` on every call, so a stream cut at
``{"path":"/tmp/a`` yields ``{"path": None}`` (OpenAI chat, Anthropic) and the agent runs the tool.
"""

from __future__ import annotations

from typing import Any

import pytest
import toolstream_core._finalize as finalize_mod
from li_helpers import APIS, THIRD_PARTY_WARNINGS, Recorder, make_llm, tool_call_ids
from llama_index.core.base.llms.types import ToolCallBlock
from llama_index.core.llms import ChatMessage
from toolstream_core import CallState, Reason
from toolstream_core.testing import VendorEmulator

from llamaindex_toolstream import ToolstreamLLM, error_tool_messages, message_with_rejected_calls

pytestmark = THIRD_PARTY_WARNINGS


HAPPY: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "single_call": [("write_file", {
        "path": "/tmp/notes.txt",
        "content": 'Shopping list:\n- "fresh" bread\n- tea\tgreen\nC:\\temp is not a path here.\n'})],
    "parallel_calls": [("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})],
    "no_args": [("get_time", {})],
}


async def _stream(llm: ToolstreamLLM, tools: list[Any]) -> tuple[Any, list[int]]:
    """Drive a stream like FunctionAgent does: ask for tool calls on every chunk."""
    per_chunk: list[int] = []
    last = None
    gen = await llm.astream_chat_with_tools(tools, user_msg="go", allow_parallel_tool_calls=True)
    async for last in gen:
        per_chunk.append(len(llm.get_tool_calls_from_response(last, error_on_no_tool_call=False)))
    assert last is not None
    return last, per_chunk


@pytest.mark.parametrize("scenario", sorted(HAPPY))
@pytest.mark.parametrize("api", APIS)
async def test_happy_path_commits_exact_arguments(
    api: str, scenario: str, emu: VendorEmulator
) -> None:
    # Stock LlamaIndex agrees here (same calls, same arguments): the gate must not cost the
    # happy path anything.
    emu.queue(api, scenario)
    llm = ToolstreamLLM(make_llm(api, emu.base_url))
    last, per_chunk = await _stream(llm, Recorder().tools())

    # While streaming nothing is handed out; after the end, exactly the calls sent.
    assert per_chunk[:-1] == [0] * (len(per_chunk) - 1)
    selections = llm.get_tool_calls_from_response(last)
    assert [(s.tool_name, s.tool_kwargs) for s in selections] == HAPPY[scenario]
    # The message that goes to memory carries the same ids, once each.
    assert tool_call_ids(last.message) == [s.tool_id for s in selections]
    turn = llm.turn_of(last)
    assert turn is not None and turn.complete and not turn.rejected


@pytest.mark.parametrize("api", APIS)
async def test_truncated_stream_commits_nothing(api: str, emu: VendorEmulator) -> None:
    # Stock: OpenAI chat and Anthropic hand out write_file {"path": None} (repaired from
    # {"path":"/tmp/a); Gemini's class raises "terminated early: MAX_TOKENS". The shim gives
    # that reason to the core and ends the stream normally, so the cut call can be answered.
    emu.queue(api, "truncated_length")
    llm = ToolstreamLLM(make_llm(api, emu.base_url))
    last, _ = await _stream(llm, Recorder().tools())
    assert llm.get_tool_calls_from_response(last, error_on_no_tool_call=False) == []
    with pytest.raises(ValueError):
        llm.get_tool_calls_from_response(last)
    # response.message keeps committed calls only; the full message pairs the error results
    assert tool_call_ids(last.message) == []
    messages = error_tool_messages(last)
    full = message_with_rejected_calls(last)
    assert [m.additional_kwargs["tool_call_id"] for m in messages] == tool_call_ids(full)
    assert len(messages) == 1 and "[stream_truncated]" in str(messages[0].content)
    turn = llm.turn_of(last)
    assert turn is not None and not turn.complete
    assert turn.finish_reason == {"openai-chat": "length", "openai-responses": "incomplete",
                                  "anthropic": "max_tokens", "gemini": "MAX_TOKENS"}[api]
    [call] = turn.rejected
    assert (call.name, call.reason) == ("write_file", Reason.stream_truncated)
    # Gemini streams structured partialArgs, kept as compact JSON of what arrived
    assert (call.raw_arguments or "").startswith('{"path":"/tmp/a')


async def test_per_chunk_calls_never_parse(emu: VendorEmulator,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    # Stock: OpenAI's get_tool_calls_from_response runs parse_partial_json over the whole
    # growing argument string on every chunk FunctionAgent asks about (quadratic in size).
    parses: list[int] = []
    real = finalize_mod.loads_strict

    def counting(text: str, **kw: Any) -> Any:
        parses.append(len(text))
        return real(text, **kw)

    monkeypatch.setattr(finalize_mod, "loads_strict", counting)
    emu.queue("openai-chat", "large_args")
    llm = ToolstreamLLM(make_llm("openai-chat", emu.base_url))
    last, per_chunk = await _stream(llm, Recorder().tools())
    assert len(per_chunk) > 500  # ~200 KB of arguments in many fragments
    assert len(parses) == 1 and parses[0] > 200_000  # parsed once, after the end
    [selection] = llm.get_tool_calls_from_response(last)
    assert len(selection.tool_kwargs["content"]) > 190_000


@pytest.mark.parametrize("api", ["openai-chat", "anthropic"])
def test_sync_stream_goes_through_the_gate(api: str, emu: VendorEmulator) -> None:
    emu.queue(api, "no_finish")
    llm = ToolstreamLLM(make_llm(api, emu.base_url))
    chunks = list(llm.stream_chat_with_tools(Recorder().tools(), user_msg="go"))
    # Stock: both classes hand out write_file with complete-looking arguments although the
    # vendor never said the turn ended.
    assert llm.get_tool_calls_from_response(chunks[-1], error_on_no_tool_call=False) == []
    [call] = llm.turn_of(chunks[-1]).rejected  # type: ignore[union-attr]
    assert call.reason is Reason.stream_truncated


@pytest.mark.parametrize("api", APIS)
async def test_dropped_connection_pairs_by_default(api: str, emu: VendorEmulator) -> None:
    # Stock raises the transport error (httpx RemoteProtocolError / aiohttp ClientPayloadError)
    # and the call in flight is lost; the gate ends the stream with it rejected (DESIGN 6).
    emu.queue(api, "dropped_connection")
    llm = ToolstreamLLM(make_llm(api, emu.base_url))
    responses = [r async for r in await llm.astream_chat_with_tools(Recorder().tools(),
                                                                     user_msg="go")]
    turn = llm.turn_of(responses[-1])
    assert turn is not None and type(turn.error).__name__ in {"RemoteProtocolError",
                                                              "ClientPayloadError"}
    assert [(c.name, c.reason) for c in turn.rejected] == [("write_file", Reason.stream_truncated)]
    assert llm.get_tool_calls_from_response(responses[-1], error_on_no_tool_call=False) == []
    assert [r.tool_call_id for r in llm.error_results_from_response(responses[-1])] == [
        b.tool_call_id for b in message_with_rejected_calls(responses[-1]).blocks
        if isinstance(b, ToolCallBlock)]


@pytest.mark.parametrize("api", APIS)
async def test_dropped_connection_raises_on_request_and_rejects(api: str,
                                                                emu: VendorEmulator) -> None:
    # on_stream_error="raise": the transport error propagates, after the verdict is recorded.
    emu.queue(api, "dropped_connection")
    llm = ToolstreamLLM(make_llm(api, emu.base_url), on_stream_error="raise")
    seen: list[Any] = []
    gen = await llm.astream_chat_with_tools(Recorder().tools(), user_msg="go")
    with pytest.raises(Exception) as info:
        async for chunk in gen:
            seen.append(chunk)
    assert type(info.value).__name__ in {"RemoteProtocolError", "ClientPayloadError"}
    turn = llm.turn_of(seen[-1])
    assert turn is not None and turn.error is info.value
    assert [(c.name, c.reason) for c in turn.rejected] == [("write_file", Reason.stream_truncated)]


@pytest.mark.parametrize("api", APIS)
async def test_closing_the_stream_cancels_open_calls(api: str,
                                                     emu: VendorEmulator) -> None:
    emu.queue(api, "large_args")
    llm = ToolstreamLLM(make_llm(api, emu.base_url))
    gen = await llm.astream_chat_with_tools(Recorder().tools(), user_msg="go")
    first = await gen.__anext__()
    for _ in range(0 if api == "gemini" else 4):  # past the Responses preamble, into the args
        await gen.__anext__()
    await gen.aclose()
    turn = llm.turn_of(first)
    assert turn is not None and not turn.complete and turn.committed == ()
    if api != "gemini":  # Gemini sends the whole call in one chunk: nothing was open yet
        assert [c.state for c in turn.calls] == [CallState.cancelled]
        assert [r.reason for r in turn.error_results()] == [Reason.cancelled]


@pytest.mark.parametrize("api", APIS)
async def test_non_streamed_chat_with_tools(api: str, emu: VendorEmulator) -> None:
    emu.queue(api, "parallel_calls")
    llm = ToolstreamLLM(make_llm(api, emu.base_url))
    response = await llm.achat_with_tools(Recorder().tools(), user_msg="go",
                                          allow_parallel_tool_calls=True)
    assert [(s.tool_name, s.tool_kwargs) for s in llm.get_tool_calls_from_response(response)] \
        == HAPPY["parallel_calls"]


async def test_non_streamed_truncation_is_rejected(emu: VendorEmulator) -> None:
    # A whole OpenAI chat completion can be cut too (finish_reason "length" with half a JSON
    # string). Stock get_tool_calls_from_response repairs it to {"path": None}.
    emu.queue("openai-chat", "truncated_length")
    inner = make_llm("openai-chat", emu.base_url)
    llm = ToolstreamLLM(inner)
    response = await llm.achat_with_tools(Recorder().tools(), user_msg="go")
    assert llm.get_tool_calls_from_response(response, error_on_no_tool_call=False) == []
    [result] = llm.error_results_from_response(response)
    assert result.reason is Reason.stream_truncated
    emu.queue("openai-chat", "truncated_length")
    stock_response = await inner.achat_with_tools(Recorder().tools(), user_msg="go")
    stock = inner.get_tool_calls_from_response(stock_response, error_on_no_tool_call=False)
    assert [(s.tool_name, s.tool_kwargs) for s in stock] == [("write_file", {"path": None})]


async def test_unknown_tool_and_schema_come_from_the_offered_tools(
    emu: VendorEmulator,
) -> None:
    # Only get_time is offered, but the model calls write_file: the core rejects it as
    # unknown_tool before anything could run. Stock hands it to the agent, which answers
    # "Tool write_file not found".
    emu.queue("anthropic", "single_call")
    llm = ToolstreamLLM(make_llm("anthropic", emu.base_url))
    get_time = [t for t in Recorder().tools() if t.metadata.name == "get_time"]
    last, _ = await _stream(llm, get_time)
    [call] = llm.turn_of(last).rejected  # type: ignore[union-attr]
    assert call.reason is Reason.unknown_tool


def test_unknown_llm_classes_are_read_through_their_messages() -> None:
    """A class the package does not know is built (read through LlamaIndex's messages, which
    the core reads as Chat Completions), unless ``provider=`` names the wire it sends."""
    from llama_index.core.llms.mock import MockFunctionCallingLLM

    assert ToolstreamLLM(MockFunctionCallingLLM()).provider == "openai-chat"
    llm = ToolstreamLLM(MockFunctionCallingLLM(), provider="openai-chat")
    assert llm.provider == "openai-chat"
    with pytest.raises(TypeError):
        ToolstreamLLM(llm)  # type: ignore[arg-type]


def test_anthropic_tap_leaves_the_users_llm_untouched(emu: VendorEmulator) -> None:
    inner = make_llm("anthropic", emu.base_url)
    client = inner._client  # type: ignore[attr-defined]
    ToolstreamLLM(inner)
    assert inner._client is client  # type: ignore[attr-defined]
    # and the user's LLM still works on its own
    response = inner.chat([ChatMessage(role="user", content="hi")])
    assert "no tool ran" in (response.message.content or "")


async def test_a_whole_anthropic_request_flags_the_gates_error_results(
        emu: VendorEmulator) -> None:
    """The follow-up of a cut call, sent whole (``achat_with_tools``, no stream), carries the
    gate's error result with Anthropic's ``is_error: true``, as a streamed request does:
    LlamaIndex's ``Anthropic`` has no field for it, so the whole call goes through the tapped
    copy too (``rewrites_requests``); the caller's LLM is not touched."""
    emu.queue("anthropic", "truncated_length", "text")
    plain = make_llm("anthropic", emu.base_url)
    llm = ToolstreamLLM(plain)
    tools = Recorder().tools()
    last, _ = await _stream(llm, tools)
    history = [ChatMessage(role="user", content="go"), message_with_rejected_calls(last),
               *error_tool_messages(last)]
    await llm.achat_with_tools(tools, chat_history=history)
    [result] = [b for b in emu.requests[-1].body["messages"][-1]["content"]
                if b.get("type") == "tool_result"]
    assert result["is_error"] is True and "[stream_truncated]" in str(result["content"])
    assert llm.llm is plain
