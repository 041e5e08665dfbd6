"""Shared pieces of the OpenAI-compatible server profile tests (core, LangChain, LlamaIndex).

Imports only the core's testing package, so the "latest" env (no LlamaIndex) can use it too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from toolstream_core.testing import PROFILES, SCENARIOS, VendorEmulator
from toolstream_core.testing._scenarios import build_script, scenario_rng


@contextmanager
def profile_emulators() -> Iterator[dict[str, VendorEmulator]]:
    """One emulator per server profile, all stopped on exit even if a start or a test fails."""
    started = {name: VendorEmulator(profile=name).start() for name in PROFILES}
    try:
        yield started
    finally:
        for emu in started.values():
            emu.stop()


def proven(scenario: str) -> list[tuple[str, dict[str, Any]]]:
    """The calls a correct gate lets run: the scenario's committed calls, with their values
    (``write_file``'s ``content`` as the recording tools see it when the model left it out)."""
    if not SCENARIOS[scenario].expect.committed:
        return []
    calls = []
    for c in build_script(scenario, scenario_rng(0, "openai-chat", scenario)).calls:
        args = dict(c.arguments)
        if c.name == "write_file":
            args.setdefault("content", "")
        calls.append((c.name, args))
    return calls


def sorted_calls(calls: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """Calls as sorted strings, so two runs compare regardless of call order."""
    return sorted(f"{name}{sorted(args.items())}" for name, args in calls)
