"""Anthropic Messages (also via Vertex / Bedrock invoke streams, which carry the same events).

Identity (DESIGN §4.1): the content block index. A ``tool_use`` block streams its input as
``input_json_delta`` text; the ``input: {}`` placeholder in ``content_block_start`` is ignored,
but a non-empty ``input`` there (or a complete block inside ``message_start.message.content``)
is the arguments when no deltas follow. ``server_tool_use`` / ``mcp_tool_use`` (and any other
``*_tool_use``) blocks run on Anthropic's side: server calls.
Completion: ``message_stop`` with a normal ``stop_reason`` (``_completion.anthropic_stop``).
Pipelining (rule 10): a block is settled when the next block starts or ``stop_reason`` is
``tool_use`` — not at its own ``content_block_stop``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from .._completion import anthropic_stop
from .._models import CallKind
from ._access import field

if TYPE_CHECKING:
    from .._assembler import Assembler

__all__ = ["AnthropicAdapter"]


class AnthropicAdapter:
    __slots__ = ("_blocks", "_closed", "_sink", "_stop_reason")

    def __init__(self, sink: Assembler) -> None:
        self._sink = sink
        self._stop_reason: str | None = None
        self._closed: list[Hashable] = []
        self._blocks: dict[Any, Hashable] = {}  # block index -> key, tool blocks only

    def feed(self, event: Any) -> None:
        get: Callable[[Any, str], Any] = dict.get if event.__class__ is dict else field
        kind = get(event, "type")
        if kind == "content_block_delta":  # the hot path: one lookup, one append
            delta = get(event, "delta")
            if get(delta, "type") == "input_json_delta":
                key = self._blocks.get(get(event, "index"))
                if key is not None:
                    self._sink.append(key, get(delta, "partial_json"))
                else:
                    self._sink.anomaly(f"input_json_delta for unknown block {get(event, 'index')!r}")
            return
        sink = self._sink
        if kind == "content_block_start":
            self._settle_closed()
            index = field(event, "index")
            block = field(event, "content_block")
            key = ("block", index)
            if self._block(key, index, block, complete=False):
                self._blocks[index] = key
        elif kind == "content_block_stop":
            key = self._blocks.get(field(event, "index"))
            if key is not None:
                sink.close(key)
                self._closed.append(key)
        elif kind == "message_start":
            message = field(event, "message")
            self._note_stop(field(message, "stop_reason"))
            for position, block in enumerate(field(message, "content") or ()):
                self._block(("start", position), position, block, complete=True)
        elif kind == "message_delta":
            self._note_stop(field(field(event, "delta"), "stop_reason"))
        elif kind == "message_stop":
            sink.end(self._stop_reason, anthropic_stop(self._stop_reason))
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
        if not isinstance(block_type, str) or not block_type.endswith("tool_use"):
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
            sink.close(key)
            self._closed.append(key)
        elif value:
            sink.set_value(key, value)
        return True
