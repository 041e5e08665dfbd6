"""The contenders: toolstream's core, the decoding floor, and what users run today.

Each contender is a factory of *sessions*. A session is fed batches of one input kind (wire
text, dicts, SDK objects) and ``finish()``es into ``[(tool name, parsed arguments), ...]`` so
the harness can check that every contender really reassembled the call it was timed on.

The peers are driven through their real code paths, with only the socket taken away:

- LangChain: ``ChatOpenAI._convert_chunk_to_generation_chunk`` (what ``ChatOpenAI._stream``
  runs on every chunk) then either the ``full = full + chunk`` loop its streaming docs teach or
  ``generate_from_stream`` (what ``invoke`` runs on a streaming model). ``ChatOpenAI`` also
  ``model_dump``s each SDK chunk and fires callbacks first; that cost is *not* counted here.
- LlamaIndex: ``OpenAI.stream_chat`` (its ``update_tool_calls`` accumulation, a
  ``ChatResponse`` per chunk) with the SDK client's ``create`` returning the chunks, plus
  ``get_tool_calls_from_response`` on every streamed response, as ``FunctionAgent`` does.
- OpenAI SDK: ``ChatCompletionStreamState.handle_chunk`` then ``get_final_completion`` and one
  ``json.loads`` of the final arguments (which any caller needs to run the tool). No
  ``input_tools`` are passed, so it does not partial-parse on every chunk (its cheapest mode).
- Anthropic SDK: ``accumulate_event``, the function ``MessageStream`` runs on every event
  (``build_events`` is not counted).
"""

from __future__ import annotations

import collections
import inspect
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

from benchmarks.workloads import Workload

Outcome = list[tuple[str, Any]] | None


class Session(Protocol):
    """One consumer of one stream."""

    def feed(self, batch: list[Any]) -> None: ...

    def finish(self) -> Outcome: ...


@dataclass(frozen=True)
class Contender:
    """A named way of consuming a stream.

    ``baseline`` names the toolstream contender this one is compared with: the one fed the
    same input kind (dict-fed peers against the core fed dicts, SDK-object peers against the
    core fed SDK objects).
    """

    key: str
    label: str
    apis: tuple[str, ...]
    input_kind: str
    start: Callable[[Workload], Session]
    role: str  # "floor" | "core" | "peer"
    baseline: str | None = None


# --- input preparation (outside the timed section) ----------------------------------------


@cache
def _anthropic_adapter() -> Any:
    from anthropic.types import RawMessageStreamEvent
    from pydantic import TypeAdapter

    return TypeAdapter(RawMessageStreamEvent)


def _openai_objects(batch: list[str]) -> list[Any]:
    """``ChatCompletionChunk`` objects, the class the OpenAI SDK yields.

    Built with ``model_validate_json`` (pydantic-core, ~11 µs a chunk here) rather than the
    SDK's own ``construct_type`` (~180 µs) so multi-million-chunk inputs can be prepared; the
    objects are of the same class with the same fields. Chunks that do not validate (real
    streams from OpenAI-compatible servers, e.g. Azure's ``"object": ""`` chunks) fall back to
    ``construct_type``, which is what the SDK does with every chunk.
    """
    from openai._models import construct_type
    from openai.types.chat import ChatCompletionChunk
    from pydantic import ValidationError

    return _validated(batch, ChatCompletionChunk.model_validate_json, ValidationError,
                      lambda wire: construct_type(type_=ChatCompletionChunk, value=json.loads(wire)))


def _anthropic_objects(batch: list[str]) -> list[Any]:
    """Anthropic stream events, validated (fast path) or constructed like the SDK does."""
    from anthropic._models import construct_type
    from anthropic.types import RawMessageStreamEvent
    from pydantic import ValidationError

    return _validated(batch, _anthropic_adapter().validate_json, ValidationError,
                      lambda wire: construct_type(type_=RawMessageStreamEvent, value=json.loads(wire)))


def _validated(batch: list[str], validate: Callable[[str], Any], invalid: type[Exception],
               construct: Callable[[str], Any]) -> list[Any]:
    """Each wire string validated (fast path), or built by ``construct`` where it does not validate."""
    out = []
    for wire in batch:
        try:
            out.append(validate(wire))
        except invalid:
            out.append(construct(wire))
    return out


def _langchain_chunks(batch: list[dict[str, Any]]) -> list[Any]:
    convert = _langchain_converter()
    return [g for g in map(convert, batch) if g is not None]


def _same(batch: list[Any]) -> list[Any]:
    return batch


#: input kind -> (what the workload hands over: "wire" text or "dict", how to convert it).
PREPARERS: dict[str, tuple[str, Callable[[list[Any]], list[Any]]]] = {
    "wire": ("wire", _same),
    "dict": ("dict", _same),
    "openai-object": ("wire", _openai_objects),
    "anthropic-object": ("wire", _anthropic_objects),
    "langchain-chunk": ("dict", _langchain_chunks),
}


