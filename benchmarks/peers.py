"""The contenders: toolstream's core, the decoding floor, and what users run today.

Each contender is a factory of *sessions*. A session is fed batches of one input kind (wire
text, dicts, SDK objects) and ``finish()``es into ``[(tool name, parsed arguments), ...]`` so
the harness can check that every contender really reassembled the call it was timed on.

What a framework does with the chunks is not written here: it is the reader in
`toolstream_core.app._peers` (``LangChainMerge``, ``LlamaIndexRead``, ``OpenAIChatState``,
``AnthropicAccumulate``, ``ToolstreamAssemble``), the same code ``toolstream demo`` runs on
replayed streams. This module prepares the input, hands it over batch by batch and keeps the
roster. The peers run their real code paths, with only the socket taken away:

- LangChain: ``ChatOpenAI._convert_chunk_to_generation_chunk`` (what ``ChatOpenAI._stream``
  runs on every chunk) then either the ``full = full + chunk`` loop its streaming docs teach or
  ``generate_from_stream`` (what ``invoke`` runs on a streaming model). ``ChatOpenAI`` also
  ``model_dump``s each SDK chunk and fires callbacks first; that cost is *not* counted here.
- LlamaIndex: ``OpenAI.stream_chat`` (its ``update_tool_calls`` accumulation, a
  ``ChatResponse`` per chunk) on an ``openai_client`` whose ``create`` returns the chunks, plus
  ``get_tool_calls_from_response`` on every streamed response, as ``FunctionAgent`` does.
- OpenAI SDK: ``ChatCompletionStreamState.handle_chunk`` then ``get_final_completion`` and one
  ``json.loads`` of the final arguments (which any caller needs to run the tool). No
  ``input_tools`` are passed, so it does not partial-parse on every chunk (its cheapest mode).
- Anthropic SDK: ``accumulate_event``, the function ``MessageStream`` runs on every event
  (``build_events`` is not counted).
"""

from __future__ import annotations

import collections
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

