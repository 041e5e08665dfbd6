"""Shared pieces for the LlamaIndex shim tests: real LLM classes aimed at 127.0.0.1, and tools
that record what they were actually run with (the only honest way to tell "ran" from "not")."""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import Any

import pytest
from google.genai import types as genai_types
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.tools import FunctionTool
from llama_index.llms.anthropic import Anthropic
from llama_index.llms.google_genai import GoogleGenAI
from llama_index.llms.openai import OpenAI, OpenAIResponses

APIS = ("openai-chat", "openai-responses", "anthropic", "gemini")

# The workflows runtime walks every agent with inspect.getmembers, which trips pydantic's
# deprecated-attribute warnings (stock FunctionAgent too); and google-genai subclasses
# aiohttp.ClientSession. Neither is ours.
THIRD_PARTY_WARNINGS = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning:inspect"),
    pytest.mark.filterwarnings("ignore:Inheritance class AiohttpClientSession:DeprecationWarning"),
]


def make_llm(api: str, base_url: str, **settings: Any) -> FunctionCallingLLM:
    """The real LlamaIndex class for ``api``, its real SDK client pointed at ``base_url``;
    ``settings`` are more constructor arguments (``max_tokens=...``)."""
    if api == "openai-chat":
        return OpenAI(**{"model": "gpt-4o-mini", "api_key": "test", "api_base": base_url + "/v1",
                         "max_retries": 0, **settings})
    if api == "openai-responses":
        return OpenAIResponses(**{"model": "gpt-4o-mini", "api_key": "test",
                                  "api_base": base_url + "/v1", "max_retries": 0, **settings})
    if api == "anthropic":
        # The class's default limit (512 tokens) is below what the corpus streams report; the
        # shim passes the limit to the core's backstop, which would call those turns cut.
        return Anthropic(**{"model": "claude-sonnet-4-5", "api_key": "test",
                            "base_url": base_url, "max_retries": 0, "max_tokens": 64_000,
                            **settings})
    if api == "gemini":
        # max_tokens/context_window given, so the class does not ask the server for model metadata
        return GoogleGenAI(**{"model": "gemini-2.0-flash", "api_key": "test", "max_retries": 0,
                              "max_tokens": 1024, "context_window": 100_000,
                              "http_options": genai_types.HttpOptions(base_url=base_url),
                              **settings})
    return _partner_llm(api, base_url, **settings)


def _partner_llm(api: str, base_url: str, **settings: Any) -> FunctionCallingLLM:
    """``BedrockConverse``, ``Ollama`` or ``Cohere`` (Cohere's v1 chat) at ``base_url``."""
    if api == "bedrock-converse":
        from llama_index.llms.bedrock_converse import BedrockConverse

        return BedrockConverse(**{"model": "anthropic.claude-3-5-sonnet-20240620-v1:0",
                                  "region_name": "us-east-1", "aws_access_key_id": "test",
                                  "aws_secret_access_key": "test", "endpoint_url": base_url,
                                  "max_retries": 1, **settings})
    if api == "ollama":
        from llama_index.llms.ollama import Ollama

        # context_window given, so the class does not ask /api/show for it
        return Ollama(**{"model": "llama3.1", "base_url": base_url, "request_timeout": 30,
                         "context_window": 8000, **settings})
    if api == "cohere":
        from llama_index.llms.cohere import Cohere

        return Cohere(**{"model": "command-r", "api_key": "test", "base_url": base_url,
                         "max_retries": 0, **settings})
    raise ValueError(api)


