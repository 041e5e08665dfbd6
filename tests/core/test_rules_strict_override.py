"""DESIGN §3: ``ToolSpec.strict`` overrides ``mode`` for that tool only.

The one place where the mode decides whether a call is proven is a clean end of stream
without a finish signal (rule 4): lenient commits, strict does not. A per-tool override
decides that tool's calls only, and ``Turn.complete`` keeps the config mode's answer.
"""

from __future__ import annotations

import builders as b
import pytest
from builders import PROVIDERS, run
from toolstream_core import AssembleConfig, CallState, Reason, ToolSpec

ADD = '{"a":2,"b":3}'


def two_calls_no_finish(provider: str) -> list[dict]:
    extra = {"with_ids": True} if provider == "gemini" else {}
    return b.build(provider, [
        b.Call(id="c1", name="loose", arguments=ADD, cuts=(3,)),
        b.Call(id="c2", name="tight", arguments=ADD),
    ], ending="none", **extra)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_strict_false_commits_that_tool_only_on_a_clean_end_without_finish_reason(provider: str) -> None:
    turn = run(two_calls_no_finish(provider), provider=provider,
               tools=[ToolSpec("loose", strict=False), ToolSpec("tight")])
    assert [(c.name, c.state, c.reason) for c in turn.calls] == [
        ("loose", CallState.committed, None), ("tight", CallState.failed, Reason.stream_truncated)]
    assert turn.calls[0].arguments == {"a": 2, "b": 3}
    assert turn.complete is False


@pytest.mark.parametrize("provider", PROVIDERS)
def test_strict_true_keeps_that_tool_strict_in_lenient_mode(provider: str) -> None:
    turn = run(two_calls_no_finish(provider), provider=provider, config=AssembleConfig(mode="lenient"),
               tools={"loose": {"type": "object"}, "tight": ToolSpec("tight", strict=True)})
    assert [(c.name, c.state, c.reason) for c in turn.calls] == [
        ("loose", CallState.committed, None), ("tight", CallState.failed, Reason.stream_truncated)]
    assert turn.complete is True


@pytest.mark.parametrize("provider", PROVIDERS)
def test_strict_false_never_overrides_a_cut_or_a_truncation(provider: str) -> None:
    tools = [ToolSpec("loose", strict=False), ToolSpec("tight", strict=False)]
    cut = run(two_calls_no_finish(provider), provider=provider, tools=tools, transport_complete=False)
    assert {c.reason for c in cut.calls} == {Reason.stream_truncated}
    extra = {"with_ids": True} if provider == "gemini" else {}
    stopped = run(b.build(provider, [
        b.Call(id="c1", name="loose", arguments=ADD),
    ], ending="truncated", **extra), provider=provider,
                  tools=tools)
    assert [c.reason for c in stopped.calls] == [Reason.stream_truncated]