# --- the floor ------------------------------------------------------------------------------


class _Floor:
    """``json.loads`` of every chunk's wire text: what any consumer pays just to decode."""

    def __init__(self, workload: Workload) -> None:
        self.count = 0

    def feed(self, batch: list[str]) -> None:
        loads = json.loads
        for wire in batch:
            loads(wire)
        self.count += len(batch)

    def finish(self) -> Outcome:
        return None


# --- toolstream -----------------------------------------------------------------------------


def core_available() -> bool:
    try:
        from toolstream_core import AssembleConfig, Assembler  # noqa: F401
    except ImportError:
        return False
    return True


@cache
def _core_config() -> Any:
    """Limits raised so 16 MiB calls are assembled, not failed by the 256 KiB default."""
    from toolstream_core import AssembleConfig

    return AssembleConfig.from_mapping({"max_tool_argument_bytes": 1 << 30})


class _Core:
    def __init__(self, workload: Workload) -> None:
        from toolstream_core import Assembler

        self.assembler = Assembler(config=_core_config(), provider=workload.api)

    def feed(self, batch: list[Any]) -> None:
        feed = self.assembler.feed
        for chunk in batch:
            feed(chunk)

    def finish(self) -> Outcome:
        turn = self.assembler.finish()
        return [(call.name, call.arguments) for call in turn.committed]


# --- LangChain ------------------------------------------------------------------------------


@cache
def _chat_openai() -> Any:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model="gpt-4.1", api_key="sk-bench", streaming=True)


@cache
def _langchain_converter() -> Callable[[dict[str, Any]], Any]:
    """``ChatOpenAI``'s own per-chunk conversion, dict chunk -> ``ChatGenerationChunk``."""
    from langchain_core.messages import AIMessageChunk

    model = _chat_openai()

    def convert(chunk: dict[str, Any]) -> Any:
        return model._convert_chunk_to_generation_chunk(chunk, AIMessageChunk, {})

    return convert


def _lc_outcome(message: Any) -> Outcome:
    return [(tc["name"], tc["args"]) for tc in message.tool_calls]


class _LangChainLoop:
    """``full = chunk if full is None else full + chunk`` over ``AIMessageChunk``s."""

    def __init__(self, workload: Workload) -> None:
        self.convert = _langchain_converter()
        self.full: Any = None

    def feed(self, batch: list[dict[str, Any]]) -> None:
        convert = self.convert
        full = self.full
        for chunk in batch:
            generation = convert(chunk)
            if generation is None:
                continue
            full = generation.message if full is None else full + generation.message
        self.full = full

    def finish(self) -> Outcome:
        return _lc_outcome(self.full)


class _LangChainGenerate:
    """Per-chunk conversion, then ``generate_from_stream`` over the collected chunks."""

    def __init__(self, workload: Workload) -> None:
        self.convert = _langchain_converter()
        self.chunks: list[Any] = []

    def feed(self, batch: list[dict[str, Any]]) -> None:
        convert = self.convert
        append = self.chunks.append
        for chunk in batch:
            generation = convert(chunk)
            if generation is not None:
                append(generation)

    def finish(self) -> Outcome:
        from langchain_core.language_models.chat_models import generate_from_stream

        result = generate_from_stream(iter(self.chunks))
        return _lc_outcome(result.generations[0].message)


class _LangChainMergeOnly(_LangChainGenerate):
    """``generate_from_stream`` alone, on chunks converted outside the timed section."""

    def feed(self, batch: list[Any]) -> None:
        self.chunks.extend(batch)


# --- LlamaIndex -----------------------------------------------------------------------------


class _Starved(RuntimeError):
    """The LlamaIndex generator asked for a chunk the harness has not handed over yet."""


class _ChunkSource:
    """Stands in for the OpenAI SDK stream: ``create()`` returns the chunks fed so far."""

    def __init__(self) -> None:
        self.queue: collections.deque[Any] = collections.deque()
        self.closed = False
        self.chat = self
        self.completions = self

    def create(self, **_: Any) -> Iterator[Any]:
        return self._iterate()

    def _iterate(self) -> Iterator[Any]:
        while True:
            if self.queue:
                yield self.queue.popleft()
            elif self.closed:
                return
            else:
                raise _Starved("chunk requested before it was fed")


@cache
def _llamaindex_llm() -> Any:
    from llama_index.llms.openai import OpenAI

    return OpenAI(model="gpt-4.1", api_key="sk-bench")


