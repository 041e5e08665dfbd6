"""UI events (docs/DESIGN.md §3, "UI events (``on_event``)").

``CallOpened``, ``ArgumentsDelta``, ``CallCommitted`` and ``CallRejected`` are information for
a UI: a re-sent copy reports under the first call's key, and a raising callback never breaks
assembly.
"""

from __future__ import annotations

import json
from typing import Any

import builders as b
import pytest
from builders import ADD, TEXT_VENDORS, make, record_events, states
from toolstream_core import (
    ArgumentsDelta,
    AssembleConfig,
    Assembler,
    CallCommitted,
    CallOpened,
    CallRejected,
    CallState,
    Reason,
)


@pytest.mark.parametrize("forward", [True, False])
@pytest.mark.parametrize("provider", TEXT_VENDORS)
def test_ui_events_sequence(provider: str, forward: bool) -> None:
    text = '{"city":"Zürich"}'
    config = AssembleConfig(ui_forward_partial_args=forward)
    assembler, seen = record_events(provider=provider, config=config)
    for event in make(provider, [
        b.Call(id="c1", name="w", arguments=text, cuts=(0, 4, 11)),
        b.Call(id="c2", name="w", arguments="[1]"),
    ]):
        assembler.feed(event)
    turn = assembler.finish()
    opened = [e for e in seen if isinstance(e, CallOpened)]
    assert [(e.id, e.name) for e in opened] == [("c1", "w"), ("c2", "w")]
    deltas = [e for e in seen if isinstance(e, ArgumentsDelta) and e.key == opened[0].key]
    pieces = [p for p in b.fragments(text, (0, 4, 11)) if p]
    assert [e.fragment for e in deltas] == (pieces if forward else [None] * len(pieces))
    assert [e.total_bytes for e in deltas][-1] == len(text.encode("utf-8"))
    assert [e.total_bytes for e in deltas] == sorted(e.total_bytes for e in deltas)
    committed = [e.call for e in seen if isinstance(e, CallCommitted)]
    rejected = [e.call for e in seen if isinstance(e, CallRejected)]
    assert committed == [turn.calls[0]] and rejected == [turn.calls[1]]
    assert seen.index(opened[0]) < seen.index(deltas[0])


def test_ui_events_structured_arguments_give_one_delta_with_the_whole_size() -> None:
    args = {"x": "ü" * 3}
    assembler, seen = record_events(provider="gemini")
    for event in b.gemini([b.Call(id="g1", name="f", arguments=json.dumps(args))], with_ids=True):
        assembler.feed(event)
    deltas = [e for e in seen if isinstance(e, ArgumentsDelta)]
    assert len(deltas) == 1
    assert deltas[0].total_bytes == len(json.dumps(args, separators=(",", ":"), ensure_ascii=False).encode())


def test_ui_event_callback_exceptions_do_not_break_the_stream() -> None:
    def explode(event: Any) -> None:
        raise RuntimeError("ui went away")

    assembler = Assembler(provider="openai-chat", on_event=explode)
    for event in b.openai_chat([
        b.Call(id="c1", name="add", arguments=ADD, cuts=(3,)),
        b.Call(id="c2", name="add", arguments="["),
    ]):
        assembler.feed(event)
    turn = assembler.finish()
    assert states(turn) == [("c1", CallState.committed, None), ("c2", CallState.failed, Reason.invalid_json)]


def test_ui_arguments_delta_total_bytes_is_cumulative_for_every_key() -> None:
    """A re-sent copy (same id, another index) is one call to a UI: its progress is reported
    under the key of the call it copies, which is the only key a CallOpened announced."""
    assembler, seen = record_events(provider="openai-chat")
    for event in b.openai_chat([
        b.Call(id="c1", name="add", arguments=ADD, cuts=(3,)),
        b.Call(id="c1", name="add", arguments=ADD, cuts=(4,)),
    ]):  # a re-sent call
        assembler.feed(event)
    assembler.finish()
    opened = {event.key for event in seen if isinstance(event, CallOpened)}
    totals: dict[Any, int] = {}
    for event in seen:
        if isinstance(event, ArgumentsDelta):
            assert event.key in opened, event
            assert event.total_bytes >= totals.get(event.key, 0) + len(event.fragment.encode()), event
            totals[event.key] = event.total_bytes
    assert len(opened) == 1 and len(totals) == 1
    assert sum(totals.values()) == 2 * len(ADD.encode())


