"""DESIGN §3 and §5: structured arguments get the strict verdict their text would get.

Gemini ``args`` / ``partialArgs`` and a complete Anthropic ``input`` arrive as values, not
text. A lone surrogate or a non-finite number in them is ``invalid_json`` (as the same text
would be), and ``raw_arguments`` stays encodable as UTF-8 whatever arrived.
"""

from __future__ import annotations

import json
from typing import Any

import builders as b
import pytest
from builders import run
from toolstream_core import ArgumentsDelta, AssembleConfig, Assembler, CallState, Reason

LONE = "\ud800"
BAD_VALUES: list[Any] = [
    {"s": "a" + LONE},
    {LONE: 1},
    {"n": float("nan")},
    {"n": float("inf")},
    {"deep": [{"x": -float("inf")}]},
]


def gemini_args(value: Any) -> list[dict[str, Any]]:
    return [b.gemini_chunk([{"functionCall": {"id": "g1", "name": "f", "args": value}}]),
            b.gemini_chunk([{"text": ""}], finish_reason="STOP")]


def anthropic_complete(value: Any) -> list[dict[str, Any]]:
    return b.anthropic([b.Call(id="toolu_1", name="f", arguments="")], start_inputs={0: value})


def gemini_partial(value: Any) -> list[dict[str, Any]]:
    [item] = value.values()
    entry: dict[str, Any] = {"jsonPath": "$.k"}
    if isinstance(item, str):
        entry["stringValue"] = item
    else:
        entry["numberValue"] = item
    events = b.gemini([b.Call(id="g1", name="f", arguments='{"a":"x"}')], mode="partial")
    events.insert(2, b.gemini_chunk([{"functionCall": {"partialArgs": [entry], "willContinue": True}}]))
    return events


STREAMS = {"gemini-args": ("gemini", gemini_args), "anthropic-input": ("anthropic", anthropic_complete)}


def assert_rejected_and_encodable(turn: Any) -> None:
    [call] = turn.calls
    assert (call.state, call.reason) == (CallState.failed, Reason.invalid_json), call
    assert call.arguments is None
    if call.raw_arguments is not None:
        call.raw_arguments.encode("utf-8")  # never a lone surrogate in what a caller logs
    [result] = turn.error_results()
    result.content.encode("utf-8")


@pytest.mark.parametrize("value", BAD_VALUES, ids=["surrogate", "surrogate-key", "nan", "inf", "nested-inf"])
@pytest.mark.parametrize("stream", sorted(STREAMS))
def test_structured_surrogates_and_non_finite_numbers_are_invalid_json(stream: str, value: Any) -> None:
    provider, build = STREAMS[stream]
    assert_rejected_and_encodable(run(build(value), provider=provider))


@pytest.mark.parametrize("value", [{"k": "a" + LONE}, {"k": float("nan")}, {"k": float("inf")}],
                         ids=["surrogate", "nan", "inf"])
def test_gemini_partial_args_surrogates_and_non_finite_numbers_are_invalid_json(value: Any) -> None:
    assert_rejected_and_encodable(run(gemini_partial(value), provider="gemini"))


def test_a_utf16_pair_split_across_partial_args_pieces_is_one_character() -> None:
    """As for text (rule 5): re-joining a pair is decoding, not repair."""
    events = b.gemini([b.Call(id="g1", name="f", arguments='{"a":"x"}')], mode="partial")
    for position, piece in enumerate(["\ud83d", "\ude00"]):
        entry = {"jsonPath": "$.e", "stringValue": piece, "willContinue": True}
        events.insert(2 + position, b.gemini_chunk([{"functionCall": {"partialArgs": [entry], "willContinue": True}}]))
    [call] = run(events, provider="gemini").calls
    assert (call.state, call.arguments) == (CallState.committed, {"a": "x", "e": "\U0001f600"})
    assert json.loads(call.raw_arguments.encode("utf-8")) == call.arguments


def test_structured_value_deeper_than_the_limit_is_invalid_json() -> None:
    value: Any = "x"
    for _ in range(300):
        value = [value]
    [call] = run(gemini_args({"v": value}), provider="gemini").calls
    assert (call.state, call.reason) == (CallState.failed, Reason.invalid_json)


def test_committed_structured_arguments_are_the_strict_parse_of_raw_arguments() -> None:
    [call] = run(gemini_args({"b": [1, 2.5, True, None], "a": "é"}), provider="gemini").calls
    assert call.state is CallState.committed
    assert call.arguments == json.loads(call.raw_arguments) == {"b": [1, 2.5, True, None], "a": "é"}


@pytest.mark.parametrize("forward", [True, False])
def test_ui_forward_partial_args_gives_structured_arguments_as_compact_json(forward: bool) -> None:
    seen: list[Any] = []
    assembler = Assembler(provider="gemini", on_event=seen.append,
                          config=AssembleConfig(ui_forward_partial_args=forward))
    for event in gemini_args({"city": "Zürich", "days": 3}):
        assembler.feed(event)
    assembler.finish()
    [delta] = [e for e in seen if isinstance(e, ArgumentsDelta)]
    assert delta.fragment == ('{"city":"Zürich","days":3}' if forward else None)
    assert delta.total_bytes == len('{"city":"Zürich","days":3}'.encode())


def test_ui_forward_partial_args_anthropic_complete_input_is_compact_json() -> None:
    seen: list[Any] = []
    assembler = Assembler(provider="anthropic", on_event=seen.append)
    for event in anthropic_complete({"q": "x"}):
        assembler.feed(event)
    assembler.finish()
    assert [e.fragment for e in seen if isinstance(e, ArgumentsDelta)] == ['{"q":"x"}']
