"""OpenAI Chat Completions and every OpenAI-compatible server (Groq, Mistral, OpenRouter, ...).

Identity (DESIGN §4.1): key = (choice index, tool_call index). Servers differ wildly, so:
- a different non-empty id on a known index starts a new call (some servers reuse index 0);
- with no index, a non-empty id starts or joins that id's call, a name without an id starts a
  new call, and a bare fragment joins the most recent call of that choice;
- ``""`` ids/names and ids/names repeated on every chunk are handled by first-write-wins in
  the assembler, never concatenated;
- after the choice's ``finish_reason``, a delta carrying an id is a summary chunk repeating a
  call (LiteLLM and others): a copy of its own, linked to the call by id (rule 7), so its
  bytes meet the copies' budget and not the call's.
- ``arguments`` sent as a JSON object (or any non-string JSON value, as some compatible servers
  do) are structured arguments, like Gemini ``args`` (DESIGN §5); a call that gets both text
  and a value fails ``upstream_error`` at the end (what the server meant is unknowable).
Completion: ``finish_reason`` (see ``_completion.chat_finish``); an ``error`` object anywhere
in a chunk is an upstream error. ``usage.completion_tokens`` feeds the max-token backstop.
Bad input (DESIGN §5): a tool-call ``index`` that is not an integer, or an index never opened
by a delta with no id and no name, cannot be attributed, so every live call of that choice
fails; an id or name of the wrong type fails the call it names; a chunk or field of the wrong
type raises ``Malformed`` (every live call fails); a dict with no chat field at all (or an SDK
object with none set, the SDK's parse of ``data: {}``) is malformed, a ``type``-tagged dict is
an unknown kind and ignored. The continuation-chunk path pays for none of these checks.
The legacy ``function_call`` protocol has no ids: its call gets a synthesized one.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from .._completion import chat_finish
from .._models import CallKind, Reason
from ._access import Malformed, accessor, field

if TYPE_CHECKING:
    from . import Sink

__all__ = ["OpenAIChatAdapter"]

Get = Callable[[Any, str], Any]

# A chunk with none of these (and no ``type`` tag of an unknown kind) is not a chat chunk.
_CHUNK_FIELDS = frozenset({"choices", "error", "usage", "id", "object"})
# No vendor value is this object: the fast path's slot when there is no hot call.
_NO_SLOT = object()
# What the continuation fast path lets through to the full path: data of another shape.
_NOT_HOT = (LookupError, TypeError, ValueError, AttributeError)


def _error_text(error: Any) -> str:
    message = field(error, "message") if not isinstance(error, str) else error
    code = field(error, "code") if not isinstance(error, str) else None
    return f"{code}: {message}" if code else str(message or error)


def _choice_index(ci: Any) -> int:
    """A choice's index; 0 when absent (servers with one choice omit it)."""
    if ci.__class__ is int:
        return int(ci)
    if ci is not None:
        raise Malformed(f"choice index is a {type(ci).__name__}")
    return 0


def _text(value: Any, what: str) -> tuple[str | None, str | None]:
    """An id or a name: ``(text, None)``, ``(None, None)`` when absent or ``""``, and
    ``(None, reason)`` when it is not a string (DESIGN §5.2: it fails the call it names)."""
    if value is None:  # continuation chunks: one comparison
        return None, None
    if value.__class__ is not str:
        return None, f"{what} is a {type(value).__name__}"
    return (value or None), None


def _function_of(tc: Any, get: Get) -> tuple[Any, CallKind, Any]:
    """The delta's function record, its kind and its argument fragment (free-form input tools
    send ``{"custom": {name, input}}``)."""
    function = get(tc, "function")
    if function is not None:
        return function, "function", get(function, "arguments")
    custom = get(tc, "custom")
    if custom is not None:
        return custom, "custom", get(custom, "input")
    return None, "function", None