def test_arguments_delta_is_still_a_frozen_dataclass() -> None:
    """Its ``__init__`` is written in the class for speed (one is made per streamed fragment); what a
    caller can do with it must be what the dataclass gives."""
    import dataclasses

    from toolstream_core import ArgumentsDelta

    by_position = ArgumentsDelta(("chat", 0, 1), "ab", 2)
    by_keyword = ArgumentsDelta(key=("chat", 0, 1), fragment="ab", total_bytes=2)
    assert by_position == by_keyword and hash(by_position) == hash(by_keyword)
    assert repr(by_keyword) == "ArgumentsDelta(key=('chat', 0, 1), fragment='ab', total_bytes=2)"
    assert dataclasses.astuple(by_keyword) == (("chat", 0, 1), "ab", 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        by_keyword.total_bytes = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        ArgumentsDelta(("chat", 0, 1), "ab")  # type: ignore[call-arg]


@pytest.mark.parametrize("provider", b.PROVIDERS)
def test_feed_returns_the_events_it_caused_in_the_order_on_event_sees_them(provider: str) -> None:
    """``feed`` hands back what it caused (h11 style); ``on_event`` stays a convenience."""
    config = AssembleConfig(execute_before_stream_end=True, allow_pipelined_execute=["w"])
    assembler, seen = record_events(provider=provider, config=config)
    returned: list[Any] = []
    for event in make(provider, [b.Call(id="c1", name="w", arguments='{"a":1}', cuts=(3,)),
                                 b.Call(id="c2", name="w", arguments="[1]")]):
        caused = assembler.feed(event)
        assert isinstance(caused, list)
        returned.extend(caused)
    during_feed = len(seen)
    assembler.finish()
    assert returned == seen[:during_feed] and returned
    assert {type(e) for e in returned} >= {CallOpened, ArgumentsDelta}


def test_feed_returns_an_empty_list_when_nothing_happened_and_after_cancel() -> None:
    assembler = Assembler(provider="openai-chat")
    assert assembler.feed({"id": "x", "object": "chat.completion.chunk",
                           "choices": [{"index": 0, "delta": {"content": "hi"}}]}) == []
    assert assembler.feed(None) == []  # garbage: absorbed, nothing caused
    assembler.cancel()
    assert assembler.feed({"choices": []}) == []


@pytest.mark.parametrize("ending", ["finish", "cancel"])
@pytest.mark.parametrize("provider", TEXT_VENDORS)
def test_events_of_finish_and_cancel_never_join_a_list_feed_returned(provider: str, ending: str) -> None:
    """``feed`` hands its events back; ``finish`` / ``cancel`` report theirs to ``on_event``
    only. A caller that kept the last ``feed``'s list must not see it grow afterwards."""
    seen: list[Any] = []
    asm = Assembler(provider=provider, on_event=seen.append)
    returned = [asm.feed(event) for event in make(provider, [b.Call(id="c1", name="add", arguments=ADD)])]
    kept = [list(events) for events in returned]
    before = len(seen)
    asm.finish() if ending == "finish" else asm.cancel()
    assert returned == kept
    assert len(seen) > before  # the decision was reported, through on_event


@pytest.mark.parametrize("provider", b.PROVIDERS)
def test_argument_deltas_are_made_for_a_reader_only(provider: str) -> None:
    """Issue 30: with no ``on_event`` and no ``deltas=True`` nobody reads an ``ArgumentsDelta``,
    so none is made (one per fragment was a third of the per-chunk cost); the other events and
    the Turn are the same either way, and ``deltas=True`` returns what ``on_event`` sees."""
    stream = list(make(provider, [b.Call(id="c1", name="add", arguments=ADD, cuts=(3, 9))]))
    quiet, asked = Assembler(provider=provider), Assembler(provider=provider, deltas=True)
    seen: list[Any] = []
    heard = Assembler(provider=provider, on_event=seen.append)
    got = {name: [e for event in stream for e in asm.feed(event)]
           for name, asm in (("quiet", quiet), ("asked", asked), ("heard", heard))}
    assert not any(isinstance(e, ArgumentsDelta) for e in got["quiet"])
    assert any(isinstance(e, ArgumentsDelta) for e in got["asked"])
    assert got["asked"] == got["heard"] == seen
    assert got["quiet"] == [e for e in got["asked"] if not isinstance(e, ArgumentsDelta)]
    assert quiet.finish().calls == asked.finish().calls == heard.finish().calls
