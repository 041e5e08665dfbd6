"""Rule 5, finalize once (docs/DESIGN.md §4.5).

After completion every call gets exactly one decision, in a fixed order: name present, id
present (or synthesized), one strict parse, an object, a known tool, a valid schema.
"""

from __future__ import annotations

from typing import Any

import builders as b
import pytest
from builders import (
    ADD,
    ID_VENDORS,
    PROVIDERS,
    SEARCH,
    SEARCH_SCHEMA,
    TEXT_VENDORS,
    chat_call,
    chat_chunk,
    lenient,
    make,
    named_states,
    run,
    states,
)
from toolstream_core import AssembleConfig, CallState, Reason, ToolSpec


@pytest.mark.parametrize("text", ["", "   ", "\n\t "])
@pytest.mark.parametrize("provider", TEXT_VENDORS)
def test_rule5_empty_or_whitespace_arguments_are_empty_object(provider: str, text: str) -> None:
    turn = run(make(provider, [b.Call(id="call_1", name="now", arguments=text)]), provider=provider)
    assert (turn.calls[0].state, turn.calls[0].arguments, turn.calls[0].raw_arguments) == (
        CallState.committed, {}, text)


def test_rule5_gemini_call_without_args_is_empty_object() -> None:
    events = b.gemini([b.Call(id="g1", name="now", arguments="")], with_ids=True)
    del events[0]["candidates"][0]["content"]["parts"][0]["functionCall"]["args"]
    turn = run(events, provider="gemini")
    assert (turn.calls[0].state, turn.calls[0].arguments) == (CallState.committed, {})


@pytest.mark.parametrize("provider", TEXT_VENDORS)
def test_rule5_arguments_must_be_an_object(provider: str) -> None:
    turn = run(make(provider, [b.Call(id="call_1", name="f", arguments="[1, 2]")]), provider=provider)
    assert states(turn) == [("call_1", CallState.failed, Reason.arguments_not_object)]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule5_unknown_tool_with_a_registry(provider: str) -> None:
    calls = [b.Call(id="call_1", name="search", arguments=SEARCH), b.Call(id="call_2", name="rm_rf", arguments="{}")]
    turn = run(make(provider, calls), provider=provider, tools={"search": None})
    assert states(turn) == [("call_1", CallState.committed, None), ("call_2", CallState.failed, Reason.unknown_tool)]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule5_schema_is_validated(provider: str) -> None:
    calls = [b.Call(id="call_1", name="search", arguments=SEARCH),
             b.Call(id="call_2", name="search", arguments='{"query":"a","limit":99}'),
             b.Call(id="call_3", name="search", arguments='{"limit":1}')]
    turn = run(make(provider, calls), provider=provider, tools={"search": SEARCH_SCHEMA})
    assert states(turn) == [("call_1", CallState.committed, None),
                            ("call_2", CallState.failed, Reason.schema_violation),
                            ("call_3", CallState.failed, Reason.schema_violation)]


def test_rule5_toolspec_schema_and_iterable_of_specs() -> None:
    spec = ToolSpec("search", schema=SEARCH_SCHEMA)
    for tools in ({"search": spec}, [spec]):
        turn = run(b.anthropic([b.Call(id="t1", name="search", arguments='{"limit":"x"}')]), provider="anthropic",
                   tools=tools)
        assert turn.calls[0].reason is Reason.schema_violation


