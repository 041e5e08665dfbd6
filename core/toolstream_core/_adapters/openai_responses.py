"""OpenAI Responses API (and Responses-compatible servers such as LM Studio, Azure).

Identity (DESIGN §4.1): the output item; deltas name it by ``item_id`` and ``output_index``,
both are mapped. ``function_call`` and ``custom_tool_call`` items are client calls; every other
tool-like item (web search, tool search, code interpreter, programs, MCP, ...) runs on the
vendor's side and is reported as a server call. The call id the caller must answer is the
item's ``call_id``, not its ``id``.
Completion: ``response.completed``; ``response.incomplete`` / ``response.failed`` / ``error``
are not (see ``_completion.responses_status``); ``usage.output_tokens`` of the terminal response
feeds the max-token backstop (DESIGN §5). The done events close a call and carry the
vendor's own copy of the arguments, which must agree with the deltas.
Bad input (DESIGN §5): argument events for an output item never added cannot be attributed, so
every live call fails (``upstream_error``); an event without a string ``type``, or a field read
here with the wrong type, raises ``Malformed``. Unknown event types are ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from .._completion import responses_status
from .._models import CallKind, Reason
from ._access import Malformed, field, record

if TYPE_CHECKING:
    from . import Sink

__all__ = ["OpenAIResponsesAdapter"]

_CLIENT: dict[str, CallKind] = {"function_call": "function", "custom_tool_call": "custom"}
_NOT_CALLS = frozenset({"message", "reasoning", "compaction"})
_TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed", "response.cancelled"})
_ARG_DELTAS = frozenset({"response.function_call_arguments.delta", "response.custom_tool_call_input.delta"})
_ARG_DONE = {"response.function_call_arguments.done": "arguments", "response.custom_tool_call_input.done": "input"}


class OpenAIResponsesAdapter:
    __slots__ = ("_by_index", "_by_item", "_sink")

    def __init__(self, sink: Sink) -> None:
        self._sink = sink
        self._by_item: dict[str, Hashable] = {}
        self._by_index: dict[int, Hashable] = {}

    def feed(self, event: Any) -> None:
        # One accessor per event: wire dicts are read with dict.get, SDK objects with field.
        get: Callable[[Any, str], Any] = dict.get if event.__class__ is dict else field
        kind = get(event, "type")
        if kind.__class__ is not str:
            raise Malformed(f"event type is a {type(kind).__name__}")
        if kind in _ARG_DELTAS:  # the hot path
            key = self._key(event, get)
            if key is not None:
                self._sink.append(key, get(event, "delta"))
        elif kind == "response.output_item.added":
            self._item(field(event, "item"), field(event, "output_index"), done=False)
        elif kind == "response.output_item.done":
            self._item(field(event, "item"), field(event, "output_index"), done=True)
        elif kind in _ARG_DONE:
            key = self._key(event, get)
            if key is not None:
                self._sink.done_arguments(key, field(event, _ARG_DONE[kind]))
                self._sink.close_arguments(key)
                self._sink.settle(key)
        elif kind in _TERMINAL:
            response = record(field(event, "response"), "response")
            status = field(response, "status")
            details = field(response, "incomplete_details")
            reason = field(details, "reason")
            error = field(response, "error")
            self._sink.usage(field(field(response, "usage"), "output_tokens"))
            if error and kind != "response.completed":
                self._sink.anomaly(f"response error: {field(error, 'message') or error}")
            self._sink.end_turn(
                str(status) if status is not None else kind.rsplit(".", 1)[-1],
                responses_status(kind, reason if isinstance(reason, str) else None),
            )
        elif kind == "error":
            message = field(event, "message") or field(field(event, "error"), "message")
            code = field(event, "code")
            self._sink.upstream_error(f"{code}: {message}" if code else str(message))

    def _key(self, event: Any, get: Callable[[Any, str], Any]) -> Hashable | None:
        """The call an argument event names. A mistyped ``item_id`` or ``output_index`` with
        the other one readable fails that call (DESIGN §5.2); with neither, every live call."""
        item_id = get(event, "item_id")
        index = get(event, "output_index")
        key = None
        mistyped = None
        if item_id.__class__ is str:
            key = self._by_item.get(item_id)
        elif item_id is not None:
            mistyped = f"item_id is a {type(item_id).__name__}"
        if index.__class__ is not int and index is not None:
            mistyped = f"output_index is a {type(index).__name__}"
        elif key is None and index is not None:
            key = self._by_index.get(index)
        if key is None:  # arguments of no known item: they may be any live call's
            self._sink.fail_live(f"arguments for an unknown output item {item_id!r}")
        elif mistyped is not None:
            self._sink.taint(key, Reason.upstream_error, mistyped)
        return key

    def _item(self, item: Any, output_index: Any, *, done: bool) -> None:
        item_type = field(record(item, "output item"), "type")
        if item_type.__class__ is not str:
            raise Malformed(f"output item type is a {type(item_type).__name__}")
        if item_type in _NOT_CALLS or item_type.endswith("_output"):
            return
        if output_index is not None and output_index.__class__ is not int:
            raise Malformed(f"output_index is a {type(output_index).__name__}")
        index = output_index
        item_id = field(item, "id")
        key: Hashable | None = self._by_item.get(item_id) if isinstance(item_id, str) else None
        if key is None and index is not None:
            key = self._by_index.get(index)
        client_kind = _CLIENT.get(item_type)
        sink = self._sink
        if key is None:
            key = ("item", item_id if isinstance(item_id, str) else index)
            if client_kind is None:
                sink.open(key, index=index, id=item_id, name=field(item, "name") or item_type, kind="server")
            else:
                sink.open(key, index=index, id=field(item, "call_id"), name=field(item, "name"), kind=client_kind)
            if isinstance(item_id, str):
                self._by_item[item_id] = key
            if index is not None:
                self._by_index[index] = key
        elif client_kind is not None:
            sink.open(key, index=index, id=field(item, "call_id"), name=field(item, "name"))
        if client_kind is None:
            if done:
                sink.close_arguments(key)
            return
        arguments = field(item, "arguments" if client_kind == "function" else "input")
        if done:
            sink.done_arguments(key, arguments)
            sink.close_arguments(key)
            sink.settle(key)
        elif isinstance(arguments, str) and arguments and not sink.has_fragments(key):
            # Some servers put the whole arguments in the added item: the vendor's own copy.
            sink.done_arguments(key, arguments)
