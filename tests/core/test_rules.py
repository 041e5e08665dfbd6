"""DESIGN §4 rule by rule, on synthetic streams for every vendor family (``builders.py``).

Each test is named for the rule it guards and would fail if that rule were dropped from the
core. The five seed fixture classes (single call, two parallel calls, no-argument call,
oversized arguments, cancel mid-stream) run for every vendor, from wire dicts and from the
SDKs' own objects.
"""

from __future__ import annotations

import copy
import json
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import builders as b
import pytest
from builders import PROVIDERS, run, snapshot
from streams_util import find_streams_dir, load_stream
from toolstream_core import (
    ArgumentsDelta,
    AssembleConfig,
    Assembler,
    AssemblerClosed,
    CallCommitted,
    CallOpened,
    CallRejected,
    CallState,
    ErrorResult,
    Reason,
    ToolSpec,
    Turn,
)

TEXT_VENDORS = ("openai-chat", "openai-responses", "anthropic")
ID_VENDORS = TEXT_VENDORS  # vendors whose protocol carries call ids (DESIGN §4.5)
SEARCH = '{"query":"weather in Paris","limit":10}'
ADD = '{"a":2,"b":3}'


def make(provider: str, calls: list[Any], **kwargs: Any) -> list[dict[str, Any]]:
    """Build a stream; Gemini gets ids on its calls unless a test says otherwise."""
    if provider == "gemini":
        kwargs.setdefault("with_ids", True)
    return b.build(provider, calls, **kwargs)


def lenient() -> AssembleConfig:
    return AssembleConfig(mode="lenient")


def states(turn: Turn) -> list[tuple[str | None, CallState, Reason | None]]:
    return [(c.id, c.state, c.reason) for c in turn.calls]


def record_events(**kwargs: Any) -> tuple[Assembler, list[Any]]:
    seen: list[Any] = []
    return Assembler(on_event=seen.append, **kwargs), seen


# ============================================================================================
# Builders: the synthetic shapes are the vendors' shapes
# ============================================================================================

_REAL = {
    "openai-chat": [
        "openai-chat/openai__openai-gpt-4o_multi_tool_streaming__0.jsonl",
        "openai-chat/openai__chat_completion_multiple_tools_streaming_with_content__0.jsonl",
        "openai-chat/groq__groq-kimi-k2_multi_tool_streaming__0.jsonl",
    ],
    "openai-responses": [
        "openai-responses/openai__openai-gpt-5_multi_tool_streaming__0.jsonl",
        "openai-responses/azure-openai__azure-tool-call.1__0.jsonl",
        "openai-responses/openai__openai-custom-tool.1__0.jsonl",
    ],
    "anthropic": [
        "anthropic/anthropic__claude-sonnet-4_multi_tool_streaming__0.jsonl",
        "anthropic/anthropic__anthropic_tools__0.jsonl",
        "anthropic/anthropic__anthropic-mcp.1__0.jsonl",
    ],
    "gemini": [
        "gemini/google__gemini-2.5-flash_multi_tool_streaming__0.jsonl",
        "gemini/google__google-stream-tool-call-arguments__0.jsonl",
        "gemini/google__google-stream-tool-call-array-arguments-missing-t-0f0756__0.jsonl",
    ],
}
# Values whose inner keys are the call's own data or bookkeeping, not the vendor's shape.
_OPAQUE = {"args", "input", "usage", "usageMetadata", "response", "message", "partialArgs", "thoughtSignature"}
# Per-event noise some servers add (stream obfuscation padding, ordering counters).
_NOISE = {"obfuscation", "sequence_number"}


def _paths(obj: Any, prefix: str = "") -> set[str]:
    out: set[str] = set()
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key in _NOISE:
                continue
            path = f"{prefix}{key}"
            out.add(path)
            if key not in _OPAQUE:
                out |= _paths(value, path + ".")
    elif isinstance(obj, list):
        for item in obj:
            out |= _paths(item, prefix.rstrip(".") + "[].")
    return out


def _pieces(provider: str, event: Any) -> list[tuple[str, Any]]:
    """The parts of one event that carry tool-call shape, each with a kind to compare by."""
    out: list[tuple[str, Any]] = []
    if not isinstance(event, dict):
        return out
    if provider == "openai-chat":
        for choice in event.get("choices") or []:
            for item in (choice.get("delta") or {}).get("tool_calls") or []:
                out.append(("tool_call_open" if item.get("id") else "tool_call_fragment", item))
            if choice.get("finish_reason") and not (choice.get("delta") or {}).get("tool_calls"):
                out.append(("finish_choice", {k: None for k in choice}))
    elif provider == "openai-responses":
        kind = event.get("type", "")
        item = event.get("item") or {}
        if item.get("type") in ("function_call", "custom_tool_call"):
            out.append((f"{kind}:{item['type']}", event))
        elif "arguments" in kind or "custom_tool_call_input" in kind:
            out.append((kind, event))
        elif kind in ("response.completed", "response.created"):
            out.append((kind, {"type": kind, "response": None, "status": event["response"].get("status")}))
    elif provider == "anthropic":
        kind = event.get("type", "")
        sub = (event.get("content_block") or event.get("delta") or {}).get("type")
        if kind in ("content_block_start", "content_block_delta") and sub in ("tool_use", "input_json_delta",
                                                                               "mcp_tool_use"):
            out.append((f"{kind}:{sub}", event))
        elif kind in ("message_delta", "message_stop", "content_block_stop", "message_start"):
            out.append((kind, event))
    elif provider == "gemini":
        for candidate in event.get("candidates") or []:
            for part in (candidate.get("content") or {}).get("parts") or []:
                call = part.get("functionCall")
                if call is None:
                    continue
                kind = "args" if "args" in call else "partial" if "partialArgs" in call else (
                    "open" if call.get("name") else "end")
                out.append((f"functionCall:{kind}", {k: v for k, v in part.items() if k != "thoughtSignature"}))
            if candidate.get("finishReason"):
                out.append(("finish_candidate", {k: None for k in candidate if k != "finishMessage"}))
    return out


# Fields the builders send that some recorded servers omit, and why that is fine.
_ALLOWED_EXTRA = {
    ("openai-responses", "response.function_call_arguments.done"): {"name"},  # required by the SDK type
    ("openai-responses", "response.completed"): {"status"},
    ("openai-responses", "response.created"): {"status"},
    ("gemini", "finish_candidate"): {"index"},  # Gemini API sends it; Vertex omits it
    ("gemini", "functionCall:args"): {"functionCall.id"},  # FunctionCall.id exists in the API; unrecorded
}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_builders_match_real_stream_shapes(provider: str) -> None:
    """Every field path a builder emits was seen in a real stream, and every path all the real
    streams share is emitted, per kind of event (so a built stream exercises the same code)."""
    root = find_streams_dir()
    real: dict[str, list[set[str]]] = {}
    for rel in _REAL[provider]:
        for event in load_stream(root / rel).data_events():
            for kind, piece in _pieces(provider, event):
                real.setdefault(kind, []).append(_paths(piece))
    calls = [
        b.Call(id="call_1", name="add", arguments=ADD, cuts=(3,)),
        b.Call(id="call_2", name="multiply", arguments=ADD),
    ]
    built_streams = [make(provider, calls)]
    if provider == "openai-responses":
        built_streams.append(b.openai_responses(calls, kinds=["custom", "function"]))
    if provider == "anthropic":
        built_streams.append(b.anthropic(calls, block_types=["mcp_tool_use", "tool_use"]))
    if provider == "gemini":
        built_streams.append(b.gemini([
            b.Call(id="c", name="getWeather", arguments='{"location":"Boston"}', cuts=(2,)),
        ], mode="partial"))
    compared = 0
    for events in built_streams:
        for event in events:
            for kind, piece in _pieces(provider, event):
                if kind not in real:
                    continue
                compared += 1
                built = _paths(piece)
                union = set().union(*real[kind])
                common = set.intersection(*real[kind])
                extra = built - union - _ALLOWED_EXTRA.get((provider, kind), set())
                assert not extra, f"{provider} {kind}: builder sends {sorted(extra)} that no real stream has"
                missing = common - built
                assert not missing, f"{provider} {kind}: every real stream has {sorted(missing)}, builder omits it"
    assert compared >= 4, f"too few comparable {provider} events ({compared})"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_builders_validate_as_sdk_objects(provider: str) -> None:
    """The SDKs' own models accept every built event (the SDK-object path is not a dict path)."""
    events = make(provider, [
        b.Call(id="call_1", name="add", arguments=ADD, cuts=(2, 5)),
        b.Call(id="call_2", name="add", arguments=SEARCH),
    ])
    objects = b.to_sdk(provider, events)
    assert len(objects) == len(events)
    assert all(type(o).__module__.split(".")[0] in ("openai", "anthropic", "google") for o in objects)


