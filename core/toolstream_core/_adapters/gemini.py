"""Google Gemini (``streamGenerateContent``, SSE or JSON array; Vertex and the Developer API).

Identity (DESIGN §4.1): every complete ``functionCall`` part is its own call — two parallel
calls to the same tool are two calls, never merged by name. Streaming arguments
(``willContinue`` + ``partialArgs``) attach to the open call of that candidate by position;
string values for one ``jsonPath`` concatenate; ``willContinue`` false/absent or an empty
``functionCall`` ends the call. A part holding only ``{"willContinue": true}`` is a keep-alive
inside the open call (Vertex sends them between argument groups): it ends nothing, opens
nothing, changes nothing. A new named ``functionCall`` while a streaming call is still open
fails the open one (``stream_truncated``: it never got its end), and so does the end of the
candidate (its ``finishReason``) or of the stream while a call is still declared to continue.
Arguments are structured: the object is built as it arrives and its compact JSON is the raw
text; a ``partialArgs`` entry with no value fails the call (``upstream_error``, DESIGN §5).
Bad input (DESIGN §5): a chunk, candidate, content, part or ``functionCall`` of the wrong type
raises ``Malformed`` (every live call fails); a chunk with no Gemini field at all is malformed.
Completion: ``finishReason`` ``STOP`` (``_completion.gemini_finish``); a prompt block is an error;
``usageMetadata.candidatesTokenCount`` feeds the max-token backstop (DESIGN §5).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Hashable
from json.encoder import encode_basestring
from typing import TYPE_CHECKING, Any

from .._completion import Verdict, gemini_finish
from .._finalize import Deferred
from .._models import Reason
from ._access import Malformed, field2, record, records, text_of

if TYPE_CHECKING:
    from . import Sink

__all__ = ["GeminiAdapter", "PartialArgs"]

_TOKEN = re.compile(r"""\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\[['"]((?:[^'"\\]|\\.)*)['"]\]""")


def parse_path(path: str) -> list[str | int]:
    """``$.a.b[0]['c d']`` -> ``["a", "b", 0, "c d"]``; ValueError on anything else."""
    if not path.startswith("$"):
        raise ValueError(f"jsonPath {path!r} does not start at $")
    tokens: list[str | int] = []
    pos = 1
    while pos < len(path):
        match = _TOKEN.match(path, pos)
        if match is None:
            raise ValueError(f"jsonPath {path!r} is not understood at {pos}")
        name, number, quoted = match.groups()
        tokens.append(int(number) if number is not None else (name if name is not None else quoted))
        pos = match.end()
    return tokens


def _json_size(value: Any) -> int:
    if isinstance(value, _Pieces):
        value = "".join(value)
    if isinstance(value, str):  # the C escaper json.dumps itself uses, without its overhead
        text = encode_basestring(value)
    else:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


class _Pieces(list[str]):
    """A string value still arriving; joined once at the end, so streaming it stays linear."""


class PartialArgs(Deferred):
    """The arguments object of one ``partialArgs`` call, built in place as values arrive.

    ``size`` is kept equal to the UTF-8 size of the object's compact JSON at every step, by
    adding the size of each change (never by re-serialising), so the byte cap of rule 8 applies
    to streamed structured arguments exactly as to the same arguments sent whole.
    """

    __slots__ = ("root", "size")

    def __init__(self, root: dict[str, Any] | None = None) -> None:
        self.root: dict[str, Any] = root if root is not None else {}
        self.size = _json_size(self.root)

    def resolve(self) -> dict[str, Any]:
        """The finished object: every streamed string joined (in place; safe to call again)."""
        stack: list[Any] = [self.root]
        while stack:
            node = stack.pop()
            items = node.items() if isinstance(node, dict) else enumerate(node)
            for token, value in list(items):
                if isinstance(value, _Pieces):
                    node[token] = "".join(value)
                elif isinstance(value, (dict, list)):
                    stack.append(value)
        return self.root

    def apply(self, path: str, value: Any, *, is_string: bool) -> None:
        tokens = parse_path(path)
        if not tokens:
            raise ValueError("a partial argument replaces the whole arguments object")
        node: Any = self.root
        for token, following in itertools.pairwise(tokens):
            existing = self._get(node, token)
            if not isinstance(existing, (dict, list)) or isinstance(existing, _Pieces):
                existing = [] if isinstance(following, int) else {}
                self._set(node, token, existing)
            node = existing
        last = tokens[-1]
        current = self._get(node, last)
        if is_string and isinstance(current, _Pieces):
            self.size += _json_size(value) - 2  # escaping is per character: sizes add up
            current.append(value)
        elif is_string and isinstance(current, str):
            self.size += _json_size(value) - 2
            node[last] = _Pieces((current, value))
        else:
            self._set(node, last, _Pieces((value,)) if is_string else value)

    @staticmethod
    def _get(node: Any, token: str | int) -> Any:
        if isinstance(node, dict) and isinstance(token, str):
            return node.get(token)
        if isinstance(node, list) and isinstance(token, int) and token < len(node):
            return node[token]
        return None

    def _set(self, node: Any, token: str | int, value: Any) -> None:
        """Set ``node[token]`` and account for the change in compact-JSON size."""
        if isinstance(node, dict) and isinstance(token, str):
            if token in node:
                self.size += _json_size(value) - _json_size(node[token])
            else:
                self.size += (1 if node else 0) + _json_size(token) + 1 + _json_size(value)
            node[token] = value
        elif isinstance(node, list) and isinstance(token, int):
            if token > len(node) + 1024:
                raise ValueError(f"array index {token} far past the end")
            if token < len(node):
                self.size += _json_size(value) - _json_size(node[token])
            else:
                added = token - len(node) + 1
                self.size += (added if node else added - 1) + 4 * (added - 1) + _json_size(value)
                node.extend([None] * added)
            node[token] = value
        else:
            raise ValueError(f"jsonPath step {token!r} does not fit a {type(node).__name__}")


_VALUE_FIELDS = (
    ("numberValue", "number_value"),
    ("boolValue", "bool_value"),
    ("nullValue", "null_value"),
    ("structValue", "struct_value"),
    ("listValue", "list_value"),
)
_NO_VALUE: Any = object()
#: A call's builder once the call was decided mid-stream (past the cap): nothing is built for it.
_DECIDED: Any = object()
# Fields of a GenerateContentResponse, wire and SDK spelling: a dict with none of them is not
# a Gemini chunk.
_CHUNK_FIELDS = frozenset({
    "candidates", "usageMetadata", "usage_metadata", "promptFeedback", "prompt_feedback", "error",
    "modelVersion", "model_version", "responseId", "response_id", "createTime", "create_time",
})

_SDK_CHUNK_FIELDS = ("usage_metadata", "prompt_feedback", "error", "model_version", "response_id", "create_time")


def _check_chunk(chunk: Any) -> None:
    """``Malformed`` for a chunk that is no Gemini response at all."""
    if chunk.__class__ is dict:
        if _CHUNK_FIELDS.isdisjoint(chunk):
            raise Malformed("a dict with no Gemini response field")
    elif field2(chunk, "candidates", "candidates") is None and all(
            field2(chunk, name, name) is None for name in _SDK_CHUNK_FIELDS):
        # The SDK's parse of ``data: {}``: every field None (usage-only chunks have one).
        raise Malformed(f"a {type(chunk).__name__} with no field set")


class GeminiAdapter:
    __slots__ = ("_builders", "_calls", "_candidate", "_open", "_settle", "_sink")

    def __init__(self, sink: Sink) -> None:
        self._sink = sink
        self._open: dict[int, Hashable] = {}
        self._builders: dict[Hashable, PartialArgs] = {}
        self._settle: list[Hashable] = []
        self._candidate: dict[Hashable, int] = {}  # key -> candidate index, for orphans
        self._calls = 0

    def feed(self, chunk: Any) -> None:
        _check_chunk(chunk)
        self._chunk_signals(chunk)
        for candidate in records(field2(chunk, "candidates", "candidates"), "candidates"):
            self._read_candidate(record(candidate, "a candidate"))
        # Rule 10 after the chunk's own finish reason: a call ended in the same chunk as a
        # SAFETY stop must not be pipelined.
        settle, self._settle = self._settle, []
        for key in settle:
            self._sink.settle(key)

    def _chunk_signals(self, chunk: Any) -> None:
        """What a chunk says beside its candidates: an error, usage, a blocked prompt."""
        sink = self._sink
        error = field2(chunk, "error", "error")
        if error:
            sink.upstream_error(str(field2(error, "message", "message") or error))
        usage = record(field2(chunk, "usageMetadata", "usage_metadata"), "usageMetadata")
        if usage is not None:
            sink.usage(field2(usage, "candidatesTokenCount", "candidates_token_count"))
        feedback = field2(chunk, "promptFeedback", "prompt_feedback")
        block = text_of(field2(feedback, "blockReason", "block_reason"))
        if block:
            sink.end_turn(block, Verdict.error)

    def _read_candidate(self, candidate: Any) -> None:
        ci = field2(candidate, "index", "index")
        if ci is None:
            ci = 0
        elif ci.__class__ is not int:
            raise Malformed(f"candidate index is a {type(ci).__name__}")
        content = record(field2(candidate, "content", "content"), "candidate content")
        for part in records(field2(content, "parts", "parts"), "content parts"):
            call = field2(record(part, "a part"), "functionCall", "function_call")
            if call is not None:
                self._function_call(ci, record(call, "functionCall"))
            elif self._sink.recording:  # text, a thought, code: a framework's, never the gate's
                self._sink.carries()
        reason = text_of(field2(candidate, "finishReason", "finish_reason"))
        if reason:
            self._unfinished(ci)
            self._sink.end_turn(reason, gemini_finish(reason))

    def end_of_stream(self) -> None:
        """Called by ``Assembler.finish``: calls still declared to continue never ended."""
        for ci in list(self._open):
            self._unfinished(ci)

    def _unfinished(self, ci: int) -> None:
        key = self._open.pop(ci, None)
        if key is not None:
            self._sink.taint(key, Reason.stream_truncated, "the stream ended while the call was declared to continue")

    def _start(self, ci: int, call: Any, name: str | None, args: Any, streaming: bool) -> Hashable:
        key: Hashable = ("part", self._calls)
        self._candidate[key] = ci
        self._sink.open(key, index=self._calls, id=field2(call, "id", "id"), name=name, order=self._calls)
        self._calls += 1
        if streaming:
            builder = PartialArgs(dict(args) if isinstance(args, dict) else None)
            self._builders[key] = builder
            self._sink.set_value(key, builder, count=False)
        elif args is not None:  # no args at all is a no-argument call: raw stays None
            self._sink.set_value(key, args)
        return key

    def _end(self, key: Hashable) -> None:
        self._sink.close_arguments(key)
        self._settle.append(key)

    def _function_call(self, ci: int, call: Any) -> None:
        name = field2(call, "name", "name")
        if name is not None and name.__class__ is not str:
            raise Malformed(f"functionCall name is a {type(name).__name__}")
        args = field2(call, "args", "args")
        partial = records(field2(call, "partialArgs", "partial_args"), "partialArgs")
        will_continue = field2(call, "willContinue", "will_continue")
        if will_continue is not None and will_continue.__class__ is not bool:
            raise Malformed(f"willContinue is a {type(will_continue).__name__}")
        will_continue = will_continue is True
        if name:
            previous = self._open.pop(ci, None)
            if previous is not None:  # it never got its end marker: it did not finish
                self._sink.taint(previous, Reason.stream_truncated,
                                 "a new functionCall began before the streaming call ended")
            key = self._start(ci, call, name, args, will_continue or bool(partial))
        elif partial:
            opened = self._open.get(ci)
            if opened is None:
                # DESIGN §5.1: arguments with no open call are an orphan: they may belong to any
                # live call of the candidate, the one that just ended too. No call is opened
                # for an id the vendor never sent.
                candidate = self._candidate
                self._sink.fail_live("partialArgs with no open function call",
                                     lambda key: candidate.get(key) == ci)
                return
            key = opened
        elif args is not None:
            self._sink.anomaly("a functionCall with args but no name")
            key = self._start(ci, call, None, args, False)
        elif will_continue:  # a keep-alive: part of the open call (or of nothing), changes nothing
            return
        else:
            ended = self._open.pop(ci, None)  # an empty functionCall ends the open call
            if ended is None:
                self._sink.anomaly("an empty functionCall with no open call")
            else:
                self._end(ended)
            return
        if partial:
            self._apply(key, partial)
        if will_continue:
            self._open[ci] = key
        else:
            if self._open.get(ci) == key:
                del self._open[ci]
            self._end(key)

    def _apply(self, key: Hashable, partial: Any) -> None:
        builder = self._builders.get(key)
        if builder is _DECIDED:  # the call failed (past the cap): its value is no longer built
            self._sink.count_structured(key, "", 0)
            return
        if builder is None:
            self._sink.taint(key, Reason.invalid_json, "partialArgs for a call that already has complete args")
            return
        try:
            for item in partial:
                record(item, "a partialArgs entry")
                path = field2(item, "jsonPath", "json_path")
                if not isinstance(path, str):
                    raise ValueError("jsonPath is not a string")
                text = field2(item, "stringValue", "string_value")
                if text is not None:
                    if not isinstance(text, str):
                        raise ValueError("stringValue is not a string")
                    builder.apply(path, text, is_string=True)
                    if not self._sink.count_structured(key, text, builder.size):
                        self._builders[key] = _DECIDED
                        return
                    continue
                value = _value_of(item)
                if value is _NO_VALUE:  # never read as JSON null: the value was lost on the way
                    self._sink.taint(key, Reason.upstream_error, f"partialArgs entry for {path!r} has no value")
                    return
                builder.apply(path, value, is_string=False)
                if not self._sink.count_structured(key, value, builder.size):
                    self._builders[key] = _DECIDED
                    return
        except (ValueError, TypeError) as exc:
            self._sink.taint(key, Reason.invalid_json, f"partialArgs could not be applied: {exc}")


def _value_of(item: Any) -> Any:
    """The non-string value of one ``partialArgs`` entry, or ``_NO_VALUE`` when it has none.

    The SDK spells a null ``"NULL_VALUE"``; protobuf's JSON mapping may send ``"nullValue":
    null``, so on the wire the camelCase *key* marks a null too. A ``stringValue: null`` is no
    value at all (a dumped SDK object has every field, ``None`` where unset: not a null).
    """
    for wire, sdk in _VALUE_FIELDS:
        found = field2(item, wire, sdk)
        if found is not None:
            return None if wire == "nullValue" else found
    if item.__class__ is dict and "nullValue" in item and "stringValue" not in item:
        return None
    return _NO_VALUE
