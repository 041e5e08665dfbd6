"""Bundled cassettes replayed offline through the real SDKs and the core Assembler.

Every cassette is played with ``record_mode="none"`` (no network) and the SDKs'
default vendor base URLs; the Turn must match the scenario's expectation, and
the agent's recorded follow-up request (every call paired) must replay too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from toolstream_core import Assembler, Turn
from toolstream_core.sse import EventDecoder
from toolstream_core.testing import API_NAMES, DROPPED_HEADER, SCENARIOS, TOOLS, Expectation
from toolstream_core.testing._clients import followup_sdk, stream_sdk
from toolstream_core.testing._drops import is_dropped_connection
from toolstream_core.testing._record_cassettes import MODELS, continue_paused
from toolstream_core.testing._recording import CASSETTE_DIR, cassette_path, replay_vcr, use_cassette
from toolstream_core.testing._scenarios import build_script, scenario_rng

SCENARIO_ARGS = {"single_call": build_script("single_call", scenario_rng(0, "anthropic",
                                                                          "single_call")
                                             ).calls[0].args_text}
CASES = [(api, name) for name, sc in SCENARIOS.items() for api in API_NAMES if api in sc.apis]
IDS = [f"{a}/{n}" for a, n in CASES]
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)


VENDOR_HOSTS = {"openai-chat": "api.openai.com", "openai-responses": "api.openai.com",
                "anthropic": "api.anthropic.com", "gemini": "generativelanguage.googleapis.com",
                "bedrock-converse": "bedrock-runtime.us-east-1.amazonaws.com",
                "ollama": "localhost", "cohere": "api.cohere.com"}
#: Where replay through an SDK must differ from the scenario's verdict, and why.
THROUGH_SDK: dict[tuple[str, str], Any] = {
    # The ollama client drops the id (and index) Ollama puts on each call, so a call
    # re-sent under its id reaches the core as a second, identical call; the wire
    # bytes keep the id (test_cassette_body_decoded_without_sdk sees one call).
    ("ollama", "resent_duplicate"): Expectation(committed=("get_weather", "get_weather")),
}


def _turn(api: str, events: list[Any], error: BaseException | None) -> Turn:
    assembler = Assembler(tools=TOOLS, provider=api)
    for event in events:
        assembler.feed(event)
    return assembler.finish(transport_complete=error is None, error=error)


def _check(turn: Turn, name: str, expect: Expectation | None = None) -> None:
    expect = expect or SCENARIOS[name].expect
    assert tuple(c.name for c in turn.committed) == expect.committed
    assert tuple(c.name for c in turn.rejected) == expect.rejected
    assert all(str(c.reason) in expect.reasons for c in turn.rejected), \
        [(c.reason, c.detail) for c in turn.rejected]
    assert turn.complete is expect.complete
    assert len(turn.error_results()) == len(turn.rejected)


def test_every_scenario_has_its_cassette_and_nothing_else() -> None:
    found = {(p.parent.name, p.stem) for p in CASSETTE_DIR.glob("*/*.yaml")}
    assert found == set(CASES)


@pytest.mark.parametrize(("api", "name"), CASES, ids=IDS)
def test_cassette_replays_through_real_sdk(api: str, name: str) -> None:
    with use_cassette(f"{api}/{name}") as cassette:
        first = stream_sdk(api, model=MODELS[api])  # default vendor base URL
        turn = _turn(api, first.events, first.error)
        _check(turn, name, THROUGH_SDK.get((api, name)))
        if name == "dropped_connection":
            assert is_dropped_connection(first.error), repr(first.error)
        if name == "truncated_length":  # Ollama's whole call: the object read up to the cut
            assert turn.rejected[0].raw_arguments.startswith('{"path":"/tmp/a')
            assert turn.rejected[0].arguments is None
        if turn.calls:
            follow = followup_sdk(api, turn, model=MODELS[api])
            assert follow.error is None
            answer = _turn(api, follow.events, None)
            assert not answer.calls and answer.complete
        if turn.finish_reason == "pause_turn":  # the request that continues the paused turn
            follow = continue_paused(turn, base_url=None, model=MODELS[api])
            assert follow.error is None and _turn(api, follow.events, None).complete
        assert cassette.all_played


@pytest.mark.parametrize(("api", "name"), CASES, ids=IDS)
def test_cassette_body_decoded_without_sdk(api: str, name: str) -> None:
    """The wire bytes alone, through the core's own SSE decoder, give the same verdict.

    At this level the vendor's error event reaches the assembler (the SDKs raise
    on it first), so ``error_event`` must fail as ``upstream_error``.
    """
    doc = _load(cassette_path(f"{api}/{name}").read_text(encoding="utf-8"))
    response = doc["interactions"][0]["response"]
    body = response["body"]["string"]
    data = body.encode("utf-8") if isinstance(body, str) else body
    decoder = EventDecoder()
    events = list(decoder.feed(data)) + list(decoder.close())
    dropped = response["headers"].get(DROPPED_HEADER) == ["dropped"]
    assembler = Assembler(tools=TOOLS, provider=api)
    for event in events:
        assembler.feed(event)
    turn = assembler.finish(transport_complete=not dropped)
    _check(turn, name)
    assert dropped is (name == "dropped_connection")
    if name == "error_event":
        assert [str(c.reason) for c in turn.rejected] == ["upstream_error"]


def test_cassettes_name_only_vendor_hosts_and_hold_no_secrets() -> None:
    for path in CASSETTE_DIR.glob("*/*.yaml"):
        text = path.read_text(encoding="utf-8")
        assert "127.0.0.1" not in text, path
        assert "localhost" not in text or path.parent.name == "ollama", path  # its own origin
        doc = _load(text)
        for interaction in doc["interactions"]:
            request = interaction["request"]
            assert httpx.URL(request["uri"]).host == VENDOR_HOSTS[path.parent.name]
            for header in ("authorization", "x-api-key", "x-goog-api-key"):
                assert request["headers"].get(header, ["REDACTED"]) == ["REDACTED"], path
            assert "key=" not in httpx.URL(request["uri"]).query.decode()


def test_replay_is_offline_an_unrecorded_request_fails() -> None:
    import vcr.errors

    with use_cassette("anthropic/text"):
        first = stream_sdk("anthropic", model="m")
        assert first.error is None
        again = stream_sdk("anthropic", model="m")  # the single interaction is used up
    chain = []
    err: BaseException | None = again.error
    while err is not None:
        chain.append(err)
        err = err.__cause__ or err.__context__
    assert any(isinstance(e, vcr.errors.CannotOverwriteExistingCassetteException) for e in chain)


def test_cassette_path_resolution(tmp_path: Path) -> None:
    assert cassette_path("gemini/partial_args") == CASSETTE_DIR / "gemini" / "partial_args.yaml"
    with pytest.raises(FileNotFoundError):
        cassette_path("gemini/missing_index")
    own = tmp_path / "x" / "y.yaml"
    own.parent.mkdir()
    own.write_text("interactions: []\nversion: 1\n")
    assert cassette_path(own) == own
    assert cassette_path("x/y", root=tmp_path) == own


def test_replay_config_is_replay_only() -> None:
    assert replay_vcr().record_mode in ("none", getattr(__import__("vcr").record_mode.RecordMode,
                                                        "NONE", "none"))


def test_emulator_body_matches_cassette_body(tmp_path: Path) -> None:
    """Recording is faithful: the cassette stores exactly the bytes the emulator sends."""
    from toolstream_core.testing import VendorEmulator

    with VendorEmulator(seed=0, soft_drop=True) as emu:
        live = httpx.post(emu.base_url + "/v1/chat/completions", json={
            "model": "scenario:non_ascii", "stream": True,
            "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": "x"}]}).content
    doc = _load((CASSETTE_DIR / "openai-chat" / "non_ascii.yaml").read_text("utf-8"))
    recorded = doc["interactions"][0]["response"]["body"]["string"]
    recorded = recorded.encode() if isinstance(recorded, str) else recorded
    # same scenario bytes; the model name differs (cassette used a real-looking one)
    assert live.replace(b"scenario:non_ascii", b"gpt-4.1-mini") == recorded
    assert "日".encode() in recorded and b"\\\\u" in recorded  # raw UTF-8 and escapes
    assert json.loads(recorded.split(b"\n\n")[1][6:])["object"] == "chat.completion.chunk"


async def test_async_clients_replay_and_see_the_drop() -> None:
    """The async SDK path (what the shims' ``aassemble`` uses) replays the same way."""
    import anthropic
    from toolstream_core import aassemble

    client = anthropic.AsyncAnthropic(api_key="test", max_retries=0)
    with use_cassette("anthropic/dropped_connection"):
        stream = await client.messages.create(
            model="m", max_tokens=5, stream=True, messages=[{"role": "user", "content": "x"}])
        turn = await aassemble(stream, tools=TOOLS, provider="anthropic")
    assert is_dropped_connection(turn.error), repr(turn.error)
    assert [str(c.reason) for c in turn.rejected] == ["stream_truncated"]
    assert turn.rejected[0].raw_arguments == SCENARIO_ARGS["single_call"]
    with use_cassette("anthropic/parallel_calls"):
        stream = await client.messages.create(
            model="m", max_tokens=5, stream=True, messages=[{"role": "user", "content": "x"}])
        turn = await aassemble(stream, tools=TOOLS, provider="anthropic")
    assert [c.arguments for c in turn.committed] == [{"city": "Paris"}, {"city": "Tokyo"}]