# ============================================================================================
# Seed fixture classes, every vendor, dicts and SDK objects
# ============================================================================================

FORMS = ("dict", "sdk")


def _form(provider: str, events: list[dict[str, Any]], form: str) -> list[Any]:
    return b.to_sdk(provider, events) if form == "sdk" else events


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_seed_single_call(provider: str, form: str) -> None:
    events = _form(provider, make(provider, [
        b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(1, 9, 20)),
    ]), form)
    turn = run(events)  # provider detected from the first event
    assert turn.provider == provider
    assert turn.complete is True
    [call] = turn.calls
    assert (call.id, call.name, call.state, call.kind) == ("call_1", "search", CallState.committed, "function")
    assert call.arguments == json.loads(SEARCH)
    assert turn.error_results() == []


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_seed_two_parallel_calls(provider: str, form: str) -> None:
    calls = [
        b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(2, 7, 15)),
        b.Call(id="call_2", name="search", arguments='{"query":"rome"}', cuts=(4, 9)),
    ]
    schedule = b.round_robin([4, 4])
    events = _form(provider, make(provider, calls, schedule=schedule), form)
    turn = run(events, provider=provider)
    assert [(c.id, c.name, c.state) for c in turn.calls] == [
        ("call_1", "search", CallState.committed), ("call_2", "search", CallState.committed)]
    assert [c.arguments for c in turn.committed] == [json.loads(SEARCH), {"query": "rome"}]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_seed_no_argument_call(provider: str, form: str) -> None:
    events = _form(provider, make(provider, [b.Call(id="call_1", name="now", arguments="")]), form)
    turn = run(events, provider=provider)
    [call] = turn.calls
    assert call.state is CallState.committed
    assert call.arguments == {}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_seed_oversized_arguments(provider: str, form: str) -> None:
    big = json.dumps({"blob": "x" * 5000})
    calls = [
        b.Call(id="call_1", name="write", arguments=big, cuts=tuple(range(100, 5000, 100))),
        b.Call(id="call_2", name="add", arguments=ADD),
    ]
    events = _form(provider, make(provider, calls), form)
    turn = run(events, provider=provider, config=AssembleConfig(max_tool_argument_bytes=1024))
    first, second = turn.calls
    assert (first.state, first.reason) == (CallState.failed, Reason.arguments_exceed_max_bytes)
    assert first.arguments is None
    assert second.state is CallState.committed
    assert [r.tool_call_id for r in turn.error_results()] == ["call_1"]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("provider", PROVIDERS)
def test_seed_cancel_mid_stream(provider: str, form: str) -> None:
    calls = [
        b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(3, 8)),
        b.Call(id="call_2", name="add", arguments=ADD, cuts=(2,)),
    ]
    events = _form(provider, make(provider, calls, mode="partial") if provider == "gemini"
                   else make(provider, calls), form)
    assembler = Assembler(provider=provider)
    half = len(events) // 2
    for event in events[:half]:
        assembler.feed(event)
    assembler.cancel("user pressed stop")
    for event in events[half:]:  # absorbed, including the finish signal
        assembler.feed(event)
    turn = assembler.finish()
    assert turn.complete is False
    assert turn.committed == ()
    assert turn.calls, "the calls opened before the cancel are reported"
    for call in turn.calls:
        assert (call.state, call.reason, call.detail) == (CallState.cancelled, Reason.cancelled, "user pressed stop")
    assert [r.tool_call_id for r in turn.error_results()] == [c.id for c in turn.calls]


# ============================================================================================
# Rule 1: identity
# ============================================================================================


def test_rule1_chat_key_is_choice_and_tool_call_index() -> None:
    calls = [
        b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(2, 9, 14)),
        b.Call(id="call_2", name="add", arguments=ADD, cuts=(3,)),
    ]
    turn = run(b.openai_chat(calls, schedule=b.round_robin([4, 3])), provider="openai-chat")
    assert [(c.index, c.id, c.raw_arguments) for c in turn.calls] == [(0, "call_1", SEARCH), (1, "call_2", ADD)]


def test_rule1_chat_same_tool_call_index_in_two_choices_is_two_calls() -> None:
    first = b.openai_chat([
        b.Call(id="call_a", name="search", arguments=SEARCH, cuts=(5,)),
    ], choice=0, role_chunk=False, ending="none")
    second = b.openai_chat([
        b.Call(id="call_b", name="search", arguments='{"query":"x"}', cuts=(5,)),
    ], choice=1, role_chunk=False, ending="none")
    events = [e for pair in zip(first, second, strict=True) for e in pair]
    events += b.openai_chat([], choice=0, role_chunk=False) + b.openai_chat([], choice=1, role_chunk=False)
    turn = run(events, provider="openai-chat")
    assert sorted((c.id, c.raw_arguments, c.state) for c in turn.calls) == [
        ("call_a", SEARCH, CallState.committed), ("call_b", '{"query":"x"}', CallState.committed)]


def test_rule1_chat_index_zero_reused_with_new_id_starts_new_call() -> None:
    calls = [
        b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(4,)),
        b.Call(id="call_2", name="add", arguments=ADD, cuts=(4,)),
    ]
    turn = run(b.openai_chat(calls, indexes=[0, 0]), provider="openai-chat")
    assert [(c.id, c.name, c.raw_arguments, c.state) for c in turn.calls] == [
        ("call_1", "search", SEARCH, CallState.committed), ("call_2", "add", ADD, CallState.committed)]


def test_rule1_chat_missing_index_bare_fragments_join_the_most_recent_call() -> None:
    calls = [
        b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(4, 11)),
        b.Call(id="call_2", name="add", arguments=ADD, cuts=(4,)),
    ]
    turn = run(b.openai_chat(calls, omit_index=True), provider="openai-chat")
    assert [(c.id, c.raw_arguments, c.state) for c in turn.calls] == [
        ("call_1", SEARCH, CallState.committed), ("call_2", ADD, CallState.committed)]


def test_rule1_chat_missing_index_id_routes_interleaved_fragments() -> None:
    calls = [
        b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(4, 11)),
        b.Call(id="call_2", name="add", arguments=ADD, cuts=(4,)),
    ]
    events = b.openai_chat(calls, omit_index=True, identity="every", schedule=b.round_robin([3, 2]))
    turn = run(events, provider="openai-chat")
    assert [(c.id, c.name, c.raw_arguments) for c in turn.calls] == [("call_1", "search", SEARCH),
                                                                      ("call_2", "add", ADD)]


def test_rule1_chat_name_without_id_starts_a_new_call() -> None:
    chunk = {"choices": [{"index": 0, "delta": {"tool_calls": [{"function": {"name": "now", "arguments": "{}"}}]},
                          "finish_reason": None}]}
    events = [copy.deepcopy(chunk), copy.deepcopy(chunk), *b.openai_chat([], role_chunk=False)]
    turn = run(events, provider="openai-chat", config=lenient())
    assert len(turn.calls) == 2
    assert all(c.state is CallState.committed and c.raw_arguments == "{}" for c in turn.calls)
    assert turn.calls[0].id != turn.calls[1].id


def test_rule1_chat_whole_call_and_finish_reason_in_one_chunk() -> None:
    events = b.openai_chat([
        b.Call(id="call_1", name="add", arguments=ADD),
    ], args_on_open=True, finish_in_last_chunk=True, role_chunk=False)
    assert len(events) == 1
    turn = run(events, provider="openai-chat")
    assert states(turn) == [("call_1", CallState.committed, None)]
    assert turn.finish_reason == "tool_calls"


