"""A JSON array streamed element by element (Gemini ``streamGenerateContent`` without ``alt=sse``)."""

from __future__ import annotations

import json
import re
from typing import Any

from ._common import UNPARSABLE_KEY, Bytes, _body_text, _reject_constant, _utf8_decoder

# JSON-array scanner: what matters in each state (everything else is skipped by the regex
# engine, which keeps the per-byte cost in C).
_IN_STRING_STOP = re.compile(r'["\\]')
_IN_CONTAINER_STOP = re.compile(r'[\[\]{}"]')
_SCALAR_STOP = re.compile(r'[\s,\[\]{}"]')
_NON_WS = re.compile(r"\S")


class JSONArrayStreamDecoder:
    """Incremental decoder for a JSON array whose elements arrive over time.

    This is Gemini's ``streamGenerateContent`` body without ``alt=sse``:
    ``[{...}\\r\\n,\\r\\n{...}\\r\\n]``. Each element is returned as soon as its last byte
    arrives, found by tracking string/escape state and bracket depth over new text only;
    the element text is then parsed once. An element that does not parse becomes
    ``{"toolstream_unparsable": text}`` and scanning resynchronises after it.

    A body that is not an array - a bare ``{"error": ...}`` object, or newline-delimited
    JSON values - yields its top-level values the same way. A body that ends inside the
    array or inside an element sets :attr:`truncated`; the incomplete element is dropped,
    never guessed at.
    """

    def __init__(self) -> None:
        self._decoder = _utf8_decoder()
        self._started = False
        self._in_array = False  # inside the outer "[": elements live at depth 1
        self._depth = 0  # container depth, the outer array included
        self._in_elem = False
        self._elem_is_scalar = False  # a number / literal: ends at the next delimiter
        self._in_string = False
        self._escape = False  # the previous text ended on a backslash inside a string
        self._parts: list[str] = []
        self._elem_start = 0  # within the text being scanned
        self._closed = False
        self.truncated = False
        """Set by :meth:`close` when the body ended inside the array or an element."""

    def feed(self, data: Bytes) -> list[Any]:
        """Decode the next piece of the body; return the elements it completed, parsed.

        Raises ``RuntimeError`` after :meth:`close` (a caller bug, not bad input).
        """
        return [_parse_value(text) for text in self._feed_texts(data)]

    def close(self) -> list[Any]:
        """Signal the end of the body; return a last bare value if one was pending."""
        return [_parse_value(text) for text in self._close_texts()]

    def _feed_texts(self, data: Bytes) -> list[str]:
        if self._closed:
            raise RuntimeError("JSONArrayStreamDecoder.feed() called after close()")
        return self._scan(self._decoder.decode(data))

    def _close_texts(self) -> list[str]:
        if self._closed:
            return []
        out = self._scan(self._decoder.decode(b"", final=True))
        self._closed = True
        if self._in_elem:
            if self._elem_is_scalar and not self._in_array:
                out.append("".join(self._parts))  # a bare value ends with the body
            else:
                self.truncated = True
            self._parts = []
            self._in_elem = False
        if self._in_array:
            self.truncated = True
        return out

    def _scan(self, text: str) -> list[str]:
        """The elements ``text`` completes; the state machine's one loop, one step per state."""
        text, self._started = _body_text(text, self._started), self._started or bool(text)
        if not text:
            return []
        out: list[str] = []
        self._elem_start = 0  # where the current element starts within ``text``
        n = len(text)
        i = 0
        while 0 <= i < n:
            if self._escape:
                self._escape = False
                i += 1
            elif self._in_string:
                i = self._in_string_step(text, i, out)
            elif self._in_elem and self._elem_is_scalar:
                i = self._scalar_step(text, i, out)
            elif self._in_elem:
                i = self._container_step(text, i, out)
            else:
                i = self._between_step(text, i, out)
        if self._in_elem:
            self._parts.append(text[self._elem_start:])
        return out

    # Each step reads ``text`` from ``i`` and returns where the scan goes on, or -1 when the
    # rest of ``text`` holds nothing for its state (the next ``feed`` resumes there).

    def _in_string_step(self, text: str, i: int, out: list[str]) -> int:
        j = _find(_IN_STRING_STOP, text, i)
        if j < 0:
            return -1
        if text[j] == "\\":
            self._escape = True
            return j + 1
        self._in_string = False
        if self._in_elem and self._depth == (1 if self._in_array else 0):  # a string element ended
            out.append(self._take(text, self._elem_start, j + 1))
        return j + 1

    def _scalar_step(self, text: str, i: int, out: list[str]) -> int:
        j = _find(_SCALAR_STOP, text, i)
        if j >= 0:
            out.append(self._take(text, self._elem_start, j))
        return j  # the delimiter is handled as between-elements input

    def _container_step(self, text: str, i: int, out: list[str]) -> int:
        j = _find(_IN_CONTAINER_STOP, text, i)
        if j < 0:
            return -1
        c = text[j]
        if c == '"':
            self._in_string = True
        elif c in "[{":
            self._depth += 1
        else:
            self._depth -= 1
            if self._depth == (1 if self._in_array else 0):
                out.append(self._take(text, self._elem_start, j + 1))
        return j + 1

    def _between_step(self, text: str, i: int, out: list[str]) -> int:
        j = _find(_NON_WS, text, i)
        if j < 0:
            return -1
        c = text[j]
        if c == "[" and not self._in_array:
            self._in_array = True
            self._depth = 1
        elif c == "]" and self._in_array:
            self._in_array = False
            self._depth = 0
        elif c == "," and self._in_array:
            pass
        elif c in "]},":
            out.append(c)  # stray delimiter: surfaces as one unparsable element
        else:
            self._start_element(c, j)
        return j + 1

    def _start_element(self, c: str, j: int) -> None:
        self._in_elem = True
        self._parts = []
        self._elem_start = j
        if c in "[{":
            self._depth += 1
        elif c == '"':
            self._in_string = True
        else:
            self._elem_is_scalar = True

    def _take(self, text: str, start: int, end: int) -> str:
        """End the current element at ``text[end]`` and return its whole text."""
        self._in_elem = False
        self._elem_is_scalar = False
        piece = text[start:end]
        if self._parts:
            self._parts.append(piece)
            piece = "".join(self._parts)
            self._parts = []
        return piece


def _find(pattern: re.Pattern[str], text: str, i: int) -> int:
    """Where ``pattern`` next matches in ``text`` from ``i``; -1 when it does not."""
    m = pattern.search(text, i)
    return -1 if m is None else m.start()


def _parse_value(text: str) -> Any:
    """Parse one array element; unparsable text becomes the marker event."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return {UNPARSABLE_KEY: text}