import toolstream_core.app._peers as readers

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
    SDK's own unvalidated construction (~180 µs) so multi-million-chunk inputs can be
    prepared; the objects are of the same class with the same fields. Chunks that do not
    validate (real streams from OpenAI-compatible servers, e.g. Azure's ``"object": ""``
    chunks) fall back to the SDK models' public ``construct`` (recursive, no validation),
    which is what the SDK does with every chunk.
    """
    from openai.types.chat import ChatCompletionChunk
    from pydantic import ValidationError

    return _validated(batch, ChatCompletionChunk.model_validate_json, ValidationError,
                      lambda wire: ChatCompletionChunk.construct(**json.loads(wire)))


@cache
def _anthropic_event_classes() -> tuple[dict[str, Any], Any]:
    """The classes of ``RawMessageStreamEvent`` by their ``type``, and the first of them."""
    from typing import get_args

    from anthropic.types import RawMessageStreamEvent

    members = get_args(get_args(RawMessageStreamEvent)[0])
    return {get_args(m.model_fields["type"].annotation)[0]: m for m in members}, members[0]


def _anthropic_construct(wire: str) -> Any:
    """An Anthropic event built as the SDK builds one it cannot validate: the class its
    ``type`` names (the union's first for an unknown type), by the public ``construct``."""
    value = json.loads(wire)
    by_type, first = _anthropic_event_classes()
    return by_type.get(value.get("type"), first).construct(**value)


def _anthropic_objects(batch: list[str]) -> list[Any]:
    """Anthropic stream events, validated (fast path) or constructed like the SDK does."""
    from pydantic import ValidationError

    return _validated(batch, _anthropic_adapter().validate_json, ValidationError,
                      _anthropic_construct)


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


# --- the readers, timed -------------------------------------------------------------------
#
# What each framework does with the chunks is `toolstream_core.app._peers`'s reader for it, the
# code ``toolstream demo`` runs on replayed streams; a session hands it the prepared batches.


def core_available() -> bool:
    try:
        from toolstream_core import AssembleConfig, Assembler  # noqa: F401
    except ImportError:
        return False
    return True


@cache
def core_config() -> Any:
    """Limits raised so 16 MiB calls are assembled, not failed by the 256 KiB default."""
    from toolstream_core import AssembleConfig

    return AssembleConfig.from_mapping({"max_tool_argument_bytes": 1 << 30})


class _Reading:
    """A reader fed each batch as prepared; ``finish`` is what it hands the tool runner."""

    def __init__(self, reader: readers.Reader) -> None:
        self.reader = reader

    def feed(self, batch: list[Any]) -> None:
        self.reader.feed(batch)

    def finish(self) -> Outcome:
        return readers.runnable(self.reader.calls())


def _core(workload: Workload) -> Session:
    return _Reading(readers.ToolstreamAssemble(workload.api, config=core_config()))


def _openai_state(workload: Workload) -> Session:
    return _Reading(readers.OpenAIChatState())


def _anthropic_accumulate(workload: Workload) -> Session:
    return _Reading(readers.AnthropicAccumulate())


def _langchain_merge_only(workload: Workload) -> Session:
    return _Reading(readers.LangChainGenerate())


# --- LangChain: ChatOpenAI's per-chunk conversion on the clock ----------------------------


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


class _Converted(_Reading):
    """Dict chunks through ``ChatOpenAI``'s conversion, then the reader: its messages (the
    ``full + chunk`` loop) or the generation chunks (``generate_from_stream``)."""

    def __init__(self, reader: readers.Reader, *, messages: bool) -> None:
        super().__init__(reader)
        self.convert = _langchain_converter()
        self.messages = messages

    def feed(self, batch: list[Any]) -> None:
        generations = [g for g in map(self.convert, batch) if g is not None]
        self.reader.feed([g.message for g in generations] if self.messages else generations)


def _langchain_loop(workload: Workload) -> Session:
    return _Converted(readers.LangChainMerge(), messages=True)


def _langchain_generate(workload: Workload) -> Session:
    return _Converted(readers.LangChainGenerate(), messages=False)


# --- LlamaIndex: the SDK client's create() returns the chunks fed so far -------------------


class _Starved(RuntimeError):
    """The LlamaIndex generator asked for a chunk the harness has not handed over yet."""


class _ChunkSource:
    """Stands in for the OpenAI SDK client: ``chat.completions.create()`` returns the chunks fed so far."""

    def __init__(self) -> None:
        self.queue: collections.deque[Any] = collections.deque()
        self.closed = False
        self.chat = self
        self.completions = self

    def restart(self) -> None:
        """A new stream: nothing queued, not closed."""
        self.queue.clear()
        self.closed = False

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
def _llamaindex_llm() -> tuple[Any, _ChunkSource]:
    """One ``OpenAI`` LLM (built once, off the clock) on one chunk source, given through the
    constructor's public ``openai_client`` parameter.

    Not a real ``openai.OpenAI`` on a custom transport: that would put the SDK's SSE decoding
    and ``construct_type`` of every chunk on the clock, while this contender, like its
    baseline ``core_openai_obj``, is fed ``ChatCompletionChunk`` objects prepared off it.
    """
    from llama_index.llms.openai import OpenAI

    source = _ChunkSource()
    return OpenAI(model="gpt-4.1", api_key="sk-bench", openai_client=source), source


class _LlamaIndex:
    """``OpenAI.stream_chat`` pulled as far as the chunks fed so far, into the reader."""

    def __init__(self, workload: Workload, *, parse_each: bool) -> None:
        llm, self.source = _llamaindex_llm()
        self.source.restart()
        self.reader = readers.LlamaIndexRead(llm, parse_each=parse_each)
        self.responses = self.reader.stream("go")

    def _ready(self) -> Iterator[Any]:
        while self.source.queue:
            yield next(self.responses)

    def feed(self, batch: list[Any]) -> None:
        self.source.queue.extend(batch)
        self.reader.feed(self._ready())

    def finish(self) -> Outcome:
        self.source.closed = True
        self.reader.feed(self.responses)
        return readers.runnable(self.reader.calls())


def _llamaindex(workload: Workload) -> Session:
    return _LlamaIndex(workload, parse_each=True)


def _llamaindex_noparse(workload: Workload) -> Session:
    return _LlamaIndex(workload, parse_each=False)


# --- the roster -----------------------------------------------------------------------------

OPENAI = ("openai-chat",)
ANTHROPIC = ("anthropic",)
ANY_API = ("openai-chat", "openai-responses", "anthropic", "gemini")

CONTENDERS: list[Contender] = [
    Contender("floor", "json.loads floor", ANY_API, "wire", _Floor, "floor"),
    Contender("core_dict", "toolstream (dicts)", ANY_API, "dict", _core, "core"),
    Contender("core_openai_obj", "toolstream (SDK objects)", OPENAI, "openai-object", _core, "core"),
    Contender(
        "core_anthropic_obj",
        "toolstream (SDK objects)",
        ANTHROPIC,
        "anthropic-object",
        _core,
        "core",
    ),
    Contender("lc_loop", "LangChain full+chunk loop", OPENAI, "dict", _langchain_loop, "peer", "core_dict"),
    Contender(
        "lc_generate",
        "LangChain generate_from_stream",
        OPENAI,
        "dict",
        _langchain_generate,
        "peer",
        "core_dict",
    ),
    Contender(
        "lc_merge_only",
        "LangChain generate_from_stream (merge only)",
        OPENAI,
        "langchain-chunk",
        _langchain_merge_only,
        "peer",
        "core_dict",
    ),
    Contender(
        "llamaindex",
        "LlamaIndex stream_chat + per-chunk get_tool_calls",
        OPENAI,
        "openai-object",
        _llamaindex,
        "peer",
        "core_openai_obj",
    ),
    Contender(
        "llamaindex_noparse",
        "LlamaIndex stream_chat (accumulation only)",
        OPENAI,
        "openai-object",
        _llamaindex_noparse,
        "peer",
        "core_openai_obj",
    ),
    Contender(
        "openai_sdk",
        "OpenAI SDK ChatCompletionStreamState",
        OPENAI,
        "openai-object",
        _openai_state,
        "peer",
        "core_openai_obj",
    ),
    Contender(
        "anthropic_sdk",
        "Anthropic SDK accumulate_event",
        ANTHROPIC,
        "anthropic-object",
        _anthropic_accumulate,
        "peer",
        "core_anthropic_obj",
    ),
]

BY_KEY = {c.key: c for c in CONTENDERS}
