"""One real SDK stream from the emulator, decided by a fresh ``Assembler`` (issue-14 tests)."""

from __future__ import annotations

from typing import Any

from toolstream_core import Assembler, Turn
from toolstream_core.testing import VendorEmulator
from toolstream_core.testing._clients import stream_sdk

APIS = ("openai-chat", "openai-responses", "anthropic", "gemini")
MODELS = {"openai-chat": "gpt-4.1-mini", "openai-responses": "gpt-4.1-mini",
          "anthropic": "claude-sonnet-4-5", "gemini": "gemini-2.5-flash"}


def sdk_turn(emu: VendorEmulator, api: str, scenario: str, **assembler: Any) -> Turn:
    """Queue ``scenario``, stream it through the vendor's real SDK, feed and decide it."""
    emu.clear()
    emu.queue(api, scenario)
    result = stream_sdk(api, model=MODELS[api], base_url=emu.base_url)
    core = Assembler(provider=api, **assembler)  # type: ignore[arg-type]
    for event in result.events:
        core.feed(event)
    return core.finish(transport_complete=result.error is None, error=result.error)
