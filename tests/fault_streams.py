"""Mutated vendor streams from the vendor emulator, for the shim fault tests (LangChain and
LlamaIndex).

``fault_server`` has the project's ``VendorEmulator`` answer the FIRST request with a recorded
corpus stream that a test has mutated (a Gemini keep-alive part inserted, an orphan fragment,
a garbage event), in the vendor's SSE wire format (``queue_body``), so the real SDK parses it
exactly as it would parse the vendor. Every later request (the agent's follow-up, carrying the
tool results) gets the emulator's own answer: like the vendors, it answers a history holding
an unpaired tool call with its 400, and otherwise with a short text answer that ends the agent
loop. The ``FaultServer`` keeps every request body, so a test can also read the follow-up
request itself.

What the shim tests check on every fault: a tool runs only on a call the fault could not have
touched, with the recorded arguments (the tools record what they were really called with, and
give every argument but the first a default, so a call that lost fragments would still
validate and run without the gate); and the next request pairs every call id.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest
from streams_util import DONE, REPO_STREAMS, load_stream
from toolstream_core.testing import VendorEmulator

__all__ = [
    "ADD",
    "BOSTON",
    "LIMIT_STREAMS",
    "MULTIPLY",
    "SAN_FRANCISCO",
    "Fault",
    "FaultServer",
    "WireEvent",
    "assert_follow_up_paired",
    "assert_runs",
    "by_setting",
    "corpus_events",
    "fault_server",
    "faults",
    "inserted",
    "limit_headroom",
    "limited_stream",
    "pairing",
    "reported_output_tokens",
    "sent_limit",
    "sse_frames",
]


@dataclass(frozen=True)
class WireEvent:
    """One SSE frame: the vendor ``data`` (``DONE`` for ``[DONE]``) and its ``event:`` name."""

    data: Any
    name: str | None = None


def corpus_events(stream: str) -> list[WireEvent]:
    """The events of ``tests/streams/<api>/<name>.jsonl`` (``stream`` = ``"<api>/<name>"``)."""
    case = load_stream(REPO_STREAMS / f"{stream}.jsonl")
    return [WireEvent(data, name) for data, name in zip(case.events, case.sse_events, strict=True)]


def inserted(events: list[WireEvent], after: int, *new: WireEvent) -> list[WireEvent]:
    """``events`` with ``new`` placed after the event at position ``after`` (0-based)."""
    return [*events[:after + 1], *new, *events[after + 1:]]


def sse_frames(api: str, events: list[WireEvent]) -> list[bytes]:
    """The events as the vendor writes them: ``event:`` lines for Anthropic (whose SDK routes
    by that name and skips unknown names), bare ``data:`` lines for OpenAI chat and Gemini."""
    frames = []
    for event in events:
        if event.data is DONE:
            frames.append(b"data: [DONE]\n\n")
            continue
        data = json.dumps(event.data, ensure_ascii=False)
        name = event.name
        if api == "anthropic" and name is None and isinstance(event.data, dict):
            name = event.data.get("type") if isinstance(event.data.get("type"), str) else None
        head = f"event: {name}\n" if api == "anthropic" and name else ""
        frames.append(f"{head}data: {data}\n\n".encode())
    return frames


class FaultServer:
    """The base URL to point an SDK at, and the JSON bodies of the requests it received."""

    def __init__(self, emulator: VendorEmulator) -> None:
        self.base_url = emulator.base_url
        self._emulator = emulator
        self._kept: list[dict[str, Any]] | None = None

    @property
    def bodies(self) -> list[dict[str, Any]]:
        """Every request body, oldest first (kept when the server is left)."""
        if self._kept is not None:
            return self._kept
        return [request.body for request in self._emulator.requests]

    @property
    def follow_up(self) -> dict[str, Any] | None:
        """The second request (the one carrying the tool results), if it was made."""
        return self.bodies[1] if len(self.bodies) > 1 else None

    def _leave(self) -> None:
        self._kept = self.bodies
        self._emulator.clear()  # a body the SDK never asked for must not answer the next test


@contextmanager
def fault_server(api: str, events: list[WireEvent], emulator: VendorEmulator) -> Iterator[FaultServer]:
    """Serve ``events`` to the first POST to ``api``; the emulator answers the later ones."""
    emulator.clear()
    emulator.queue_body(api, b"".join(sse_frames(api, events)))
    server = FaultServer(emulator)
    try:
        yield server
    finally:
        server._leave()


# -- the faults ----------------------------------------------------------------------------------

Run = tuple[str, dict[str, Any]]

CHAT_STREAM = "openai-chat/openai__openai-gpt-4o_multi_tool_streaming__0"  # add(2,3), multiply(2,3)
ANTHROPIC_STREAM = "anthropic/anthropic__claude-sonnet-4_multi_tool_streaming__0"  # same calls
GEMINI_STREAM = "gemini/google__google-stream-tool-call-arguments__0"  # getWeather x2, partialArgs

# Where each fault goes: right after an argument fragment of the FIRST call, so that call is
# live (started, not finished) when the fault arrives; the second call starts after it.
_CHAT_AT, _ANTHROPIC_AT, _GEMINI_AT = 2, 10, 1

ADD: Run = ("add", {"a": 2, "b": 3})
MULTIPLY: Run = ("multiply", {"a": 2, "b": 3})
BOSTON: Run = ("getWeather", {"location": "Boston"})
SAN_FRANCISCO: Run = ("getWeather", {"location": "San Francisco"})


@dataclass(frozen=True)
class Fault:
    """One mutated stream and what may run from it.

    ``allowed``: the only tool runs (name, exact arguments) that may happen: calls the fault
    could not have touched. The call that was live when the fault arrived is never in it.
    ``required``: runs that must happen (a keep-alive part changes nothing). Whether the SDK
    and the integration deliver the mutated event or raise on it depends on their versions
    (anthropic 0.x raises in LangChain on an empty ``content_block_delta``, 2.x delivers it),
    so the tests observe it: a raise is a transport failure, and then nothing may run at all.
    ``gaps``: per shim, why that shim does not catch this fault yet (see ``param``).
    """

    api: str
    name: str
    events: list[WireEvent]
    allowed: tuple[Run, ...]
    required: tuple[Run, ...] = ()
    gaps: Mapping[str, str] = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.api}/{self.name}"

    def param(self, shim: str) -> Any:
        """This fault as a pytest parameter for ``shim``; a known gap of that shim is a strict
        xfail carrying its reason (the test fails again as soon as the gap closes)."""
        gap = self.gaps.get(shim)
        marks = [pytest.mark.xfail(strict=True, reason=gap)] if gap else []
        return pytest.param(self, id=self.id, marks=marks)


# Faults neither shim catches yet, and why (see ``Fault.param``).
_LI_GEMINI_DROPPED = (
    "LlamaIndex's GoogleGenAI yields no ChatResponse for a chunk without candidates, and the "
    "shim reads ChatResponse.raw: it never sees the event (it would need a google-genai tap "
    "like the Anthropic one)")


def _chat(delta: Any) -> dict[str, Any]:
    return {"id": "chatcmpl-fault", "object": "chat.completion.chunk", "created": 1722894334,
            "model": "gpt-4o-2024-08-06",
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}]}


def _anthropic_delta(index: Any, fragment: str) -> WireEvent:
    return WireEvent({"type": "content_block_delta", "index": index,
                      "delta": {"type": "input_json_delta", "partial_json": fragment}})


KEEP_ALIVE = WireEvent({"candidates": [{"content": {
    "role": "model", "parts": [{"functionCall": {"willContinue": True}}]}}]})


def _chat_fault(name: str, event: WireEvent, *,
                gaps: Mapping[str, str] | None = None) -> Fault:
    events = inserted(corpus_events(CHAT_STREAM), _CHAT_AT, event)
    return Fault("openai-chat", name, events, (MULTIPLY,), gaps=gaps or {})


def _anthropic_fault(name: str, event: WireEvent, *,
                     gaps: Mapping[str, str] | None = None) -> Fault:
    events = inserted(corpus_events(ANTHROPIC_STREAM), _ANTHROPIC_AT, event)
    return Fault("anthropic", name, events, (MULTIPLY,), gaps=gaps or {})


def _gemini_fault(name: str, event: WireEvent, *,
                  gaps: Mapping[str, str] | None = None) -> Fault:
    events = inserted(corpus_events(GEMINI_STREAM), _GEMINI_AT, event)
    return Fault("gemini", name, events, (SAN_FRANCISCO,), gaps=gaps or {})


def _keep_alive_everywhere() -> list[WireEvent]:
    events = corpus_events(GEMINI_STREAM)
    for position in (5, 4, 1, 0):  # inside both calls, from the back so positions hold
        events = inserted(events, position, KEEP_ALIVE)
    return events


def faults() -> list[Fault]:
    """The catalogue; built on demand (it reads the corpus)."""
    gemini = corpus_events(GEMINI_STREAM)
    return [
        # Gemini: keep-alive parts are part of the open call (issue 9: today's core commits
        # getWeather({}) and turns the rest into nameless calls).
        Fault("gemini", "keep_alive_after_first_event", inserted(gemini, 0, KEEP_ALIVE),
              (BOSTON, SAN_FRANCISCO), required=(BOSTON, SAN_FRANCISCO)),
        Fault("gemini", "keep_alive_inside_both_calls", _keep_alive_everywhere(),
              (BOSTON, SAN_FRANCISCO), required=(BOSTON, SAN_FRANCISCO)),
        # google-genai validates every chunk with pydantic: a mistyped field raises in the SDK.
        _gemini_fault("parts_is_a_dict", WireEvent({"candidates": [{"content": {
            "role": "model", "parts": {"functionCall": {"name": "getWeather"}}}}]})),
        _gemini_fault("empty_event", WireEvent({}), gaps={"llamaindex": _LI_GEMINI_DROPPED}),
        _gemini_fault("candidates_is_an_int", WireEvent({"candidates": 5})),
        # OpenAI chat: the SDK builds chunks without validation, so all of these reach the
        # integration; the orphan fragments reach the caller too.
        _chat_fault("orphan_non_integer_index", WireEvent(_chat(
            {"tool_calls": [{"index": "x", "function": {"arguments": ', "c": 1'}}]}))),
        _chat_fault("orphan_unknown_index", WireEvent(_chat(
            {"tool_calls": [{"index": 7, "function": {"arguments": ', "c": 1'}}]}))),
        # LlamaIndex's OpenAI class raises on it (no choices): a transport failure there.
        _chat_fault("empty_event", WireEvent({})),
        _chat_fault("choices_is_a_string", WireEvent(
            {"id": "chatcmpl-fault", "object": "chat.completion.chunk", "choices": "abc"})),
        _chat_fault("delta_is_a_list", WireEvent(_chat([1, 2]))),
        # Anthropic: events are routed by their SSE name and built without validation.
        _anthropic_fault("orphan_unknown_index", _anthropic_delta(7, ', "c": 1')),
        _anthropic_fault("orphan_non_integer_index", _anthropic_delta("x", ', "c": 1')),
        _anthropic_fault("type_is_an_int", WireEvent({"type": 5, "index": 1,
                                                       "delta": {"partial_json": ', "c": 1'}},
                                                      "content_block_delta")),
        _anthropic_fault("empty_delta_event", WireEvent({}, "content_block_delta")),
        _anthropic_fault("delta_is_a_list", WireEvent(
            {"type": "content_block_delta", "index": 1, "delta": [1]})),
    ]


def pairing(api: str, body: dict[str, Any]) -> tuple[Counter[str], Counter[str]]:
    """(tool calls, tool results) in a request body, by call id (Gemini: by function name,
    as the Gemini API pairs them; ids are optional there). Equal counters: every call answered
    once and no result without its call."""
    calls: Counter[str] = Counter()
    answers: Counter[str] = Counter()
    if api == "openai-chat":
        for message in body.get("messages") or []:
            calls.update(c["id"] for c in message.get("tool_calls") or [])
            if message.get("role") == "tool":
                answers[message["tool_call_id"]] += 1
    elif api == "anthropic":
        for message in body.get("messages") or []:
            blocks = message["content"] if isinstance(message["content"], list) else []
            calls.update(b["id"] for b in blocks if b.get("type") == "tool_use")
            answers.update(b["tool_use_id"] for b in blocks if b.get("type") == "tool_result")
    elif api == "gemini":
        for content in body.get("contents") or []:
            for part in content.get("parts") or []:
                if "functionCall" in part or "function_call" in part:
                    calls[(part.get("functionCall") or part.get("function_call"))["name"]] += 1
                if "functionResponse" in part or "function_response" in part:
                    answer = part.get("functionResponse") or part.get("function_response")
                    answers[answer["name"]] += 1
    else:
        raise ValueError(api)
    return calls, answers


def assert_runs(fault: Fault, runs: list[Run], *, transport_failed: bool) -> None:
    """Only untouched calls ran, each once, with the recorded arguments; required ones ran.
    ``transport_failed``: the SDK or the integration raised on the stream; nothing may run."""
    allowed = () if transport_failed else fault.allowed
    for run in runs:
        assert run in allowed, f"{run} ran, but {fault.id} could have touched that call"
    assert len(runs) == len({repr(run) for run in runs}), f"a call ran twice: {runs}"
    for run in fault.required:
        assert run in runs, f"{run} was proven complete but did not run: {runs}"


def assert_follow_up_paired(fault: Fault, server: FaultServer, *, holds_calls: bool = True) -> None:
    """The request after the faulty stream went out and answers every call in it once.

    ``holds_calls``: the faulty turn is in that request's history (its calls are there,
    answered), rather than dropped with the exception that ended it.
    """
    assert server.follow_up is not None, "the follow-up request was never made"
    calls, answers = pairing(fault.api, server.follow_up)
    assert calls == answers, (calls, answers)
    assert bool(calls) is holds_calls, calls


# -- the output-limit backstop (issue 13) --------------------------------------------------------

#: One stream per API whose finish says "done with tool calls" (chat ``tool_calls``, Anthropic
#: ``tool_use``, Gemini ``STOP``) and whose usage reports the output tokens.
LIMIT_STREAMS = {"openai-chat": CHAT_STREAM, "anthropic": ANTHROPIC_STREAM,
                 "gemini": GEMINI_STREAM}


def reported_output_tokens(api: str, events: list[WireEvent]) -> int:
    """The output tokens the stream's usage reports (the last report wins)."""
    reported: int | None = None
    for event in events:
        data = event.data if isinstance(event.data, dict) else {}
        if api == "openai-chat":
            value = (data.get("usage") or {}).get("completion_tokens")
        elif api == "anthropic":
            value = (data.get("usage") or {}).get("output_tokens")
        else:
            value = (data.get("usageMetadata") or {}).get("candidatesTokenCount")
        reported = value if isinstance(value, int) else reported
    assert reported is not None, f"{api}: the stream reports no usage"
    return reported


def sent_limit(api: str, body: dict[str, Any]) -> Any:
    """The output-token limit a request body asked the vendor for."""
    if api == "gemini":
        return (body.get("generationConfig") or {}).get("maxOutputTokens")
    return body.get("max_completion_tokens", body.get("max_tokens"))


#: ``headroom`` 0: the limit equals the reported output tokens (cut); 1: one token to spare.
limit_headroom = pytest.mark.parametrize("headroom", [0, 1],
                                         ids=["limit_reached", "limit_not_reached"])


def by_setting(settings: Mapping[tuple[str, str], Any]) -> Any:
    """Parametrize ``(api, how)`` over the ways a user sets the limit on each integration."""
    keys = sorted(settings)
    return pytest.mark.parametrize(("api", "how"), keys, ids=[f"{a}/{h}" for a, h in keys])


def limited_stream(api: str, headroom: int) -> tuple[list[WireEvent], int]:
    """The API's limit stream and the limit that leaves ``headroom`` output tokens."""
    events = corpus_events(LIMIT_STREAMS[api])
    return events, reported_output_tokens(api, events) + headroom
