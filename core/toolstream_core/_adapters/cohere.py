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
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from .._completion import cohere_finish
from ._access import Malformed, field, record, report_stop

if TYPE_CHECKING:
    from . import Sink

__all__ = ["COHERE_TYPES", "CohereAdapter"]

#: The v2 stream's event types (``type`` of ``StreamedChatResponseV2``).
COHERE_TYPES = frozenset(
    {"message-start", "content-start", "content-delta", "content-end", "tool-plan-delta",
     "tool-call-start", "tool-call-delta", "tool-call-end", "citation-start", "citation-end",
     "message-end", "debug"}
)


def _kind(event: Any) -> str:
    kind = field(event, "type")
    if not isinstance(kind, str):
        raise Malformed(f"event type is a {type(kind).__name__}")
    return kind


def _tool_call(event: Any) -> Any:
    """``delta.message.tool_calls``: one object in both the start and the delta events."""
    delta = record(field(event, "delta"), f"{field(event, 'type')} delta")
    message = record(field(delta, "message"), "delta message")
    return record(field(message, "tool_calls"), "delta message tool_calls")


class CohereAdapter:
    __slots__ = ("_calls", "_closed", "_copies", "_handlers", "_sink")

    def __init__(self, sink: Sink) -> None:
        self._sink = sink
        self._calls: dict[int, Hashable] = {}  # index -> key
        self._closed: list[Hashable] = []  # ended calls not yet settled
        self._copies = 0  # starts at an index already used
        self._handlers: dict[str, Callable[[Any], None]] = {
            "tool-call-delta": self._delta,
            "tool-call-start": self._start,
            "tool-call-end": self._end,
            "message-end": self._message_end,
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
        key = self._calls.get(index) if index is not None else None
        if key is None:  # arguments of no known call: they may be any live call's
            self._sink.fail_live(f"tool-call-delta for index {field(event, 'index')!r}, which started no call")
            return
        function = record(field(_tool_call(event), "function"), "tool_calls function")
        self._sink.append(key, field(function, "arguments"))

    def _start(self, event: Any) -> None:
        self._settle_closed()
        index = self._index(event)
        if index is None:
            raise Malformed(f"tool-call-start with a {type(field(event, 'index')).__name__} index")
        call = _tool_call(event)
        function = record(field(call, "function"), "tool_calls function")
        key: Hashable = ("index", index)
        if index in self._calls:  # the call started again: a copy, linked by its id
            key = ("index", index, self._copies)
            self._copies += 1
        self._calls[index] = key
        self._sink.open(key, index=index, id=field(call, "id"), name=field(function, "name"))
        arguments = field(function, "arguments")
        if arguments is not None and arguments != "":  # "" is the start's placeholder
            self._sink.append(key, arguments)

    def _end(self, event: Any) -> None:
        index = self._index(event)
        if index is None:  # the end of some call, but of which: none can be proven
            self._sink.fail_live(f"tool-call-end with a {type(field(event, 'index')).__name__} index")
            return
        key = self._calls.get(index)
        if key is not None:
            self._sink.close_arguments(key)
            self._closed.append(key)

    def _message_end(self, event: Any) -> None:
        delta = record(field(event, "delta"), "message-end delta")
        error = field(delta, "error")
        if error:
            self._sink.upstream_error(f"cohere error: {error}")
        self._usage(record(field(delta, "usage"), "message-end usage"))
        reason = field(delta, "finish_reason")
        if report_stop(self._sink, reason, cohere_finish, "finish_reason") and reason == "TOOL_CALL":
            self._settle_closed()

    def _usage(self, usage: Any) -> None:
        tokens = record(field(usage, "tokens"), "usage tokens")
        count = field(tokens, "output_tokens")
        if count is None:
            count = field(record(field(usage, "billed_units"), "usage billed_units"), "output_tokens")
        if isinstance(count, float) and count.is_integer():
            count = int(count)  # the SDK types token counts as float
        self._sink.usage(count)

    def _settle_closed(self) -> None:
        closed, self._closed = self._closed, []
        for key in closed:
            self._sink.settle(key)
