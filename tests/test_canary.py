"""A canary secret in tool-call arguments, followed through every channel the gate writes to.

The model "sends" ``login(password=<canary>)`` through the real OpenAI SDK (and, for the
LangGraph custom stream, through ``ChatOpenAI`` in a real graph) from a local HTTP endpoint
serving Chat Completions SSE, three ways: committed, cut by the length limit, and unparseable
(a duplicate key, whose parse message quotes the canary). Under each setting the test says
where the canary may appear, channel by channel, and asserts exactly that:

| channel | default | content capture on | sensitive tool (capture on) |
|---|---|---|---|
| spans (attributes, events, status) | never | yes | never |
| log records at DEBUG | never | never | never |
| UI events: fragments, progress JSON, AG-UI, LangGraph custom | yes | yes | never |
| error text to the model | parse message (the model's own words) | same | never |
| decision record ``detail`` | as the error text | same | never |
| decision record ``args`` | the rejected call's text when it is a JSON object | same | same |

The last row is decided in DESIGN 4.9: the record is conversation state that travels with the
message, whose own ``invalid_tool_calls`` carry the same text; it is not a telemetry channel.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import openai
import pytest
from otel_util import span_exporter, turn_spans
from toolstream_core import ArgumentsDelta, AssembleConfig, AssemblerEvent, ToolSpec, Turn, assemble
from toolstream_core.integration import ProgressEncoder, turn_record

CANARY = "canary-7f3a9-SECRET"
LOGIN_SCHEMA = {"type": "object", "properties": {"password": {"type": "string"},
                                                 "user": {"type": "string"}}}
ARGS = json.dumps({"password": CANARY, "user": "ada"})
OUTCOMES: dict[str, tuple[str, str]] = {
    "committed": (ARGS, "tool_calls"),
    "cut": (ARGS[:-12], "length"),
    "unparseable": (f'{{"{CANARY}": 1, "{CANARY}": 2}}', "tool_calls"),
}
SETTINGS = ("default", "capture", "sensitive", "sensitive_path")


# -- a local endpoint that streams one Chat Completions tool call --------------------------------


def chat_sse(arguments: str, finish: str) -> bytes:
    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> str:
        body = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 0, "model": "m",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
        return f"data: {json.dumps(body)}\n\n"

    frames = [chunk({"role": "assistant", "tool_calls": [{
        "index": 0, "id": "call_1", "type": "function", "function": {"name": "login", "arguments": ""}}]})]
    for start in range(0, len(arguments), 7):
        frames.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments[start:start + 7]}}]}))
    frames.append(chunk({}, finish))
    return ("".join(frames) + "data: [DONE]\n\n").encode()


class _Endpoint(BaseHTTPRequestHandler):
    body = b""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Endpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


# -- what each setting means --------------------------------------------------------------------


def setting(name: str, monkeypatch: pytest.MonkeyPatch) -> tuple[AssembleConfig, dict[str, Any]]:
    """The config and the ``tools=`` of one setting (content capture through the environment)."""
    if name != "default":
        monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    else:
        monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    if name == "sensitive":
        return AssembleConfig(), {"login": ToolSpec("login", LOGIN_SCHEMA, sensitive=True)}
    if name == "sensitive_path":
        return AssembleConfig(sensitive_tools={"login": ["password"]}), {"login": LOGIN_SCHEMA}
    return AssembleConfig(), {"login": LOGIN_SCHEMA}


def private(name: str) -> bool:
    return name.startswith("sensitive")


@dataclass
class Channels:
    """Everything one turn wrote somewhere, as text to search."""

    spans: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    fragments: list[str] = field(default_factory=list)
    progress: list[str] = field(default_factory=list)
    agui: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    record_detail: list[str] = field(default_factory=list)
    record_args: list[str] = field(default_factory=list)

    def holding_canary(self) -> set[str]:
        return {name for name, texts in vars(self).items() if held(texts)}


def held(texts: list[str]) -> bool:
    """In one text, or across streamed pieces (a fragment holds a few characters of it)."""
    return any(CANARY in t for t in texts) or CANARY in "".join(texts)


def streamed(items: list[dict[str, Any]], key: str) -> list[str]:
    """The JSON of each item, and the concatenation of their ``key`` pieces (deltas)."""
    return [json.dumps(i) for i in items] + ["".join(str(i.get(key) or "") for i in items)]


def span_texts() -> list[str]:
    out = []
    for span in turn_spans(span_exporter_shared):
        out.append(json.dumps(dict(span.attributes or {}), default=str))
        out.append(str(span.status.description))
        out.extend(json.dumps(dict(e.attributes or {}), default=str) for e in span.events)
    return out


span_exporter_shared = span_exporter()


def record_texts(turn: Turn, channels: Channels) -> None:
    channels.errors = [r.content for r in turn.error_results()]
    record = turn_record(turn, mode="tap")
    channels.record_detail = [str(e["detail"]) for e in record["rejected"]]
    channels.record_args = [e["args"] for e in record["rejected"]]
    channels.record_args.append(json.dumps({k: v for k, v in record.items() if k != "rejected"}))


def expected(name: str, outcome: str) -> set[str]:
    where: set[str] = set()
    if name == "capture":
        where.add("spans")
    if not private(name):
        where |= {"fragments", "progress", "agui"}
        if outcome == "unparseable":
            where |= {"errors", "record_detail"}
    if outcome == "unparseable":  # a JSON object (json.loads keeps duplicate keys)
        where.add("record_args")
    return where


# -- the core, through the real SDK -------------------------------------------------------------


@pytest.mark.parametrize("outcome", OUTCOMES)
@pytest.mark.parametrize("name", SETTINGS)
def test_core_channels(name: str, outcome: str, endpoint: str, caplog: pytest.LogCaptureFixture,
                       monkeypatch: pytest.MonkeyPatch) -> None:
    from toolstream_core.agui import AGUIToolCallEvents

    config, tools = setting(name, monkeypatch)
    _Endpoint.body = chat_sse(*OUTCOMES[outcome])
    span_exporter_shared.clear()
    caplog.set_level(logging.DEBUG)
    channels = Channels()
    progress: list[dict[str, Any]] = []
    encoder, agui = ProgressEncoder(forward_args=config.ui_forward_partial_args), AGUIToolCallEvents()

    def on_event(event: AssemblerEvent) -> None:
        if isinstance(event, ArgumentsDelta) and event.fragment is not None:
            channels.fragments.append(event.fragment)
        progress.append(encoder.encode(event))
        agui(event)

    client = openai.OpenAI(base_url=endpoint, api_key="test", max_retries=0)
    stream = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}],
                                            stream=True)
    turn = assemble(stream, tools=tools, config=config, on_event=on_event)

    assert [c.name for c in turn.calls] == ["login"]
    assert turn.calls[0].committed is (outcome == "committed")
    if outcome == "unparseable":
        assert str(turn.calls[0].reason) == "invalid_json" and CANARY in (turn.calls[0].detail or "")
    channels.spans = span_texts()
    assert channels.spans, "no span was recorded"
    channels.logs = [r.getMessage() + repr(r.args) for r in caplog.records]
    channels.progress = streamed(progress, "fragment")
    channels.agui = streamed([e.model_dump(by_alias=True) for e in agui.events], "delta")
    record_texts(turn, channels)
    assert channels.holding_canary() == expected(name, outcome)
    if name == "sensitive_path" and outcome == "committed":  # the masked arguments, not nothing
        [event] = [json.loads(t) for t in channels.spans if "gen_ai.tool.call.arguments" in t]
        assert json.loads(event["gen_ai.tool.call.arguments"]) == {"password": "[redacted]", "user": "ada"}


# -- the LangChain shim in a LangGraph graph ----------------------------------------------------


@pytest.mark.parametrize("outcome", OUTCOMES)
@pytest.mark.parametrize("name", ("default", "capture", "sensitive"))
def test_langgraph_custom_stream_and_the_message(name: str, outcome: str, endpoint: str,
                                                 caplog: pytest.LogCaptureFixture,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The custom stream, the spans, the logs and the message's record of a gated
    ``ChatOpenAI`` in a graph; the sensitive marking comes from the LangChain tool itself."""
    pytest.importorskip("langchain_openai")
    pytest.importorskip("langgraph")
    from langchain_core.messages import HumanMessage
    from langchain_core.tools import StructuredTool
    from langchain_openai import ChatOpenAI
    from langgraph.graph import START, MessagesState, StateGraph

    from langchain_toolstream import with_toolstream

    config, _tools = setting(name, monkeypatch)

    def login(password: str, user: str = "") -> str:
        """Log in."""
        return "ok"

    login_tool = StructuredTool.from_function(
        login, metadata={"toolstream_sensitive": True} if name == "sensitive" else None)

    _Endpoint.body = chat_sse(*OUTCOMES[outcome])
    span_exporter_shared.clear()
    caplog.set_level(logging.DEBUG)
    model = with_toolstream(ChatOpenAI(model="m", base_url=endpoint, api_key="test", max_retries=0),
                            config=config).bind_tools([login_tool])
    messages: list[Any] = []

    def agent(state: MessagesState) -> dict[str, Any]:
        reply = model.invoke(state["messages"])
        messages.append(reply)
        return {"messages": [reply]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_edge(START, "agent")
    items = list(graph.compile().stream({"messages": [HumanMessage("go")]}, stream_mode="custom"))

    assert items and items[-1]["type"] in ("toolstream.call_committed", "toolstream.call_rejected")
    assert held(streamed(items, "fragment")) is (name != "sensitive")
    assert held(span_texts()) is (name == "capture")
    ours = [r for r in caplog.records if r.name.startswith(("toolstream", "langchain_toolstream"))]
    assert not any(CANARY in r.getMessage() + repr(r.args) for r in ours)
    [reply] = messages
    record = reply.response_metadata["toolstream"]
    details = [str(e["detail"]) for e in record["rejected"]]
    assert any(CANARY in d for d in details) is (outcome == "unparseable" and name != "sensitive")
