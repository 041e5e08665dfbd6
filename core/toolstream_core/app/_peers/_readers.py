"""The readers: how each framework turns a stream of chunks into the calls it hands the
tool runner, and the verdicts and call views they report in.

Shared by ``toolstream demo`` (`_engines` feeds a reader a replayed stream) and the
benchmarks (``benchmarks/peers.py`` feeds it pre-built chunks and times it).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol, cast

from toolstream_core import Provider, Turn

# Verdicts: what happens to one call in each engine.
RUN = "run"  # handed to the tool runner with these arguments
INVALID = "invalid"  # kept aside by the engine; not run (and nothing answers its id)
COMMIT = "commit"  # toolstream: committed, safe to run
REJECT = "reject"  # toolstream: not run, one paired error result
DROP = "drop"  # toolstream: removed with protocol repair


@dataclass
class CallView:
    """One tool call as an engine would hand it on."""

    name: str | None
    id: str | None
    verdict: str
    arguments: Any = None
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return named_fields(self, "name", "id", "verdict", "arguments", "reason")


def named_fields(obj: object, *names: str) -> dict[str, Any]:
    """The named attributes in that order: the JSON key order users and golden files see."""
    return {name: getattr(obj, name) for name in names}


class EngineUnavailable(Exception):
    """An optional package the engine needs is not installed."""


def need(extra: str, importer: Callable[[], Any]) -> Any:
    """``importer()``, or `EngineUnavailable` naming the extra that installs what it imports:
    a missing framework is an "n/a" column, never a crash."""
    try:
        return importer()
    except ImportError as exc:
        raise EngineUnavailable(extra) from exc


def loaded(name: str | None, call_id: str | None, text: str | None, parsed: Any) -> CallView:
    """An OpenAI call as the runner gets it: parsed by the SDK, else ``json.loads``."""
    if parsed is not None:
        return CallView(name, call_id, RUN, parsed)
    try:
        return CallView(name, call_id, RUN, json.loads(text or "{}"))
    except json.JSONDecodeError as exc:
        return CallView(name, call_id, INVALID, None, f"json.loads: {exc.msg}")


# --------------------------------------------------------------------------- readers
#
# How each framework turns a stream of chunks into the calls it hands the tool runner.
# The demo feeds a reader what a replayed exchange produced; the benchmarks
# (``benchmarks/peers.py``) feed the same reader pre-built chunks, batch by batch, and
# time it. ``feed`` takes an iterable so a timed batch costs one call, not one a chunk.


class Reader(Protocol):
    """One framework's stream-to-calls code, fed chunks and asked for the calls at the end."""

    def feed(self, chunks: Iterable[Any]) -> None: ...

    def calls(self) -> list[CallView]: ...


class LangChainMerge:
    """``full = chunk if full is None else full + chunk`` over ``AIMessageChunk``s.

    The loop LangChain's streaming docs teach; the runner gets ``full.tool_calls``
    (``parse_partial_json`` under the hood) and ``full.invalid_tool_calls`` are not run.
    """

    def __init__(self) -> None:
        self.full: Any = None

    def feed(self, chunks: Iterable[Any]) -> None:
        full = self.full
        for chunk in chunks:
            full = chunk if full is None else full + chunk
        self.full = full

    def calls(self) -> list[CallView]:
        return [] if self.full is None else langchain_calls(self.full)


class LangChainGenerate:
    """``generate_from_stream`` over the ``ChatGenerationChunk``s: what ``invoke`` runs on a
    streaming model (the demo shows the docs' loop, `LangChainMerge`; the benchmarks time both)."""

    def __init__(self) -> None:
        self.chunks: list[Any] = []

    def feed(self, chunks: Iterable[Any]) -> None:
        self.chunks.extend(chunks)

    def calls(self) -> list[CallView]:
        from langchain_core.language_models.chat_models import generate_from_stream

        result = generate_from_stream(iter(self.chunks))
        return langchain_calls(result.generations[0].message)


def langchain_calls(message: Any) -> list[CallView]:
    """An ``AIMessage``'s calls: ``tool_calls`` run, ``invalid_tool_calls`` kept aside."""
    calls = [CallView(tc.get("name"), tc.get("id"), RUN, tc.get("args")) for tc in message.tool_calls]
    for bad in message.invalid_tool_calls:
        calls.append(CallView(bad.get("name"), bad.get("id"), INVALID, None,
                              bad.get("error") or "invalid_tool_calls"))
    return calls


