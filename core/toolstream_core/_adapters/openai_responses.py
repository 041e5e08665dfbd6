"""OpenAI Responses API (and Responses-compatible servers such as LM Studio, Azure).

Identity (DESIGN §4.1): the output item; deltas name it by ``item_id`` and ``output_index``,
both are mapped. Client calls (DESIGN §4.11) are ``function_call`` and ``custom_tool_call``
items, whose arguments stream as text, and the built-in items the client executes
(``_BUILTIN``: computer, local shell, shell, apply patch, client tool search, MCP approval
requests), whose arguments are the done item itself minus its identity fields. Every other
tool-like item runs on the vendor's side and is reported as a server call. The call id the
caller must answer is the item's ``call_id`` (an MCP approval request: its ``id``).
Completion: ``response.completed``; ``response.incomplete`` / ``response.failed`` / ``error``
are not (see ``_completion.responses_status``); ``usage.output_tokens`` of the terminal response
feeds the max-token backstop (DESIGN §5). A client call must reach ``output_item.done`` with
status ``completed`` (a text call may also be proven by its deltas and the completed response).
The vendor's own proof (DESIGN §4.4): every event's ``sequence_number`` must follow the one
before it, or events were lost and every live call fails; the done events and the terminal
response's ``output`` carry the vendor's own copy of each call, which must agree with what
was assembled.
Bad input (DESIGN §5): argument events for an output item never added cannot be attributed, so
every live call fails (``upstream_error``); an event without a string ``type``, or a field read
here with the wrong type, raises ``Malformed``. Unknown event types are ignored.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from .._completion import responses_status
from .._models import CallKind, Reason
from ._access import Malformed, field, record, records

if TYPE_CHECKING:
    from . import Sink

__all__ = ["OpenAIResponsesAdapter"]

# Client calls whose arguments stream as text: item type -> (kind, the item's argument field).
_TEXT_CALLS: dict[str, tuple[CallKind, str]] = {
    "function_call": ("function", "arguments"), "custom_tool_call": ("custom", "input")}
# Built-in tools the client executes: item type -> kind (DESIGN §4.11).
_BUILTIN: dict[str, CallKind] = {
    "computer_call": "computer", "local_shell_call": "local_shell", "shell_call": "shell",
    "apply_patch_call": "apply_patch", "tool_search_call": "tool_search",
    "mcp_approval_request": "mcp_approval"}
# A built-in call's arguments are its done item without these (identity and progress).
_NOT_ARGUMENTS = frozenset({"type", "id", "call_id", "status", "created_by"})
_NOT_CALLS = frozenset({"message", "reasoning", "compaction"})
_TERMINAL = frozenset({"response.completed", "response.incomplete", "response.failed", "response.cancelled"})
_ARG_DELTAS = frozenset({"response.function_call_arguments.delta", "response.custom_tool_call_input.delta"})
_ARG_DONE = {"response.function_call_arguments.done": "arguments", "response.custom_tool_call_input.done": "input"}
_LOST = "events of this stream were lost or repeated (sequence_number)"


def _client_kind(item: Any, item_type: str) -> CallKind | None:
    """The client call kind of an output item, ``None`` for an item the vendor runs."""
    text_call = _TEXT_CALLS.get(item_type)
    if text_call is not None:
        return text_call[0]
    kind = _BUILTIN.get(item_type)
    if kind == "tool_search" and field(item, "execution") != "client":
        return None  # the vendor searched its own tools
    return kind


def _builtin_arguments(item: Any) -> dict[str, Any]:
    """A built-in call's arguments: the item as JSON data minus ``_NOT_ARGUMENTS`` (wire dicts
    and SDK objects alike: only the fields the vendor sent)."""
    if item.__class__ is not dict:
        dump = getattr(item, "model_dump", None)
        if dump is None:
            raise Malformed(f"output item is a {type(item).__name__}")
        item = dump(mode="json", exclude_unset=True)
    return {name: value for name, value in item.items() if name not in _NOT_ARGUMENTS}


class OpenAIResponsesAdapter:
    __slots__ = ("_builtin", "_by_index", "_by_item", "_next", "_sink")

    def __init__(self, sink: Sink) -> None:
        self._sink = sink
        self._by_item: dict[str, Hashable] = {}
        self._by_index: dict[int, Hashable] = {}
        # Built-in calls by key: their arguments once done, ``None`` while the item is not.
        self._builtin: dict[Hashable, dict[str, Any] | None] = {}
        self._next: int | None = None  # the sequence_number the next event must carry

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
            self._terminal(kind, record(field(event, "response"), "response"))
        elif kind == "error":
            message = field(event, "message") or field(field(event, "error"), "message")
            code = field(event, "code")
            self._sink.upstream_error(f"{code}: {message}" if code else str(message))
        # After the event: a mistyped number also fails the call the event itself opened.
        seq = get(event, "sequence_number")
        if seq is not None:
            if seq == self._next and seq.__class__ is int:
                self._next = seq + 1
            else:
                self._sequence(seq)

    def _sequence(self, seq: Any) -> None:
        """DESIGN §4.4: a ``sequence_number`` that skips or goes back means the vendor's events
        were lost or repeated, so nothing live can be proven. Absent numbers prove nothing and
        are fine (compatible servers omit them)."""
        if seq.__class__ is not int:
            self._sink.fail_live(f"sequence_number is a {type(seq).__name__}", why=_LOST)
            return
        expected = self._next
        if expected is None or seq >= expected:
            self._next = seq + 1
        if expected is not None:
            what = "skips" if seq > expected else "goes back"
            self._sink.fail_live(f"sequence_number {seq} {what} (expected {expected})", why=_LOST)

    def _terminal(self, kind: str, response: Any) -> None:
        status = field(response, "status")
        details = field(response, "incomplete_details")
        reason = field(details, "reason")
        error = field(response, "error")
        sink = self._sink
        sink.usage(field(field(response, "usage"), "output_tokens"))
        if error and kind != "response.completed":
            sink.anomaly(f"response error: {field(error, 'message') or error}")
        self._final_copy(field(response, "output"))
        for key, arguments in self._builtin.items():
            if arguments is None:
                sink.taint(key, Reason.stream_truncated, "the item never reached output_item.done")
        sink.end_turn(
            str(status) if status is not None else kind.rsplit(".", 1)[-1],
            responses_status(kind, reason if isinstance(reason, str) else None),
        )

    def _final_copy(self, output: Any) -> None:
        """The terminal response's copy of every item must agree with the streamed calls."""
        for position, item in enumerate(records(output, "response output")):
            item_type = field(record(item, "output item"), "type")
            if item_type.__class__ is not str:
                raise Malformed(f"output item type is a {type(item_type).__name__}")
            kind = _client_kind(item, item_type)
            if kind is None:
                continue
            key = self._find(field(item, "id"), position)
            if key is None:
                self._sink.fail_live(f"the final response holds a {item_type} that never streamed")
                continue
            self._status(key, item, item_type)
            text_call = _TEXT_CALLS.get(item_type)
            if text_call is not None:
                self._sink.done_arguments(key, field(item, text_call[1]))
            elif self._builtin.get(key) not in (None, _builtin_arguments(item)):
                self._sink.taint(key, Reason.upstream_error, "the final response contradicts the done item")

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

    def _find(self, item_id: Any, index: Any) -> Hashable | None:
        key = self._by_item.get(item_id) if isinstance(item_id, str) else None
        if key is None and index is not None:
            key = self._by_index.get(index)
        return key

    def _item(self, item: Any, output_index: Any, *, done: bool) -> None:
        item_type = field(record(item, "output item"), "type")
        if item_type.__class__ is not str:
            raise Malformed(f"output item type is a {type(item_type).__name__}")
        if item_type in _NOT_CALLS or item_type.endswith("_output"):
            return
        if output_index is not None and output_index.__class__ is not int:
            raise Malformed(f"output_index is a {type(output_index).__name__}")
        kind = _client_kind(item, item_type)
        key = self._find(field(item, "id"), output_index)
        if key is None:
            key = self._new_key(item, output_index)
        if kind is None:
            self._server(key, item, item_type, output_index, done=done)
            return
        self._open_client(key, item, item_type, kind, output_index)
        if done:
            self._status(key, item, item_type)
        if item_type in _TEXT_CALLS:
            self._text_call(key, item, _TEXT_CALLS[item_type][1], done=done)
        elif done:
            self._done_builtin(key, item)

    def _new_key(self, item: Any, index: int | None) -> Hashable:
        item_id = field(item, "id")
        key = ("item", item_id if isinstance(item_id, str) else index)
        if isinstance(item_id, str):
            self._by_item[item_id] = key
        if index is not None:
            self._by_index[index] = key
        return key

    def _server(self, key: Hashable, item: Any, item_type: str, index: int | None, *, done: bool) -> None:
        item_id = field(item, "id")
        self._sink.open(key, index=index, id=item_id, name=field(item, "name") or item_type, kind="server")
        if done:
            self._sink.close_arguments(key)

    def _open_client(self, key: Hashable, item: Any, item_type: str, kind: CallKind, index: int | None) -> None:
        """Open (or identify) a client call: text calls by their ``name``; built-in calls by
        their kind (an MCP approval request by the MCP tool's ``name``), answered by their
        ``call_id`` (an approval request: its ``id``)."""
        if item_type in _TEXT_CALLS:
            self._sink.open(key, index=index, id=field(item, "call_id"), name=field(item, "name"), kind=kind)
            return
        if kind == "mcp_approval":
            self._sink.open(key, index=index, id=field(item, "id"), name=field(item, "name"), kind=kind)
        else:
            self._sink.open(key, index=index, id=field(item, "call_id"), name=kind, kind=kind)
        self._builtin.setdefault(key, None)

    def _status(self, key: Hashable, item: Any, item_type: str) -> None:
        """A done client item must say ``completed``. An MCP approval request has no status,
        and a text call may omit it (its done events and the completed response prove it). A
        call a program made (``caller.type`` ``program``) stays ``in_progress`` when done: the
        program waits for its result (recorded from OpenAI's programmatic tool calling)."""
        status = field(item, "status")
        if status == "completed" or (status is None and (item_type in _TEXT_CALLS
                                                          or item_type == "mcp_approval_request")):
            return
        if status == "in_progress" and field(field(item, "caller"), "type") == "program":
            return
        reason = Reason.stream_truncated if status == "incomplete" else Reason.upstream_error
        self._sink.taint(key, reason, f"the {item_type} item is done with status {status!r}")

    def _text_call(self, key: Hashable, item: Any, argument_field: str, *, done: bool) -> None:
        sink = self._sink
        arguments = field(item, argument_field)
        if done:
            sink.done_arguments(key, arguments)
            sink.close_arguments(key)
            sink.settle(key)
        elif isinstance(arguments, str) and arguments and not sink.has_fragments(key):
            # Some servers put the whole arguments in the added item: the vendor's own copy.
            sink.done_arguments(key, arguments)

    def _done_builtin(self, key: Hashable, item: Any) -> None:
        """A built-in call's arguments are its done item: taken once; a second, different done
        item for the same call is a contradiction."""
        arguments = _builtin_arguments(item)
        first = self._builtin.get(key)
        if first is None:
            self._builtin[key] = arguments
            self._sink.set_value(key, arguments)
        elif first != arguments:
            self._sink.taint(key, Reason.upstream_error, "the done item was sent twice, differently")
        self._sink.close_arguments(key)
        self._sink.settle(key)
