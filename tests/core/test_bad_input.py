"""Bad input (docs/DESIGN.md §5; sub-rules such as §5.1 orphans and §5.2 malformed events are
in ``test_rules_<topic>.py``).

Anything a vendor or proxy can send is absorbed: the assembler keeps going, counts the
anomaly, and fails only the calls the bad event could have touched; it never raises.
"""

from __future__ import annotations

from typing import Any

import builders as b
import pytest
from builders import ADD, PROVIDERS, make, run, states
from toolstream_core import Assembler, CallState, Reason


@pytest.mark.parametrize("provider", PROVIDERS)
def test_bad_input_is_absorbed_and_fails_only_what_it_touches(provider: str) -> None:
    events: list[Any] = make(provider, [b.Call(id="c1", name="add", arguments=ADD, cuts=(3,))], ending="none")
    garbage: list[Any] = [None, 42, "data: [DONE]", b"\xff\xfe", [], {}, {"type": "nonsense"}, {"choices": 7},
                          {"candidates": "x"}, {"type": "content_block_delta", "index": 99,
                                                "delta": {"type": "input_json_delta", "partial_json": "x"}}]
    assembler = Assembler(provider=provider)
    for event in garbage[:5] + events + garbage[5:]:
        assembler.feed(event)
    for event in make(provider, [], ending="finish")[-1:]:
        assembler.feed(event)
    turn = assembler.finish()
    assert len(turn.calls) == 1
    assert turn.calls[0].state in (CallState.committed, CallState.failed)
    assert len(turn.error_results()) == len(turn.rejected)


def test_bad_input_wrong_type_fragment_fails_that_call() -> None:
    events = b.openai_chat([
        b.Call(id="c1", name="add", arguments=ADD, cuts=(3,)),
        b.Call(id="c2", name="add", arguments=ADD),
    ])
    events.insert(3, {**events[0], "choices": [{"index": 0, "finish_reason": None, "delta": {"tool_calls": [
        {"index": 0, "function": {"arguments": {"a": 1}}}]}}]})
    turn = run(events, provider="openai-chat")
    assert states(turn) == [("c1", CallState.failed, Reason.upstream_error), ("c2", CallState.committed, None)]


def test_bad_input_anthropic_fragment_after_its_block_stopped_is_not_committed() -> None:
    """§5: out of order — the vendor closed the block, then more arguments arrived."""
    events = b.anthropic([b.Call(id="t1", name="f", arguments="")])
    stop = next(i for i, e in enumerate(events) if e["type"] == "content_block_stop")
    events.insert(stop + 1, {"type": "content_block_delta", "index": 0,
                             "delta": {"type": "input_json_delta", "partial_json": '{"cmd":"rm -rf /"}'}})
    turn = run(events, provider="anthropic")
    assert turn.committed == (), f"committed arguments sent after the block stop: {turn.committed}"
    assert turn.calls[0].state is CallState.failed


def test_bad_input_responses_delta_after_the_done_events_is_not_committed() -> None:
    events = b.openai_responses([b.Call(id="c1", name="f", arguments='{"a":1}')])
    done = next(i for i, e in enumerate(events) if e["type"] == "response.output_item.done")
    events.insert(done + 1, {"type": "response.function_call_arguments.delta", "item_id": "fc_builder0000",
                             "output_index": 0, "delta": "  "})
    turn = run(events, provider="openai-responses")
    assert turn.committed == (), "the committed text contradicts the vendor's own done copy"
    assert turn.calls[0].state is CallState.failed
