"""One gated model call as LangChain sees it: its chunks in, chunks out, minus the guesses.

The call itself is a ``toolstream_core.integration.GateSession`` (the same object under the
LlamaIndex shim: the tap's sink, the core, the verdict, the observers, the fault policy). A
``ChunkStream`` is what is LangChain's about it, between the wrapped integration and whoever
consumes its chunks:

- it taps the model (``_tap``) so the session gets the vendor's own events, or converts
  LangChain's chunks back (``_convert``) for models it cannot tap;
- it passes text, reasoning, usage and metadata through chunk by chunk, so streaming UIs and
  LangGraph's ``stream_mode="messages"`` still see every token;
- it *withholds* everything that describes a client tool call (``tool_call_chunks``,
  Anthropic ``tool_use`` / ``input_json_delta`` blocks, Responses ``function_call`` blocks,
  ``additional_kwargs["tool_calls"|"function_call"]``), because LangChain aggregates those with
  ``parse_partial_json`` and would turn ``{"path":"/tmp/a`` into a runnable call;
- at the end it emits one last chunk holding the committed calls (arguments from the core's
  strict parse), the vendor blocks of the calls that still belong in the history, and the
  session's decision record in ``response_metadata["toolstream"]``.

So *any* aggregation of the chunks (``generate_from_stream``, ``chunk + chunk``, LangGraph's
message streaming) yields ``tool_calls`` = committed calls only.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Generator, Iterator, Mapping
from contextlib import aclosing, closing
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.chat_models import generate_from_stream
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.tool import tool_call_chunk as make_tool_call_chunk
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from toolstream_core import AssembleConfig, AssemblerEvent, ToolCall, Turn
from toolstream_core.integration import FINISH, RECORD_KEY, GateSession, HistoryPolicy, OnStreamError, history_args

from ._convert import ChunkConverter, is_test_double, message_to_events
from ._link import GateLink, current_run, handed, handing
from ._messages import MESSAGES
from ._observability import graph_progress, run_span
from ._outgoing import for_partner_converter
from ._tap import static_provider, tap_family, tap_model

__all__ = ["CANCELLED", "ChunkStream", "OnStreamError"]

_log = logging.getLogger(__name__)

#: Why a run's open calls were cancelled when its consumer stopped reading (or cancelled the task).
CANCELLED = "the model call was cancelled mid-stream"

# Content blocks that describe a client tool call, per integration.
_TOOL_BLOCK_TYPES = frozenset({
    "tool_use",            # ChatAnthropic: block start (id, name, input)
    "input_json_delta",    # ChatAnthropic: argument fragment
    "function_call",       # ChatOpenAI Responses: item start and argument deltas
    "custom_tool_call",    # ChatOpenAI Responses: free-form tool input
    "tool_call_chunk",     # output_version="v1"
    "tool_call",
    "invalid_tool_call",
})
_DROP_KWARGS = ("tool_calls", "function_call")
_GEMINI_SIGNATURES = "__gemini_function_call_thought_signatures__"


# What a chunk's message loses when the gate withholds its tool-call parts.
_NO_TOOL_PARTS: dict[str, Any] = {
    "tool_calls": [],
    "invalid_tool_calls": [],
    "tool_call_chunks": [],
    "chunk_position": None,
}


def _without_tool_parts(
    chunk: ChatGenerationChunk, message: AIMessageChunk, content: Any, additional_kwargs: dict[str, Any]
) -> ChatGenerationChunk:
    """``chunk`` rebuilt with its message minus the tool-call parts, through ``model_copy``.

    ``model_copy(update=...)`` is pydantic's public way to change fields without re-running
    the validators: they have nothing to do here (the values come from a message validated
    already, and the tool-call parsing they would do is what was removed). Only tool blocks
    left the content and they carry no text, so the generation's ``text`` stays right.
    """
    clean = message.model_copy(update={
        "content": content, "additional_kwargs": additional_kwargs,
        "response_metadata": dict(message.response_metadata), **_NO_TOOL_PARTS})
    return chunk.model_copy(update={"message": clean})


class ChunkStream:
    """LangChain's side of one gated call: one per ``_stream``/``_astream``/``_generate``.

    Built with the call's messages, it taps the model and prepares the request once
    (``messages``: the history step, then what the partner's converter serialises). Then one
    loop reads, observes, sanitises and emits: `stream` and `astream` are its sync and async
    twins, short loops over the same non-I/O steps (`kept` of a chunk, `answer_chunks` for a whole
    answer, `stopping`, `close`). Not thread-safe.
    """

    def __init__(
        self,
        model: BaseChatModel,
        messages: list[BaseMessage],
        *,
        tools: Mapping[str, Any] | None,
        config: AssembleConfig,
        history: HistoryPolicy,
        run_manager: Any = None,
        output_limit: int | None = None,
        on_event: Callable[[AssemblerEvent], None] | None = None,
        on_turn: Callable[[Turn], None] | None = None,
        on_stream_error: OnStreamError = GateSession.DEFAULT_ON_STREAM_ERROR,
        run_budget: int | None = None,
        on_early_commit: Callable[[ToolCall], None] | None = None,
        unstreamed: bool = False,
    ) -> None:
        # ``run_manager``: the one LangChain handed this call (its new tokens are reported to
        # it); the model run's (``_generate_with_cache``) otherwise, for the trace alone.
        self.told = run_manager
        outer = current_run()
        self.run_manager = run_manager or (outer.run_manager if outer is not None else None)
        self._graph = graph_progress(config)  # LangGraph's custom stream, inside a graph only
        self.link = GateLink()
        # ``output_limit`` is the request's output-token limit (the backstop of DESIGN 5.5)
        # guessed from the model's settings; the tap replaces it with the request the SDK
        # really sends. The turn's span goes under the model run's span (``run_span``).
        self.session = GateSession(
            tools=tools, config=config, provider=static_provider(model), limit=output_limit,
            on_event=on_event, on_turn=on_turn, forward=self._forward,
            on_stream_error=on_stream_error, parent=self._span, log=_log,
            run_budget=run_budget, on_early_commit=on_early_commit)
        self.unstreamed = unstreamed  # the wrapped model answers this call whole
        self._model_class: type = type(model)
        self._declared = FINISH.signal_of(self._model_class)
        self._double = is_test_double(self._model_class)
        self._converter = ChunkConverter(self._declared, double=self._double)
        self._shadow: list[dict[str, Any]] = []  # converted chunks, used only if the tap saw nothing
        self._withheld: list[dict[str, Any]] = []
        self._signatures: dict[str, Any] = {}
        self._lc_ids: list[str] = []
        self._content_is_list = False
        # The first chunk's response metadata, once one went out: a later chunk that lost its
        # tool parts and brings nothing beyond it is not yielded at all (``_sanitize``).
        self._said: dict[str, Any] | None = None
        self._error: Exception | None = None  # what ended the read of the stream (``stopped``)
        tapped = tap_model(model, self.session)
        self.model: BaseChatModel = tapped if tapped is not None else model
        if tapped is None:
            self.session.mode = "chunks"
            self.session.begin("openai-chat")  # converted chunks speak Chat Completions
        # The request, prepared once: the history step, then the partner converter's view.
        self.messages = for_partner_converter(model, MESSAGES.prepare(messages, tap_family(model), history, model))

    def _span(self) -> Any:
        return run_span(self.run_manager)

    def _forward(self, event: AssemblerEvent) -> None:
        """LangChain's own channels for a UI event: the graph's custom stream, the run's link
        (``ToolstreamCallbackHandler``); the user's ``on_event`` follows in the session."""
        if self._graph is not None:
            self._graph.write(event)
        self.link.publish_one(event)

    # -- the loop, sync and async --------------------------------------------------------------

    def stream(self, source: Iterator[ChatGenerationChunk] | ChatResult) -> Iterator[ChatGenerationChunk]:
        """The gated chunks of ``source``: the wrapped model's stream, or its whole answer."""
        with closing(self._read(source)) as outs:
            for out in outs:
                with _Handing(self, out):
                    yield out

    async def astream(self, source: AsyncIterator[ChatGenerationChunk] | Awaitable[ChatResult],
                      ) -> AsyncIterator[ChatGenerationChunk]:
        """`stream` for ``_astream``: ``source`` is the stream, or the awaitable whole answer."""
        async with aclosing(self._aread(source)) as outs:
            async for out in outs:
                async with _Handing(self, out):
                    yield out

    def _read(self, source: Iterator[ChatGenerationChunk] | ChatResult) -> Generator[ChatGenerationChunk]:
        if isinstance(source, ChatResult):
            yield from self.answer_chunks(source)
            return
        with _Reading(self, source, asynchronous=False) as chunks:
            for chunk in chunks:
                if (out := self.kept(chunk)) is not None:
                    yield out
                if self.stopping():
                    break
        yield self.close()

    async def _aread(self, source: AsyncIterator[ChatGenerationChunk] | Awaitable[ChatResult],
                     ) -> AsyncGenerator[ChatGenerationChunk]:
        if inspect.isawaitable(source):
            for piece in self.answer_chunks(await source):
                yield piece
            return
        async with _Reading(self, source, asynchronous=True) as chunks:
            async for chunk in chunks:
                if (out := self.kept(chunk)) is not None:
                    yield out
                if self.stopping():
                    break
        yield self.close()

    # -- the steps -------------------------------------------------------------------------------

    def kept(self, chunk: ChatGenerationChunk) -> ChatGenerationChunk | None:
        """Feed the fallback view, withhold tool-call parts, return what may stream on:
        ``None`` when nothing is left of the chunk (`_sanitize`)."""
        # With the tap open the vendor events are the evidence: converting the chunk as well
        # would be thrown away, so it is done only where it is read.
        session = self.session
        if session.mode == "chunks":
            for event in self._converter.chunk_events(chunk):
                session.observe(event)
        elif session.state == "none":
            self._shadow.extend(self._converter.chunk_events(chunk))
        return self._sanitize(chunk)

    def answer_chunks(self, result: ChatResult) -> Iterator[ChatGenerationChunk]:
        """The wrapped model did not stream: its complete answer gated (one event set), as the
        chunks to emit: the answer minus its tool-call parts, then the last chunk (the turn is
        decided once the first went out, as at the end of a stream)."""
        generation = result.generations[0]
        message = generation.message
        if not isinstance(message, AIMessage):
            # no tool call can be in it; its content goes on (the message type cannot: the
            # gate's answer is a chunk stream)
            first = ChatGenerationChunk(message=AIMessageChunk(content=message.content, id=message.id))
        else:
            # ``_generate`` keeps the finish reason in ``generation_info``; BaseChatModel only
            # merges it into the message later, on its own path.
            info = {**(result.llm_output or {}), **(generation.generation_info or {})}
            if info:
                message = message.model_copy(
                    update={"response_metadata": {**info, **message.response_metadata}})
            first = self._observe_message(message)
        yield first
        yield self.close()

    def whole(self, result: ChatResult) -> ChatResult:
        """The wrapped model's whole answer to ``invoke``, gated; one that is not an
        ``AIMessage`` holds no tool call and is returned as the wrapped model gave it."""
        if not (result.generations and isinstance(result.generations[0].message, AIMessage)):
            self._decide(None)
            return result
        return generate_from_stream(self.answer_chunks(result))

    def _observe_message(self, message: AIMessage) -> ChatGenerationChunk:
        """A non-streamed answer: one complete event set, judged on the vendor's own response
        where the tap saw it (Bedrock ``converse``, Ollama, Cohere), else on LangChain's message."""
        session = self.session
        if session.mode != "tap" or session.state == "none":
            session.mode = "message"
            session.begin("openai-chat")
            for event in message_to_events(message, self._declared, double=self._double):
                session.observe(event)
        calls = [*message.tool_calls, *message.invalid_tool_calls]
        chunk = AIMessageChunk(
            content=message.content,
            additional_kwargs=dict(message.additional_kwargs),
            response_metadata=dict(message.response_metadata),
            usage_metadata=message.usage_metadata,
            id=message.id,
            tool_call_chunks=[
                make_tool_call_chunk(name=c.get("name"), args=None, id=c.get("id"), index=i)
                for i, c in enumerate(calls)
            ],
        )
        out = self._sanitize(ChatGenerationChunk(message=chunk))
        assert out is not None  # the first chunk always goes out
        return out

    def _sanitize(self, chunk: ChatGenerationChunk) -> ChatGenerationChunk | None:
        """``chunk`` minus its tool-call parts; ``None`` for a chunk that carried nothing else.

        Such a chunk (an argument fragment, most of a tool call's stream) would reach LangChain
        as an empty chunk that its aggregation keeps to the end: memory growing with the
        number of fragments, not with what the user sees (issue 37.3). The first chunk always
        goes out (it carries the message's id and metadata), and so does one with text, kept
        content blocks, other keyword arguments, usage, generation info or metadata the first
        did not have."""
        message = chunk.message
        if not isinstance(message, AIMessageChunk):
            return chunk
        first = self._said is None
        if first:
            self._said = dict(message.response_metadata)
        had_tool_parts = bool(message.tool_call_chunks)
        for tcc in message.tool_call_chunks:
            if tcc.get("id") and tcc.get("name") and tcc["id"] not in self._lc_ids:
                self._lc_ids.append(str(tcc["id"]))
        content: Any = message.content
        if isinstance(content, list):
            self._content_is_list = True
            kept = []
            for block in content:
                if isinstance(block, dict) and block.get("type") in _TOOL_BLOCK_TYPES:
                    self._withheld.append(dict(block))
                    had_tool_parts = True
                else:
                    kept.append(block)
            content = kept
        kwargs = dict(message.additional_kwargs)
        for key in _DROP_KWARGS:
            if kwargs.pop(key, None) is not None:
                had_tool_parts = True
        signatures = kwargs.pop(_GEMINI_SIGNATURES, None)
        if signatures is not None and isinstance(signatures, Mapping):
            self._signatures.update(signatures)
            had_tool_parts = True
        if not had_tool_parts and message.chunk_position is None:
            return chunk
        if (not first and not content and not kwargs and message.usage_metadata is None
                and chunk.generation_info is None and self._said is not None
                and message.response_metadata.items() <= self._said.items()):
            return None
        return _without_tool_parts(chunk, message, content, kwargs)

    def stopping(self) -> bool:
        """Whether an observer asked this run to stop (checked after each chunk went out):
        then every call not yet decided is cancelled, and the caller stops reading."""
        reason = self.link.stop_reason
        if reason is None:
            return False
        self.session.cancel(reason)
        return True

    def stopped(self, error: BaseException | None) -> bool:
        """The read of the stream ended with ``error``: whether it is kept for `close`. A
        consumer that stops reading (or a cancelled task) cancels every open call."""
        if isinstance(error, Exception):
            self._error = error
            return True
        if isinstance(error, (GeneratorExit, asyncio.CancelledError)):
            self.session.cancel(CANCELLED)
        return False

    # -- the end -------------------------------------------------------------------------------

    def close(self) -> ChatGenerationChunk:
        """The stream is over: decide the turn and return the last chunk (committed calls,
        history blocks, the record), or re-raise the error that ended the stream unless the
        turn's calls can be answered instead (the session's fault policy, ``on_stream_error``)."""
        error = self._error
        turn = self._decide(error)
        if error is not None and self.session.raises(error):
            raise error
        ids = _id_map(turn, self._lc_ids) if turn.provider == "gemini" else {}
        chunks = [
            make_tool_call_chunk(
                name=call.name,
                args=json.dumps(call.arguments, ensure_ascii=False),
                id=call.id,
                index=position,
            )
            for position, call in enumerate(turn.committed)
        ]
        kwargs: dict[str, Any] = {}
        if self._signatures:
            kwargs[_GEMINI_SIGNATURES] = {ids.get(k, k): v for k, v in self._signatures.items()}
        content: Any = _history_blocks(self._withheld, turn) if self._content_is_list else ""
        message = AIMessageChunk(
            content=content,
            additional_kwargs=kwargs,
            tool_call_chunks=chunks,
            response_metadata={RECORD_KEY: self.session.record},
            chunk_position="last",
        )
        return ChatGenerationChunk(message=message)

    def _decide(self, error: BaseException | None) -> Turn:
        """Decide the turn (once). ``error`` is what ended the stream, if it did not end cleanly."""
        session = self.session
        if session.turn is not None:
            return session.turn
        if session.mode == "tap" and session.state == "none" and self._shadow:
            # The integration reached the vendor by a path the tap does not know: judge on the
            # converted chunks rather than on nothing (the turn still needs proof to commit).
            _log.warning("toolstream: the vendor stream was not visible; judging LangChain chunks")
            session.begin("openai-chat")
            for event in self._shadow:
                session.observe(event)
        note = None
        if session.mode == "chunks" and error is None:
            for event in self._converter.end_events():
                session.observe(event)
        if session.mode == "chunks" and self._converter.finish_reason is not None:
            note_readable(self._model_class)
        elif session.mode == "chunks" and error is None:
            note = _unread_finish(self._model_class, self._converter.keys_seen)
        return session.end(error, note=note)


class _Handing:
    """A chunk handed on (``with``, or ``async with`` where LangChain's run manager is async):
    the run's link names it meanwhile (``_link.handing``), so a ``ToolstreamCallbackHandler``
    given it binds to this run, and the run manager LangChain handed ``_stream``, if any, is
    told of it (``on_llm_new_token``) as a partner model's ``_stream`` tells it."""

    __slots__ = ("_chunk", "_run", "_token")

    def __init__(self, run: ChunkStream, chunk: ChatGenerationChunk) -> None:
        self._run = run
        self._chunk = chunk

    def __enter__(self) -> None:
        run = self._run
        self._token = handing(run.link, self._chunk, run.run_manager)
        if run.told is not None:
            run.told.on_llm_new_token(self._chunk.text, chunk=self._chunk)

    def __exit__(self, *exc: object) -> None:
        handed(self._token)

    async def __aenter__(self) -> None:
        run = self._run
        self._token = handing(run.link, self._chunk, run.run_manager)
        if run.told is not None:
            await run.told.on_llm_new_token(self._chunk.text, chunk=self._chunk)

    async def __aexit__(self, *exc: object) -> None:
        handed(self._token)


class _Reading:
    """How the loop reads the wrapped model's chunk stream ``source`` (``with`` or ``async
    with``): under the idle timeout where no tap has it (``GateSession.guarded``), closed at
    the end. A consumer that stops reading (or a cancelled task) cancels every open call and
    goes on; an error of the stream is kept for `ChunkStream.close` instead of raised."""

    __slots__ = ("_guard", "_run", "_source")

    def __init__(self, run: ChunkStream, source: Any, *, asynchronous: bool) -> None:
        self._run = run
        self._source = source
        self._guard: Any = run.session.guarded(source, asynchronous=asynchronous)

    def __enter__(self) -> Any:
        return self._guard.__enter__()

    def __exit__(self, kind: Any, error: BaseException | None, tb: Any) -> bool:
        try:
            self._guard.__exit__(kind, error, tb)
        except Exception as raised:  # the guard's own failure ends the stream the same way
            error = raised
        finally:
            close = getattr(self._source, "close", None)
            if close is not None:
                _quietly(close)
        return self._run.stopped(error)

    async def __aenter__(self) -> Any:
        return await self._guard.__aenter__()

    async def __aexit__(self, kind: Any, error: BaseException | None, tb: Any) -> bool:
        try:
            await self._guard.__aexit__(kind, error, tb)
        except Exception as raised:
            error = raised
        finally:
            close = getattr(self._source, "aclose", None)
            if close is not None:
                try:
                    await close()
                except Exception:
                    _log.debug("toolstream: closing the inner stream failed", exc_info=True)
        return self._run.stopped(error)


def _quietly(close: Callable[[], Any]) -> None:
    try:
        close()
    except Exception:
        _log.debug("toolstream: closing the inner stream failed", exc_info=True)


# Partner packages whose finish signals ``_convert`` reads (from their source): for their classes
# a stream without one really was cut. Any other class may just spell its end differently.
_KNOWN_PACKAGES = frozenset({
    "langchain_openai", "langchain_anthropic", "langchain_google_genai", "langchain_aws",
    "langchain_ollama", "langchain_cohere", "langchain_mistralai", "langchain_groq",
    "langchain_fireworks", "langchain_deepseek", "langchain_xai", "langchain_together",
})
# Classes that have shown a finish signal the gate reads, and classes already warned about.
_READABLE: set[type] = set()
_WARNED: set[type] = set()


def note_readable(model_class: type) -> None:
    """``model_class`` ended a turn with a signal the gate reads: its silence is a real cut."""
    _READABLE.add(model_class)


def _unread_finish(model_class: type, keys: set[str]) -> str | None:
    """The record's note (and, once per class, a warning) for a turn with no readable finish.

    A class from a known partner package, or one that has shown a readable signal before, was
    cut: the core's ``stream_truncated`` says it all. Otherwise the gate cannot tell a cut from
    a class that spells its end some other way, so it says so instead of rejecting in silence.
    """
    if model_class in _READABLE or model_class.__module__.partition(".")[0] in _KNOWN_PACKAGES:
        return None
    note = FINISH.unread_note(model_class.__name__, "response_metadata", keys,
                              "langchain_toolstream")
    if model_class not in _WARNED:
        _WARNED.add(model_class)
        _log.warning("toolstream: %s", note)
    return note


def _id_map(turn: Turn, lc_ids: list[str]) -> dict[str, str]:
    """Gemini: LangChain invents an id per call; map them to the core's, by position."""
    calls = sorted((*turn.calls, *turn.dropped), key=lambda c: (c.index is None, c.index or 0))
    if len(calls) != len(lc_ids):
        return {}
    return {lc: call.id for lc, call in zip(lc_ids, calls, strict=True) if call.id}


def _call_key(block: Mapping[str, Any]) -> str | None:
    for key in ("call_id", "id"):
        value = block.get(key)
        if isinstance(value, str) and value:
            return value
    return None


_TEXT_FIELDS = ("partial_json", "arguments")


def _coalesce(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Merge the withheld blocks by ``index`` in linear time.

    LangChain's ``merge_lists`` would re-copy the growing argument string for every delta
    (quadratic on 200 KB of arguments); here fragments are collected and joined once. The
    first block of an index gives identity and type, later ones only add what is missing.
    """
    groups: dict[Any, dict[str, Any]] = {}
    texts: dict[Any, dict[str, list[str]]] = {}
    out: list[dict[str, Any]] = []
    for block in blocks:
        index = block.get("index")
        if not isinstance(index, int):
            out.append(block)
            continue
        head = groups.get(index)
        if head is None:
            head = groups[index] = dict(block)
            texts[index] = {}
            out.append(head)
            for name in _TEXT_FIELDS:
                if isinstance(head.get(name), str):
                    texts[index][name] = [head.pop(name)]
            continue
        for name, value in block.items():
            if name in _TEXT_FIELDS and isinstance(value, str):
                texts[index].setdefault(name, []).append(value)
            elif name not in head or head[name] in (None, "", {}, []):
                head[name] = value
    for index, fields in texts.items():
        for name, parts in fields.items():
            groups[index][name] = "".join(parts)
    return out


def _history_blocks(withheld: list[dict[str, Any]], turn: Turn) -> list[Any]:
    """The withheld vendor blocks, merged, minus dropped calls, with history-safe arguments."""
    by_id: dict[str, ToolCall] = {c.id: c for c in turn.calls if c.id}
    dropped = {c.id for c in turn.dropped if c.id}
    out: list[Any] = []
    kept: set[str] = set()
    for block in _coalesce(withheld):
        key = _call_key(block)
        if key in dropped or (key in kept and block.get("type") in _TOOL_BLOCK_TYPES):
            continue  # a copy the core folded into the first (DESIGN 4.7): one call, one id
        if key is not None:
            kept.add(key)
        call = by_id.get(key) if key else None
        if call is not None:
            text = (json.dumps(call.arguments, ensure_ascii=False) if call.committed
                    else history_args(call.raw_arguments))
            if block.get("type") == "function_call":
                block["arguments"] = text
            elif block.get("type") == "tool_use" and "partial_json" in block:
                block["partial_json"] = text
        out.append(block)
    return out
