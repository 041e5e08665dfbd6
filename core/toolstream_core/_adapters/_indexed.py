"""Calls keyed by the vendor's block index, for the families that end each call with a stop
event and prove the turn only with a later stop reason: Bedrock ConverseStream
(``contentBlockStop``, then ``messageStop``) and Cohere (``tool-call-end`` or
``tool-calls-generation``, then the finish reason).

A stopped call's arguments are complete, but it settles only when the stop reason proves the
turn ended in tool use (DESIGN §4.4), so stopped calls wait here until then.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from . import Sink

__all__ = ["IndexedCalls"]


class IndexedCalls:
    __slots__ = ("_closed", "_copies", "_keys", "_sink", "_tag")

    def __init__(self, sink: Sink, tag: str) -> None:
        self._sink = sink
        self._tag = tag  # the first element of every key: "block" (Bedrock), "index" (Cohere)
        self._keys: dict[int, Hashable] = {}  # index -> key of the call started there last
        self._closed: list[Hashable] = []  # stopped calls not yet settled
        self._copies = 0  # starts at an index already used

    def at(self, index: int | None) -> Hashable | None:
        """The key of the call started at ``index``, if any."""
        return self._keys.get(index) if index is not None else None

    def new_key(self, index: int) -> Hashable:
        """The key for a call starting at ``index``: a start at a used index is a copy (a call
        sent again, linked to the first by its id), so it gets a key of its own."""
        if index not in self._keys:
            return (self._tag, index)
        self._copies += 1
        return (self._tag, index, self._copies - 1)

    def started(self, index: int, key: Hashable) -> None:
        self._keys[index] = key

    def stop(self, raw: Any, what: str) -> None:
        """The vendor stopped the call at index ``raw``: its arguments are complete."""
        if raw.__class__ is not int:  # the end of some call, but of which: none can be proven
            self._sink.fail_live(f"{what} with a {type(raw).__name__} index")
            return
        key = self._keys.get(raw)
        if key is not None:
            self.stopped(key)

    def stopped(self, key: Hashable) -> None:
        self._sink.close_arguments(key)
        self._closed.append(key)

    def settle_stopped(self) -> None:
        """The stop reason proved the turn (or a new block began): settle every stopped call."""
        closed, self._closed = self._closed, []
        for key in closed:
            self._sink.settle(key)
