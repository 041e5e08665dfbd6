"""LangChain message chunks -> OpenAI-chat-shaped events the core can assemble.

This is the *fallback* view, used where the vendor's own events are out of reach: chat models
whose SDK stream the gate cannot tap (integrations other than ChatOpenAI, ChatAnthropic and
ChatGoogleGenerativeAI), and ``ToolstreamCallbackHandler`` observing a model it does not wrap.
It is lossy and says so: LangChain has already dropped what it could not convert (an OpenAI
delta without ``index``, Anthropic's ``message_stop``, Gemini ``partialArgs``), so a call
assembled here is only as good as LangChain's chunks. The gated path (``_tap``) never uses it
for a model it can tap.

Every family is mapped onto Chat Completions deltas because that is the one vocabulary that
can say everything a ``ToolCallChunk`` holds (index, id, name, argument fragment) plus a finish
reason; the vendor's finish signal is translated to the chat finish reason that means the same
(``toolstream_core.integration.FINISH.reason_of``: the vocabulary and the declared signals,
shared with the LlamaIndex shim).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGenerationChunk
from toolstream_core.integration import FINISH, FinishSignal
from toolstream_core.integration._private import ANY_CLASS, ClassTable

__all__ = [
    "ChunkConverter",
    "FinishSignal",
    "declare_finish_signal",
    "declare_test_double",
    "is_test_double",
    "message_to_events",
]

#: LangChain's own fakes (``GenericFakeChatModel``, ``FakeMessagesListChatModel``,
#: ``FakeListChatModel``, ``FakeChatModel``, ``ParrotFakeChatModel``: every class of their
#: module) and their subclasses: they answer from memory, so no stream of theirs can be cut
#: (docs/decisions/0095-test-doubles-finished.md). A project's own fake is declared once for
#: both shims (``declare_test_double``, the core's registry).
_FAKES: ClassTable[tuple[str, str]] = ClassTable(
    (("langchain_core.language_models.fake_chat_models", ANY_CLASS),))

#: The public declarations (``langchain_toolstream.declare_finish_signal`` and
#: ``declare_test_double``): the core's one registry, shared with the LlamaIndex shim.
declare_finish_signal = FINISH.declare_finish_signal
declare_test_double = FINISH.declare_test_double


def is_test_double(model_class: type) -> bool:
    """Whether ``model_class`` is one of LangChain's fakes or a declared test double (the
    core's one rule, ``FINISH.is_test_double``, with LangChain's fakes)."""
    return FINISH.is_test_double(model_class, _FAKES)


def _chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


class ChunkConverter:
    """Per-stream state: one converter per model run."""

    def __init__(self, declared: FinishSignal | None = None, *, double: bool = False) -> None:
        self.finish_reason: str | None = None
        self.double = double  # a test double: its stream ends finished (``declare_test_double``)
        self.keys_seen: set[str] = set()  # every ``response_metadata`` key, for the warning
        self._declared = declared
        self._opened: set[Any] = set()

    def chunk_events(self, chunk: ChatGenerationChunk | BaseMessage) -> list[dict[str, Any]]:
        """The chat events one LangChain chunk stands for (usually zero or one)."""
        message = chunk.message if isinstance(chunk, ChatGenerationChunk) else chunk
        out: list[dict[str, Any]] = []
        calls = []
        for tcc in getattr(message, "tool_call_chunks", None) or []:
            entry: dict[str, Any] = {"type": "function", "function": {}}
            index = tcc.get("index")
            if isinstance(index, int):
                entry["index"] = index
            if tcc.get("id"):
                entry["id"] = tcc["id"]
            if tcc.get("name"):
                entry["function"]["name"] = tcc["name"]
            entry["function"]["arguments"] = tcc.get("args") or ""
            calls.append(entry)
        if calls:
            out.append(_chat_chunk({"tool_calls": calls}))
        metadata = dict(getattr(message, "response_metadata", None) or {})
        if isinstance(chunk, ChatGenerationChunk) and chunk.generation_info:
            metadata.update(chunk.generation_info)
        self.keys_seen.update(metadata)
        finish = FINISH.reason_of(metadata, self._declared)
        if finish and self.finish_reason is None:
            self.finish_reason = finish
            out.append(_chat_chunk({}, finish))
        return out

    def end_events(self) -> list[dict[str, Any]]:
        """At a clean end of stream: a test double's ``"stop"``, where it showed no finish."""
        if not self.double or self.finish_reason is not None:
            return []
        self.finish_reason = "stop"
        return [_chat_chunk({}, "stop")]


def message_to_events(message: AIMessage, declared: FinishSignal | None = None,
                      *, double: bool = False) -> list[dict[str, Any]]:
    """A complete (non-streamed) AIMessage as one chat chunk plus its finish reason.

    Arguments come from the vendor's raw text where LangChain kept it (``invalid_tool_calls``
    and ``additional_kwargs["tool_calls"]``); a parsed ``tool_calls`` entry is re-serialised,
    which is faithful for non-streamed responses because LangChain parses those strictly.
    """
    import json

    raw = {
        tc.get("id"): tc.get("function", {}).get("arguments")
        for tc in message.additional_kwargs.get("tool_calls") or []
        if isinstance(tc, Mapping)
    }
    calls: list[dict[str, Any]] = []
    for position, tc in enumerate(message.tool_calls):
        args = raw.get(tc.get("id"))
        calls.append({
            "index": position,
            "id": tc.get("id"),
            "type": "function",
            "function": {"name": tc["name"], "arguments": args if isinstance(args, str)
                         else json.dumps(tc["args"])},
        })
    for offset, itc in enumerate(message.invalid_tool_calls):
        calls.append({
            "index": len(message.tool_calls) + offset,
            "id": itc.get("id"),
            "type": "function",
            "function": {"name": itc.get("name"), "arguments": itc.get("args") or ""},
        })
    events = [_chat_chunk({"role": "assistant", "tool_calls": calls} if calls else {})]
    finish = FINISH.reason_of(message.response_metadata or {}, declared)
    if not finish and double:
        finish = "stop"  # a test double's answer is whole (``declare_test_double``)
    if finish:
        events.append(_chat_chunk({}, finish))
    return events
