"""Anthropic Messages (also via Vertex / Bedrock invoke streams, which carry the same events).

Identity (DESIGN §4.1): the content block index. A ``tool_use`` block streams its input as
``input_json_delta`` text; the ``input: {}`` placeholder in ``content_block_start`` is ignored,
but a non-empty ``input`` there (or a complete block inside ``message_start.message.content``)
is the arguments when no deltas follow. ``server_tool_use`` / ``mcp_tool_use`` (and any other
``*_tool_use``) blocks run on Anthropic's side: server calls.
A ``tool_use`` block re-sent whole at an index already used is a new copy of the call: with the
same id it is linked to the first and commits once when name and arguments agree (rule 7).
Bad input (DESIGN §5): an ``input_json_delta`` whose index is not an integer or names no tool
block cannot be attributed, so every live call of the message fails (``upstream_error``); a
tool block started without an integer index fails. An event without a string ``type``, or with
a field of the wrong type, raises ``Malformed``. Events and delta types of unknown kinds
(``ping``, ``citations_delta``, ``signature_delta``, ...) are ignored.
Completion: ``message_stop`` with a normal ``stop_reason`` (``_completion.anthropic_stop``);
``message_delta.usage.output_tokens`` feeds the max-token backstop (DESIGN §5).
Pipelining (rule 10): a block is settled when the next block starts or ``stop_reason`` is
``tool_use`` — not at its own ``content_block_stop``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from .._completion import anthropic_stop
from .._models import CallKind, Reason
from ._access import Malformed, accessor, field, record, records

if TYPE_CHECKING:
    from . import Sink

__all__ = ["AnthropicAdapter"]

# What the fast path lets through to the full path: data of another shape.
_NOT_HOT = (LookupError, TypeError, AttributeError)


class AnthropicAdapter:
    __slots__ = ("_blocks", "_closed", "_copies", "_sink", "_stop_reason")

    def __init__(self, sink: Sink) -> None:
        self._sink = sink
        self._stop_reason: str | None = None
        self._closed: list[Hashable] = []
        self._blocks: dict[Any, Hashable] = {}  # block index -> key, tool blocks only
        self._copies = 0  # blocks re-sent at an index already used

    def fast(self, event: Any) -> bool:
        """The fast path (DESIGN §9): an ``input_json_delta`` text fragment of a known tool
        block, read straight from the wire dict or the SDK object's public attributes (the SDK
        sets every declared field), is appended; anything else touches nothing and is
        ``feed``'s."""
        try:
            if event.__class__ is dict:
                if event["type"] != "content_block_delta":
                    return False
                delta = event["delta"]
                if delta["type"] != "input_json_delta":
                    return False
                index, fragment = event["index"], delta["partial_json"]
            else:
                if event.type != "content_block_delta":
                    return False
                delta = event.delta
                if delta.type != "input_json_delta":
                    return False
                index, fragment = event.index, delta.partial_json
        except _NOT_HOT:
            return False
        key = self._blocks.get(index) if index.__class__ is int else None
        if key is None or fragment.__class__ is not str:
            return False
        self._sink.append(key, fragment)
        return True

    def feed(self, event: Any) -> None:
        """The full path: every event kind, every check."""
        get = accessor(event)
        kind = get(event, "type")
        if kind == "content_block_delta":
            self._block_delta(event, get)
            return
        if kind.__class__ is not str:
            raise Malformed(f"event type is a {type(kind).__name__}")
        handler = _HANDLERS.get(kind)  # other kinds (ping, ...) are not about tool calls
        if handler is not None:
            handler(self, event)

    # -- one handler per event kind ---------------------------------------------------------

    def _block_delta(self, event: Any, get: Callable[[Any, str], Any]) -> None:
        delta = get(event, "delta")
        delta_type = get(delta, "type")
        if delta_type == "input_json_delta":
            index = get(event, "index")
            key = self._blocks.get(index) if index.__class__ is int else None
            if key is not None:
                self._sink.append(key, get(delta, "partial_json"))
            else:  # arguments of no known block: they may be any live call's
                self._sink.fail_live(f"input_json_delta for unknown block {index!r}")
        elif delta_type.__class__ is not str:
            raise Malformed(f"content_block_delta with a {type(delta_type).__name__} delta type")

    def _block_start(self, event: Any) -> None:
        self._settle_closed()
        index = field(event, "index")
        block = record(field(event, "content_block"), "content_block")
        if index.__class__ is not int:
            key: Hashable = ("block", None, self._copies)
            if self._block(key, None, block, complete=False):
                self._sink.taint(key, Reason.upstream_error,
                                 f"a tool block started with a {type(index).__name__} index")
                self._copies += 1
            return
        key = ("block", index)
        if index in self._blocks:  # the whole block sent again: a copy, linked by its id
            key = ("block", index, self._copies)
            self._copies += 1
        if self._block(key, index, block, complete=False):
            self._blocks[index] = key

    def _block_stop(self, event: Any) -> None:
        index = field(event, "index")
        key = self._blocks.get(index) if index.__class__ is int else None
        if key is not None:
            self._sink.close_arguments(key)
            self._closed.append(key)

    def _message_start(self, event: Any) -> None:
        message = record(field(event, "message"), "message")
        self._note_stop(field(message, "stop_reason"))
        for position, block in enumerate(records(field(message, "content"), "message content")):
            self._block(("start", position), position, record(block, "a content block"), complete=True)

    def _message_delta(self, event: Any) -> None:
        self._note_stop(field(record(field(event, "delta"), "message_delta delta"), "stop_reason"))
        self._sink.usage(field(record(field(event, "usage"), "message_delta usage"), "output_tokens"))

    def _message_stop(self, event: Any) -> None:
        self._sink.end_turn(self._stop_reason, anthropic_stop(self._stop_reason))

    def _error(self, event: Any) -> None:
        error = field(event, "error")
        self._sink.upstream_error(f"{field(error, 'type')}: {field(error, 'message')}")

    # -- blocks and settling ----------------------------------------------------------------

    def _note_stop(self, reason: Any) -> None:
        if isinstance(reason, str):
            self._stop_reason = reason
            if reason == "tool_use":
                self._settle_closed()

    def _settle_closed(self) -> None:
        closed, self._closed = self._closed, []
        for key in closed:
            self._sink.settle(key)

    def _block(self, key: Hashable, index: Any, block: Any, *, complete: bool) -> bool:
        """Open a call for a tool block; ``False`` for text, thinking and result blocks."""
        block_type = field(block, "type")
        if block_type.__class__ is not str:
            raise Malformed(f"content block type is a {type(block_type).__name__}")
        if not block_type.endswith("tool_use"):
            return False
        kind: CallKind = "function" if block_type == "tool_use" else "server"
        position = index if isinstance(index, int) and not isinstance(index, bool) else None
        sink = self._sink
        sink.open(key, index=position, id=field(block, "id"), name=field(block, "name"), kind=kind,
                  order=(0 if complete else 1, position))
        value = field(block, "input")
        if value is not None and not isinstance(value, dict):
            to_dict = getattr(value, "model_dump", None)
            value = to_dict() if callable(to_dict) else value
        if complete:
            sink.set_value(key, value if value is not None else {})
            sink.close_arguments(key)
            self._closed.append(key)
        elif value:
            sink.set_value(key, value)
        return True


# The event kinds that say something about tool calls (``content_block_delta``, the common
# one, is dispatched before this table); every other kind is ignored.
_HANDLERS: dict[str, Callable[[AnthropicAdapter, Any], None]] = {
    "content_block_start": AnthropicAdapter._block_start,
    "content_block_stop": AnthropicAdapter._block_stop,
    "message_start": AnthropicAdapter._message_start,
    "message_delta": AnthropicAdapter._message_delta,
    "message_stop": AnthropicAdapter._message_stop,
    "error": AnthropicAdapter._error,
}
