"""The synthetic streams of ``builders.py`` are the vendors' shapes (no DESIGN rule of their own).

Every rule test (``test_rule_NN_*.py``) runs on built streams; these tests are why that says
something about real ones: each field path a builder emits was seen in a recording under
``tests/streams``, the paths all recordings share are emitted, the SDKs' own models accept
the built events, and ``snapshot`` sees every difference a rule test compares by. The vendor
emulator builds its events with the same constructors (``toolstream_core.testing._vendor_events``),
so its streams are held to the same recordings.
"""

from __future__ import annotations

import json
from typing import Any

import builders as b
import pytest
from builders import ADD, PROVIDERS, SEARCH, make, run, snapshot
from streams_util import find_streams_dir, load_stream
from toolstream_core.testing._routes import WIRES
from toolstream_core.testing._scenarios import build_script, scenario_rng

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


def _chat_pieces(event: dict[str, Any]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for choice in event.get("choices") or []:
        for item in (choice.get("delta") or {}).get("tool_calls") or []:
            out.append(("tool_call_open" if item.get("id") else "tool_call_fragment", item))
        if choice.get("finish_reason") and not (choice.get("delta") or {}).get("tool_calls"):
            out.append(("finish_choice", {k: None for k in choice}))
    return out


def _responses_pieces(event: dict[str, Any]) -> list[tuple[str, Any]]:
    kind = event.get("type", "")
    item = event.get("item") or {}
    if item.get("type") in ("function_call", "custom_tool_call"):
        return [(f"{kind}:{item['type']}", event)]
    if "arguments" in kind or "custom_tool_call_input" in kind:
        return [(kind, event)]
    if kind in ("response.completed", "response.created"):
        return [(kind, {"type": kind, "response": None, "status": event["response"].get("status")})]
    return []


def _anthropic_pieces(event: dict[str, Any]) -> list[tuple[str, Any]]:
    kind = event.get("type", "")
    sub = (event.get("content_block") or event.get("delta") or {}).get("type")
    if kind in ("content_block_start", "content_block_delta") and sub in ("tool_use", "input_json_delta",
                                                                           "mcp_tool_use"):
        return [(f"{kind}:{sub}", event)]
    if kind in ("message_delta", "message_stop", "content_block_stop", "message_start"):
        return [(kind, event)]
    return []


def _gemini_pieces(event: dict[str, Any]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
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


_PIECES = {"openai-chat": _chat_pieces, "openai-responses": _responses_pieces, "anthropic": _anthropic_pieces,
           "gemini": _gemini_pieces}


def _pieces(provider: str, event: Any) -> list[tuple[str, Any]]:
    """The parts of one event that carry tool-call shape, each with a kind to compare by."""
    return _PIECES[provider](event) if isinstance(event, dict) else []


# Fields the builders send that some recorded servers omit, and why that is fine.
_ALLOWED_EXTRA = {
    ("openai-responses", "response.function_call_arguments.done"): {"name"},  # required by the SDK type
    ("openai-responses", "response.completed"): {"status"},
    ("openai-responses", "response.created"): {"status"},
    ("gemini", "finish_candidate"): {"index"},  # Gemini API sends it; Vertex omits it
    ("gemini", "functionCall:args"): {"functionCall.id"},  # FunctionCall.id exists in the API; unrecorded
}


# Fields every recording has that the emulator does not send: its bytes are pinned by the
# recorded cassettes, and Anthropic's tool_use ``caller`` arrived after they were made.
_EMULATOR_OMITS: dict[tuple[str, str], set[str]] = {
    ("anthropic", "content_block_start:tool_use"): {"content_block.caller", "content_block.caller.type"},
}


def _assert_real_shapes(provider: str, streams: list[list[Any]],
                        omitted: dict[tuple[str, str], set[str]] | None = None) -> None:
    """Every field path ``streams`` emit was seen in a real stream, and every path all the real
    streams share is emitted (but those ``omitted`` per provider and kind), per kind of event."""
    root = find_streams_dir()
    real: dict[str, list[set[str]]] = {}
    for rel in _REAL[provider]:
        for event in load_stream(root / rel).data_events():
            for kind, piece in _pieces(provider, event):
                real.setdefault(kind, []).append(_paths(piece))
    compared = 0
    for events in streams:
        for event in events:
            for kind, piece in _pieces(provider, event):
                if kind not in real:
                    continue
                compared += 1
                built = _paths(piece)
                union = set().union(*real[kind])
                common = set.intersection(*real[kind])
                extra = built - union - _ALLOWED_EXTRA.get((provider, kind), set())
                assert not extra, f"{provider} {kind}: {sorted(extra)} sent that no real stream has"
                missing = common - built - (omitted or {}).get((provider, kind), set())
                assert not missing, f"{provider} {kind}: every real stream has {sorted(missing)}, this stream omits it"
    assert compared >= 4, f"too few comparable {provider} events ({compared})"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_builders_match_real_stream_shapes(provider: str) -> None:
    """Every field path a builder emits was seen in a real stream, and every path all the real
    streams share is emitted, per kind of event (so a built stream exercises the same code)."""
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
        built_streams.append(b.gemini([b.Call(id="c", name="getWeather", arguments='{"location":"Boston"}', cuts=(2,))],
                                      mode="partial"))
    _assert_real_shapes(provider, built_streams)


def _emulated(api: str, scenario: str) -> list[Any]:
    """The JSON events of the emulator's streamed answer for ``scenario`` (seed 0)."""
    script = build_script(scenario, scenario_rng(0, api, scenario))
    rendered = WIRES[api].render_stream(script, scenario_rng(0, api, scenario + "/wire"), "emulated-model", {})
    lines = (line for frame in rendered.frames for line in frame.decode().splitlines())
    return [json.loads(line[6:]) for line in lines if line.startswith("data: ") and line != "data: [DONE]"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_emulator_matches_real_stream_shapes(provider: str) -> None:
    """The emulator builds its events with the same constructors as the builders
    (``testing._vendor_events``); its streams meet the same recordings, but for the fields
    in ``_EMULATOR_OMITS``."""
    scenarios = ["single_call", "parallel_calls", *(["partial_args"] if provider == "gemini" else [])]
    _assert_real_shapes(provider, [_emulated(provider, name) for name in scenarios], _EMULATOR_OMITS)


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


def test_snapshot_helper_sees_every_difference() -> None:
    base = run(b.openai_chat([b.Call(id="c1", name="add", arguments=ADD)]), provider="openai-chat")
    other = run(b.openai_chat([b.Call(id="c1", name="add", arguments='{"a":2,"b":4}')]), provider="openai-chat")
    assert snapshot(base) == snapshot(run(b.openai_chat([b.Call(id="c1", name="add", arguments=ADD, cuts=(1, 2))]),
                                                provider="openai-chat"))
    assert snapshot(base) != snapshot(other)