@dataclass
class Recorder:
    """The emulator's tools; each records the arguments it was really called with (``Weather``,
    the structured-output scenarios' schema, runs as a tool where nothing asks for a
    structured response)."""

    runs: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    delay: float = 0.0
    return_direct: frozenset[str] = frozenset()
    #: What happened, in order: "started <tool>" as each tool starts, and what a test adds.
    timeline: list[str] = field(default_factory=list)
    #: Set as a tool starts (a held emulator stream may then end: ``queue_held``).
    release: threading.Event | None = None

    def _start(self, name: str, args: dict[str, Any]) -> None:
        self.timeline.append(f"started {name}")
        self.runs.append((name, args))
        if self.release is not None:
            self.release.set()

    def tools(self) -> list[FunctionTool]:
        return [
            FunctionTool.from_defaults(async_fn=fn, return_direct=fn.__name__ in self.return_direct)
            for fn in self.functions()
        ]

    def functions(self) -> list[Any]:
        """The three tools as plain async functions (so another framework can wrap them)."""

        async def write_file(path: str, content: str = "") -> str:
            """Write a text file."""
            self._start("write_file", {"path": path, "content": content})
            await asyncio.sleep(self.delay)
            return f"wrote {len(content)} characters to {path}"

        async def get_weather(city: str) -> str:
            """Get the current weather for a city."""
            self._start("get_weather", {"city": city})
            await asyncio.sleep(self.delay)
            return f"sunny in {city}"

        async def get_time() -> str:
            """Get the current time (no arguments)."""
            self._start("get_time", {})
            await asyncio.sleep(self.delay)
            return "12:00"

        async def Weather(city: str, unit: str) -> str:
            """The weather report as structured output (a schema, not an action)."""
            self._start("Weather", {"city": city, "unit": unit})
            await asyncio.sleep(self.delay)
            return f"{city} in {unit}"

        return [write_file, get_weather, get_time, Weather]

    def corpus_tools(self) -> list[FunctionTool]:
        """The tools of the fault tests' corpus streams (``add``, ``multiply``,
        ``getWeather``). Every argument past the first has a default: a call whose fragments
        were lost still validates, so only the gate can stop it."""

        async def add(a: int, b: int = 0) -> int:
            """Add two integers."""
            self.runs.append(("add", {"a": a, "b": b}))
            return a + b

        async def multiply(a: int, b: int = 1) -> int:
            """Multiply two integers."""
            self.runs.append(("multiply", {"a": a, "b": b}))
            return a * b

        async def getWeather(location: str = "") -> str:
            """Get the weather for a location."""
            self.runs.append(("getWeather", {"location": location}))
            return f"sunny in {location}"

        return [FunctionTool.from_defaults(async_fn=fn) for fn in (add, multiply, getWeather)]

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.runs]


def tool_call_ids(message: Any) -> list[str]:
    return [b.tool_call_id for b in message.blocks if getattr(b, "block_type", "") == "tool_call"]


def unpaired(messages: list[Any]) -> list[str]:
    """Call ids in ``messages`` that no later tool message answers."""
    answered = {str(m.additional_kwargs.get("tool_call_id")) for m in messages if m.role == "tool"}
    return [i for m in messages if m.role == "assistant" for i in tool_call_ids(m)
            if i not in answered]


@dataclass
class Outcome:
    """What one agent run did: tools really run, requests sent, errors, final memory."""

    runs: list[tuple[str, dict[str, Any]]]
    requests: int
    error: BaseException | None
    memory: list[Any]
    events: list[Any]
    result: Any = None

    @property
    def tool_messages(self) -> list[Any]:
        return [m for m in self.memory if m.role == "tool"]


async def run_agent(agent: Any, recorder: Recorder, emu: Any = None, *, user_msg: str = "go",
                    ctx: Any = None) -> Outcome:
    """Run ``agent`` to the end (collecting its event stream) and report what happened."""
    before = len(emu.requests) if emu is not None else 0
    handler = agent.run(user_msg=user_msg, ctx=ctx)
    events: list[Any] = []
    error: BaseException | None = None
    result = None
    try:
        async for event in handler.stream_events():
            events.append(event)
        result = await handler
    except Exception as exc:
        error = exc
    memory = await handler.ctx.store.get("memory", default=None)
    messages = await memory.aget_all() if memory is not None else []
    requests = (len(emu.requests) - before) if emu is not None else 0
    return Outcome(list(recorder.runs), requests, error, messages, events, result)


async def saved_while_waiting(handler: Any) -> tuple[dict[str, Any], Any]:
    """Run ``handler`` until a tool waits for a person (``InputRequiredEvent``), save its
    context as JSON there, then cancel the run: (the saved context, the memory, which the
    context does not serialise and a deployment keeps in its own store)."""
    from llama_index.core.workflow import InputRequiredEvent
    from workflows.context.serializers import JsonSerializer

    saved: dict[str, Any] | None = None
    async for event in handler.stream_events():
        if isinstance(event, InputRequiredEvent):
            saved = handler.ctx.to_dict(serializer=JsonSerializer())
            break
    memory = await handler.ctx.store.get("memory")
    await handler.cancel_run()
    assert saved is not None, "no tool waited for a person"
    return saved, memory


async def approved_after_restore(agent: Any, saved: dict[str, Any], memory: Any,
                                 response: str = "yes") -> None:
    """Restore ``saved`` (a context from ``saved_while_waiting``) into ``agent``, as another
    process would, give it back its ``memory``, answer the waiting person with ``response``
    and run it to the end."""
    from llama_index.core.workflow import Context, HumanResponseEvent
    from workflows.context.serializers import JsonSerializer

    resumed = agent.run(ctx=Context.from_dict(agent, saved, serializer=JsonSerializer()))
    await resumed.ctx.store.set("memory", memory)  # the context does not serialise it
    resumed.ctx.send_event(HumanResponseEvent(response=response))
    await resumed
