"""LlamaIndex's own messages -> Chat Completions events, for a class the gate cannot read.

Why this exists: the gate reads the vendor's events (the SDK tap, or ``ChatResponse.raw`` of
a class it knows). A class this package does not know and given no ``provider=`` (a user's
own LLM, a community integration, LlamaIndex's test doubles ``MockLLM`` and
``MockFunctionCallingLLM``) only has LlamaIndex's view of its answer: the assistant message it
built, and whatever finish signal it kept in the response's metadata. That view is lossy and
the gate says so: a call is read from the message the class built (its own
``get_tool_calls_from_response``, with the argument text as the class kept it where it kept
one), so it is only as good as the class; and it commits only after a finish signal the gate
can read (the metadata keys both shims know, or the class's declared signal), or at the clean
end of a test double's response that showed none (``declare_test_double``). Any other class
that shows none gets every call rejected ``stream_truncated``, a warning once per class and a
note in the decision record naming ``declare_finish_signal``: never trusted, never rejected in
silence.

The calls are fed to the core when the response ends (a message is LlamaIndex's running
total, not a delta), in the vocabulary that can say what a ``ToolSelection`` holds (id, name,
argument text) plus a finish reason: Chat Completions, as the LangChain shim's converted
chunks do.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, ChatResponse, ToolCallBlock
from toolstream_core.integration import FINISH, FinishSignal

__all__ = ["STREAM_KEY", "MessageView", "declare_finish_signal", "declare_test_double"]

#: The public declarations (``llamaindex_toolstream.declare_finish_signal`` and
#: ``declare_test_double``): the core's one registry, shared with the LangChain shim.
declare_finish_signal = FINISH.declare_finish_signal
declare_test_double = FINISH.declare_test_double

_log = logging.getLogger(__name__)

#: Where a ``ChatResponse`` the gate handed on keeps the handle to its stream
#: (``_session.stream_of``): the gate's own key, never a class's metadata.
STREAM_KEY = "toolstream_stream"

#: Classes that have shown a finish signal the gate reads (their silence is a real cut), and
#: classes already warned about.
_READABLE: set[type] = set()
_WARNED: set[type] = set()


def _metadata(response: ChatResponse) -> dict[str, Any]:
    """What a class keeps beside its message: ``raw`` (a mapping, or an SDK object's
    ``model_dump``), under ``additional_kwargs`` (LlamaIndex's place for per-response extras)."""
    raw = response.raw
    dump = getattr(raw, "model_dump", None)
    if callable(dump):
        raw = dump()
    found = dict(raw) if isinstance(raw, Mapping) else {}
    found.update(response.additional_kwargs or {})
    found.pop(STREAM_KEY, None)
    return found


def _argument_texts(message: ChatMessage) -> dict[str, str]:
    """Argument text as the class kept it, by call id: a ``ToolCallBlock`` holding a string, or
    an OpenAI-shaped ``additional_kwargs["tool_calls"]`` entry."""
    texts: dict[str, str] = {}
    for block in message.blocks:
        if isinstance(block, ToolCallBlock) and isinstance(block.tool_kwargs, str):
            texts[block.tool_call_id or ""] = block.tool_kwargs
    for entry in message.additional_kwargs.get("tool_calls") or []:
        function = entry.get("function") if isinstance(entry, Mapping) else None
        if isinstance(function, Mapping) and isinstance(function.get("arguments"), str):
            texts[str(entry.get("id") or "")] = function["arguments"]
    return texts


def _arguments(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


class MessageView:
    """One model call read through LlamaIndex's messages (one per ``ResponseStream``)."""

    def __init__(self, llm: Any, declared: FinishSignal | None, *, double: bool = False) -> None:
        self._llm = llm
        self._declared = declared
        #: A test double: a clean end with no finish shown is its finish (``"stop"``).
        self._double = double
        self.finish_reason: str | None = None
        self._keys: set[str] = set()
        self._last: ChatResponse | None = None

    def take(self, response: ChatResponse) -> None:
        """One response of the call (a streamed one, or the whole answer)."""
        self._last = response
        metadata = _metadata(response)
        self._keys.update(metadata)
        if self.finish_reason is None:
            self.finish_reason = FINISH.reason_of(metadata, self._declared)

    def _calls(self) -> list[tuple[str, str, str]]:
        """(id, name, argument text) of every call in the last message, in the class's order."""
        if self._last is None:
            return []
        message = self._last.message
        texts = _argument_texts(message)
        read = getattr(self._llm, "get_tool_calls_from_response", None)
        found: list[tuple[str, str, str]] = []
        try:
            selections = read(self._last, error_on_no_tool_call=False) if callable(read) else None
        except Exception:  # its own reader failed: read the blocks it built
            _log.debug("toolstream: %s could not read its own message", type(self._llm).__name__,
                       exc_info=True)
            selections = None
        if selections is not None:
            for selection in selections:
                ident = str(getattr(selection, "tool_id", "") or "")
                kwargs = getattr(selection, "tool_kwargs", {})
                text = texts[ident] if ident in texts else _arguments(kwargs)
                found.append((ident, str(getattr(selection, "tool_name", "") or ""), text))
            return found
        for block in message.blocks:
            if isinstance(block, ToolCallBlock):
                found.append((block.tool_call_id or "", block.tool_name,
                              _arguments(block.tool_kwargs)))
        return found

    def completion_chunks(self, *, ended: bool) -> list[dict[str, Any]]:
        """The call as Chat Completions chunks: the last message's calls, then the finish
        reason if the response ``ended`` and one was read."""
        calls = [{"index": position, **({"id": ident} if ident else {}), "type": "function",
                  "function": {"name": name, "arguments": text}}
                 for position, (ident, name, text) in enumerate(self._calls())]
        delta: dict[str, Any] = {"role": "assistant", **({"tool_calls": calls} if calls else {})}
        out = [_chunk(delta, None)]
        if ended and self.finish_reason is None and self._double:
            self.finish_reason = "stop"
        if ended and self.finish_reason is not None:
            out.append(_chunk({}, self.finish_reason))
        return out

    def note(self) -> str | None:
        """The record's note (and, once per class, a warning) for a call that ended with no
        finish signal the gate can read; ``None`` when it read one, or when the class has
        shown one before (its silence is then a real cut, which ``stream_truncated`` says)."""
        cls = type(self._llm)
        if self._double:
            return None
        if self.finish_reason is not None:
            _READABLE.add(cls)
            return None
        if cls in _READABLE:
            return None
        note = FINISH.unread_note(cls.__name__, "ChatResponse metadata", self._keys,
                                  "llamaindex_toolstream")
        if cls not in _WARNED:
            _WARNED.add(cls)
            _log.warning("toolstream: %s", note)
        return note


def _chunk(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {"object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
