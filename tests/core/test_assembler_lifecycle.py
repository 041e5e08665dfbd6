"""The ``Assembler`` lifecycle (docs/DESIGN.md §3): ``finish``, ``cancel``, ``AssemblerClosed``.

``finish`` is idempotent and a ``feed`` after it raises; ``cancel`` keeps pipelined commits
(§4.10) and cancels the rest; calls are finalized in provider-index order; an unknown
provider name is a ``ValueError``.
"""

from __future__ import annotations

import builders as b
import pytest
from builders import ADD, PIPELINE, run, states
from toolstream_core import AssembleConfig, Assembler, AssemblerClosed, CallState, Reason


def test_finish_is_idempotent_and_feed_after_finish_raises() -> None:
    assembler = Assembler(provider="anthropic")
    for event in b.anthropic([b.Call(id="t1", name="add", arguments=ADD)]):
        assembler.feed(event)
    turn = assembler.finish()
    assert assembler.finish() is turn
    assert assembler.finish(transport_complete=False) is turn
    with pytest.raises(AssemblerClosed):
        assembler.feed(b.anthropic([])[0])
    assembler.cancel()  # after finish: nothing changes
    assert assembler.finish() is turn and turn.calls[0].state is CallState.committed


def test_cancel_keeps_pipelined_commits_and_cancels_the_rest() -> None:
    events = b.anthropic([
        b.Call(id="t1", name="add", arguments=ADD),
        b.Call(id="t2", name="add", arguments=ADD, cuts=(3,)),
    ])
    assembler = Assembler(provider="anthropic", config=PIPELINE)
    for event in events[:7]:  # t1 settled by t2's block start
        assembler.feed(event)
    assembler.cancel("stop")
    turn = assembler.finish()
    assert states(turn) == [("t1", CallState.committed, None), ("t2", CallState.cancelled, Reason.cancelled)]
    assert turn.complete is False


def test_cancel_with_default_reason() -> None:
    assembler = Assembler(provider="openai-chat")
    assembler.feed(b.openai_chat([b.Call(id="c1", name="add", arguments=ADD)])[1])
    assembler.cancel()
    turn = assembler.finish()
    assert (turn.calls[0].state, turn.calls[0].detail) == (CallState.cancelled, "cancelled")


def test_finalize_order_provider_index_or_arrival() -> None:
    events = b.openai_chat([
        b.Call(id="c1", name="add", arguments=ADD),
        b.Call(id="c0", name="add", arguments=ADD),
    ], indexes=[1, 0])
    by_index = run(events, provider="openai-chat")
    by_arrival = run(events, provider="openai-chat", config=AssembleConfig(finalize_order="arrival"))
    assert [c.id for c in by_index.calls] == ["c0", "c1"]
    assert [c.id for c in by_arrival.calls] == ["c1", "c0"]


def test_unknown_provider_name_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="provider"):
        Assembler(provider="mistral")  # type: ignore[arg-type]
