"""Helpers shared by the LangChain shim tests (importable, unlike conftest)."""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_models import make_model as make_model
from toolstream_core.integration import RecordView
from toolstream_core.testing import SCENARIOS

APIS = ("openai-chat", "openai-responses", "anthropic", "gemini")

def applies(api: str, scenario: str) -> bool:
    return api in SCENARIOS[scenario].apis


class Recorder:
    """What the tools were asked to do, in order. Thread-safe (ToolNode runs calls in threads)."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()

    def add(self, name: str, **args: Any) -> None:
        with self._lock:
            self.calls.append((name, args))

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.calls]


def recording_tools(recorder: Recorder) -> list[Any]:
    """The emulator's tools as real LangChain tools that record their calls (``Weather``, the
    structured-output scenarios' schema, runs as a tool where an agent is not asked for a
    structured response).

    ``write_file.content`` has a default on purpose: it is the common shape of a real tool,
    and it is what lets plain LangChain run ``write_file(path="/tmp/a")`` from a stream cut
    at ``{"path":"/tmp/a`` (the repaired call validates).
    """

    @tool
    def write_file(path: str, content: str = "") -> str:
        """Write a text file."""
        recorder.add("write_file", path=path, content=content)
        return f"wrote {len(content)} characters to {path}"

    @tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        recorder.add("get_weather", city=city)
        return f"sunny in {city}"

    @tool
    def get_time() -> str:
        """Get the current time (no arguments)."""
        recorder.add("get_time")
        return "12:00"

    @tool
    def Weather(city: str, unit: str) -> str:
        """The weather report as structured output (a schema, not an action)."""
        recorder.add("Weather", city=city, unit=unit)
        return f"{city} in {unit}"

    return [write_file, get_weather, get_time, Weather]


def aggregate(chunks: list[Any]) -> Any:
    full = None
    for chunk in chunks:
        full = chunk if full is None else full + chunk
    return full


def ai_messages(messages: list[BaseMessage]) -> list[AIMessage]:
    return [m for m in messages if isinstance(m, AIMessage)]


def tool_messages(messages: list[BaseMessage]) -> list[ToolMessage]:
    return [m for m in messages if isinstance(m, ToolMessage)]


def assert_history_paired(messages: list[BaseMessage]) -> None:
    """Each AIMessage's tool call ids (valid and invalid) are answered exactly once by the
    ToolMessages that follow it, before the next AIMessage: what every vendor requires."""
    for position, message in enumerate(messages):
        if not isinstance(message, AIMessage):
            continue
        answered: dict[str, int] = {}
        for later in messages[position + 1:]:
            if isinstance(later, AIMessage):
                break
            if isinstance(later, ToolMessage):
                answered[later.tool_call_id] = answered.get(later.tool_call_id, 0) + 1
        ids = [c["id"] for c in [*message.tool_calls, *message.invalid_tool_calls]]
        if position == len(messages) - 1:
            # the run ended on this message: a call the model malformed in a finished turn is
            # LangChain's invalid tool call, answered by create_agent before its next request
            # (decision 0112, test_lc_invalid_calls)
            view = RecordView.read((message.response_metadata or {}).get("toolstream"))
            ids = [i for i in ids if view is None or i not in view.malformed]
        assert all(answered.get(i) == 1 for i in ids), (ids, answered)
        assert set(answered) <= set(ids), (ids, answered)


def corpus_tools(recorder: Recorder) -> list[Any]:
    """The tools of the fault tests' corpus streams (``add``, ``multiply``, ``getWeather``),
    recording their calls. Every argument past the first has a default, like ``write_file``:
    a call whose fragments were lost still validates, so only the gate can stop it."""

    @tool
    def add(a: int, b: int = 0) -> int:
        """Add two integers."""
        recorder.add("add", a=a, b=b)
        return a + b

    @tool
    def multiply(a: int, b: int = 1) -> int:
        """Multiply two integers."""
        recorder.add("multiply", a=a, b=b)
        return a * b

    @tool
    def getWeather(location: str = "") -> str:
        """Get the weather for a location."""
        recorder.add("getWeather", location=location)
        return f"sunny in {location}"

    return [add, multiply, getWeather]


def stream_by_mode(graph: Any, modes: list[str]) -> tuple[dict[str, list[Any]], list[Any]]:
    """Stream ``graph`` on one "go" message with ``stream_mode=[*modes, "values"]``, as a UI
    runs it: each mode's items in order, and the final messages (the last ``values``)."""
    items: dict[str, list[Any]] = {mode: [] for mode in modes}
    final: list[Any] = []
    for mode, data in graph.stream({"messages": [HumanMessage("go")]},
                                   stream_mode=[*modes, "values"]):
        if mode == "values":
            final = data["messages"]
        else:
            items[mode].append(data)
    return items, final


def chat_body(*, text: str | None = None, call: tuple[str, str, str] | None = None,
              finish: str = "stop") -> bytes:
    """One OpenAI chat streamed turn as SSE bytes, for the emulator's ``queue_body``: a text,
    or one ``call`` (id, name, argument text), then ``finish``."""
    import json

    def chunk(delta: dict[str, Any], reason: str | None = None) -> str:
        body = {"id": "chatcmpl-body", "object": "chat.completion.chunk", "created": 1,
                "model": "gpt-4o-mini",
                "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]}
        return f"data: {json.dumps(body)}\n\n"

    delta: dict[str, Any] = {"role": "assistant", "content": text}
    if call is not None:
        delta["tool_calls"] = [{"index": 0, "id": call[0], "type": "function",
                                "function": {"name": call[1], "arguments": call[2]}}]
    return (chunk(delta) + chunk({}, finish) + "data: [DONE]\n\n").encode()