def test_rule1_chat_usage_only_chunks_change_nothing() -> None:
    events = b.openai_chat([b.Call(id="call_1", name="add", arguments=ADD, cuts=(3,))], usage_chunk=True)
    events.insert(1, {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m", "choices": [],
                      "usage": None})
    turn = run(events, provider="openai-chat")
    assert states(turn) == [("call_1", CallState.committed, None)]


def test_rule1_chat_arguments_null_on_the_opening_delta() -> None:
    turn = run(b.openai_chat([
        b.Call(id="call_1", name="add", arguments=ADD, cuts=(3,)),
    ], null_arguments=True), provider="openai-chat")
    assert (turn.calls[0].raw_arguments, turn.calls[0].state) == (ADD, CallState.committed)
    only_null = run(b.openai_chat([
        b.Call(id="call_2", name="now", arguments=""),
    ], null_arguments=True), provider="openai-chat")
    assert (only_null.calls[0].state, only_null.calls[0].arguments) == (CallState.committed, {})


@pytest.mark.parametrize("where", ["top", "choice"])
def test_rule1_chat_error_object_inside_a_chunk_fails_open_calls(where: str) -> None:
    events = b.openai_chat([b.Call(id="call_1", name="add", arguments=ADD, cuts=(3,))])
    error = {"code": 502, "message": "upstream died"}
    if where == "top":
        events.insert(-1, {**events[0], "error": error})
    else:
        events.insert(-1, {**events[0], "choices": [{"index": 0, "delta": {}, "finish_reason": None,
                                                      "error": error}]})
    turn = run(events, provider="openai-chat")
    assert states(turn) == [("call_1", CallState.failed, Reason.upstream_error)]


def test_rule1_responses_identity_is_the_output_item() -> None:
    calls = [
        b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(3, 9)),
        b.Call(id="call_2", name="add", arguments=ADD, cuts=(2,)),
    ]
    events = b.openai_responses(calls, schedule=[0, 1, 0, 1, 0, 1, 0, 1])
    turn = run(events, provider="openai-responses")
    assert [(c.id, c.raw_arguments, c.state) for c in turn.calls] == [
        ("call_1", SEARCH, CallState.committed), ("call_2", ADD, CallState.committed)]


def test_rule1_responses_delta_found_by_output_index_alone() -> None:
    events = b.openai_responses([b.Call(id="call_1", name="add", arguments=ADD, cuts=(3,))])
    for event in events:
        if event["type"].startswith("response.function_call_arguments"):
            del event["item_id"]
    turn = run(events, provider="openai-responses")
    assert states(turn) == [("call_1", CallState.committed, None)]
    assert turn.calls[0].raw_arguments == ADD


def test_rule1_anthropic_identity_is_the_content_block_index() -> None:
    calls = [
        b.Call(id="toolu_1", name="search", arguments=SEARCH, cuts=(3, 9)),
        b.Call(id="toolu_2", name="add", arguments=ADD, cuts=(2,)),
    ]
    events = b.anthropic(calls, text_block=True, schedule=[0, 1, 0, 1, 0, 1, 0, 1, 0, 1])
    turn = run(events, provider="anthropic")
    assert [(c.index, c.id, c.raw_arguments, c.state) for c in turn.calls] == [
        (1, "toolu_1", SEARCH, CallState.committed), (2, "toolu_2", ADD, CallState.committed)]


def test_rule1_gemini_two_parts_same_tool_are_two_calls() -> None:
    calls = [
        b.Call(id=None, name="search", arguments='{"query":"a"}'),
        b.Call(id=None, name="search", arguments='{"query":"a"}'),
    ]
    turn = run(b.gemini(calls, together=True, finish_with_calls=True), provider="gemini")
    assert [(c.name, c.arguments, c.state) for c in turn.calls] == [
        ("search", {"query": "a"}, CallState.committed), ("search", {"query": "a"}, CallState.committed)]
    assert turn.calls[0].id != turn.calls[1].id


def test_rule1_gemini_partial_args_attach_by_position_and_concatenate() -> None:
    args = {"location": "San Francisco", "days": 3, "ops": [{"action": "add", "ok": True}], "note": None}
    calls = [
        b.Call(id=None, name="getWeather", arguments=json.dumps(args), cuts=(1, 4, 9)),
        b.Call(id=None, name="getWeather", arguments='{"location":"Boston"}', cuts=(2,)),
    ]
    turn = run(b.gemini(calls, mode="partial"), provider="gemini")
    assert [c.arguments for c in turn.calls] == [args, {"location": "Boston"}]
    assert all(c.state is CallState.committed for c in turn.calls)


@pytest.mark.parametrize("explicit_false", [False, True])
def test_rule1_gemini_will_continue_false_ends_the_call(explicit_false: bool) -> None:
    calls = [
        b.Call(id=None, name="a", arguments='{"x":"one"}', cuts=(1,)),
        b.Call(id=None, name="b", arguments='{"y":"two"}', cuts=(1,)),
    ]
    events = b.gemini(calls, mode="partial", terminator="last")
    if explicit_false:
        for event in events:
            call = event["candidates"][0]["content"]["parts"][0].get("functionCall", {})
            if "partialArgs" in call and "willContinue" not in call:
                call["willContinue"] = False
    turn = run(events, provider="gemini")
    assert [(c.name, c.arguments) for c in turn.calls] == [("a", {"x": "one"}), ("b", {"y": "two"})]


def test_rule1_never_merges_by_last_call_with_same_name() -> None:
    calls = [
        b.Call(id="call_1", name="search", arguments='{"query":"a"}', cuts=(5,)),
        b.Call(id="call_2", name="search", arguments='{"query":"b"}', cuts=(5,)),
    ]
    for provider in TEXT_VENDORS:
        turn = run(make(provider, calls), provider=provider)
        assert [c.arguments for c in turn.calls] == [{"query": "a"}, {"query": "b"}], provider


# ============================================================================================
# Rule 2: first write wins
# ============================================================================================


def test_rule2_chat_empty_id_and_name_on_later_chunks_never_overwrite() -> None:
    turn = run(b.openai_chat([
        b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(3, 9, 14)),
    ], identity="blank"), provider="openai-chat")
    assert [(c.id, c.name, c.raw_arguments, c.state) for c in turn.calls] == [
        ("call_1", "search", SEARCH, CallState.committed)]


def test_rule2_chat_id_and_name_repeated_on_every_chunk_are_not_concatenated() -> None:
    turn = run(b.openai_chat([
        b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(3, 9, 14)),
    ], identity="every"), provider="openai-chat")
    assert [(c.id, c.name, c.raw_arguments) for c in turn.calls] == [("call_1", "search", SEARCH)]


def test_rule2_chat_a_second_name_for_a_known_call_is_ignored() -> None:
    events = b.openai_chat([b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(5,))])
    events.insert(-1, {**events[0], "choices": [{"index": 0, "finish_reason": None, "delta": {"tool_calls": [
        {"index": 0, "id": "call_1", "function": {"name": "delete_everything", "arguments": ""}}]}}]})
    turn = run(events, provider="openai-chat")
    assert [(c.id, c.name, c.raw_arguments) for c in turn.calls] == [("call_1", "search", SEARCH)]


def test_rule2_responses_done_item_cannot_rename_a_call() -> None:
    events = b.openai_responses([b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(5,))])
    for event in events:
        if event["type"] == "response.output_item.done":
            event["item"] = {**event["item"], "call_id": "call_other", "name": "delete_everything"}
    turn = run(events, provider="openai-responses")
    assert [(c.id, c.name) for c in turn.calls] == [("call_1", "search")]


def test_rule2_responses_empty_name_on_added_then_real_name_fills_it() -> None:
    events = b.openai_responses([b.Call(id="call_1", name="search", arguments=SEARCH)])
    events[2]["item"] = {**events[2]["item"], "name": "", "call_id": ""}
    turn = run(events, provider="openai-responses")
    assert [(c.id, c.name, c.state) for c in turn.calls] == [("call_1", "search", CallState.committed)]


# ============================================================================================
# Rule 3: arguments are an opaque string
# ============================================================================================


