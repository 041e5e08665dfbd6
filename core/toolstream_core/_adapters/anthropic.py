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
from ._access import Malformed, field, record, records

if TYPE_CHECKING:
    from . import Sink

__all__ = ["AnthropicAdapter"]


class AnthropicAdapter:
    __slots__ = ("_blocks", "_closed", "_copies", "_sink", "_stop_reason")

    def __init__(self, sink: Sink) -> None:
        self._sink = sink
        self._stop_reason: str | None = None
        self._closed: list[Hashable] = []
        self._blocks: dict[Any, Hashable] = {}  # block index -> key, tool blocks only
        self._copies = 0  # blocks re-sent at an index already used

    def feed(self, event: Any) -> None:
        # The hot path: an ``input_json_delta`` text fragment for a known tool block, read
        # straight from the wire dict or the SDK object's attributes (the SDK sets every
        # declared field). Any other shape raises inside the ``try`` or fails a test, touches
        # nothing, and goes the full way below.
        fragment: Any = None
        try:
            if event.__class__ is dict:
                if event["type"] == "content_block_delta":
                    delta = event["delta"]
                    if delta["type"] == "input_json_delta":
                        index = event["index"]
                        key = self._blocks.get(index) if index.__class__ is int else None
                        if key is not None:
                            fragment = delta["partial_json"]
            elif event.type == "content_block_delta":
                delta = event.delta
                if delta.type == "input_json_delta":
                    index = event.index
                    key = self._blocks.get(index) if index.__class__ is int else None
                    if key is not None:
                        fragment = delta.partial_json
        except (LookupError, TypeError, AttributeError):
            fragment = None
        if fragment.__class__ is str:
            self._sink.append(key, fragment)
            return
        get: Callable[[Any, str], Any] = dict.get if event.__class__ is dict else field
        kind = get(event, "type")
        if kind == "content_block_delta":
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
            return
        if kind.__class__ is not str:
            raise Malformed(f"event type is a {type(kind).__name__}")
        sink = self._sink
        if kind == "content_block_start":
            self._settle_closed()
            index = field(event, "index")
            block = record(field(event, "content_block"), "content_block")
            if index.__class__ is not int:
                if self._block(("block", None, self._copies), None, block, complete=False):
                    sink.taint(("block", None, self._copies), Reason.upstream_error,
                               f"a tool block started with a {type(index).__name__} index")
                    self._copies += 1
                return
            key = ("block", index)
            if index in self._blocks:  # the whole block sent again: a copy, linked by its id
                key = ("block", index, self._copies)
                self._copies += 1
            if self._block(key, index, block, complete=False):
                self._blocks[index] = key
        elif kind == "content_block_stop":
            index = field(event, "index")
            key = self._blocks.get(index) if index.__class__ is int else None
            if key is not None:
                sink.close_arguments(key)
                self._closed.append(key)
        elif kind == "message_start":
            message = record(field(event, "message"), "message")
            self._note_stop(field(message, "stop_reason"))
            for position, block in enumerate(records(field(message, "content"), "message content")):
                self._block(("start", position), position, record(block, "a content block"), complete=True)
        elif kind == "message_delta":
            self._note_stop(field(record(field(event, "delta"), "message_delta delta"), "stop_reason"))
            sink.usage(field(record(field(event, "usage"), "message_delta usage"), "output_tokens"))
        elif kind == "message_stop":
            sink.end_turn(self._stop_reason, anthropic_stop(self._stop_reason))
        elif kind == "error":
            error = field(event, "error")
            sink.upstream_error(f"{field(error, 'type')}: {field(error, 'message')}")

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