class _LlamaIndex:
    """``OpenAI.stream_chat`` plus, optionally, ``get_tool_calls_from_response`` per chunk."""

    per_chunk_parse = True

    def __init__(self, workload: Workload) -> None:
        from llama_index.core.llms import ChatMessage

        self.llm = _llamaindex_llm()
        self.source = _ChunkSource()
        self.llm._client = self.source
        self.responses = self.llm.stream_chat([ChatMessage(role="user", content="go")])
        self.last: Any = None

    def _take(self, response: Any) -> None:
        self.last = response
        if self.per_chunk_parse:
            self.llm.get_tool_calls_from_response(response, error_on_no_tool_call=False)

    def feed(self, batch: list[Any]) -> None:
        self.source.queue.extend(batch)
        while self.source.queue:
            self._take(next(self.responses))

    def finish(self) -> Outcome:
        self.source.closed = True
        for response in self.responses:
            self._take(response)
        calls = self.llm.get_tool_calls_from_response(self.last, error_on_no_tool_call=False)
        return [(call.tool_name, call.tool_kwargs) for call in calls]


class _LlamaIndexNoParse(_LlamaIndex):
    per_chunk_parse = False


# --- vendor SDKs ----------------------------------------------------------------------------


class _OpenAIStreamState:
    def __init__(self, workload: Workload) -> None:
        from openai.lib.streaming.chat import ChatCompletionStreamState

        self.state: Any = ChatCompletionStreamState()

    def feed(self, batch: list[Any]) -> None:
        handle = self.state.handle_chunk
        for chunk in batch:
            handle(chunk)

    def finish(self) -> Outcome:
        message = self.state.get_final_completion().choices[0].message
        return [(tc.function.name, json.loads(tc.function.arguments or "{}")) for tc in message.tool_calls or []]


@cache
def _accumulate() -> tuple[Callable[..., Any], bool]:
    from anthropic.lib.streaming._messages import accumulate_event

    takes_bufs = "json_bufs" in inspect.signature(accumulate_event).parameters
    return accumulate_event, takes_bufs


class _AnthropicAccumulate:
    def __init__(self, workload: Workload) -> None:
        self.accumulate, takes_bufs = _accumulate()
        self.extra: dict[str, Any] = {"json_bufs": {}} if takes_bufs else {}
        self.snapshot: Any = None

    def feed(self, batch: list[Any]) -> None:
        accumulate, extra = self.accumulate, self.extra
        snapshot = self.snapshot
        for event in batch:
            snapshot = accumulate(event=event, current_snapshot=snapshot, **extra)
        self.snapshot = snapshot

    def finish(self) -> Outcome:
        return [(b.name, b.input) for b in self.snapshot.content if b.type == "tool_use"]


# --- the roster -----------------------------------------------------------------------------

OPENAI = ("openai-chat",)
ANTHROPIC = ("anthropic",)
ANY_API = ("openai-chat", "openai-responses", "anthropic", "gemini")

CONTENDERS: list[Contender] = [
    Contender("floor", "json.loads floor", ANY_API, "wire", _Floor, "floor"),
    Contender("core_dict", "toolstream (dicts)", ANY_API, "dict", _Core, "core"),
    Contender("core_openai_obj", "toolstream (SDK objects)", OPENAI, "openai-object", _Core, "core"),
    Contender(
        "core_anthropic_obj",
        "toolstream (SDK objects)",
        ANTHROPIC,
        "anthropic-object",
        _Core,
        "core",
    ),
    Contender("lc_loop", "LangChain full+chunk loop", OPENAI, "dict", _LangChainLoop, "peer", "core_dict"),
    Contender(
        "lc_generate",
        "LangChain generate_from_stream",
        OPENAI,
        "dict",
        _LangChainGenerate,
        "peer",
        "core_dict",
    ),
    Contender(
        "lc_merge_only",
        "LangChain generate_from_stream (merge only)",
        OPENAI,
        "langchain-chunk",
        _LangChainMergeOnly,
        "peer",
        "core_dict",
    ),
    Contender(
        "llamaindex",
        "LlamaIndex stream_chat + per-chunk get_tool_calls",
        OPENAI,
        "openai-object",
        _LlamaIndex,
        "peer",
        "core_openai_obj",
    ),
    Contender(
        "llamaindex_noparse",
        "LlamaIndex stream_chat (accumulation only)",
        OPENAI,
        "openai-object",
        _LlamaIndexNoParse,
        "peer",
        "core_openai_obj",
    ),
    Contender(
        "openai_sdk",
        "OpenAI SDK ChatCompletionStreamState",
        OPENAI,
        "openai-object",
        _OpenAIStreamState,
        "peer",
        "core_openai_obj",
    ),
    Contender(
        "anthropic_sdk",
        "Anthropic SDK accumulate_event",
        ANTHROPIC,
        "anthropic-object",
        _AnthropicAccumulate,
        "peer",
        "core_anthropic_obj",
    ),
]

BY_KEY = {c.key: c for c in CONTENDERS}