@pytest.mark.parametrize("provider", TEXT_VENDORS)
def test_rule3_raw_arguments_are_the_exact_concatenation(provider: str) -> None:
    text = ' \n{"path": "/tmp/ä ✓", "n": 1}\t '
    turn = run(make(provider, [
        b.Call(id="call_1", name="write", arguments=text, cuts=range(0, 40, 3)),
    ]), provider=provider)
    [call] = turn.calls
    assert call.raw_arguments == text  # never trimmed
    assert call.arguments == {"path": "/tmp/ä ✓", "n": 1}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule3_nothing_is_decided_while_the_call_is_open(provider: str) -> None:
    """A fragment that is a complete JSON object on its own decides nothing before the end."""
    calls = [
        b.Call(id="call_1", name="search", arguments='{"query":"a"}{"x":1', cuts=(13,)),
    ] if provider == "openai-chat" else [
        b.Call(id="call_1", name="search", arguments='{"query":"a"}', cuts=(13,))]
    assembler, seen = record_events(provider=provider)
    for event in make(provider, calls, ending="none"):
        assembler.feed(event)
    assert not [e for e in seen if isinstance(e, (CallCommitted, CallRejected))]


def test_rule3_anthropic_initial_empty_input_placeholder_is_ignored() -> None:
    turn = run(b.anthropic([b.Call(id="toolu_1", name="add", arguments=ADD, cuts=(1, 5))]), provider="anthropic")
    assert turn.calls[0].raw_arguments == ADD  # not "{}" + ADD
    assert turn.calls[0].arguments == {"a": 2, "b": 3}


def test_rule3_anthropic_complete_input_in_content_block_start() -> None:
    events = b.anthropic([
        b.Call(id="toolu_1", name="roll", arguments=""),
        b.Call(id="toolu_2", name="add", arguments=ADD, cuts=(3,)),
    ], start_inputs={0: {"player": "player1"}})
    turn = run(events, provider="anthropic")
    assert [(c.id, c.arguments, c.state) for c in turn.calls] == [
        ("toolu_1", {"player": "player1"}, CallState.committed), ("toolu_2", {"a": 2, "b": 3}, CallState.committed)]
    assert json.loads(turn.calls[0].raw_arguments) == {"player": "player1"}


def test_rule3_anthropic_complete_tool_use_in_message_start() -> None:
    events = b.anthropic([b.Call(id="toolu_1", name="roll", arguments='{"player":"player2"}')], in_message_start=True)
    turn = run(events, provider="anthropic")
    assert [(c.id, c.name, c.arguments, c.state) for c in turn.calls] == [
        ("toolu_1", "roll", {"player": "player2"}, CallState.committed)]


def test_rule3_responses_without_deltas_takes_the_done_event_arguments() -> None:
    events = b.openai_responses([
        b.Call(id="call_1", name="search", arguments=SEARCH),
        b.Call(id="call_2", name="add", arguments=ADD),
    ], deltas=False)
    turn = run(events, provider="openai-responses")
    assert [(c.raw_arguments, c.state) for c in turn.calls] == [(SEARCH, CallState.committed),
                                                                 (ADD, CallState.committed)]


def test_rule3_responses_only_output_item_done_carries_arguments() -> None:
    events = b.openai_responses([
        b.Call(id="call_1", name="search", arguments=SEARCH),
    ], deltas=False, arguments_done_event=False)
    turn = run(events, provider="openai-responses")
    assert [(c.raw_arguments, c.state) for c in turn.calls] == [(SEARCH, CallState.committed)]


def test_rule3_responses_done_event_contradicting_deltas_is_upstream_error() -> None:
    calls = [
        b.Call(id="call_1", name="search", arguments=SEARCH, cuts=(5, 12)),
        b.Call(id="call_2", name="add", arguments=ADD, cuts=(3,)),
    ]
    events = b.openai_responses(calls, done_arguments={0: '{"query":"something else"}'})
    turn = run(events, provider="openai-responses")
    assert states(turn) == [("call_1", CallState.failed, Reason.upstream_error),
                            ("call_2", CallState.committed, None)]


def test_rule3_gemini_structured_args_are_the_value() -> None:
    args = {"n": 1.5, "s": "ünï", "deep": {"list": [1, None, True]}}
    turn = run(b.gemini([b.Call(id="g1", name="f", arguments=json.dumps(args))], with_ids=True), provider="gemini")
    [call] = turn.calls
    assert call.arguments == args
    assert json.loads(call.raw_arguments) == args


# ============================================================================================
# Rule 4: completion needs proof
# ============================================================================================

COMPLETION_TABLE: list[tuple[str, str, Reason | None]] = [
    ("openai-chat", "tool_calls", None),
    ("openai-chat", "stop", None),
    ("openai-chat", "function_call", None),
    ("openai-chat", "length", Reason.stream_truncated),
    ("openai-chat", "content_filter", Reason.upstream_error),
    ("openai-chat", "insufficient_system_resource", Reason.upstream_error),
    ("anthropic", "tool_use", None),
    ("anthropic", "end_turn", None),
    ("anthropic", "stop_sequence", None),
    ("anthropic", "pause_turn", None),
    ("anthropic", "max_tokens", Reason.stream_truncated),
    ("anthropic", "model_context_window_exceeded", Reason.stream_truncated),
    ("anthropic", "refusal", Reason.upstream_error),
    ("openai-responses", "completed", None),
    ("openai-responses", "incomplete", Reason.stream_truncated),
    ("openai-responses", "failed", Reason.upstream_error),
    ("openai-responses", "cancelled", Reason.upstream_error),
    ("gemini", "STOP", None),
    ("gemini", "MAX_TOKENS", Reason.stream_truncated),
    ("gemini", "SAFETY", Reason.upstream_error),
    ("gemini", "RECITATION", Reason.upstream_error),
    ("gemini", "MALFORMED_FUNCTION_CALL", Reason.upstream_error),
    ("gemini", "OTHER", Reason.upstream_error),
    ("gemini", "BLOCKLIST", Reason.upstream_error),
    ("gemini", "PROHIBITED_CONTENT", Reason.upstream_error),
    ("gemini", "UNEXPECTED_TOOL_CALL", Reason.upstream_error),
    ("gemini", "FINISH_REASON_UNSPECIFIED", Reason.upstream_error),
]


@pytest.mark.parametrize("mode", ["strict", "lenient"])
@pytest.mark.parametrize(("provider", "finish", "reason"), COMPLETION_TABLE)
def test_rule4_completion_table(provider: str, finish: str, reason: Reason | None, mode: str) -> None:
    events = make(provider, [b.Call(id="call_1", name="add", arguments=ADD, cuts=(3,))], finish_reason=finish)
    turn = run(events, provider=provider, config=AssembleConfig(mode=mode))  # type: ignore[arg-type]
    [call] = turn.calls
    assert turn.finish_reason == finish  # verbatim
    if reason is None:
        assert (call.state, turn.complete) == (CallState.committed, True)
    else:
        assert (call.state, call.reason, turn.complete) == (CallState.failed, reason, False)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule4_parsable_prefix_then_cut_does_not_commit(provider: str) -> None:
    """``{"query":"a"}`` parses, but ``,"limit":10}`` was still to come: not proof."""
    prefix = [b.Call(id="call_1", name="search", arguments='{"query":"a"}', cuts=(9,))]
    for ending, transport in (("none", True), ("finish", False), ("truncated", True), ("error", True)):
        turn = run(make(provider, prefix, ending=ending), provider=provider, transport_complete=transport)
        [call] = turn.calls
        assert call.state is CallState.failed, (ending, transport)
        assert call.arguments is None
        assert call.reason in (Reason.stream_truncated, Reason.upstream_error)
        assert turn.complete is False
    # and in lenient mode a dropped connection is still no proof
    turn = run(make(provider, prefix, ending="none"), provider=provider, transport_complete=False, config=lenient())
    assert (turn.calls[0].state, turn.calls[0].reason) == (CallState.failed, Reason.stream_truncated)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule4_missing_finish_signal_is_stream_truncated(provider: str) -> None:
    turn = run(make(provider, [
        b.Call(id="call_1", name="add", arguments=ADD, cuts=(3,)),
    ], ending="none"), provider=provider)
    assert states(turn) == [("call_1", CallState.failed, Reason.stream_truncated)]
    assert (turn.finish_reason, turn.complete) == (None, False)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule4_lenient_clean_end_without_finish_reason_commits(provider: str) -> None:
    turn = run(make(provider, [
        b.Call(id="call_1", name="add", arguments=ADD, cuts=(3,)),
    ], ending="none"), provider=provider, config=lenient())
    assert states(turn) == [("call_1", CallState.committed, None)]
    assert turn.complete is True


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule4_dropped_connection_after_the_finish_signal_is_truncated(provider: str) -> None:
    error = ConnectionResetError("peer reset")
    assembler = Assembler(provider=provider)
    for event in make(provider, [b.Call(id="call_1", name="add", arguments=ADD, cuts=(3,))]):
        assembler.feed(event)
    turn = assembler.finish(transport_complete=False, error=error)
    assert states(turn) == [("call_1", CallState.failed, Reason.stream_truncated)]
    assert turn.complete is False
    assert turn.error is error


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule4_error_event_is_upstream_error(provider: str) -> None:
    turn = run(make(provider, [
        b.Call(id="call_1", name="add", arguments=ADD, cuts=(3,)),
    ], ending="error"), provider=provider)
    assert states(turn) == [("call_1", CallState.failed, Reason.upstream_error)]


