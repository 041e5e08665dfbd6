"""Ollama's native ``/api/chat`` stream: NDJSON chunks, or the ``ollama`` client's ``ChatResponse``.

Input: one chunk per ``feed`` (``{"model", "created_at", "message": {...}, "done": false}``),
as a dict parsed from a line or as the client's pydantic object; ``field`` reads both (the one
accessor), and ``feed`` dispatches on what the chunk holds: an ``error``, tool calls, the end.

Identity (DESIGN §4.1): Ollama sends each tool call WHOLE, with ``function.arguments`` a JSON
object, never in fragments. Depending on the server version a call carries an ``id`` and a
``function.index``, or neither (and the ``ollama`` client drops both). The key is
``("id", id)`` when the call has an id, else ``("index", index)``, else ``("call", n)`` in order
of arrival. Its position (``ToolCall.index``, the calls' order) is ``function.index`` read as
the server's Go encoder writes it: ``omitempty`` drops a zero, so a call without an index is
call 0 (a server that numbers no call has them all at 0, kept in arrival order). A call sent
again under a key already used is the same call re-sent: equal arguments commit once,
different ones are a ``duplicate_conflict`` (rule 7) — except a call with no id at a used
index that differs in name or arguments, which is a new call (servers that number every
streamed call 0).
Arguments (rule 3, §5.3): the object is the arguments, taken as is and judged as strictly as
text (its compact JSON is ``raw_arguments``); a string is argument text, parsed strictly at the
end like any other vendor's.
Bad input (DESIGN §5): a chunk, ``message``, ``tool_calls`` or ``function`` of the wrong type,
a chunk without a ``message`` (other than the done chunk), a mistyped ``id`` or ``index`` (either
could name any call seen before) and a ``done`` that is not a boolean are malformed (every live
call fails). A chunk with
an ``error`` field (the server reports a failure mid-stream) is ``upstream_error``.
Completion: ``done: true`` with ``done_reason`` (``_completion.ollama_done``: ``stop`` is
normal, also for a tool-call turn; ``length`` is a cut; anything else is an error). ``done:
true`` without a reason is no proof (§4.4's missing finish signal); a stream that never says
``done: true`` is truncated. ``eval_count`` on the last chunk feeds the max-token backstop.
Pipelining (rule 10): a whole call cannot change after its chunk, so it is settled once the
rest of its chunk (its ``done_reason``) has been read.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from typing import TYPE_CHECKING, Any

from .._completion import ollama_done
from ._access import Malformed, field, record, records

if TYPE_CHECKING:
    from . import Sink

__all__ = ["OllamaAdapter"]


def _is_int(value: Any) -> bool:
    return value.__class__ is int


def _arguments(function: Any) -> Any:
    """The call's arguments: a dict (any mapping becomes one) or text; ``{}`` when absent."""
    value = field(function, "arguments")
    if value is None:
        return {}
    if isinstance(value, (dict, str)):
        return value
    if isinstance(value, Mapping):
        return dict(value)  # the ollama client types it Mapping[str, Any]
    return value  # a number, a list: the table judges it (not an object)


class OllamaAdapter:
    __slots__ = ("_count", "_seen", "_sink")

    def __init__(self, sink: Sink) -> None:
        self._sink = sink
        self._count = 0  # calls with neither id nor index, and new calls at a reused index
        self._seen: dict[tuple[Any, ...], tuple[Any, Any]] = {}  # key -> (name, arguments) as first sent

    def feed(self, chunk: Any) -> None:
        error = field(chunk, "error")
        if error is not None:
            self._sink.upstream_error(f"ollama error: {error}")
            return
        message = record(field(chunk, "message"), "message")
        done = field(chunk, "done")
        if done is not None and done.__class__ is not bool:
            raise Malformed(f"done is a {type(done).__name__}")
        if message is None and done is not True:  # a chunk that lost its message may have held calls
            raise Malformed("a chunk with no message")
        opened = [self._call(record(call, "a tool call"))
                  for call in records(field(message, "tool_calls"), "tool_calls")]
        if done:
            self._done(chunk)
        for key in opened:
            self._sink.settle(key)

    def _call(self, call: Any) -> Hashable:
        function = record(field(call, "function"), "tool call function")
        name = field(function, "name")
        call_id = field(call, "id")
        value = _arguments(function)
        index = field(function, "index")
        key = self._key(call_id, index, name, value)
        sink = self._sink
        # Go's encoder drops a zero ``index`` (``omitempty``): a call without one is call 0,
        # in the server's order; a server that numbers no call puts them all at 0, in arrival.
        sink.open(key, index=0 if index is None else index, id=call_id, name=name)
        if isinstance(value, str):
            sink.append(key, value)
        else:
            sink.set_value(key, value)
        sink.close_arguments(key)
        return key

    def _key(self, call_id: Any, index: Any, name: Any, value: Any) -> tuple[Any, ...]:
        # A mistyped id or index may name any call already seen (a re-send): malformed.
        if call_id is not None and not isinstance(call_id, str):
            raise Malformed(f"tool call id is a {type(call_id).__name__}")
        if index is not None and not _is_int(index):
            raise Malformed(f"tool call index is a {type(index).__name__}")
        if call_id:
            key: tuple[Any, ...] = ("id", call_id)
        elif index is not None:
            key = ("index", index)
            first = self._seen.get(key)
            if first is not None and first != (name, value):
                key = ("call", self._count)  # another call at a reused index: a new call
                self._count += 1
        else:
            key = ("call", self._count)
            self._count += 1
        self._seen.setdefault(key, (name, value))
        return key

    def _done(self, chunk: Any) -> None:
        reason = field(chunk, "done_reason")
        self._sink.usage(field(chunk, "eval_count"))
        if reason is None:
            self._sink.end_turn(None, None)  # no reason, no proof (strict) — lenient accepts
            return
        if not isinstance(reason, str):
            raise Malformed(f"done_reason is a {type(reason).__name__}")
        self._sink.end_turn(reason, ollama_done(reason))
