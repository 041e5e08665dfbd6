"""Real vendor streams as cassettes (``cassettes/real``), replayed through the real SDK clients.

Each cassette re-frames one recording of the corpus (``tests/streams``) as the vendor's
streaming body at the vendor's host and path. Replayed offline (``record_mode="none"``) with
the SDKs' default base URLs, the SDK objects go to the core ``Assembler``; the Turn must reach
the verdict ``tests/core/stream_expectations.py`` holds for that stream, with the vendor's
calls, ids and arguments. The cassettes must also be exactly what the generator makes of the
corpus today, and every corpus stream must have a cassette or a documented exclusion.
"""

from __future__ import annotations

import filecmp
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from real_cassettes_util import REAL_CASSETTES, RealCase, check_verdict, real_case_params, real_cases
from streams_util import DONE, MAIN_APIS, REPO_STREAMS, load_stream, stream_id, stream_paths
from toolstream_core import Assembler, Turn
from toolstream_core.sse import EventDecoder
from toolstream_core.testing._clients import stream_sdk
from toolstream_core.testing._real_cassettes import exclusion_reason, load_real_stream, write_real_cassettes
from toolstream_core.testing._recording import use_cassette

VENDOR_PATHS = {
    "openai-chat": ("api.openai.com", "/v1/chat/completions"),
    "openai-responses": ("api.openai.com", "/v1/responses"),
    "anthropic": ("api.anthropic.com", "/v1/messages"),
    "gemini": ("generativelanguage.googleapis.com", "/v1beta/models/"),
}
CASES = real_case_params()


def _expected_arguments(call: dict[str, Any]) -> Any:
    """What a committed call carries: the parsed text, ``{}`` for no text, Gemini's object."""
    if "arguments_object" in call:
        return call["arguments_object"]
    if call["raw_arguments"] is None or not call["raw_arguments"].strip():
        return {}
    return call["arguments"]


def _sdk_turn(case: RealCase) -> Turn:
    with use_cassette(case.path) as cassette:
        result = stream_sdk(case.api, model=case.model)  # the SDK's default vendor base URL
        assert cassette.all_played, f"the SDK did not request the recorded URL ({result.error!r})"
    assembler = Assembler(provider=case.api)  # type: ignore[arg-type]
    for event in result.events:
        assembler.feed(event)
    return assembler.finish(transport_complete=result.error is None, error=result.error)


def test_every_corpus_stream_has_a_cassette_or_a_documented_exclusion() -> None:
    cassettes = {f"{p.parent.name}/{p.stem}" for p in REAL_CASSETTES.glob("*/*.yaml")}
    readme = (REAL_CASSETTES / "README.md").read_text(encoding="utf-8")
    excluded = set()
    for path in stream_paths(REPO_STREAMS, MAIN_APIS):
        if exclusion_reason(load_real_stream(path)) is not None:
            excluded.add(stream_id(path))
            assert stream_id(path) in readme, f"{stream_id(path)}: exclusion not documented"
    corpus = {stream_id(p) for p in stream_paths(REPO_STREAMS, MAIN_APIS)}
    assert cassettes | excluded == corpus and not cassettes & excluded
    assert len(excluded) <= 0.05 * len(corpus), sorted(excluded)


def test_cassettes_are_what_the_generator_makes_of_the_corpus(tmp_path: Path) -> None:
    """A refreshed corpus without regenerated cassettes (or a hand edit) fails here."""
    (tmp_path / "README.md").write_text("")
    written, _excluded = write_real_cassettes(REPO_STREAMS, tmp_path)
    assert len(written) == len(list(REAL_CASSETTES.glob("*/*.yaml")))
    fresh = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file() and p.name != "README.md")
    kept = sorted(p.relative_to(REAL_CASSETTES) for p in REAL_CASSETTES.rglob("*")
                  if p.is_file() and p.name != "README.md")
    assert fresh == kept
    _match, mismatch, errors = filecmp.cmpfiles(tmp_path, REAL_CASSETTES, [str(p) for p in fresh], shallow=False)
    assert not mismatch and not errors, mismatch + errors


@pytest.mark.parametrize("case", CASES)
def test_cassette_is_the_corpus_stream_at_the_vendor_url(case: RealCase) -> None:
    text = case.path.read_text(encoding="utf-8")
    assert text.startswith("# Real vendor stream") and "License: " in text.split("interactions:")[0]
    (interaction,) = yaml.safe_load(text)["interactions"]
    request = interaction["request"]
    url = httpx.URL(request["uri"])
    host, path = VENDOR_PATHS[case.api]
    assert (url.scheme, url.host) == ("https", host) and url.path.startswith(path)
    if case.api == "gemini":
        assert url.path.endswith(":streamGenerateContent") and url.params.get("alt") == "sse"
    assert request["headers"] == {"content-type": ["application/json"]}  # nothing to scrub
    # The body, decoded by the core's own SSE reader, is the recorded events, values unchanged.
    decoder = EventDecoder()
    body = interaction["response"]["body"]["string"].encode("utf-8")
    events = list(decoder.feed(body)) + list(decoder.close())
    recorded = load_stream(REPO_STREAMS / case.api / f"{case.stem}.jsonl")
    assert events == [e for e in recorded.events if e is not DONE]
    assert body.count(b"data: [DONE]") == sum(e is DONE for e in recorded.events)


@pytest.mark.parametrize("case", CASES)
def test_real_cassette_through_the_sdk_reaches_the_expected_verdict(case: RealCase) -> None:
    turn = _sdk_turn(case)
    check_verdict(case, [(c.id, c.name) for c in turn.committed],
                  [(c.id, c.name, str(c.reason)) for c in turn.rejected], turn.complete)
    assert [c.name for c in turn.calls] == [c["name"] for c in case.client_calls]  # provider order
    for call, expected in zip(turn.calls, case.client_calls, strict=True):
        if expected["id"]:
            assert call.id == expected["id"]
        if call in turn.committed:
            assert call.arguments == _expected_arguments(expected), call.name
    assert len(turn.error_results()) == len(turn.rejected)


@pytest.mark.toolstream_cassette("real/anthropic/anthropic__anthropic_tools__0")
def test_real_cassettes_are_reachable_through_the_pytest_marker(toolstream_cassette: Any) -> None:
    result = stream_sdk("anthropic", model="claude-haiku-4-5")
    assert result.error is None and toolstream_cassette.all_played
    assembler = Assembler(provider="anthropic")
    for event in result.events:
        assembler.feed(event)
    turn = assembler.finish()
    assert [(c.name, c.arguments) for c in turn.committed] == [
        ("pelican_name_generator", {}), ("pelican_name_generator", {})]


def test_every_api_has_real_cassettes() -> None:
    per_api = {api: sum(c.api == api for c in real_cases()) for api in MAIN_APIS}
    assert all(n >= 15 for n in per_api.values()), per_api