def test_rule4_chat_content_filter_then_stop_is_still_upstream_error() -> None:
    events = b.openai_chat([b.Call(id="call_1", name="add", arguments=ADD)], finish_reason="content_filter")
    events.append({**events[0], "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    turn = run(events, provider="openai-chat")
    assert states(turn) == [("call_1", CallState.failed, Reason.upstream_error)]


def test_rule4_responses_content_filter_incomplete_is_upstream_error_even_if_completed_follows() -> None:
    events = b.openai_responses([
        b.Call(id="call_1", name="add", arguments=ADD),
    ], ending="truncated", incomplete_reason="content_filter")
    assert run(events, provider="openai-responses").calls[0].reason is Reason.upstream_error
    events += b.openai_responses([])[-1:]  # a response.completed after it
    turn = run(events, provider="openai-responses")
    assert states(turn) == [("call_1", CallState.failed, Reason.upstream_error)]


def test_rule4_anthropic_message_delta_without_message_stop_is_no_proof() -> None:
    turn = run(b.anthropic([b.Call(id="toolu_1", name="add", arguments=ADD)], message_stop=False), provider="anthropic")
    assert states(turn) == [("toolu_1", CallState.failed, Reason.stream_truncated)]


def test_rule4_anthropic_message_stop_without_stop_reason_is_no_proof() -> None:
    events = [e for e in b.anthropic([b.Call(id="toolu_1", name="add", arguments=ADD)]) if e["type"] != "message_delta"]
    turn = run(events, provider="anthropic")
    assert turn.calls[0].state is CallState.failed


def test_rule4_gemini_prompt_block_is_upstream_error() -> None:
    events = b.gemini([b.Call(id="g1", name="add", arguments=ADD)], ending="none", with_ids=True)
    events.append({"promptFeedback": {"blockReason": "SAFETY"}})
    events += b.gemini([])  # then a STOP
    turn = run(events, provider="gemini")
    assert states(turn) == [("g1", CallState.failed, Reason.upstream_error)]


def test_rule4_turn_complete_and_finish_reason_none_when_no_signal() -> None:
    turn = run(b.openai_chat([], ending="none"), provider="openai-chat")
    assert (turn.calls, turn.finish_reason, turn.complete) == ((), None, False)
    turn = run(b.openai_chat([]), provider="openai-chat")
    assert (turn.finish_reason, turn.complete) == ("tool_calls", True)


# ============================================================================================
# Rule 5: finalize once
# ============================================================================================


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


SEARCH_SCHEMA = {
    "type": "object",
    "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "maximum": 50}},
    "required": ["query"],
    "additionalProperties": False,
}


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
        turn = run(b.anthropic([
            b.Call(id="t1", name="search", arguments='{"limit":"x"}'),
        ]), provider="anthropic", tools=tools)
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
    loose = run(b.openai_chat([
        b.Call(id="c1", name="f", arguments=dup),
    ]), provider="openai-chat", tools=[ToolSpec("f", strict=False)])
    assert loose.calls[0].state is CallState.committed
    tight = run(b.openai_chat([
        b.Call(id="c1", name="f", arguments=dup),
    ]), provider="openai-chat", tools=[ToolSpec("f", strict=True)],
                config=lenient())
    assert tight.calls[0].reason is Reason.invalid_json


# ============================================================================================
# Rule 6: no repair
# ============================================================================================

BROKEN = ['{"path":"/tmp/a', '{"path":"/tmp/a"', '{"a":1,}', "{'a': 1}", '{"a":1', '{"a": tru}', '{a:1}']


@pytest.mark.parametrize("text", BROKEN)
@pytest.mark.parametrize("provider", TEXT_VENDORS)
def test_rule6_half_json_is_a_failed_call_not_a_guess(provider: str, text: str) -> None:
    turn = run(make(provider, [b.Call(id="call_1", name="write", arguments=text, cuts=(3,))]), provider=provider)
    [call] = turn.calls
    assert (call.state, call.reason, call.arguments) == (CallState.failed, Reason.invalid_json, None)
    assert call.raw_arguments == text


# ============================================================================================
# Rule 7: duplicates
# ============================================================================================


@pytest.mark.parametrize("copies", [2, 3])
def test_rule7_gpt41_nano_resent_arguments_commit_once(copies: int) -> None:
    text = ADD * copies
    turn = run(b.openai_chat([
        b.Call(id="call_1", name="add", arguments=text, cuts=range(2, len(text), 4)),
    ]), provider="openai-chat")
    assert len(turn.calls) == 1
    [call] = turn.calls
    assert (call.state, call.arguments, call.raw_arguments) == (CallState.committed, {"a": 2, "b": 3}, text)
    assert turn.error_results() == []


@pytest.mark.parametrize("text", ['{"a":1}{"a":2}', '{"a":1}{"a": 1}'])
def test_rule7_chat_concatenated_objects_that_differ_do_not_commit(text: str) -> None:
    turn = run(b.openai_chat([b.Call(id="call_1", name="f", arguments=text)]), provider="openai-chat")
    assert states(turn) == [("call_1", CallState.failed, Reason.duplicate_conflict)]
    assert len(turn.error_results()) == 1


@pytest.mark.parametrize("text", ["[1][1]", '{"a":1}{"a":1}x', '"s""s"'])
def test_rule7_chat_only_objects_are_deduplicated(text: str) -> None:
    turn = run(b.openai_chat([b.Call(id="call_1", name="f", arguments=text)]), provider="openai-chat")
    assert turn.calls[0].state is CallState.failed
    assert turn.calls[0].reason is Reason.invalid_json


@pytest.mark.parametrize("provider", ["openai-responses", "anthropic"])
def test_rule7_concatenated_objects_are_only_a_chat_quirk(provider: str) -> None:
    turn = run(make(provider, [b.Call(id="call_1", name="add", arguments=ADD + ADD)]), provider=provider)
    assert states(turn) == [("call_1", CallState.failed, Reason.invalid_json)]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule7_same_id_resent_with_same_arguments_is_one_call(provider: str) -> None:
    calls = [
        b.Call(id="call_1", name="add", arguments=ADD, cuts=(3,)),
        b.Call(id="call_1", name="add", arguments=ADD, cuts=(5,)),
        b.Call(id="call_2", name="add", arguments='{"a":0,"b":0}'),
    ]
    turn = run(make(provider, calls), provider=provider)
    assert [(c.id, c.state) for c in turn.calls] == [("call_1", CallState.committed), ("call_2", CallState.committed)]
    assert turn.calls[0].arguments == {"a": 2, "b": 3}
    assert turn.error_results() == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule7_same_id_resent_with_different_arguments_is_duplicate_conflict(provider: str) -> None:
    calls = [
        b.Call(id="call_1", name="add", arguments=ADD),
        b.Call(id="call_1", name="add", arguments='{"a":9,"b":9}'),
        b.Call(id="call_2", name="add", arguments=ADD),
    ]
    turn = run(make(provider, calls), provider=provider)
    assert [(c.id, c.state, c.reason) for c in turn.calls] == [
        ("call_1", CallState.failed, Reason.duplicate_conflict), ("call_2", CallState.committed, None)]
    assert [r.tool_call_id for r in turn.error_results()] == ["call_1"]  # one result per id


def test_rule7_same_id_resent_with_another_name_is_duplicate_conflict() -> None:
    turn = run(b.anthropic([
        b.Call(id="toolu_1", name="add", arguments=ADD),
        b.Call(id="toolu_1", name="sub", arguments=ADD),
    ]), provider="anthropic")
    assert states(turn) == [("toolu_1", CallState.failed, Reason.duplicate_conflict)]
    assert len(turn.error_results()) == 1


# ============================================================================================
# Rule 8: bounds
# ============================================================================================


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule8_size_is_counted_in_utf8_bytes(provider: str) -> None:
    text = json.dumps({"s": "é" * 30}, ensure_ascii=False)  # 38 code points, 68 bytes
    assert len(text) < 50 < len(text.encode("utf-8"))
    config = AssembleConfig(max_tool_argument_bytes=50)
    turn = run(make(provider, [
        b.Call(id="call_1", name="f", arguments=text, cuts=(5, 20)),
    ]), provider=provider, config=config)
    assert states(turn) == [("call_1", CallState.failed, Reason.arguments_exceed_max_bytes)]
    exact = AssembleConfig(max_tool_argument_bytes=len(text.encode("utf-8")))
    turn = run(make(provider, [
        b.Call(id="call_1", name="f", arguments=text, cuts=(5, 20)),
    ]), provider=provider, config=exact)
    assert states(turn) == [("call_1", CallState.committed, None)]


@pytest.mark.parametrize("provider", TEXT_VENDORS)
def test_rule8_overflow_fails_at_once_releases_the_buffer_and_drops_later_fragments(provider: str) -> None:
    text = json.dumps({"blob": "y" * 400})
    config = AssembleConfig(max_tool_argument_bytes=100)
    assembler, seen = record_events(provider=provider, config=config)
    events = make(provider, [b.Call(id="call_1", name="f", arguments=text, cuts=range(10, 400, 10))], ending="none")
    rejected_at = None
    for position, event in enumerate(events):
        assembler.feed(event)
        if rejected_at is None and any(isinstance(e, CallRejected) for e in seen):
            rejected_at = position
    assert rejected_at is not None and rejected_at < len(events) - 2, "failed while streaming, not at the end"
    after = seen[next(i for i, e in enumerate(seen) if isinstance(e, CallRejected)):]
    assert not [e for e in after if isinstance(e, ArgumentsDelta)], "later fragments are dropped"
    assert max(e.total_bytes for e in seen if isinstance(e, ArgumentsDelta)) <= 100
    turn = assembler.finish()
    [call] = turn.calls
    assert call.reason is Reason.arguments_exceed_max_bytes
    assert call.raw_arguments is None or len(call.raw_arguments.encode()) <= 100


def test_rule8_responses_done_text_and_anthropic_start_input_are_bounded_too() -> None:
    config = AssembleConfig(max_tool_argument_bytes=64)
    big = json.dumps({"blob": "z" * 200})
    turn = run(b.openai_responses([
        b.Call(id="c1", name="f", arguments=big),
    ], deltas=False), provider="openai-responses", config=config)
    assert turn.calls[0].reason is Reason.arguments_exceed_max_bytes
    turn = run(b.anthropic([
        b.Call(id="t1", name="f", arguments=""),
    ], start_inputs={0: json.loads(big)}), provider="anthropic", config=config)
    assert turn.calls[0].reason is Reason.arguments_exceed_max_bytes


def test_rule8_gemini_partial_args_are_counted_like_structured_args() -> None:
    """The same arguments as ``args`` or as ``partialArgs`` meet the same byte cap."""
    text = '{"location":"San Francisco","unit":"celsius"}'  # 45 bytes of JSON, 20 bytes of values
    config = AssembleConfig(max_tool_argument_bytes=30)
    whole = run(b.gemini([b.Call(id="g1", name="w", arguments=text)], with_ids=True), provider="gemini", config=config)
    streamed = run(b.gemini([
        b.Call(id="g1", name="w", arguments=text, cuts=(3,)),
    ], mode="partial", with_ids=True), provider="gemini",
                   config=config)
    assert whole.calls[0].reason is Reason.arguments_exceed_max_bytes
    assert streamed.calls[0].reason is Reason.arguments_exceed_max_bytes


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule8_too_many_tool_calls_counted_over_the_whole_stream(provider: str) -> None:
    calls = [b.Call(id=f"call_{n}", name="add", arguments=ADD) for n in range(4)]
    turn = run(make(provider, calls), provider=provider, config=AssembleConfig(max_tool_calls_in_flight_assemble=2))
    assert states(turn) == [("call_0", CallState.committed, None), ("call_1", CallState.committed, None),
                            ("call_2", CallState.failed, Reason.too_many_tool_calls),
                            ("call_3", CallState.failed, Reason.too_many_tool_calls)]
    assert [r.tool_call_id for r in turn.error_results()] == ["call_2", "call_3"]


@pytest.mark.parametrize("text", ["[1,2]", '"just text"', "3.5", "null", "true"])
@pytest.mark.parametrize("provider", TEXT_VENDORS)
def test_rule8_arguments_must_be_object_false_commits_any_json_value(provider: str, text: str) -> None:
    config = AssembleConfig(arguments_must_be_object=False)
    turn = run(make(provider, [b.Call(id="call_1", name="f", arguments=text)]), provider=provider, config=config)
    assert (turn.calls[0].state, turn.calls[0].arguments) == (CallState.committed, json.loads(text))


@pytest.mark.parametrize("provider", TEXT_VENDORS)
def test_rule8_drop_with_protocol_repair_moves_invalid_json_to_dropped(provider: str) -> None:
    config = AssembleConfig(on_invalid_json="drop_with_protocol_repair")
    calls = [
        b.Call(id="call_1", name="f", arguments='{"a":'),
        b.Call(id="call_2", name="add", arguments=ADD),
        b.Call(id="call_3", name="f", arguments="[1]"),
    ]
    turn = run(make(provider, calls), provider=provider, config=config)
    assert [(c.id, c.reason) for c in turn.dropped] == [("call_1", Reason.invalid_json)]
    assert [c.id for c in turn.calls] == ["call_2", "call_3"]
    assert "call_1" not in [r.tool_call_id for r in turn.error_results()]
    # a failure other than invalid_json is still rejected and paired
    assert [(r.tool_call_id, r.reason) for r in turn.error_results()] == [("call_3", Reason.arguments_not_object)]


def test_rule8_overflow_with_drop_with_protocol_repair_goes_to_dropped() -> None:
    config = AssembleConfig(max_tool_argument_bytes=16, on_args_overflow="drop_with_protocol_repair")
    turn = run(b.anthropic([
        b.Call(id="t1", name="f", arguments=json.dumps({"x": "y" * 40}), cuts=(5,)),
        b.Call(id="t2", name="add", arguments=ADD),
    ]),
               provider="anthropic", config=config)
    assert [(c.id, c.reason) for c in turn.dropped] == [("t1", Reason.arguments_exceed_max_bytes)]
    assert states(turn) == [("t2", CallState.committed, None)]
    assert turn.error_results() == []


def test_rule8_drop_with_protocol_repair_does_not_drop_truncated_calls() -> None:
    config = AssembleConfig(on_invalid_json="drop_with_protocol_repair")
    turn = run(b.openai_chat([
        b.Call(id="call_1", name="f", arguments='{"a":'),
    ], ending="none"), provider="openai-chat", config=config)
    assert turn.dropped == ()
    assert states(turn) == [("call_1", CallState.failed, Reason.stream_truncated)]


# ============================================================================================
# Rule 9: pairing
# ============================================================================================


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


# ============================================================================================
# Rule 10: pipelining
# ============================================================================================


def _commit_points(provider: str, events: list[Any], **kwargs: Any) -> tuple[dict[str, int], Turn]:
    """For each call id, the position of the event after which it was committed (-1: at finish)."""
    assembler, seen = record_events(provider=provider, **kwargs)
    points: dict[str, int] = {}
    for position, event in enumerate(events):
        assembler.feed(event)
        for ev in seen:
            if isinstance(ev, CallCommitted) and ev.call.id not in points:
                points[ev.call.id] = position
    turn = assembler.finish()
    for ev in seen:
        if isinstance(ev, CallCommitted) and ev.call.id not in points:
            points[ev.call.id] = -1
    return points, turn


PIPELINE = AssembleConfig(execute_before_stream_end=True, allow_pipelined_execute=["add", "search"])


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule10_no_early_commit_without_the_flag(provider: str) -> None:
    config = AssembleConfig(allow_pipelined_execute=["add"])
    points, _ = _commit_points(provider, make(provider, [
        b.Call(id="c1", name="add", arguments=ADD),
        b.Call(id="c2", name="add", arguments=ADD),
    ]), config=config)
    assert points == {"c1": -1, "c2": -1}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rule10_no_early_commit_for_unlisted_tools(provider: str) -> None:
    config = AssembleConfig(execute_before_stream_end=True, allow_pipelined_execute=["other"])
    points, _ = _commit_points(provider, make(provider, [
        b.Call(id="c1", name="add", arguments=ADD),
        b.Call(id="c2", name="add", arguments=ADD),
    ]), config=config)
    assert points == {"c1": -1, "c2": -1}


def test_rule10_never_for_openai_chat() -> None:
    points, turn = _commit_points("openai-chat", b.openai_chat([
        b.Call(id="c1", name="add", arguments=ADD),
        b.Call(id="c2", name="add", arguments=ADD),
    ]),
                                  config=PIPELINE, tools=[ToolSpec("add", pipelined=True)])
    assert points == {"c1": -1, "c2": -1}
    assert len(turn.committed) == 2


def test_rule10_anthropic_commits_after_the_next_block_starts_or_stop_reason_tool_use() -> None:
    events = b.anthropic([
        b.Call(id="t1", name="add", arguments=ADD, cuts=(3,)),
        b.Call(id="t2", name="search", arguments=SEARCH, cuts=(4,)),
    ])
    types = [e["type"] for e in events]
    points, turn = _commit_points("anthropic", events, config=PIPELINE)
    first_stop = types.index("content_block_stop")
    assert points["t1"] == first_stop + 1, "not at its own block stop: at the next block start"
    assert events[points["t1"]]["type"] == "content_block_start"
    assert events[points["t2"]]["type"] == "message_delta"  # stop_reason tool_use, before message_stop
    assert len(turn.committed) == 2 and turn.complete


def test_rule10_toolspec_pipelined_is_the_same_as_the_allow_list() -> None:
    events = b.anthropic([b.Call(id="t1", name="add", arguments=ADD), b.Call(id="t2", name="add", arguments=ADD)])
    config = AssembleConfig(execute_before_stream_end=True)
    points, _ = _commit_points("anthropic", events, config=config, tools=[ToolSpec("add", pipelined=True)])
    assert points["t1"] != -1 and points["t2"] != -1


def test_rule10_anthropic_last_block_waits_when_the_stop_is_not_tool_use() -> None:
    events = b.anthropic([b.Call(id="t1", name="add", arguments=ADD)], ending="truncated")
    points, turn = _commit_points("anthropic", events, config=PIPELINE)
    assert points == {}
    assert states(turn) == [("t1", CallState.failed, Reason.stream_truncated)]


def test_rule10_responses_commit_at_the_done_events() -> None:
    events = b.openai_responses([
        b.Call(id="c1", name="add", arguments=ADD, cuts=(3,)),
        b.Call(id="c2", name="search", arguments=SEARCH),
    ])
    points, _ = _commit_points("openai-responses", events, config=PIPELINE)
    assert events[points["c1"]]["type"] == "response.function_call_arguments.done"
    assert points["c1"] < points["c2"] < len(events) - 1


def test_rule10_gemini_commits_at_the_end_of_each_call() -> None:
    events = b.gemini([
        b.Call(id="g1", name="add", arguments=ADD, cuts=(1,)),
        b.Call(id="g2", name="search", arguments=SEARCH, cuts=(2,)),
    ], mode="partial", with_ids=True)
    points, _ = _commit_points("gemini", events, config=PIPELINE)
    assert events[points["g1"]]["candidates"][0]["content"]["parts"][0]["functionCall"] == {}
    assert points["g1"] < points["g2"] < len(events) - 1
    whole = b.gemini([
        b.Call(id="g1", name="add", arguments=ADD),
        b.Call(id="g2", name="add", arguments=ADD),
    ], with_ids=True)
    points, _ = _commit_points("gemini", whole, config=PIPELINE)
    assert (points["g1"], points["g2"]) == (0, 1)


def test_rule10_gemini_no_early_commit_when_its_own_chunk_reports_an_abnormal_stop() -> None:
    """Gemini 2.5 sends the parts and the finishReason in one chunk: the verdict is in hand."""
    events = b.gemini([
        b.Call(id="g1", name="add", arguments=ADD),
    ], together=True, finish_with_calls=True, finish_reason="SAFETY",
                      with_ids=True)
    assert len(events) == 1
    points, turn = _commit_points("gemini", events, config=PIPELINE)
    assert points == {}, "committed a call from a chunk that says SAFETY"
    assert states(turn) == [("g1", CallState.failed, Reason.upstream_error)]


def test_rule10_an_early_commit_stands_when_the_stream_is_cut_later() -> None:
    events = b.anthropic([
        b.Call(id="t1", name="add", arguments=ADD),
        b.Call(id="t2", name="add", arguments=ADD, cuts=(3,)),
    ], ending="none")[:-2]
    _, turn = _commit_points("anthropic", events, config=PIPELINE)
    assert states(turn) == [("t1", CallState.committed, None), ("t2", CallState.failed, Reason.stream_truncated)]
    assert turn.complete is False


def test_rule10_no_early_commit_after_an_error_was_seen() -> None:
    events = b.openai_responses([b.Call(id="c1", name="add", arguments=ADD)])
    events.insert(3, {"type": "error", "code": "server_error", "message": "boom", "param": None,
                      "sequence_number": 99})
    points, turn = _commit_points("openai-responses", events, config=PIPELINE)
    assert points == {}
    assert turn.calls[0].reason is Reason.upstream_error


# ============================================================================================
# Rule 11: server-side tools
# ============================================================================================


def test_rule11_anthropic_server_and_mcp_tool_blocks_are_server_calls() -> None:
    calls = [b.Call(id="srvtoolu_1", name="web_search", arguments='{"query":"x"}', cuts=(4,)),
             b.Call(id="mcptoolu_1", name="echo", arguments='{"m":"hi"}'),
             b.Call(id="toolu_1", name="add", arguments=ADD)]
    events = b.anthropic(calls, block_types=["server_tool_use", "mcp_tool_use", "tool_use"])
    turn = run(events, provider="anthropic", tools={"add": None})
    assert [c.id for c in turn.calls] == ["toolu_1"]
    assert [(c.id, c.kind, c.state is CallState.committed) for c in turn.server_calls] == [
        ("srvtoolu_1", "server", False), ("mcptoolu_1", "server", False)]
    assert turn.server_calls[0].raw_arguments == '{"query":"x"}'
    assert [r.tool_call_id for r in turn.error_results()] == []
    for sdk_turn in [run(b.to_sdk("anthropic", events), tools={"add": None})]:
        assert [c.id for c in sdk_turn.server_calls] == ["srvtoolu_1", "mcptoolu_1"]


def test_rule11_server_calls_are_untouched_by_cancel_and_never_paired() -> None:
    events = b.anthropic([
        b.Call(id="srvtoolu_1", name="web_search", arguments='{"query":"x"}'),
        b.Call(id="toolu_1", name="add", arguments=ADD, cuts=(3,)),
    ], block_types=["server_tool_use", "tool_use"])
    assembler = Assembler(provider="anthropic")
    for event in events[:6]:
        assembler.feed(event)
    assembler.cancel()
    turn = assembler.finish()
    assert [(c.id, c.state) for c in turn.calls] == [("toolu_1", CallState.cancelled)]
    [server] = turn.server_calls
    assert server.state is not CallState.cancelled and server.reason is None
    assert [r.tool_call_id for r in turn.error_results()] == ["toolu_1"]


def test_rule11_responses_builtin_items_are_server_calls() -> None:
    events = b.openai_responses([b.Call(id="call_1", name="add", arguments=ADD)], first_output_index=1, ending="none")
    events[2:2] = b.responses_server_item(
        {"id": "ws_1", "type": "web_search_call", "action": {"type": "search", "query": "x"}}, 0)
    events += b.openai_responses([])[-1:]
    turn = run(events, provider="openai-responses")
    assert [(c.id, c.state) for c in turn.calls] == [("call_1", CallState.committed)]
    assert [(c.id, c.kind) for c in turn.server_calls] == [("ws_1", "server")]
    assert turn.error_results() == []


def test_rule11_responses_custom_tool_call_is_a_client_call_with_input_text() -> None:
    sql = "SELECT * FROM users WHERE age > 25"
    events = b.openai_responses([b.Call(id="call_1", name="sql", arguments=sql, cuts=(9, 20))], kinds=["custom"])
    turn = run(events, provider="openai-responses", tools={"sql": None})
    [call] = turn.calls
    assert (call.kind, call.state, call.arguments, call.raw_arguments) == (
        "custom", CallState.committed, {"input": sql}, sql)
    sdk_turn = run(b.to_sdk("openai-responses", events), tools={"sql": None})
    assert sdk_turn.calls[0].arguments == {"input": sql}


def test_rule11_custom_tool_call_follows_completion_and_registry_rules() -> None:
    events = b.openai_responses([
        b.Call(id="call_1", name="sql", arguments="SELECT 1"),
    ], kinds=["custom"], ending="truncated")
    assert run(events, provider="openai-responses").calls[0].reason is Reason.stream_truncated
    events = b.openai_responses([b.Call(id="call_1", name="sql", arguments="SELECT 1")], kinds=["custom"])
    assert run(events, provider="openai-responses", tools={"add": None}).calls[0].reason is Reason.unknown_tool


# ============================================================================================
# Rule 12: metrics
# ============================================================================================


@pytest.fixture
def otel_reader(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """An in-memory OpenTelemetry SDK reader wired to the core's meter for one test."""
    from opentelemetry import metrics as otel
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from toolstream_core import _metrics

    reader = InMemoryMetricReader()
    provider = MeterProvider(metric_readers=[reader])
    monkeypatch.setattr(otel, "get_meter", lambda name, *a, **k: provider.get_meter(name, *a, **k))
    # The core creates its instruments lazily on first use; make it create them again here.
    monkeypatch.setattr(_metrics.metrics, "_ready", False)
    monkeypatch.setattr(_metrics.metrics, "_instruments", {})
    yield reader
    provider.shutdown()


def _points(reader: Any) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                found.setdefault(metric.name, []).extend(metric.data.data_points)
    return found


def test_rule12_the_six_instruments_fire_with_provider_and_tool_labels(otel_reader: Any) -> None:
    config = AssembleConfig(max_tool_argument_bytes=64)
    run(b.openai_chat([b.Call(id="c1", name="add", arguments=ADD), b.Call(id="c2", name="parse", arguments='{"a":'),
                       b.Call(id="c3", name="big", arguments=json.dumps({"x": "y" * 99})),
                       b.Call(id="c4", name="nano", arguments=ADD + ADD)]), provider="openai-chat", config=config)
    run(b.anthropic([
        b.Call(id="t1", name="dup", arguments=ADD),
        b.Call(id="t1", name="dup", arguments='{"a":0}'),
    ]), provider="anthropic")
    points = _points(otel_reader)
    expected = {
        "tool_assemble_args_bytes": ("openai-chat", "add"),
        "tool_assemble_to_commit_seconds": ("openai-chat", "add"),
        "tool_assemble_invalid_json_total": ("openai-chat", "parse"),
        "tool_assemble_overflow_total": ("openai-chat", "big"),
        "tool_execute_rejected_not_committed_total": ("openai-chat", "parse"),
        "tool_assemble_duplicate_total": ("anthropic", "dup"),
    }
    for name, (provider, tool) in expected.items():
        assert name in points, f"{name} never recorded"
        labels = [dict(p.attributes) for p in points[name]]
        assert {"provider": provider, "tool_name": tool} in labels, (name, labels)
    nano = [dict(p.attributes) for p in points["tool_assemble_duplicate_total"]]
    assert {"provider": "openai-chat", "tool_name": "nano"} in nano
    sizes = {p.attributes["tool_name"]: p.sum for p in points["tool_assemble_args_bytes"]}
    assert sizes["add"] == len(ADD)


# ============================================================================================
# UI events, cancel, finish, AssemblerClosed, bad input
# ============================================================================================


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
        Assembler(provider="cohere")  # type: ignore[arg-type]


# ============================================================================================
# Linearity: no timing assertion, only a deadline a quadratic design would miss
# ============================================================================================


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail (not hang) if the block runs longer than ``seconds``: SIGALRM where available."""
    if hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread():
        def expire(signum: int, frame: Any) -> None:
            raise TimeoutError(f"took longer than {seconds} s: assembly is not linear")

        previous = signal.signal(signal.SIGALRM, expire)
        signal.alarm(seconds)
        try:
            yield
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
    else:  # pragma: no cover - non-POSIX
        yield


# 1-byte fragments cost one feed() each (a few microseconds of constant per-event work), so
# the byte count here is sized for the time budget; a quadratic buffer at 2 MiB would need
# ~10^12 byte copies and miss the deadline by orders of magnitude. Raise it with the env var.
_ONE_BYTE_MIB = float(os.environ.get("TOOLSTREAM_LINEAR_MIB", "2"))


def test_linear_one_byte_fragments() -> None:
    size = int(_ONE_BYTE_MIB * (1 << 20))
    config = AssembleConfig(max_tool_argument_bytes=size + 64)
    assembler = Assembler(provider="anthropic", config=config)
    head = b.anthropic([b.Call(id="t1", name="write", arguments="")], ending="none")[:2]
    tail = b.anthropic([], )[-2:]
    delta = {ch: {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta",
                                                                       "partial_json": ch}} for ch in '{}":dx'}
    with deadline(120):
        for event in head:
            assembler.feed(event)
        feed = assembler.feed
        for ch in '{"d":"':
            feed(delta[ch])
        filler = delta["x"]
        for _ in range(size - 8):
            feed(filler)
        for ch in '"}':
            feed(delta[ch])
        feed({"type": "content_block_stop", "index": 0})
        for event in tail:
            feed(event)
        turn = assembler.finish()
    [call] = turn.committed
    assert len(call.raw_arguments) == size
    assert len(call.arguments["d"]) == size - 8


def test_linear_16_mib_of_arguments_commit() -> None:
    size = 16 << 20
    body = '{"d":"' + "x" * (size - 8) + '"}'
    cuts = range(65536, size, 65536)
    config = AssembleConfig(max_tool_argument_bytes=size)
    with deadline(120):
        turn = run(b.openai_chat([
            b.Call(id="c1", name="write", arguments=body, cuts=cuts),
        ]), provider="openai-chat", config=config)
    [call] = turn.committed
    assert len(call.arguments["d"]) == size - 8


def test_snapshot_helper_sees_every_difference() -> None:
    base = run(b.openai_chat([b.Call(id="c1", name="add", arguments=ADD)]), provider="openai-chat")
    other = run(b.openai_chat([b.Call(id="c1", name="add", arguments='{"a":2,"b":4}')]), provider="openai-chat")
    assert snapshot(base) == snapshot(run(b.openai_chat([b.Call(id="c1", name="add", arguments=ADD, cuts=(1, 2))]),
                                                provider="openai-chat"))
    assert snapshot(base) != snapshot(other)
