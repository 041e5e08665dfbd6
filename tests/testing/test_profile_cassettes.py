"""The profiles' cassettes (issue 13): every chat scenario as each compatible server streams it.

``cassettes/profiles/<profile>/<scenario>.yaml`` are recorded by the bundled recorder
(``record_profiles``) through the real OpenAI SDK against the emulator with that profile,
with the request's ``max_tokens``. Replayed offline through the real SDK and the core, given
the same limit, each gives the verdict its scenario expects (vLLM's lying finish included), and
the agent's recorded follow-up (every call paired) replays too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from test_profiles import check
from toolstream_core import Assembler
from toolstream_core.testing import PROFILES, SCENARIOS, TOOLS
from toolstream_core.testing._clients import followup_sdk, stream_sdk
from toolstream_core.testing._drops import is_dropped_connection
from toolstream_core.testing._record_cassettes import (
    MODELS,
    PROFILE_DIR,
    PROFILE_MAX_TOKENS,
    record_profiles,
)
from toolstream_core.testing._recording import CASSETTE_DIR, use_cassette

API = "openai-chat"
CHAT = [n for n, s in SCENARIOS.items() if API in s.apis]
CASES = [(p, n) for p in PROFILES for n in CHAT]
IDS = [f"{p}/{n}" for p, n in CASES]
ROOT = CASSETTE_DIR / PROFILE_DIR


def _load(path: Path) -> Any:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader",
                                                                         yaml.SafeLoader))


def test_every_profile_and_chat_scenario_has_its_cassette_and_nothing_else() -> None:
    found = {(p.parent.name, p.stem) for p in ROOT.glob("*/*.yaml")}
    assert found == set(CASES)


@pytest.mark.parametrize(("profile", "name"), CASES, ids=IDS)
def test_profile_cassette_replays_through_the_sdk_with_the_scenarios_verdict(
        profile: str, name: str) -> None:
    with use_cassette(f"{PROFILE_DIR}/{profile}/{name}") as cassette:
        first = stream_sdk(API, model=MODELS[API], max_tokens=PROFILE_MAX_TOKENS)
        assembler = Assembler(tools=TOOLS, provider=API, max_output_tokens=PROFILE_MAX_TOKENS)
        for event in first.events:
            assembler.feed(event)
        turn = assembler.finish(transport_complete=first.error is None, error=first.error)
        check(turn, name)
        if name == "dropped_connection":
            assert is_dropped_connection(first.error), repr(first.error)
        if (profile, name) == ("vllm", "truncated_length"):  # the finish lies; usage tells
            assert [ch.finish_reason for ev in first.events for ch in ev.choices
                    if ch.finish_reason] == ["tool_calls"]
        if turn.calls:
            follow = followup_sdk(API, turn, model=MODELS[API])
            assert follow.error is None
            answer = Assembler(tools=TOOLS, provider=API)
            for event in follow.events:
                answer.feed(event)
            reply = answer.finish()
            assert not reply.calls and reply.complete
        assert cassette.all_played


def test_profile_cassettes_name_only_openai_and_hold_no_secrets() -> None:
    for path in ROOT.glob("*/*.yaml"):
        text = path.read_text(encoding="utf-8")
        assert "127.0.0.1" not in text and "localhost" not in text, path
        for interaction in _load(path)["interactions"]:
            request = interaction["request"]
            assert httpx.URL(request["uri"]).host == "api.openai.com", path
            assert request["headers"].get("authorization", ["REDACTED"]) == ["REDACTED"], path


@pytest.mark.parametrize("profile", ["vllm", "litellm-ollama"])
def test_re_recording_gives_the_same_wire_bytes(tmp_path: Path, profile: str) -> None:
    """Deterministic: what the server sent, re-recorded, is byte for byte what is bundled.

    Request bodies and headers are the SDK's (its version writes them), so the responses
    are compared, and the requests' URIs.
    """
    names = ["parallel_calls", "truncated_length"]
    [*written] = record_profiles(tmp_path, profiles=[profile], scenarios=names)
    assert [p.relative_to(tmp_path) for p in written] == [Path(profile, f"{n}.yaml") for n in names]
    for path in written:
        fresh, bundled = _load(path), _load(ROOT / profile / path.name)
        assert [(i["request"]["uri"], i["response"]) for i in fresh["interactions"]] == \
            [(i["request"]["uri"], i["response"]) for i in bundled["interactions"]]
