"""Rule 9, pairing (docs/DESIGN.md §4.9).

``error_results()`` gives exactly one result per rejected call, with the vendor's id, and
never echoes argument text when ``ui_forward_partial_args`` is false.
"""

from __future__ import annotations

import builders as b
import pytest
from builders import ADD, PROVIDERS, SEARCH_SCHEMA, make, run
from toolstream_core import AssembleConfig, Assembler, ErrorResult, Reason


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule9_one_error_result_per_rejected_call_in_order(provider: str) -> None:
    calls = [
        b.Call(id="call_1", name="add", arguments=ADD),
        b.Call(id="call_2", name="nope", arguments="{}"),
        b.Call(id="call_3", name="add", arguments="[1]"),
        b.Call(id="call_4", name="add", arguments=ADD),
    ]
    turn = run(make(provider, calls), provider=provider, tools={"add": None})
    results = turn.error_results()
    assert [c.id for c in turn.rejected] == ["call_2", "call_3"]
    assert [(r.tool_call_id, r.name, r.reason, r.is_error) for r in results] == [
        ("call_2", "nope", Reason.unknown_tool, True), ("call_3", "add", Reason.arguments_not_object, True)]
    for result in results:
        assert isinstance(result, ErrorResult)
        assert result.reason.value in result.content
        assert "retry" in result.content.lower() or "instead" in result.content.lower()


SECRET = "SECRET-7f3a9c"


SECRET_CASES = {
    "truncated": '{"token":"' + SECRET,
    "duplicate_key": '{"' + SECRET + '":1,"' + SECRET + '":2}',
    "schema": '{"query":"' + SECRET + '","limit":99}',
    "overflow_number": '{"query":"a","limit":77' + "7" * 5 + "e99999}",
    "not_object": '["' + SECRET + '"]',
    "lone_surrogate": '{"query":"' + SECRET + '\\ud800"}',
}


@pytest.mark.parametrize("case", sorted(SECRET_CASES))
def test_rule9_error_content_never_echoes_arguments_when_forwarding_is_off(case: str) -> None:
    text = SECRET_CASES[case]
    config = AssembleConfig(ui_forward_partial_args=False)
    turn = run(b.openai_chat([
        b.Call(id="call_1", name="search", arguments=text, cuts=(7,)),
    ]), provider="openai-chat", config=config,
               tools={"search": SEARCH_SCHEMA})
    [result] = turn.error_results()
    secret = "777777e99999" if case == "overflow_number" else SECRET
    assert secret not in result.content, f"{case}: the error result quotes the arguments: {result.content!r}"


def test_rule9_cancelled_and_truncated_calls_are_paired_with_vendor_ids() -> None:
    assembler = Assembler(provider="anthropic")
    for event in b.anthropic([
        b.Call(id="toolu_1", name="add", arguments=ADD),
        b.Call(id="toolu_2", name="add", arguments=ADD, cuts=(3,)),
    ])[:6]:
        assembler.feed(event)
    assembler.cancel()
    turn = assembler.finish()
    assert [r.tool_call_id for r in turn.error_results()] == [c.id for c in turn.rejected] == ["toolu_1", "toolu_2"]
    assert {r.reason for r in turn.error_results()} == {Reason.cancelled}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule9_every_error_result_names_the_call_it_answers(provider: str) -> None:
    """``ErrorResult.key`` and ``Turn.result_for``: no caller pairs results by position."""
    events = make(provider, [b.Call(id="c1", name="other", arguments=ADD),
                             b.Call(id="c2", name="add", arguments=ADD),
                             b.Call(id="c3", name="nope", arguments=ADD)])
    turn = run(events, provider=provider, tools={"add": None})
    assert [c.id for c in turn.rejected] == ["c1", "c3"]
    for call in turn.calls:
        result = turn.result_for(call)
        if call.committed:
            assert result is None
        else:
            assert result is not None and (result.key, result.tool_call_id) == (call.key, call.id)
    want = {"openai-chat": "tool", "openai-responses": "function_call_output", "anthropic": "tool_result",
            "gemini": "functionResponse"}[provider]
    assert {r.output_type for r in turn.error_results()} == {want}


def test_rule9_the_error_text_quotes_only_ids_the_model_saw() -> None:
    """Gemini sends no call ids: the core synthesizes one to pair the result, but the text
    must not quote it as if the model had used it. A vendor id is quoted."""
    calls = [b.Call(id=None, name="add", arguments=ADD), b.Call(id=None, name="nope", arguments="{}")]
    turn = run(b.gemini(calls), provider="gemini", tools={"add": None})
    [result] = turn.error_results()
    assert result.tool_call_id and result.tool_call_id not in result.content
    assert "'nope'" in result.content and "(id " not in result.content
    vendor = run(make("anthropic", [b.Call(id="toolu_9", name="nope", arguments="{}")]),
                 provider="anthropic", tools={"add": None})
    assert "(id toolu_9)" in vendor.error_results()[0].content
