"""Cohere v2 chat stream (``/v2/chat`` with ``stream: true``; ``ClientV2.chat_stream``).

Input: one event per ``feed``, a dict parsed from an SSE ``data:`` line or one of the cohere
SDK's typed ``StreamedChatResponseV2`` variants; ``_kind`` reads ``type`` from either (the one
accessor, with ``field`` for the rest), and ``feed`` dispatches on it to a short handler.

Identity (DESIGN §4.1): the ``index`` of ``tool-call-start`` / ``tool-call-delta`` /
``tool-call-end``. ``tool-call-start`` carries ``delta.message.tool_calls`` (one object, not a
list) with the call's ``id`` and ``function.name``; ``tool-call-delta`` carries
``function.arguments`` text fragments, appended as they arrive (rule 3). A start at an index
already used is a new copy of the call (with the same id it is linked to the first, rule 7).
``message-start``, ``content-*``, ``tool-plan-delta``, ``citation-*`` and ``debug`` carry no
arguments and are ignored, as is any other well-formed kind.
Bad input (DESIGN §5): a ``tool-call-delta`` for an index that started no call cannot be
attributed: every live call fails (``upstream_error``). An event without a string ``type``, a
start without an integer index, or a field of the wrong type is malformed.
Completion: ``message-end`` ``delta.finish_reason`` (``_completion.cohere_finish``: ``TOOL_CALL``,
``COMPLETE``, ``STOP_SEQUENCE`` are normal; ``MAX_TOKENS`` is a cut; ``ERROR``, ``TIMEOUT`` and
unknown are errors); a non-empty ``delta.error`` is ``upstream_error``. ``delta.usage.tokens
.output_tokens`` (else ``billed_units.output_tokens``) feeds the max-token backstop.
Pipelining (rule 10): a call is settled when the next call starts or ``finish_reason`` is
``TOOL_CALL`` — not at its own ``tool-call-end``, as for Anthropic.

The v1 chat stream (``/v1/chat``, ``cohere.Client.chat_stream``, which LlamaIndex's ``Cohere``
speaks) names its kind ``event_type``, not ``type``; ``_kind`` reads either, so one table
serves both wires (their kinds do not overlap). v1 calls have no ids: the core synthesizes
them (``anonymous``, DESIGN §4.5). ``tool-calls-chunk`` ``tool_call_delta`` with a ``name``
opens the call at its ``index`` (a float in the SDK's types: an integral float counts);
one with ``parameters`` appends that text. ``tool-calls-generation`` carries the complete
``tool_calls`` (``name``, ``parameters`` object) in index order: it closes the streamed call
at each position, or gives one that streamed no text its ``parameters`` whole; at
``stream-end`` a streamed call it did not name (left out, re-started, or streamed after it) is
``upstream_error``. ``stream-end`` ``finish_reason`` is the proof
(``cohere_finish``: ``COMPLETE`` is normal, ``MAX_TOKENS`` a cut, ``ERROR``, ``ERROR_TOXIC``,
``ERROR_LIMIT``, ``USER_CANCEL`` errors); ``response.meta`` ``billed_units.output_tokens``
(else ``tokens.output_tokens``) feeds the backstop, and a normal end settles the closed calls.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from .._completion import cohere_finish
from .._models import Reason
from ._access import Malformed, field, record, report_stop
from ._indexed import IndexedCalls

if TYPE_CHECKING:
    from . import Sink

__all__ = ["COHERE_TYPES", "COHERE_V1_TYPES", "CohereAdapter"]

#: The v2 stream's event types (``type`` of ``StreamedChatResponseV2``).
COHERE_TYPES = frozenset(
    {"message-start", "content-start", "content-delta", "content-end", "tool-plan-delta",
     "tool-call-start", "tool-call-delta", "tool-call-end", "citation-start", "citation-end",
     "message-end", "debug"}
)


#: The v1 stream's event types (``event_type`` of ``StreamedChatResponse``).
COHERE_V1_TYPES = frozenset(
    {"stream-start", "search-queries-generation", "search-results", "text-generation",
     "citation-generation", "tool-calls-chunk", "tool-calls-generation", "stream-end"}
)


def _kind(event: Any) -> str:
    kind = field(event, "type")
    if kind is None:  # a v1 event
        kind = field(event, "event_type")
    if not isinstance(kind, str):
        raise Malformed(f"event type is a {type(kind).__name__}")
    return kind


def _tool_call(event: Any) -> Any:
    """``delta.message.tool_calls``: one object in both the start and the delta events."""
    delta = record(field(event, "delta"), f"{field(event, 'type')} delta")
    message = record(field(delta, "message"), "delta message")
    return record(field(message, "tool_calls"), "delta message tool_calls")


class CohereAdapter:
    __slots__ = ("_calls", "_confirmed", "_generated", "_handlers", "_opened", "_sink")

    def __init__(self, sink: Sink) -> None:
        self._sink = sink
        self._calls = IndexedCalls(sink, "index")
        self._opened: list[Hashable] = []  # v1: every call, in order
        self._confirmed: set[Hashable] = set()  # v1: the calls tool-calls-generation named
        self._generated = False  # v1: tool-calls-generation was seen
        self._handlers: dict[str, Callable[[Any], None]] = {
            "tool-call-delta": self._delta,
            "tool-call-start": self._start,
            "tool-call-end": self._end,
            "message-end": self._message_end,
            "tool-calls-chunk": self._v1_chunk,
            "tool-calls-generation": self._v1_generation,
            "stream-end": self._v1_end,
        }

    def feed(self, event: Any) -> None:
        handler = self._handlers.get(_kind(event))
        if handler is not None:
            handler(event)

    def _index(self, event: Any) -> Any:
        index = field(event, "index")
        return index if index.__class__ is int else None

    def _delta(self, event: Any) -> None:
        index = self._index(event)
        key = self._calls.at(index)
        if key is None:  # arguments of no known call: they may be any live call's
            self._sink.fail_live(f"tool-call-delta for index {field(event, 'index')!r}, which started no call")
            return
        function = record(field(_tool_call(event), "function"), "tool_calls function")
        self._sink.append(key, field(function, "arguments"))

    def _start(self, event: Any) -> None:
        self._calls.settle_stopped()
        index = self._index(event)
        if index is None:
            raise Malformed(f"tool-call-start with a {type(field(event, 'index')).__name__} index")
        call = _tool_call(event)
        function = record(field(call, "function"), "tool_calls function")
        key = self._calls.new_key(index)  # the call started again is a copy
        self._calls.started(index, key)
        self._sink.open(key, index=index, id=field(call, "id"), name=field(function, "name"))
        arguments = field(function, "arguments")
        if arguments is not None and arguments != "":  # "" is the start's placeholder
            self._sink.append(key, arguments)

    def _end(self, event: Any) -> None:
        self._calls.stop(field(event, "index"), "tool-call-end")

    def _message_end(self, event: Any) -> None:
        delta = record(field(event, "delta"), "message-end delta")
        error = field(delta, "error")
        if error:
            self._sink.upstream_error(f"cohere error: {error}")
        self._usage(record(field(delta, "usage"), "message-end usage"))
        reason = field(delta, "finish_reason")
        if report_stop(self._sink, reason, cohere_finish, "finish_reason") and reason == "TOOL_CALL":
            self._calls.settle_stopped()

    def _usage(self, usage: Any) -> None:
        tokens = record(field(usage, "tokens"), "usage tokens")
        count = field(tokens, "output_tokens")
        if count is None:
            count = field(record(field(usage, "billed_units"), "usage billed_units"), "output_tokens")
        if isinstance(count, float) and count.is_integer():
            count = int(count)  # the SDK types token counts as float
        self._sink.usage(count)

    def _v1_open(self, index: int, name: Any) -> Hashable:
        key = self._calls.new_key(index)  # a name again at a used index is a new call
        self._calls.started(index, key)
        self._opened.append(key)
        self._sink.open(key, index=index, name=name, anonymous=True)
        if self._generated:  # after the complete calls were named
            self._sink.taint(key, Reason.upstream_error, "a call streamed after tool-calls-generation")
        return key

    def _v1_chunk(self, event: Any) -> None:
        if self._sink.recording and field(event, "text"):  # the tool plan's text, a framework's
            self._sink.carries()
        delta = record(field(event, "tool_call_delta"), "tool-calls-chunk tool_call_delta")
        raw = field(delta, "index")
        index = int(raw) if raw.__class__ is float and raw.is_integer() else raw
        name, parameters = field(delta, "name"), field(delta, "parameters")
        if index is None and name is None and parameters is None:
            return  # a tool-plan text chunk
        if index.__class__ is not int:
            self._sink.fail_live(f"tool-calls-chunk with a {type(raw).__name__} index")
            return
        key = self._v1_open(index, name) if name is not None else self._calls.at(index)
        if key is None:
            self._sink.fail_live(f"tool-calls-chunk parameters for index {index}, which started no call")
        elif parameters is not None and parameters != "":
            self._sink.append(key, parameters)

    def _v1_generation(self, event: Any) -> None:
        calls = field(event, "tool_calls")
        if not isinstance(calls, list):
            raise Malformed(f"tool-calls-generation tool_calls is a {type(calls).__name__}")
        for index, call in enumerate(calls):
            key = self._calls.at(index)
            name = field(record(call, "tool_calls item"), "name")
            if key is None:
                key = self._v1_open(index, name)
            if not self._sink.has_fragments(key):
                self._sink.set_value(key, field(call, "parameters"))
            self._calls.stopped(key)
            self._confirmed.add(key)
        self._generated = True

    def _v1_end(self, event: Any) -> None:
        meta = record(field(record(field(event, "response"), "stream-end response"), "meta"), "response meta")
        count = field(record(field(meta, "billed_units"), "meta billed_units"), "output_tokens")
        if count is None:
            count = field(record(field(meta, "tokens"), "meta tokens"), "output_tokens")
        if isinstance(count, float) and count.is_integer():
            count = int(count)
        self._sink.usage(count)
        for key in self._opened:
            if key not in self._confirmed:
                self._sink.taint(key, Reason.upstream_error, "a streamed call tool-calls-generation did not name")
        if report_stop(self._sink, field(event, "finish_reason"), cohere_finish, "finish_reason"):
            self._calls.settle_stopped()
