"""AWS Bedrock ConverseStream (``converse_stream``; every model behind the Converse API).

Input: one event per ``feed``, as boto3 yields them: a dict with one key naming the event
(``{"contentBlockDelta": {...}}``). The recorded-stream envelope and raw frames
(``{"event": "contentBlockDelta", "data": {...}}``, the ``:event-type`` header and its payload)
are turned into that shape by ``unwrap`` before they get here, and so are the frames
``toolstream_core.sse`` decodes. ``_event`` is the one accessor: it returns the event's name
and body; everything after it dispatches on the name.

Identity (DESIGN §4.1): ``contentBlockIndex``. ``contentBlockStart.start.toolUse`` carries the
call's ``toolUseId`` and ``name``; ``contentBlockDelta.delta.toolUse.input`` is argument text,
appended as it arrives (rule 3). A ``toolUse`` start with ``type: server_tool_use`` is a server
call (§4.11). A block started again at an index already used is a new copy of the call (with
the same id it is linked to the first, rule 7). Text, ``reasoningContent``, ``toolResult``,
``citation`` and image deltas carry no arguments and are ignored.
Bad input (DESIGN §5): ``toolUse`` input for an index that started no tool block cannot be
attributed: every live call fails (``upstream_error``), and so does a ``contentBlockStop`` whose
index is not an integer. ``{}``, an event body that is not a record (or is null) and a
``toolUse`` start without an integer index are malformed; a mistyped ``toolUseId`` or ``name``
fails its own call. An event name the project does not know is
ignored, unless it names an exception.
Completion: ``messageStop.stopReason`` (``_completion.bedrock_stop``); ``metadata.usage``
(which arrives after ``messageStop``) feeds the max-token backstop (DESIGN §5.5). An exception
event (``modelStreamErrorException``, ``internalServerException``, ``throttlingException``,
``validationException``, ``serviceUnavailableException``, any ``*Exception``) and the decoder's
``error`` frame are ``upstream_error``; boto3 raises ``EventStreamError`` for them instead,
which ``finish(error=...)`` classifies the same way (§4.4).
Pipelining (rule 10): a block is settled when the next block starts or ``stopReason`` is
``tool_use`` — not at its own ``contentBlockStop``, as for Anthropic.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._completion import bedrock_stop
from .._models import CallKind
from ._access import Malformed, field, record, report_stop
from ._indexed import IndexedCalls

if TYPE_CHECKING:
    from . import Sink

__all__ = ["BEDROCK_EVENTS", "BedrockConverseAdapter", "is_bedrock_exception"]

#: The ConverseStream event names (the members of botocore's ``ConverseStreamOutput``).
BEDROCK_EVENTS = frozenset(
    {"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop",
     "metadata"}
)


def is_bedrock_exception(name: Any) -> bool:
    """An exception event name (``throttlingException`` ...) or the decoder's ``error`` frame."""
    return isinstance(name, str) and (name.endswith("Exception") or name == "error")


def _event(event: Any) -> tuple[str | None, Any]:
    """The one accessor: ``(name, body)`` of a one-key event dict; ``(None, None)`` when no
    key is a ConverseStream event (a newer kind, ignored)."""
    if event.__class__ is not dict:
        raise Malformed(f"a ConverseStream event is a dict, not a {type(event).__name__}")
    if not event:
        raise Malformed("an empty ConverseStream event")
    found = [name for name in event if name in BEDROCK_EVENTS or is_bedrock_exception(name)]
    if len(found) > 1:
        raise Malformed(f"one ConverseStream event holds {len(found)} events")
    if not found:
        return None, None
    name = found[0]
    return name, record(event[name], name)


class BedrockConverseAdapter:
    __slots__ = ("_blocks", "_handlers", "_sink")

    def __init__(self, sink: Sink) -> None:
        self._sink = sink
        self._blocks = IndexedCalls(sink, "block")  # by contentBlockIndex, tool blocks only
        self._handlers: dict[str, Callable[[Any], None]] = {
            "contentBlockDelta": self._delta,
            "contentBlockStart": self._start,
            "contentBlockStop": self._stop,
            "messageStop": self._message_stop,
            "metadata": self._metadata,
        }

    def feed(self, event: Any) -> None:
        name, body = _event(event)
        if name is None or name == "messageStart":
            return
        handler = self._handlers.get(name)
        if handler is not None:
            if body is None:  # a known event with its body lost: it may have held a fragment
                raise Malformed(f"{name} with a null body")
            handler(body)
        else:
            self._sink.upstream_error(f"{name}: {field(body, 'message') if body is not None else ''}")

    def _index(self, body: Any) -> Any:
        index = field(body, "contentBlockIndex")
        return index if index.__class__ is int else None

    def _delta(self, body: Any) -> None:
        delta = record(field(body, "delta"), "contentBlockDelta delta")
        tool = record(field(delta, "toolUse"), "delta toolUse")
        if tool is None:
            return  # text, reasoningContent, toolResult, citation: no arguments
        index = self._index(body)
        key = self._blocks.at(index)
        if key is None:  # arguments of no known tool block: they may be any live call's
            self._sink.fail_live(f"toolUse input for block {field(body, 'contentBlockIndex')!r}, "
                                 "which started no tool call")
            return
        self._sink.append(key, field(tool, "input"))

    def _start(self, body: Any) -> None:
        self._blocks.settle_stopped()
        start = record(field(body, "start"), "contentBlockStart start")
        tool = record(field(start, "toolUse"), "start toolUse")
        if tool is None:
            return
        index = self._index(body)
        if index is None:
            raise Malformed(f"a toolUse block started with a {type(field(body, 'contentBlockIndex')).__name__} index")
        key = self._blocks.new_key(index)  # the whole block sent again is a copy
        kind: CallKind = "server" if field(tool, "type") == "server_tool_use" else "function"
        self._sink.open(key, index=index, id=field(tool, "toolUseId"), name=field(tool, "name"), kind=kind)
        self._blocks.started(index, key)

    def _stop(self, body: Any) -> None:
        self._blocks.stop(field(body, "contentBlockIndex"), "contentBlockStop")

    def _message_stop(self, body: Any) -> None:
        reason = field(body, "stopReason")
        if report_stop(self._sink, reason, bedrock_stop, "messageStop stopReason") and reason == "tool_use":
            self._blocks.settle_stopped()

    def _metadata(self, body: Any) -> None:
        usage = record(field(body, "usage"), "metadata usage")
        self._sink.usage(field(usage, "outputTokens"))
