"""A finish signal as a framework passes it on, read as the Chat Completions finish reason.

Why this exists: where the gate cannot read the vendor's own events (a chat model it cannot
tap, a LlamaIndex class it does not know, a framework's test double), it reads the framework's
view of the stream, and the proof of a normal end (DESIGN rule 4) is whatever finish signal
the framework kept in its metadata: a LangChain chunk's ``response_metadata``, a LlamaIndex
``ChatResponse``'s ``additional_kwargs`` / ``raw``. The partner packages spell it in their
vendor's words; this module maps each onto the Chat Completions finish reason that means the
same, once for both shims, and keeps the signals users declare for classes that spell theirs
some other way (``declare_finish_signal``, re-exported by each shim).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping
from typing import Any

__all__ = ["FINISH", "FinishRule", "FinishSignal", "chat_finish_value"]

# Vendor stop signals -> the Chat Completions finish reason with the same meaning. Anything not
# listed is passed through verbatim, which the core treats as an abnormal end (never a commit).
# ``stop_reason``: ChatAnthropic, langchain-aws ChatBedrock; ``stopReason``: ChatBedrockConverse.
_STOP_REASONS = {
    "tool_use": "tool_calls",
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
}
# Upper-case ``finish_reason`` vocabularies: Gemini (ChatGoogleGenerativeAI) and Cohere v2
# (ChatCohere's ``generation_info``). Other upper-case values are lower-cased verbatim.
_UPPER = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "TOOL_CALL": "tool_calls",
    "COMPLETE": "stop",
    "STOP_SEQUENCE": "stop",
}
# ``done_reason``: ChatOllama (``stop`` is Ollama's normal end, tool-call turns included;
# ``length`` is the ``num_predict`` cut; ``load`` never ends a turn with content).
_DONE_REASONS = {"stop": "stop", "length": "length"}
_RESPONSES = {"completed": "stop", "incomplete": "length", "failed": "error"}


def chat_finish_value(value: Any) -> str:
    """``finish_reason`` as the partner packages spell it: OpenAI-style lower case (OpenAI,
    Azure, Mistral, Groq, Fireworks, DeepSeek, xAI, Together), or an upper-case enum / string."""
    text = str(getattr(value, "value", value))
    if text in _UPPER or text.isupper():
        return _UPPER.get(text, text.lower())
    return text


def _mapped(table: Mapping[str, str]) -> Callable[[Any], str]:
    def read(value: Any) -> str:
        text = str(value)
        return table.get(text, text)
    return read


# The metadata keys that carry a finish signal, read in this order (a chunk that has one key
# has no other), from the partner packages' own source.
_SIGNALS: tuple[tuple[str, Callable[[Any], str]], ...] = (
    ("stop_reason", _mapped(_STOP_REASONS)),
    ("stopReason", _mapped(_STOP_REASONS)),
    ("finish_reason", chat_finish_value),
    ("done_reason", _mapped(_DONE_REASONS)),
)

FinishSignal = str | Callable[[Mapping[str, Any]], "str | None"]
"""How a model class shows its end of turn: the metadata key whose value is its finish reason
(read through the same vocabularies as the known keys), or a function of the metadata that
returns a Chat Completions finish reason (``"tool_calls"``, ``"stop"``, ``"length"``...) or
``None`` while the turn goes on."""

def _read_declared(metadata: Mapping[str, Any], signal: FinishSignal) -> str | None:
    if isinstance(signal, str):
        value = metadata.get(signal)
        return chat_finish_value(value) if value else None
    found = signal(metadata)
    return str(found) if found else None


class FinishRule:
    """The finish rule both shims apply where they read a framework's view: the vocabularies
    (``reason_of``), and the signals and test doubles users declare once for both shims
    (``declare_finish_signal``, ``declare_test_double``: each shim re-exports them under those
    names). One instance, :data:`FINISH`, holds the declarations of the process."""

    def __init__(self) -> None:
        self._declared: dict[type, FinishSignal] = {}
        self._doubles: set[type] = set()

    def declare_finish_signal(self, model_class: type, signal: FinishSignal) -> None:
        """Tell the gate where ``model_class`` (and its subclasses) puts its end of turn.

        For models the gate reads through their framework's view (a LangChain chat model it cannot
        tap, a LlamaIndex LLM class it does not know) whose metadata carries none of the finish
        signals it knows: without a readable finish, every tool call the model makes is rejected
        ``stream_truncated`` (the gate warns once per class and says so in the decision record).
        Declared for the class, so it holds for every entry point of either shim.
        """
        if not isinstance(model_class, type):
            raise TypeError("declare_finish_signal: expected a model class")
        if not (isinstance(signal, str) and signal) and not callable(signal):
            raise TypeError("declare_finish_signal: expected a metadata key or a function")
        self._declared[model_class] = signal

    def signal_of(self, model_class: type) -> FinishSignal | None:
        """The signal declared for ``model_class`` or the nearest base class, if any."""
        for cls in model_class.__mro__:
            found = self._declared.get(cls)
            if found is not None:
                return found
        return None

    def declare_test_double(self, model_class: type) -> None:
        """Tell the gate that ``model_class`` (and its subclasses) is a test double.

        A double answers from memory: its turn cannot be cut, so one that ends cleanly without a
        finish signal the gate reads is finished (``"stop"``), where a real model's silence is a
        cut (``stream_truncated``). A finish signal the double does show still decides, so one that
        plays ``length`` is judged as the vendor would be. The frameworks' own doubles need no
        declaration (each shim knows them); this is the one conftest line for a project's own.
        """
        if not isinstance(model_class, type):
            raise TypeError("declare_test_double: expected a model class")
        self._doubles.add(model_class)

    def is_test_double(self, model_class: type, known: Container[type] = ()) -> bool:
        """Whether ``model_class`` or a base class was declared a test double, or is one of
        the framework's own doubles in ``known`` (a shim's table of them): the one rule both
        shims ask."""
        return model_class in known or any(cls in self._doubles for cls in model_class.__mro__)

    @staticmethod
    def reason_of(metadata: Mapping[str, Any], declared: FinishSignal | None = None) -> str | None:
        """The chat-style finish reason hidden in a framework's metadata, if any."""
        if declared is not None:
            found = _read_declared(metadata, declared)
            if found is not None:
                return found
        for key, read in _SIGNALS:
            value = metadata.get(key)
            if value:
                return read(value)
        status = metadata.get("status")
        if isinstance(status, str) and status in _RESPONSES:
            return _RESPONSES[status]
        return None

    @staticmethod
    def unread_note(class_name: str, where: str, keys: set[str], shim: str) -> str:
        """The one text, in either shim, for a class that ended a turn with no finish signal the
        gate can read: what it looked at (``where``, the keys seen) and what to declare."""
        seen = ", ".join(sorted(keys)) or "none"
        return (f"{class_name} showed no finish signal the gate can read ({where} keys: {seen});"
                f" its tool calls are rejected until one is declared with"
                f" {shim}.declare_finish_signal")


#: The process's finish rule and declarations, shared by both shims.
FINISH = FinishRule()