@pytest.mark.parametrize("mode", ["strict", "lenient"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule5_missing_name_always_fails(provider: str, mode: str) -> None:
    turn = run(make(provider, [b.Call(id="call_1", name=None, arguments=ADD)]), provider=provider,
               config=AssembleConfig(mode=mode))  # type: ignore[arg-type]
    assert len(turn.calls) == 1, f"a call without a name was dropped unreported (anomalies: {turn.anomalies})"
    [call] = turn.calls
    assert (call.state, call.reason) == (CallState.failed, Reason.missing_id_or_name)
    [result] = turn.error_results()
    assert result.tool_call_id  # paired all the same


@pytest.mark.parametrize("provider", ID_VENDORS)
def test_rule5_missing_id_fails_in_strict_mode_for_id_vendors(provider: str) -> None:
    turn = run(make(provider, [b.Call(id=None, name="add", arguments=ADD)]), provider=provider)
    assert [(c.state, c.reason) for c in turn.calls] == [(CallState.failed, Reason.missing_id_or_name)]
    [result] = turn.error_results()
    assert result.tool_call_id == turn.calls[0].id and result.tool_call_id


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule5_missing_id_gets_stable_unique_synthesized_id(provider: str) -> None:
    """Gemini (any mode) and lenient mode: a synthesized id, unique in the stream, stable."""
    config = AssembleConfig() if provider == "gemini" else lenient()
    calls = [
        b.Call(id=None, name="add", arguments=ADD, cuts=(3,)),
        b.Call(id=None, name="add", arguments=ADD, cuts=(5,)),
    ]
    events = make(provider, calls, with_ids=False) if provider == "gemini" else make(provider, calls)
    first = run(events, provider=provider, config=config)
    again = run(make(provider, [
        b.Call(id=None, name="add", arguments=ADD, cuts=(1, 2)),
        b.Call(id=None, name="add", arguments=ADD),
    ], **(
        {"with_ids": False} if provider == "gemini" else {})), provider=provider, config=config)
    ids = [c.id for c in first.calls]
    assert all(c.state is CallState.committed for c in first.calls)
    assert all(isinstance(i, str) and i for i in ids)
    assert len(set(ids)) == 2
    assert [c.id for c in again.calls] == ids  # re-chunked stream, same ids


def test_rule5_toolspec_strict_overrides_mode() -> None:
    dup = '{"a":1,"a":2}'
    loose = run(b.openai_chat([b.Call(id="c1", name="f", arguments=dup)]), provider="openai-chat",
                tools=[ToolSpec("f", strict=False)])
    assert loose.calls[0].state is CallState.committed
    tight = run(b.openai_chat([
        b.Call(id="c1", name="f", arguments=dup),
    ]), provider="openai-chat", tools=[ToolSpec("f", strict=True)],
                config=lenient())
    assert tight.calls[0].reason is Reason.invalid_json


@pytest.mark.parametrize(("text", "state"), [
    (" \t\r\n ", CallState.committed),
    ("\u00a0", CallState.failed),
    ("\u2003\u3000", CallState.failed),
    (" \u00a0 ", CallState.failed),
])
def test_rule5_whitespace_only_arguments_are_json_whitespace(text: str, state: CallState) -> None:
    events = [chat_chunk([chat_call(0, "", id="call_1", name="add")]), chat_chunk([chat_call(0, text)]),
              chat_chunk(finish="tool_calls")]
    turn = run(events, provider="openai-chat")
    call = turn.calls[0]
    assert call.state is state
    if state is CallState.committed:
        assert call.arguments == {}
    else:
        assert call.reason is Reason.invalid_json


def _legacy(pieces: list[str]) -> list[dict[str, Any]]:
    first = chat_chunk(function_call={"name": "add", "arguments": ""})
    return [first, *(chat_chunk(function_call={"arguments": p}) for p in pieces), chat_chunk(finish="function_call")]


@pytest.mark.parametrize("mode", ["strict", "lenient"])
def test_rule5_legacy_function_call_gets_a_stable_synthesized_id(mode: str) -> None:
    config = AssembleConfig(mode=mode)  # type: ignore[arg-type]
    one = run(_legacy(['{"a": 1, "b": 2}']), provider="openai-chat", config=config)
    other = run(_legacy(['{"a"', ': 1, "b', '": 2}']), provider="openai-chat", config=config)
    assert named_states(one) == [("add", CallState.committed, None)]
    assert one.calls[0].arguments == {"a": 1, "b": 2}
    assert one.calls[0].id is not None and one.calls[0].id == other.calls[0].id


def test_rule5_strict_mode_still_fails_a_missing_id_where_the_protocol_has_ids() -> None:
    events = [chat_chunk([chat_call(0, "", name="add")]), chat_chunk([chat_call(0, "{}")]),
              chat_chunk(finish="tool_calls")]
    turn = run(events, provider="openai-chat", config=AssembleConfig(mode="strict"))
    assert named_states(turn) == [("add", CallState.failed, Reason.missing_id_or_name)]
