"""Rule 4 in one table: which vendor end signals prove a turn ended normally.

Adapters only report what the vendor said; this module decides what it means. Anything not
listed as normal is a failure: a stop we do not recognise is not proof.
"""

from __future__ import annotations

import enum

__all__ = [
    "Verdict",
    "anthropic_stop",
    "chat_finish",
    "gemini_finish",
    "is_vendor_error",
    "responses_status",
]


class Verdict(enum.IntEnum):
    """Ordered by severity: once a stream has said something bad, a later "stop" cannot undo it."""

    complete = 0
    truncated = 1
    error = 2


_CHAT_COMPLETE = frozenset({"tool_calls", "stop", "function_call"})
_CHAT_TRUNCATED = frozenset({"length"})

_ANTHROPIC_COMPLETE = frozenset({"tool_use", "end_turn", "stop_sequence", "pause_turn"})
_ANTHROPIC_TRUNCATED = frozenset({"max_tokens", "model_context_window_exceeded"})

_GEMINI_COMPLETE = frozenset({"STOP"})
_GEMINI_TRUNCATED = frozenset({"MAX_TOKENS"})


def chat_finish(reason: str) -> Verdict:
    """OpenAI chat ``finish_reason`` (also every OpenAI-compatible server)."""
    if reason in _CHAT_COMPLETE:
        return Verdict.complete
    if reason in _CHAT_TRUNCATED:
        return Verdict.truncated
    return Verdict.error  # content_filter, and anything a proxy invents


def anthropic_stop(reason: str | None) -> Verdict:
    """Anthropic ``stop_reason`` as known at ``message_stop``; ``None`` there is no proof."""
    if reason in _ANTHROPIC_COMPLETE:
        return Verdict.complete
    if reason is None or reason in _ANTHROPIC_TRUNCATED:
        return Verdict.truncated
    return Verdict.error  # refusal, and unknown stops


def responses_status(event_type: str, incomplete_reason: str | None) -> Verdict:
    """OpenAI Responses terminal events."""
    if event_type == "response.completed":
        return Verdict.complete
    if event_type == "response.incomplete":
        return Verdict.error if incomplete_reason == "content_filter" else Verdict.truncated
    return Verdict.error  # response.failed, response.cancelled


def gemini_finish(reason: str) -> Verdict:
    """Gemini ``finishReason``; SAFETY, RECITATION, MALFORMED_FUNCTION_CALL, ... are errors."""
    if reason in _GEMINI_COMPLETE:
        return Verdict.complete
    if reason in _GEMINI_TRUNCATED:
        return Verdict.truncated
    return Verdict.error


_SDK_MODULES = ("openai", "anthropic", "google.genai")
_TRANSPORT_ERRORS = frozenset({"APIConnectionError", "APITimeoutError"})
_VENDOR_ERRORS = frozenset({"APIError", "APIStatusError", "ClientError", "ServerError"})


def is_vendor_error(exc: BaseException) -> bool:
    """An exception an SDK raised because the *vendor* reported an error (an in-stream error
    event, an error status), as opposed to the connection failing: the first is
    ``upstream_error``, the second ``stream_truncated``. Duck-typed: no SDK is imported."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & _TRANSPORT_ERRORS:
        return False
    module = type(exc).__module__
    return bool(names & _VENDOR_ERRORS) and module.startswith(_SDK_MODULES)
