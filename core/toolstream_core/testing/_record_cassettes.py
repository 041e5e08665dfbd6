"""Record the bundled cassettes: every scenario on every API, through the real SDKs.

Run ``python -m toolstream_core.testing._record_cassettes [OUT_DIR]`` (default:
the repository's ``cassettes/``). Each cassette ``<api>/<scenario>.yaml`` holds
the scenario's streamed answer and, when the answer had tool calls, the agent's
next request (every call paired with one result: a stub for committed calls,
the ``ErrorResult`` text for rejected ones) with its plain-text answer, so an
agent loop replayed from the cassette ends cleanly. Requests are recorded under
the vendor's real host (see :mod:`._recording`), so replay works with the SDKs'
default base URLs; secrets are scrubbed by the same configuration
``toolstream record`` uses. ``profiles/<profile>/<scenario>.yaml`` hold every chat
scenario as each OpenAI-compatible server profile streams it (issue 13), recorded the
same way with the request's output limit (``PROFILE_MAX_TOKENS``) so that a replay can
give the core that limit and see a lying finish become ``stream_truncated``.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ._clients import followup_sdk, stream_sdk
from ._profiles import PROFILES
from ._recording import CASSETTE_DIR, recording_vcr
from ._scenarios import API_NAMES, SCENARIOS, TOOLS
from ._server import VendorEmulator

__all__ = ["MODELS", "PROFILE_DIR", "PROFILE_MAX_TOKENS", "record_all", "record_one",
           "record_profiles"]

logger = logging.getLogger(__name__)

#: Model names written into the cassettes' requests (realistic; the emulator ignores them).
MODELS: dict[str, str] = {
    "openai-chat": "gpt-4.1-mini",
    "openai-responses": "gpt-4.1-mini",
    "anthropic": "claude-sonnet-4-5",
    "gemini": "gemini-2.5-flash",
    "bedrock-converse": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
    "ollama": "qwen3:8b",
    "cohere": "command-a-03-2025",
}

#: Request headers whose values change with every call (boto3's signing time and
#: invocation id), fixed in the bundled cassettes so that re-recording gives the same
#: bytes. Not secrets (those are scrubbed by ``recording_vcr``), so not its business.
def _stable_user_agent(key: str, value: str | bytes, request: Any) -> str:
    """botocore's user agent with its ``m/`` feature list sorted (it comes out in set order)."""
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    return " ".join("m/" + ",".join(sorted(part[2:].split(","))) if part.startswith("m/")
                    else part for part in text.split(" "))


VOLATILE_HEADERS: tuple[tuple[str, Any], ...] = (
    ("x-amz-date", "20250616T000000Z"),
    ("amz-sdk-invocation-id", "00000000-0000-4000-8000-000000000000"),
    ("user-agent", _stable_user_agent),
)

#: Where the profiles' cassettes go, under the cassette directory.
PROFILE_DIR = "profiles"
#: ``max_tokens`` of the profiles' recorded requests: a cut reports exactly this many tokens.
PROFILE_MAX_TOKENS = 777


def record_one(emu: VendorEmulator, api: str, scenario: str, out: Path,
               *, api_key: str = "test-key-not-secret", max_tokens: int | None = None) -> Path:
    """Record ``scenario`` on ``api`` to ``out`` through the real SDK (via ``emu``).

    ``max_tokens``: the request's output limit, also the core's (the follow-up it decides).
    """
    from toolstream_core import Assembler

    out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists():
        out.unlink()
    model = MODELS[api]
    emu.queue(api, scenario)
    recorder = recording_vcr()
    with recorder.use_cassette(str(out), record_mode="all",
                               filter_headers=[*recorder.filter_headers, *VOLATILE_HEADERS]):
        first = stream_sdk(api, base_url=emu.base_url, model=model, api_key=api_key,
                           max_tokens=max_tokens)
        assembler = Assembler(tools=TOOLS, provider=api,  # type: ignore[arg-type]
                              max_output_tokens=max_tokens)
        for event in first.events:
            assembler.feed(event)
        dropped = scenario == "dropped_connection"
        turn = assembler.finish(transport_complete=first.error is None and not dropped,
                                error=first.error)
        if turn.calls:
            followup_sdk(api, turn, base_url=emu.base_url, model=model, api_key=api_key)
    logger.info("recorded %s", out)
    return out


def record_all(out_dir: Path = CASSETTE_DIR, *, seed: int = 0,
               apis: Iterable[str] = API_NAMES,
               scenarios: Iterable[str] | None = None) -> list[Path]:
    """Record every (api, scenario) pair that exists; returns the files written."""
    names = list(scenarios) if scenarios is not None else list(SCENARIOS)
    written: list[Path] = []
    with VendorEmulator(seed=seed, soft_drop=True) as emu:
        for api in apis:
            for name in names:
                if api not in SCENARIOS[name].apis:
                    continue
                written.append(record_one(emu, api, name, out_dir / api / f"{name}.yaml"))
    return written


def record_profiles(out_dir: Path = CASSETTE_DIR / PROFILE_DIR, *, seed: int = 0,
                    profiles: Iterable[str] | None = None,
                    scenarios: Iterable[str] | None = None) -> list[Path]:
    """Record every chat scenario on every server profile: ``<profile>/<scenario>.yaml``."""
    names = [n for n in (scenarios if scenarios is not None else SCENARIOS)
             if "openai-chat" in SCENARIOS[n].apis]
    written: list[Path] = []
    for profile in profiles if profiles is not None else PROFILES:
        with VendorEmulator(seed=seed, soft_drop=True, profile=profile) as emu:
            for name in names:
                written.append(record_one(emu, "openai-chat", name,
                                          out_dir / profile / f"{name}.yaml",
                                          max_tokens=PROFILE_MAX_TOKENS))
    return written


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: ``[OUT_DIR]``."""
    args = sys.argv[1:] if argv is None else argv
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    out = Path(args[0]) if args else CASSETTE_DIR
    files = record_all(out) + record_profiles(out / PROFILE_DIR)
    logger.info("%d cassettes written under %s", len(files), out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
