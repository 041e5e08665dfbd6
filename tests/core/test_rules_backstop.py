"""DESIGN §5 backstop for finish signals that lie (issue 13).

vLLM's streaming path reports ``finish_reason: "tool_calls"`` when ``max_tokens`` cut the call
(vllm-project/vllm issues 53269, 58228). Given the request's limit, a turn whose reported
output tokens reached it is ``stream_truncated`` whatever the finish reason says; a stream that
reports no usage keeps the ordinary rules.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import builders as b
import pytest
from builders import PROVIDERS, run
from toolstream_core import Assembler, CallState, Reason, aassemble, assemble

PREFIX = '{"query":"a"}'  # parses, and is a prefix of what the model meant to send


def with_usage(provider: str, tokens: int | None) -> list[dict[str, Any]]:
    """One call ending normally, with the vendor's usage report of ``tokens`` output tokens."""
    if provider == "gemini":
        events = b.gemini([b.Call(id="g1", name="search", arguments=PREFIX)], with_ids=True)
        if tokens is None:
            events[-1].pop("usageMetadata")
        else:
            events[-1]["usageMetadata"]["candidatesTokenCount"] = tokens
        return events
    if provider == "openai-chat":
        events = b.openai_chat([b.Call(id="c1", name="search", arguments=PREFIX, cuts=(4,))],
                               usage_chunk=tokens is not None)
        if tokens is not None:
            events[-1]["usage"]["completion_tokens"] = tokens
        return events
    if provider == "anthropic":
        events = b.anthropic([b.Call(id="t1", name="search", arguments=PREFIX, cuts=(4,))])
        delta = next(e for e in events if e["type"] == "message_delta")
        if tokens is None:
            delta.pop("usage")
        else:
            delta["usage"]["output_tokens"] = tokens
        return events
    events = b.openai_responses([b.Call(id="c1", name="search", arguments=PREFIX, cuts=(4,))])
    if tokens is not None:
        events[-1]["response"]["usage"] = {"input_tokens": 9, "output_tokens": tokens, "total_tokens": 9 + tokens}
    return events


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("tokens", [64, 65])
def test_output_tokens_reaching_the_limit_is_stream_truncated_whatever_the_finish_says(
        provider: str, tokens: int) -> None:
    turn = run(with_usage(provider, tokens), provider=provider, max_output_tokens=64)
    assert [(c.state, c.reason) for c in turn.calls] == [(CallState.failed, Reason.stream_truncated)]
    assert turn.complete is False
    assert len(turn.error_results()) == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_output_tokens_below_the_limit_commit(provider: str) -> None:
    turn = run(with_usage(provider, 63), provider=provider, max_output_tokens=64)
    assert [c.state for c in turn.calls] == [CallState.committed]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_no_usage_or_no_limit_keeps_the_ordinary_rules(provider: str) -> None:
    assert [c.state for c in run(with_usage(provider, None), provider=provider,
                                 max_output_tokens=1).calls] == [CallState.committed]
    assert [c.state for c in run(with_usage(provider, 10**6), provider=provider).calls] == [CallState.committed]


def test_the_limit_can_be_set_after_the_assembler_was_built() -> None:
    assembler = Assembler(provider="openai-chat")
    for event in with_usage("openai-chat", 100):
        assembler.feed(event)
    assembler.max_output_tokens = 100
    assert [c.reason for c in assembler.finish().calls] == [Reason.stream_truncated]


@pytest.mark.parametrize("bad", [0, -1, True, 1.5, "64"])
def test_the_limit_must_be_a_positive_integer(bad: Any) -> None:
    with pytest.raises(ValueError, match="max_output_tokens"):
        Assembler(max_output_tokens=bad)
    assembler = Assembler()
    with pytest.raises(ValueError, match="max_output_tokens"):
        assembler.max_output_tokens = bad


def test_the_drivers_take_the_limit_too() -> None:
    events = with_usage("openai-chat", 64)
    assert [c.reason for c in assemble(iter(events), max_output_tokens=64).calls] == [Reason.stream_truncated]

    async def stream() -> AsyncIterator[Any]:
        for event in events:
            yield event

    turn = asyncio.run(aassemble(stream(), max_output_tokens=64))
    assert [c.reason for c in turn.calls] == [Reason.stream_truncated]


def test_a_non_integer_usage_report_is_an_anomaly_and_no_proof_of_a_cut() -> None:
    events = with_usage("openai-chat", 5)
    events[-1]["usage"]["completion_tokens"] = "5"
    turn = run(events, provider="openai-chat", max_output_tokens=5)
    assert [c.state for c in turn.calls] == [CallState.committed]
    assert any("token count" in a for a in turn.anomalies)