class OpenAIChatAdapter:
    __slots__ = ("_by_id", "_by_slot", "_finished", "_generation", "_hot_choice", "_hot_index", "_hot_key",
                 "_last", "_positions", "_sink")

    def __init__(self, sink: Sink) -> None:
        self._sink = sink
        self._by_slot: dict[tuple[int, int], Hashable] = {}
        self._by_id: dict[tuple[int, str], Hashable] = {}
        self._last: dict[int, Hashable] = {}
        self._positions: dict[int, int] = {}
        self._generation = 0
        self._finished: set[int] = set()  # choices that sent a finish_reason
        # The slot of the last fragment the full path attributed by index: the continuation
        # fast path's whole state (``_by_slot[(choice, index)]`` and ``_last[choice]`` both name
        # ``_hot_key`` while it is set).
        self._hot_choice: object = _NO_SLOT
        self._hot_index: object = _NO_SLOT
        self._hot_key: Hashable = None
        # Compatible servers may send ``arguments`` as a JSON object: structured arguments.
        # ``append`` sorts that out on its (already present) non-string branch, so the
        # continuation-chunk path pays nothing for it.
        sink.structured_fragments = True

    def fast(self, chunk: Any) -> bool:
        """The continuation fast path (DESIGN §9): take the common chunk, or say no.

        It takes a string fragment for the call this adapter last attributed (the "hot" slot:
        same choice, same tool-call index), with no id, no name, no legacy function_call (a
        delta's text and role are not ours), one choice, no finish_reason, no error. Indexes
        are compared by identity with the hot slot's, so a bool, a float or a large int never
        matches. Anything else is left, untouched, to ``feed``, so every DESIGN §5 check still
        runs; data of another shape raises inside the ``try`` and is ``feed``'s to judge. Wire
        dicts prove the shape by key counts (a tool call of exactly {index, function}, a
        function of exactly {arguments}); SDK objects go through ``_hot_sdk``. The dict branch
        is inline because it runs once per chunk.
        """
        try:
            if chunk.__class__ is dict:
                [choice] = chunk["choices"]
                if ("error" in chunk or choice["finish_reason"] is not None or "error" in choice
                        or choice["index"] is not self._hot_choice):
                    return False
                delta = choice["delta"]
                [tc] = delta["tool_calls"]
                if "function_call" in delta or len(tc) != 2 or tc["index"] is not self._hot_index:
                    return False
                function = tc["function"]
                if len(function) != 1:
                    return False
                fragment = function["arguments"]
            else:
                fragment = self._hot_sdk(chunk)
        except _NOT_HOT:
            return False
        if fragment.__class__ is str:
            self._sink.append(self._hot_key, fragment)
            return True
        return False

    def feed(self, chunk: Any) -> None:
        """The full path: every part of the chunk, every check."""
        get = accessor(chunk)
        error = get(chunk, "error")
        if error:
            self._sink.upstream_error(_error_text(error))
        choices = get(chunk, "choices")
        if not choices:
            self._no_choices(chunk, choices, get)
            return
        for choice in choices:
            self._choice(chunk, choice, get)

    # -- the continuation fast path (DESIGN §9) ---------------------------------------------

    def _hot_sdk(self, chunk: Any) -> Any:
        """``fast`` for SDK objects (pydantic): the SDK sets every declared field (None when
        absent) and keeps undeclared ones in ``model_extra``, so attribute reads plus a look at
        the extras see what the accessor would. An object that is not such a model raises
        AttributeError."""
        [choice] = chunk.choices
        if _has_error(chunk) or choice.finish_reason is not None or choice.index is not self._hot_choice:
            return None
        delta = choice.delta
        if _has_error(choice) or delta.function_call is not None:
            return None
        [tc] = delta.tool_calls
        if tc.index is not self._hot_index or tc.id is not None:
            return None
        function = tc.function
        return function.arguments if function.name is None else None

    # -- the full path: one handler per part of a chunk -------------------------------------

    def _no_choices(self, chunk: Any, choices: Any, get: Get) -> None:
        """A chunk with no choices: usage only, or not a chat chunk at all."""
        if choices is None:
            if chunk.__class__ is dict:
                if _CHUNK_FIELDS.isdisjoint(chunk) and not isinstance(chunk.get("type"), str):
                    raise Malformed("a dict with no chat completion field")
            elif all(get(chunk, name) is None for name in _CHUNK_FIELDS):
                # The SDK's parse of ``data: {}``: an object with every field None.
                raise Malformed(f"a {type(chunk).__name__} with no field set")
        elif choices.__class__ is not list:
            raise Malformed(f"choices is a {type(choices).__name__}")
        self._usage(chunk, get)

    def _choice(self, chunk: Any, choice: Any, get: Get) -> None:
        ci = _choice_index(get(choice, "index"))
        delta = get(choice, "delta")
        if delta is not None:
            self._delta(ci, delta, get)
        error = get(choice, "error")
        if error:
            self._sink.upstream_error(_error_text(error))
        reason = get(choice, "finish_reason")
        if reason is not None:
            self._finished.add(ci)
            self._sink.end_turn(str(reason), chat_finish(str(reason)))
            self._usage(chunk, get)

    def _delta(self, ci: int, delta: Any, get: Get) -> None:
        if self._sink.recording and _carries(delta, get):  # only once a call failed (``_spent``)
            self._sink.carries()
        calls = get(delta, "tool_calls")
        if calls:
            for tc in calls:
                self._tool_call(ci, tc, get)
        elif calls is not None and calls.__class__ is not list:
            raise Malformed(f"tool_calls is a {type(calls).__name__}")
        legacy = get(delta, "function_call")
        if legacy:
            self._legacy(ci, legacy)

    def _usage(self, chunk: Any, get: Get) -> None:
        """``usage.completion_tokens`` for the max-token backstop (DESIGN §5). Read only on
        usage-only and finishing chunks, where servers put it, so streaming chunks pay nothing."""
        usage = get(chunk, "usage")
        if usage is not None:
            self._sink.usage(get(usage, "completion_tokens"))

    def _new_key(self, ci: int, index: int | None, call_id: str | None, name: str | None, kind: CallKind,
                 *, anonymous: bool = False) -> Hashable:
        self._generation += 1
        key = ("chat", ci, self._generation)
        position = self._positions.get(ci, 0)
        self._positions[ci] = position + 1
        vendor_index = index if index is not None else position
        self._sink.open(
            key, index=vendor_index, id=call_id, name=name, kind=kind,
            order=(ci, vendor_index), anonymous=anonymous,
        )
        return key

    def _fail_choice(self, ci: int, detail: str) -> None:
        """Every live call of choice ``ci`` fails: the delta may belong to any of them."""
        self._sink.fail_live(detail, lambda key: key[1] == ci)  # type: ignore[index]

    def _tool_call(self, ci: int, tc: Any, get: Get) -> None:
        index = get(tc, "index")
        if index.__class__ is not int and index is not None:
            self._fail_choice(ci, f"a tool-call delta with a {type(index).__name__} index")
            return
        call_id, bad_id = _text(get(tc, "id"), "tool call id")
        if bad_id is not None and index is None:
            # With no index the id is the delta's only identity (DESIGN §4.1): unreadable, it
            # may be any live call's of the choice (§5.1), whatever name comes with it.
            self._fail_choice(ci, bad_id)
        function, kind, fragment = _function_of(tc, get)
        name, bad_name = _text(get(function, "name") if function is not None else None, "tool name")
        mistyped = bad_name or bad_id
        key = self._attribute(ci, index, call_id, name, kind, mistyped)
        if key is None:
            return
        if call_id is not None:
            self._by_id.setdefault((ci, call_id), key)
        if mistyped is not None:
            self._sink.taint(key, Reason.upstream_error, mistyped)
        self._last[ci] = key
        if index is not None:
            self._hot_choice, self._hot_index, self._hot_key = ci, index, key
        else:
            self._hot_choice = self._hot_index = _NO_SLOT
        if fragment is not None:
            self._sink.append(key, fragment)  # a non-string value is structured (see __init__)

    def _attribute(self, ci: int, index: int | None, call_id: str | None, name: str | None, kind: CallKind,
                   mistyped: str | None) -> Hashable | None:
        """The key of the call a delta belongs to (DESIGN §4.1), opening one where the delta
        starts a call; None when it cannot be attributed (already reported)."""
        if index is not None:
            return self._by_index(ci, index, call_id, name, kind, mistyped)
        if call_id is not None:
            key = self._by_id.get((ci, call_id))
            if key is None or ci in self._finished:
                return self._new_key(ci, None, call_id, name, kind)
            if name is not None:
                self._sink.open(key, index=None, name=name)
            return key
        if name is not None:
            return self._new_key(ci, None, None, name, kind)
        last = self._last.get(ci)
        if last is None:
            self._sink.anomaly("a tool-call fragment with no index, id or name and no call before it")
        return last

    def _by_index(self, ci: int, index: int, call_id: str | None, name: str | None, kind: CallKind,
                  mistyped: str | None) -> Hashable | None:
        key = self._by_slot.get((ci, index))
        if key is None and call_id is None and name is None and mistyped is None:
            # DESIGN §5.1: arguments for an index never opened, with nothing that names a
            # call: they may be any live call's of the choice.
            self._fail_choice(ci, f"a tool-call delta for unopened index {index} with no id or name")
            return None
        if key is None or (call_id is not None and (self._differs(key, call_id) or ci in self._finished)):
            key = self._new_key(ci, index, call_id, name, kind)
            self._by_slot[(ci, index)] = key
        elif call_id is not None or name is not None:
            self._sink.open(key, index=index, id=call_id, name=name)
        return key

    def _differs(self, key: Hashable, call_id: str) -> bool:
        known = self._sink.call_id(key)
        return known is not None and known != call_id

    def _legacy(self, ci: int, function_call: Any) -> None:
        """The deprecated ``functions`` API: one call per choice, no id, no index."""
        key = self._by_slot.get((ci, -1))
        name = field(function_call, "name")
        if key is None:
            # The protocol has no call ids: the assembler synthesizes a stable one, in strict
            # mode too (strict mode fails a missing id only where the protocol has ids).
            key = self._new_key(ci, 0, None, name if isinstance(name, str) and name else None, "function",
                                anonymous=True)
            self._by_slot[(ci, -1)] = key
        elif isinstance(name, str) and name:
            self._sink.open(key, index=0, name=name)
        fragment = field(function_call, "arguments")
        if fragment is not None:
            self._sink.append(key, fragment)


#: The delta fields that are the calls' (read above) or say nothing to a framework on their own.
_CALL_FIELDS = frozenset({"tool_calls", "function_call", "role"})


def _carries(delta: Any, get: Get) -> bool:
    """Whether a delta carries anything beside its calls that a framework reads: text, a
    refusal, reasoning (a compatible server's extra field), any other field set. Wire dicts by
    their keys; SDK objects by their declared content fields and their extras."""
    if delta.__class__ is dict:
        return any(value for name, value in delta.items() if name not in _CALL_FIELDS)
    if get(delta, "content") or get(delta, "refusal"):
        return True
    extra = getattr(delta, "model_extra", None)
    return isinstance(extra, dict) and any(value for name, value in extra.items()
                                           if name not in _CALL_FIELDS)


def _has_error(record: Any) -> bool:
    """An ``error`` among an SDK object's undeclared fields (the SDK declares none)."""
    extra = record.model_extra
    return bool(extra) and "error" in extra
