"""The shared integration layer (``toolstream_core.integration``) on the real SDK clients.

What both shims stand on, tested without either framework: ``tap_client`` wraps a boto3
``bedrock-runtime``, ``ollama`` or cohere v2 client; the SDK's own streamed events (or the
events a whole answer stands for) reach the sink in wire order, the request's output limit is
read from the call's keyword arguments, and the core decides the turn from them as it would
from the wire. Every client speaks HTTP to the emulator.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from toolstream_core import AssembleConfig, Assembler, AssemblerEvent
from toolstream_core.integration import GateSession, ollama_tap_kwargs, tap_client
from toolstream_core.testing import SCENARIOS, TOOLS, VendorEmulator
from toolstream_core.vendors import declare_tools, make_client, open_stream
from toolstream_core.vendors._limits import request_limit

LIMIT = 600
MODELS = {"bedrock-converse": "anthropic.claude-3-5-sonnet-20240620-v1:0",
          "ollama": "llama3.1", "cohere": "command-r-plus"}
SDKS = {"bedrock-converse": "boto3", "ollama": "ollama", "cohere": "cohere"}
APIS = tuple(MODELS)


class Sink:
    """Records what the tap hands over: one request, its events, how it ended."""

    def __init__(self) -> None:
        self.provider: str | None = None
        self.request: Mapping[str, Any] = {}
        self.events: list[Any] = []
        self.ended: list[BaseException | None] = []

    def raw_start(self, provider: str, request: Mapping[str, Any]) -> None:
        self.provider, self.request = provider, request

    def raw_event(self, event: Any) -> None:
        self.events.append(event)

    def raw_end(self, error: BaseException | None) -> None:
        self.ended.append(error)

    def turn(self) -> Any:
        core = Assembler(tools=TOOLS, provider=self.provider)  # type: ignore[arg-type]
        for event in self.events:
            core.feed(event)
        return core.finish(transport_complete=self.ended == [None])


def _client(api: str, emu: VendorEmulator, asynchronous: bool = False) -> Any:
    pytest.importorskip(SDKS[api])
    return make_client(api, api_key="test", base_url=emu.base_url, asynchronous=asynchronous)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("scenario", ["parallel_calls", "truncated_length", "no_finish"])
def test_streamed_events_reach_the_sink_and_decide_the_turn(
        emulator: VendorEmulator, api: str, scenario: str) -> None:
    emulator.clear()
    emulator.queue(api, scenario)
    sink = Sink()
    tapped = tap_client(_client(api, emulator), sink)
    seen = list(open_stream(api, tapped, model=MODELS[api], contents="go",
                            tools=declare_tools(api, TOOLS), max_tokens=LIMIT))
    assert sink.provider == api
    assert len(sink.events) == len(seen) > 0  # every event, before the caller saw it
    assert request_limit(sink.request) == LIMIT
    turn = sink.turn()
    expect = SCENARIOS[scenario].expect
    assert [c.name for c in turn.committed] == list(expect.committed)
    assert [c.name for c in turn.rejected] == list(expect.rejected)


def _whole(api: str, client: Any) -> Any:
    tools = declare_tools(api, TOOLS)
    if api == "bedrock-converse":
        return client.converse(modelId=MODELS[api], toolConfig={"tools": tools},
                               messages=[{"role": "user", "content": [{"text": "go"}]}])
    if api == "ollama":
        return client.chat(model=MODELS[api], messages=[{"role": "user", "content": "go"}],
                           tools=tools, stream=False)
    return client.chat(model=MODELS[api], messages=[{"role": "user", "content": "go"}],
                       tools=tools)


@pytest.mark.parametrize("api", APIS)
def test_a_whole_answer_reaches_the_sink_as_the_events_it_stands_for(
        emulator: VendorEmulator, api: str) -> None:
    emulator.clear()
    emulator.queue(api, "parallel_calls")
    sink = Sink()
    answer = _whole(api, tap_client(_client(api, emulator), sink))
    assert answer is not None and sink.provider == api and sink.ended == [None]
    assert sink.events == GateSession.events_for_response(api, answer)
    assert [c.name for c in sink.turn().committed] == ["get_weather", "get_weather"]


@pytest.mark.parametrize("api", ["ollama", "cohere"])
@pytest.mark.asyncio(loop_scope="module")
async def test_async_clients_are_tapped_like_sync_ones(emulator: VendorEmulator, api: str) -> None:
    emulator.clear()
    emulator.queue(api, "parallel_calls")
    sink = Sink()
    client = tap_client(_client(api, emulator, asynchronous=True), sink)
    tools = declare_tools(api, TOOLS)
    messages = [{"role": "user", "content": "go"}]
    if api == "ollama":
        stream = await client.chat(model=MODELS[api], messages=messages, tools=tools, stream=True)
    else:
        stream = client.chat_stream(model=MODELS[api], messages=messages, tools=tools)
    seen = [event async for event in stream]
    assert sink.provider == api and len(sink.events) == len(seen) > 0 and sink.ended == [None]
    assert [c.name for c in sink.turn().committed] == ["get_weather", "get_weather"]


def test_a_client_of_no_known_sdk_is_refused() -> None:
    with pytest.raises(ValueError, match="no tap"):
        tap_client(object(), Sink())


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("buffered", [False, True], ids=["fed", "buffered"])
def test_a_tap_session_judges_the_call_by_the_request_it_saw(
        emulator: VendorEmulator, api: str, buffered: bool) -> None:
    """``GateSession``, the sink every shim uses: provider and limit come from the tapped
    request (not from the shim's guess), the events are fed at once or held until ``flush``,
    and a cut stream is decided as one."""
    emulator.clear()
    emulator.queue(api, "truncated_length")
    seen: list[AssemblerEvent] = []
    session = GateSession(tools=TOOLS, config=AssembleConfig(), provider="openai-chat",
                         limit=99_999, buffered=buffered, on_event=seen.append)
    tapped = tap_client(_client(api, emulator), session)
    list(open_stream(api, tapped, model=MODELS[api], contents="go",
                     tools=declare_tools(api, TOOLS), max_tokens=LIMIT))
    assert (session.provider, session.limit, session.state) == (api, LIMIT, "ok")
    assert session.started is not buffered
    flushed = session.flush()  # what the held events caused: exactly what on_event saw
    assert flushed == (seen if buffered else []) and seen
    turn = session.assembler.finish(transport_complete=session.transport_complete(None))
    assert [c.name for c in turn.rejected] == ["write_file"] and not turn.committed
    assert session.transport_complete(RuntimeError("the framework raised")) is False


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
@pytest.mark.asyncio(loop_scope="module")
async def test_ollama_lines_keep_the_ids_the_client_drops(
        emulator: VendorEmulator, asynchronous: bool) -> None:
    """A call the server re-sends: the ``ollama`` client's objects have no id, so through
    them it reads as two calls; the lines ``ollama_tap_kwargs`` tees carry the id, and the
    re-sent call commits once."""
    ollama = pytest.importorskip("ollama")
    emulator.clear()
    emulator.queue("ollama", "resent_duplicate")
    sink = Sink()
    kwargs = ollama_tap_kwargs({"headers": {"x-test": "kept"}}, sink, asynchronous=asynchronous)
    request: dict[str, Any] = {"model": MODELS["ollama"], "stream": True,
                               "messages": [{"role": "user", "content": "go"}],
                               "tools": declare_tools("ollama", TOOLS),
                               "options": {"num_predict": LIMIT}}
    if asynchronous:
        client = ollama.AsyncClient(host=emulator.base_url, **kwargs)
        objects = [part async for part in await client.chat(**request)]
    else:
        client = ollama.Client(host=emulator.base_url, **kwargs)
        objects = list(client.chat(**request))
    assert sink.provider == "ollama" and request_limit(sink.request) == LIMIT
    assert len(sink.events) == len(objects) and sink.ended == [None]
    assert all(isinstance(event, dict) for event in sink.events)
    assert [c.name for c in sink.turn().committed] == ["get_weather"]
    by_objects = Assembler(tools=TOOLS, provider="ollama")  # type: ignore[arg-type]
    for part in objects:
        by_objects.feed(part)
    assert [c.name for c in by_objects.finish().committed] == ["get_weather", "get_weather"]


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_an_anthropic_request_flags_the_gates_own_error_results(emu: VendorEmulator,
                                                                stream: bool) -> None:
    """A ``tool_result`` holding the gate's error for its very call goes with ``is_error:
    true`` (LlamaIndex's ``Anthropic`` builds these blocks with no field for it); another
    result, or one that quotes another call's id, goes as it was."""
    anthropic = pytest.importorskip("anthropic")
    from toolstream_core._results import unanswered_text

    gate = unanswered_text("get_time", "toolu_1")
    history = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": f"toolu_{n}", "name": "get_time", "input": {}} for n in (1, 2, 3)]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": gate}]},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "12:00"},
            {"type": "tool_result", "tool_use_id": "toolu_3", "content": gate}]}]
    sink = Sink()
    client = tap_client(anthropic.Anthropic(api_key="test", base_url=emu.base_url, max_retries=0),
                        sink, "anthropic")
    answer = client.messages.create(model="claude-sonnet-4-5", max_tokens=100, messages=history,
                                    stream=stream)
    for _ in answer if stream else ():  # a whole answer is not read by the tap, but sent flagged
        pass
    [request] = emu.requests
    results = request.body["messages"][-1]["content"]
    assert [b.get("is_error") for b in results] == [True, None, None]
    assert "is_error" not in history[-1]["content"][0]  # the caller's request is not written into
