"""Server-Sent Events (OpenAI, Anthropic, Gemini with ``alt=sse``, Cohere, most compatible servers)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._common import Bytes, _body_text, _utf8_decoder

_EOL = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class SSEMessage:
    """One dispatched Server-Sent Event.

    ``event`` is ``None`` when no ``event:`` field was sent (the browser would call it
    ``"message"``). ``id`` is the stream's last event id at dispatch time, which per the
    spec persists across events until the server sends another ``id:``; ``None`` when the
    server never sent one.
    """

    event: str | None
    data: str
    id: str | None = None


class SSEDecoder:
    """Incremental Server-Sent Events decoder (WHATWG HTML, "Parsing an event stream").

    Feed raw body bytes in any cut; get back the events completed by a blank line.
    Differs from the browser algorithm in one deliberate way: :meth:`close` dispatches a
    final event that has data but lacks its terminating blank line, because several
    servers end the body right after the last ``data:`` line and dropping that event
    would lose the finish signal. :attr:`truncated` records that the body did not end on
    an event boundary.
    """

    def __init__(self) -> None:
        self._decoder = _utf8_decoder()
        self._started = False  # the first decoded character was inspected for a BOM
        self._skip_lf = False  # the previous text ended with "\r": a leading "\n" is its pair
        self._line_parts: list[str] = []
        self._data_lines: list[str] = []
        self._event_type = ""
        self._dirty = False  # a field was seen since the last dispatch
        self._closed = False
        self.last_event_id: str | None = None
        """The last ``id:`` value received (spec: "last event ID buffer")."""
        self.retry: int | None = None
        """The last valid ``retry:`` value in milliseconds; informational only."""
        self.truncated = False
        """Set by :meth:`close` when the body ended inside a line or an event."""

    def feed(self, data: Bytes) -> list[SSEMessage]:
        """Decode the next piece of the body; return the events it completed.

        Raises ``RuntimeError`` after :meth:`close` (a caller bug, not bad input).
        """
        if self._closed:
            raise RuntimeError("SSEDecoder.feed() called after close()")
        return self._feed_text(self._decoder.decode(data))

    def close(self) -> list[SSEMessage]:
        """Signal the end of the body; return the last event if it was left pending.

        An incomplete UTF-8 sequence at the very end becomes U+FFFD. Calling it again
        returns an empty list.
        """
        if self._closed:
            return []
        out = self._feed_text(self._decoder.decode(b"", final=True))
        self._closed = True
        if self._line_parts:
            self.truncated = True
            line = "".join(self._line_parts)
            self._line_parts = []
            self._process_line(line)
        if self._dirty:
            self.truncated = True
        self._dispatch(out)
        return out

    def _feed_text(self, text: str) -> list[SSEMessage]:
        out: list[SSEMessage] = []
        text, self._started = _body_text(text, self._started), self._started or bool(text)
        if not text:
            return out
        if self._skip_lf:
            self._skip_lf = False
            if text[0] == "\n":
                text = text[1:]
        start = 0
        for match in _EOL.finditer(text):
            piece = text[start : match.start()]
            if self._line_parts:
                self._line_parts.append(piece)
                line = "".join(self._line_parts)
                self._line_parts = []
            else:
                line = piece
            start = match.end()
            if line:
                self._process_line(line)
            else:
                self._dispatch(out)
        if start < len(text):
            self._line_parts.append(text[start:])
        elif text and text[-1] == "\r":
            # Only now is it unknown whether "\r" is a line end alone or half of "\r\n".
            self._skip_lf = True
        return out

    def _process_line(self, line: str) -> None:
        if line[0] == ":":
            return  # comment / keep-alive
        name, colon, value = line.partition(":")
        if colon and value[:1] == " ":
            value = value[1:]
        if name == "data":
            self._data_lines.append(value)
        elif name == "event":
            self._event_type = value
        elif name == "id":
            if "\x00" not in value:
                self.last_event_id = value
        elif name == "retry":
            if value and value.isascii() and value.isdigit():
                self.retry = int(value)
        else:
            return  # unknown fields are ignored, as the spec says
        self._dirty = True

    def _dispatch(self, out: list[SSEMessage]) -> None:
        self._dirty = False
        if self._data_lines:
            out.append(
                SSEMessage(
                    event=self._event_type or None,
                    data="\n".join(self._data_lines),
                    id=self.last_event_id,
                )
            )
        self._data_lines = []
        self._event_type = ""
