"""Google Gemini (``streamGenerateContent``, SSE or JSON array; Vertex and the Developer API).

Identity (DESIGN §4.1): every complete ``functionCall`` part is its own call — two parallel
calls to the same tool are two calls, never merged by name. Streaming arguments
(``willContinue`` + ``partialArgs``) attach to the open call of that candidate by position;
string values for one ``jsonPath`` concatenate; ``willContinue`` false/absent or an empty
``functionCall`` ends the call. Arguments are structured: the object is built as it arrives and
its compact JSON is the raw text.
Completion: ``finishReason`` ``STOP`` (``_completion.gemini_finish``); a prompt block is an error.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

from .._completion import Verdict, gemini_finish
from .._models import Reason
from ._access import field2, text_of

if TYPE_CHECKING:
    from .._assembler import Assembler

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


class PartialArgs:
    """The arguments object of one ``partialArgs`` call, built in place as values arrive."""

    __slots__ = ("root",)

    def __init__(self, root: dict[str, Any] | None = None) -> None:
        self.root: dict[str, Any] = root if root is not None else {}

    def apply(self, path: str, value: Any, *, is_string: bool) -> None:
        tokens = parse_path(path)
        if not tokens:
            if isinstance(value, dict):
                self.root.update(value)
                return
            raise ValueError("a partial argument replaces the whole arguments object")
        node: Any = self.root
        for token, following in itertools.pairwise(tokens):
            node = self._child(node, token, [] if isinstance(following, int) else {})
        last = tokens[-1]
        current = self._get(node, last)
        if is_string and isinstance(current, str):
            value = current + value
        self._set(node, last, value)

    @staticmethod
    def _get(node: Any, token: str | int) -> Any:
        if isinstance(node, dict) and isinstance(token, str):
            return node.get(token)
        if isinstance(node, list) and isinstance(token, int) and token < len(node):
            return node[token]
        return None

    @classmethod
    def _child(cls, node: Any, token: str | int, empty: Any) -> Any:
        existing = cls._get(node, token)
        if isinstance(existing, (dict, list)):
            return existing
        cls._set(node, token, empty)
        return empty

    @staticmethod
    def _set(node: Any, token: str | int, value: Any) -> None:
        if isinstance(node, dict) and isinstance(token, str):
            node[token] = value
        elif isinstance(node, list) and isinstance(token, int):
            if token > len(node) + 1024:
                raise ValueError(f"array index {token} far past the end")
            while len(node) <= token:
                node.append(None)
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


class GeminiAdapter:
    __slots__ = ("_builders", "_calls", "_open", "_sink")

    def __init__(self, sink: Assembler) -> None:
        self._sink = sink
        self._open: dict[int, Hashable] = {}
        self._builders: dict[Hashable, PartialArgs] = {}
        self._calls = 0

    def feed(self, chunk: Any) -> None:
        sink = self._sink
        error = field2(chunk, "error", "error")
        if error:
            sink.upstream_error(str(field2(error, "message", "message") or error))
        feedback = field2(chunk, "promptFeedback", "prompt_feedback")
        block = text_of(field2(feedback, "blockReason", "block_reason"))
        if block:
            sink.end(block, Verdict.error)
        for candidate in field2(chunk, "candidates", "candidates") or ():
            ci = field2(candidate, "index", "index")
            ci = ci if isinstance(ci, int) else 0
            content = field2(candidate, "content", "content")
            for part in field2(content, "parts", "parts") or ():
                call = field2(part, "functionCall", "function_call")
                if call is not None:
                    self._function_call(ci, call)
            reason = text_of(field2(candidate, "finishReason", "finish_reason"))
            if reason:
                sink.end(reason, gemini_finish(reason))

    def _function_call(self, ci: int, call: Any) -> None:
        sink = self._sink
        name = field2(call, "name", "name")
        args = field2(call, "args", "args")
        partial = field2(call, "partialArgs", "partial_args")
        will_continue = field2(call, "willContinue", "will_continue") is True
        if name:
            previous = self._open.pop(ci, None)
            if previous is not None:
                sink.close(previous)  # a new call began: the previous one ended unmarked
            key: Hashable = ("part", self._calls)
            sink.open(key, index=self._calls, id=field2(call, "id", "id"), name=name, order=self._calls)
            self._calls += 1
            if will_continue or partial:
                builder = PartialArgs(dict(args) if isinstance(args, dict) else None)
                self._builders[key] = builder
                sink.set_value(key, builder.root, count=False)
            elif args is not None:  # no args at all is a no-argument call: raw stays None
                sink.set_value(key, args)
        elif partial or args is not None:
            opened = self._open.get(ci)
            if opened is None:
                sink.anomaly("partialArgs with no open function call")
                return
            key = opened
        else:
            key = self._open.pop(ci, None)  # an empty functionCall ends the open call
            if key is None:
                sink.anomaly("an empty functionCall with no open call")
                return
            sink.close(key)
            sink.settle(key)
            return
        if partial:
            self._apply(key, partial)
        if will_continue:
            self._open[ci] = key
        else:
            self._open.pop(ci, None)
            sink.close(key)
            sink.settle(key)

    def _apply(self, key: Hashable, partial: Any) -> None:
        builder = self._builders.get(key)
        if builder is None:
            self._sink.taint(key, Reason.invalid_json, "partialArgs for a call that already has complete args")
            return
        try:
            for item in partial:
                path = field2(item, "jsonPath", "json_path")
                text = field2(item, "stringValue", "string_value")
                if text is not None:
                    if not isinstance(text, str):
                        raise ValueError("stringValue is not a string")
                    builder.apply(path, text, is_string=True)
                    self._sink.count_structured(key, text)
                    continue
                value = None
                for wire, sdk in _VALUE_FIELDS:
                    found = field2(item, wire, sdk)
                    if found is not None:
                        value = None if wire == "nullValue" else found
                        break
                builder.apply(path, value, is_string=False)
                self._sink.count_structured(key, json.dumps(value, default=str))
        except (ValueError, TypeError) as exc:
            self._sink.taint(key, Reason.invalid_json, f"partialArgs could not be applied: {exc}")