class LlamaIndexRead:
    """``llm.stream_chat(...)`` to the last response, then ``get_tool_calls_from_response``.

    ``parse_each`` also parses every streamed response, as ``FunctionAgent`` does to show
    calls as they grow (the benchmarks time it both ways; the demo reads the last only).
    """

    def __init__(self, llm: Any, *, parse_each: bool = False) -> None:
        self.llm = llm
        self.parse_each = parse_each
        self.last: Any = None

    def stream(self, prompt: str) -> Iterator[Any]:
        """The framework's own stream of ``ChatResponse``s for one user message."""
        chat_message = need(
            "llamaindex", lambda: __import__("llama_index.core.llms", fromlist=["x"]).ChatMessage
        )
        return cast(Iterator[Any], self.llm.stream_chat([chat_message(role="user", content=prompt)]))

    def feed(self, chunks: Iterable[Any]) -> None:
        parse = self.llm.get_tool_calls_from_response if self.parse_each else None
        for response in chunks:
            self.last = response
            if parse is not None:
                parse(response, error_on_no_tool_call=False)

    def calls(self) -> list[CallView]:
        if self.last is None:
            return []
        found = self.llm.get_tool_calls_from_response(self.last, error_on_no_tool_call=False)
        return [CallView(sel.tool_name, sel.tool_id or None, RUN, sel.tool_kwargs) for sel in found]


class OpenAIChatState:
    """``ChatCompletionStreamState``: what ``chat.completions.stream`` runs on each chunk.

    The helper passes over chunks that are not ``chat.completion.chunk`` (Azure's content
    filter events) and so does this. ``get_final_completion`` parses the arguments of
    ``strict`` input tools; the rest get the ``json.loads`` every example writes.
    """

    def __init__(self, input_tools: list[Any] | None = None) -> None:
        from openai.lib.streaming.chat import ChatCompletionStreamState

        self.state: Any = (ChatCompletionStreamState(input_tools=input_tools) if input_tools
                           else ChatCompletionStreamState())

    def feed(self, chunks: Iterable[Any]) -> None:
        handle = self.state.handle_chunk
        for chunk in chunks:
            if chunk.object == "chat.completion.chunk":
                handle(chunk)

    def calls(self) -> list[CallView]:
        calls: list[CallView] = []
        for choice in self.state.get_final_completion().choices:
            for tc in choice.message.tool_calls or []:
                function = getattr(tc, "function", None)
                if function is None:
                    continue
                parsed = getattr(function, "parsed_arguments", None)
                calls.append(loaded(function.name, tc.id, function.arguments, parsed))
        return calls


class AnthropicAccumulate:
    """``accumulate_event``: what ``messages.stream`` runs on each event, then its snapshot's
    ``tool_use`` blocks (``build_events``, the helper's per-event UI events, is not run)."""

    def __init__(self) -> None:
        self.accumulate, takes_bufs = _accumulator()
        self.extra: dict[str, Any] = {"json_bufs": {}} if takes_bufs else {}
        self.snapshot: Any = None

    def feed(self, chunks: Iterable[Any]) -> None:
        accumulate, extra = self.accumulate, self.extra
        snapshot = self.snapshot
        for event in chunks:
            snapshot = accumulate(event=event, current_snapshot=snapshot, **extra)
        self.snapshot = snapshot

    def calls(self) -> list[CallView]:
        if self.snapshot is None:  # get_final_message asserts the same
            raise AssertionError
        return [CallView(block.name, block.id, RUN, block.input)
                for block in self.snapshot.content if getattr(block, "type", None) == "tool_use"]


@cache
def _accumulator() -> tuple[Callable[..., Any], bool]:
    """The SDK's ``accumulate_event``, and whether this release threads ``json_bufs`` through it."""
    from anthropic.lib.streaming._messages import accumulate_event

    return accumulate_event, "json_bufs" in inspect.signature(accumulate_event).parameters


class ToolstreamAssemble:
    """toolstream's `Assembler` fed every chunk; its turn's calls committed, rejected or dropped."""

    def __init__(self, provider: str, *, tools: Mapping[str, Any] | None = None,
                 config: Any = None) -> None:
        from toolstream_core import Assembler

        self.assembler = Assembler(tools=tools, config=config, provider=cast(Provider, provider))

    def feed(self, chunks: Iterable[Any]) -> None:
        feed = self.assembler.feed
        for chunk in chunks:
            feed(chunk)

    def finish(self, error: BaseException | None = None) -> Turn:
        """The turn, with the transport marked incomplete when ``error`` ended the stream."""
        return self.assembler.finish(transport_complete=error is None, error=error)

    def calls(self) -> list[CallView]:
        return turn_calls(self.finish())


def turn_calls(turn: Turn) -> list[CallView]:
    """Each call of a turn as the runner sees it: committed, rejected with a reason, dropped."""
    calls: list[CallView] = []
    for call in turn.calls:
        committed = str(getattr(call.state, "value", call.state)) == "committed"
        reason = None if call.reason is None else str(getattr(call.reason, "value", call.reason))
        calls.append(CallView(call.name, call.id, COMMIT if committed else REJECT,
                              call.arguments if committed else None, reason))
    for call in turn.dropped:
        calls.append(CallView(call.name, call.id, DROP, None, "invalid_json"))
    return calls


def runnable(calls: Iterable[CallView]) -> list[tuple[str | None, Any]]:
    """``(name, arguments)`` of the calls a tool runner would run: run or committed."""
    return [(call.name, call.arguments) for call in calls if call.verdict in (RUN, COMMIT)]
