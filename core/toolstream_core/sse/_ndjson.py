"""Newline-delimited JSON (Ollama's ``/api/chat``)."""

from __future__ import annotations

from typing import Any

from ._common import UNPARSABLE_KEY, Bytes, _parse_object


class NDJSONDecoder:
    """Incremental newline-delimited JSON: Ollama's ``/api/chat`` body, one object per line.

    Each line is parsed on its own, so one bad line becomes one marker event and the next
    line is read normally. A last line without its newline is an event when it parses (the
    object is self-delimiting); when it does not, the body was cut inside it: it is dropped,
    never guessed at, and :attr:`truncated` is set.
    """

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._closed = False
        self.truncated = False
        """Set by :meth:`close` when the body ended inside a line that does not parse."""

    def feed(self, data: Bytes) -> list[dict[str, Any]]:
        """Decode the next piece of the body; return the lines it completed, parsed."""
        if self._closed:
            raise RuntimeError("NDJSONDecoder.feed() called after close()")
        chunk = bytes(data)
        out: list[dict[str, Any]] = []
        start = 0
        while (end := chunk.find(b"\n", start)) != -1:
            piece = chunk[start:end]
            if self._parts:
                self._parts.append(piece)
                piece = b"".join(self._parts)
                self._parts = []
            self._line(piece, out)
            start = end + 1
        if start < len(chunk):
            self._parts.append(chunk[start:])
        return out

    def close(self) -> list[dict[str, Any]]:
        """Signal the end of the body; return a last line that lacked its newline."""
        if self._closed:
            return []
        self._closed = True
        rest = b"".join(self._parts)
        self._parts = []
        out: list[dict[str, Any]] = []
        if rest.strip():
            self._line(rest, out)
            if UNPARSABLE_KEY in out[-1]:
                out.pop()
                self.truncated = True
        return out

    @staticmethod
    def _line(raw: bytes, out: list[dict[str, Any]]) -> None:
        text = raw.decode("utf-8", "replace").strip()
        if text.startswith("\ufeff"):
            text = text[1:].strip()
        if text:
            out.append(_parse_object(text))
