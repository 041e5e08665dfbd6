"""Rule 4 in one table: which vendor end signals prove a turn ended normally.

Adapters only report what the vendor said; this module decides what it means. Anything not
listed as normal is a failure: a stop we do not recognise is not proof.
"""

from __future__ import annotations

import enum

__all__ = [
    "Verdict",
    "anthropic_stop",
    "bedrock_stop",
    "chat_finish",
    "cohere_finish",
    "gemini_finish",
    "is_vendor_error",
    "ollama_done",
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

_BEDROCK_COMPLETE = frozenset({"tool_use", "end_turn", "stop_sequence"})
_BEDROCK_TRUNCATED = frozenset({"max_tokens", "model_context_window_exceeded"})

_OLLAMA_COMPLETE = frozenset({"stop"})
_OLLAMA_TRUNCATED = frozenset({"length"})

_COHERE_COMPLETE = frozenset({"TOOL_CALL", "COMPLETE", "STOP_SEQUENCE"})
_COHERE_TRUNCATED = frozenset({"MAX_TOKENS"})


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


def bedrock_stop(reason: str) -> Verdict:
    """Bedrock ConverseStream ``messageStop.stopReason``; guardrail and content-filter stops,
    ``malformed_*`` and unknown stops are errors."""
    return _verdict(reason, _BEDROCK_COMPLETE, _BEDROCK_TRUNCATED)


def ollama_done(reason: str) -> Verdict:
    """Ollama ``done_reason`` on the ``done: true`` chunk: ``stop`` ends a tool-call turn too."""
    return _verdict(reason, _OLLAMA_COMPLETE, _OLLAMA_TRUNCATED)


def cohere_finish(reason: str) -> Verdict:
    """Cohere ``finish_reason`` (v2 ``message-end``, v1 ``stream-end``); ``ERROR``, ``TIMEOUT``,
    v1's ``ERROR_TOXIC`` / ``ERROR_LIMIT`` / ``USER_CANCEL`` and unknown are errors."""
    return _verdict(reason, _COHERE_COMPLETE, _COHERE_TRUNCATED)


def _verdict(reason: str, complete: frozenset[str], truncated: frozenset[str]) -> Verdict:
    if reason in complete:
        return Verdict.complete
    if reason in truncated:
        return Verdict.truncated
    return Verdict.error


_SDK_MODULES = ("openai", "anthropic", "google.genai", "botocore", "ollama", "cohere")
_TRANSPORT_ERRORS = frozenset({"APIConnectionError", "APITimeoutError"})
#: Vendor-reported errors by class name: the openai / anthropic ``APIError`` family, google-genai
#: ``ClientError`` / ``ServerError``, botocore ``ClientError`` (an error status) and
#: ``EventStreamError`` (an exception event inside the stream), ollama ``ResponseError`` (an
#: error status or an ``{"error": ...}`` line) and cohere ``ApiError`` (every status error
#: derives from it).
_VENDOR_ERRORS = frozenset(
    {"APIError", "APIStatusError", "ClientError", "ServerError", "EventStreamError", "ResponseError",
     "ApiError"}
)


def is_vendor_error(exc: BaseException) -> bool:
    """An exception an SDK raised because the *vendor* reported an error (an in-stream error
    event, an error status), as opposed to the connection failing: the first is
    ``upstream_error``, the second ``stream_truncated``. Duck-typed: no SDK is imported."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    if names & _TRANSPORT_ERRORS:
        return False
    module = type(exc).__module__
    return bool(names & _VENDOR_ERRORS) and module.startswith(_SDK_MODULES)
