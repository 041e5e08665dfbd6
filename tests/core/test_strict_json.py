"""DESIGN §4.5-§4.6: the one strict parse a complete call gets, through the public Assembler.

A malformed-JSON battery run for every vendor that streams arguments as text: each case is a
complete, properly finished call whose arguments are the text below, so the only thing that
decides it is the parse. Python's ``json`` accepts several of these (NaN, ``1e400`` -> inf,
duplicate keys, lone surrogates); each would commit without the strict parser.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import builders as b
import pytest
from builders import run
from toolstream_core import AssembleConfig, CallState, Reason

TEXT_VENDORS = ("openai-chat", "openai-responses", "anthropic")
DIGIT_LIMIT = sys.get_int_max_str_digits() or 4300 if hasattr(sys, "get_int_max_str_digits") else 4300


def nested_objects(depth: int) -> str:
    """An object nested ``depth`` deep; the top-level object is depth 1."""
    return '{"a":' * (depth - 1) + "{}" + "}" * (depth - 1)


def nested_arrays(depth: int) -> str:
    """An object holding arrays so that the innermost array is at ``depth``."""
    return '{"a":' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


def mixed(depth: int) -> str:
    """Alternating objects and arrays, ``depth`` containers deep, the innermost one empty."""
    opening, closing = "", ""
    for level in range(1, depth):
        if level % 2:
            opening += '{"k":'
            closing = "}" + closing
        else:
            opening += "["
            closing = "]" + closing
    return opening + ("[]" if depth % 2 == 0 else "{}") + closing


INVALID: dict[str, str] = {
    "nan": '{"x": NaN}',
    "infinity": '{"x": Infinity}',
    "minus_infinity": '{"x": -Infinity}',
    "overflow_1e400": '{"x": 1e400}',
    "overflow_minus_1e400": '{"x": -1e400}',
    "overflow_just_past_double": '{"x": 1.8e308}',
    "duplicate_keys": '{"a": 1, "a": 2}',
    "duplicate_keys_nested": '{"o": {"k": 1, "k": 1}}',
    "deep_arrays_100k": '{"a":' + "[" * 100_000 + "]" * 100_000 + "}",
    "deep_objects_100k": '{"a":' * 100_000 + "1" + "}" * 100_000,
    "unbalanced_deep_100k": "[" * 100_000,
    "depth_257_objects": nested_objects(257),
    "depth_257_arrays": nested_arrays(257),
    "depth_257_mixed": mixed(257),
    "int_5000_digits": '{"n": ' + "9" * 5000 + "}",
    "negative_int_5000_digits": '{"n": -' + "1" * 5000 + "}",
    "int_past_digit_limit": '{"n": ' + "7" * (DIGIT_LIMIT + 1) + "}",
    "lone_high_surrogate": '{"s": "\\ud800"}',
    "lone_low_surrogate": '{"s": "\\udc00"}',
    "high_surrogate_at_end": '{"s": "abc\\uD83D"}',
    "surrogates_reversed": '{"s": "\\ude00\\ud83d"}',
    "lone_surrogate_in_key": '{"\\ud800": 1}',
    "raw_lone_surrogate_char": '{"s": "\ud800"}',
    "bom": '\ufeff{"a": 1}',
    "trailing_garbage": '{"a": 1} x',
    "trailing_bracket": '{"a": 1}]',
    "trailing_comma_after": '{"a": 1},',
    "trailing_comma_inside": '{"a": 1,}',
    "single_quotes": "{'a': 1}",
    "unquoted_key": "{a: 1}",
    "comment": '{"a": 1 /* no */}',
    "leading_zero": '{"a": 01}',
    "hex": '{"a": 0x1F}',
    "plus_sign": '{"a": +1}',
    "bare_fraction": '{"a": .5}',
    "raw_control_char_in_string": '{"s": "a\nb"}',
    "truncated_string": '{"path": "/tmp/a',
    "truncated_after_value": '{"path": "/tmp/a"',
    "only_open_brace": "{",
}

NOT_OBJECT: dict[str, str] = {
    "array": "[1, 2]",
    "string": '"hello"',
    "null": "null",
    "number": "42",
    "float": "-0.5",
    "true": "true",
}

VALID: dict[str, Any] = {
    "depth_256_objects": json.loads(nested_objects(256)),
    "depth_256_arrays": json.loads(nested_arrays(256)),
    "depth_256_mixed": json.loads(mixed(256)),
    "escaped_surrogate_pair": {"s": "\U0001f600"},
    "escaped_surrogate_pair_upper": {"s": "\U0001f600"},
    "raw_surrogate_pair_chars": {"s": "\U0001f600"},
    "int_at_digit_limit": {"n": int("7" * DIGIT_LIMIT)},
    "largest_double": {"x": 1.7976931348623157e308},
    "negative_zero": {"x": -0},
    "exponent": {"x": 1e5},
    "small_exponent": {"x": 1e-5},
    "escapes": {"s": 'é/"\\\n'},
    "non_ascii": {"город": "Zürich ✓"},
    "surrounding_whitespace": {"a": 1},
    "empty": {},
    "whitespace_only": {},
}
VALID_TEXT: dict[str, str] = {
    "depth_256_objects": nested_objects(256),
    "depth_256_arrays": nested_arrays(256),
    "depth_256_mixed": mixed(256),
    "escaped_surrogate_pair": '{"s": "\\ud83d\\ude00"}',
    "escaped_surrogate_pair_upper": '{"s": "\\uD83D\\uDE00"}',
    # A JS server may cut a UTF-16 pair; the two halves still form one character.
    "raw_surrogate_pair_chars": '{"s": "\ud83d\ude00"}',
    "int_at_digit_limit": '{"n": ' + "7" * DIGIT_LIMIT + "}",
    "largest_double": '{"x": 1.7976931348623157e308}',
    "negative_zero": '{"x": -0}',
    "exponent": '{"x": 1E5}',
    "small_exponent": '{"x": 1e-5}',
    "escapes": '{"s": "\\u00e9\\/\\"\\\\\\n"}',
    "non_ascii": '{"город": "Zürich ✓"}',
    "surrounding_whitespace": ' \r\n\t{"a": 1} \n',
    "empty": "",
    "whitespace_only": " \n\t ",
}


# Room for the 100k-deep cases: this file tests the parser, not the size cap.
ROOMY = AssembleConfig(max_tool_argument_bytes=1 << 20)


def one_call(provider: str, text: str, cuts: tuple[int, ...] | None = None) -> Any:
    return run(b.build(provider, [b.Call(id="call_1", name="f", arguments=text, cuts=cuts)]), provider=provider,
               config=ROOMY)


@pytest.mark.parametrize("case", sorted(INVALID))
@pytest.mark.parametrize("provider", TEXT_VENDORS)
def test_invalid_json_battery(provider: str, case: str) -> None:
    turn = one_call(provider, INVALID[case])
    [call] = turn.calls
    assert (call.state, call.reason, call.arguments) == (CallState.failed, Reason.invalid_json, None), case
    assert call.raw_arguments == INVALID[case]  # kept exactly, never repaired
    [result] = turn.error_results()
    assert result.reason is Reason.invalid_json


@pytest.mark.parametrize("case", sorted(NOT_OBJECT))
@pytest.mark.parametrize("provider", TEXT_VENDORS)
def test_top_level_non_objects_are_arguments_not_object(provider: str, case: str) -> None:
    [call] = one_call(provider, NOT_OBJECT[case]).calls
    assert (call.state, call.reason) == (CallState.failed, Reason.arguments_not_object)


@pytest.mark.parametrize("case", sorted(VALID))
@pytest.mark.parametrize("provider", TEXT_VENDORS)
def test_valid_edge_cases_commit(provider: str, case: str) -> None:
    text = VALID_TEXT[case]
    [call] = one_call(provider, text, cuts=(1, 2, len(text) // 2)).calls
    assert (call.state, call.reason) == (CallState.committed, None), call.detail
    assert call.arguments == VALID[case]
    assert call.raw_arguments == text


@pytest.mark.parametrize("provider", TEXT_VENDORS)
def test_duplicate_keys_commit_in_lenient_mode(provider: str) -> None:
    events = b.build(provider, [b.Call(id="call_1", name="f", arguments='{"a": 1, "a": 2, "o": {"k": 1, "k": 3}}')])
    turn = run(events, provider=provider, config=AssembleConfig(mode="lenient"))
    assert turn.calls[0].state is CallState.committed
    assert set(turn.calls[0].arguments) == {"a", "o"}


@pytest.mark.parametrize("case", ["deep_arrays_100k", "deep_objects_100k"])
def test_deep_nesting_in_one_byte_fragments_does_not_crash(case: str) -> None:
    text = INVALID[case]
    turn = one_call("anthropic", text, cuts=tuple(range(1, len(text), 997)))
    assert turn.calls[0].reason is Reason.invalid_json


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_gemini_structured_args_with_non_json_numbers_are_invalid(value: float) -> None:
    events = b.gemini([b.Call(id="g1", name="f", arguments='{"x": 1}')], with_ids=True)
    events[0]["candidates"][0]["content"]["parts"][0]["functionCall"]["args"] = {"x": value}
    turn = run(events, provider="gemini")
    assert (turn.calls[0].state, turn.calls[0].reason) == (CallState.failed, Reason.invalid_json)


def test_anthropic_complete_input_with_non_json_number_is_invalid() -> None:
    events = b.anthropic([b.Call(id="t1", name="f", arguments="")], start_inputs={0: {"x": float("nan")}})
    turn = run(events, provider="anthropic")
    assert (turn.calls[0].state, turn.calls[0].reason) == (CallState.failed, Reason.invalid_json)


def test_battery_cases_really_are_what_python_json_accepts_or_refuses() -> None:
    """Guard the battery itself: the lenient cases are ones plain ``json.loads`` lets through."""
    for case in ("nan", "infinity", "overflow_1e400", "duplicate_keys", "lone_high_surrogate"):
        json.loads(INVALID[case])  # stdlib accepts: only the strict parser stands in the way
    for case, value in VALID.items():
        assert json.loads(VALID_TEXT[case].strip() or "{}") == value or case == "raw_surrogate_pair_chars"
