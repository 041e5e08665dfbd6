"""Real vendor streams (the in-repo corpus) through the real SDKs and LlamaIndex classes.

The shim sees the vendor's events only through what each LlamaIndex class exposes
(``ChatResponse.raw``; for Anthropic, the SDK tap). This checks that it loses nothing: the
verdict it reaches — every call's identity, state, reason and parsed arguments, and the
vendor-run server calls — equals the core's verdict on the recorded events fed directly.
Stock LlamaIndex, for comparison, has no verdict: it hands every call it accumulated to the
agent (server_tool_use blocks are skipped by its Anthropic class, a TODO in its source).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from li_helpers import make_llm
from llama_index.core.llms import ChatMessage
from streams_util import DONE, RawPayload, StreamCase, load_stream, stream_paths
from toolstream_core import Assembler, Turn
from toolstream_core.testing import VendorEmulator

from llamaindex_toolstream import ToolstreamLLM

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

PATHS = stream_paths()


def _verdict(turn: Turn) -> dict[str, Any]:
    return {
        "calls": [(c.id, c.name, c.kind, c.state.value, c.reason and c.reason.value, c.arguments)
                  for c in turn.calls],
        "server": [(c.id, c.name) for c in turn.server_calls],
        "complete": turn.complete,
    }


def _sse_body(case: StreamCase) -> bytes:
    """The recorded events as the SSE body of ``case.api`` (``event:`` lines where it names them)."""
    frames: list[str] = []
    for event, name in zip(case.events, case.sse_events, strict=True):
        if event is DONE:
            frames.append("data: [DONE]\n\n")
            continue
        data = event.text if isinstance(event, RawPayload) else json.dumps(event)
        kind = name or (event.get("type") if isinstance(event, dict) else None)
        named = case.api in ("anthropic", "openai-responses") and kind
        frames.append((f"event: {kind}\n" if named else "") + f"data: {data}\n\n")
    return "".join(frames).encode()


def _direct(events: list[Any], api: str) -> Turn:
    assembler = Assembler(provider=api)  # type: ignore[arg-type]
    for event in events:
        if event is not DONE:
            assembler.feed(event)
    return assembler.finish()


@pytest.mark.parametrize("path", PATHS, ids=lambda p: f"{p.parent.name}/{p.stem}")
async def test_shim_verdict_equals_direct_verdict(path: Path, emu: VendorEmulator) -> None:
    case = load_stream(path)
    if any(isinstance(e, RawPayload) for e in case.events):
        pytest.skip("non-JSON payloads: the SDK refuses them before LlamaIndex sees anything")
    expected = _verdict(_direct(case.events, case.api))
    emu.queue_body(case.api, _sse_body(case))
    llm = ToolstreamLLM(make_llm(case.api, emu.base_url))
    last = None
    error: BaseException | None = None
    try:
        gen = await llm.astream_chat([ChatMessage(role="user", content="replay")])
        async for chunk in gen:
            last = chunk
    except Exception as exc:  # the integration's own reaction to the stream, kept below
        error = exc
    assert last is not None, f"no chunk reached the caller ({error!r})"
    turn = llm.turn_of(last)
    assert turn is not None
    assert _verdict(turn) | {"complete": turn.complete} == expected, f"integration raised {error!r}"
