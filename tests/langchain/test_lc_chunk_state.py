"""The chunks the gate streams on are exactly what LangChain's constructors would build.

The gate strips the tool-call parts from every streamed chunk. In tap mode it does so in place
(``_gate._strip_in_place``: two objects fewer per chunk, measured end to end in
``benchmarks/e2e.py``), guarded by an import-time proof (``_same_in_place``) that the result
matches the constructors'. These tests hold both to it on the real integrations over HTTP.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessageChunk
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGenerationChunk
from lc_util import aggregate, applies, make_model
from toolstream_core.testing import TOOLS, VendorEmulator

import langchain_toolstream._gate as gate
from langchain_toolstream import with_toolstream

TOOL_DICTS = [
    {"type": "function", "function": {"name": n, "description": n, "parameters": s}}
    for n, s in TOOLS.items()
]
_TOOL_BLOCKS = {"tool_use", "input_json_delta", "function_call", "tool_call_chunk", "tool_call"}


def _rebuilt(message: AIMessageChunk) -> AIMessageChunk:
    return AIMessageChunk(
        content=message.content,
        additional_kwargs=message.additional_kwargs,
        response_metadata=message.response_metadata,
        usage_metadata=message.usage_metadata,
        id=message.id,
        name=message.name,
    )


@pytest.mark.parametrize("scenario", ["single_call", "parallel_calls", "large_args"])
def test_streamed_chunks_hold_no_tool_parts_and_equal_a_constructed_chunk(
    api: str, scenario: str, emu: VendorEmulator
) -> None:
    if not applies(api, scenario):
        pytest.skip(f"{scenario} does not apply to {api}")
    emu.queue(api, scenario)
    chunks = list(with_toolstream(make_model(api, emu)).bind_tools(TOOL_DICTS).stream("go"))
    *streamed, last = chunks
    assert streamed, "the stream must reach the consumer chunk by chunk"
    for chunk in streamed:
        assert type(chunk) is AIMessageChunk
        assert chunk.tool_call_chunks == [] and chunk.tool_calls == [] and chunk.invalid_tool_calls == []
        assert "tool_calls" not in chunk.additional_kwargs and "function_call" not in chunk.additional_kwargs
        if isinstance(chunk.content, list):
            assert not [b for b in chunk.content if isinstance(b, dict) and b.get("type") in _TOOL_BLOCKS]
        assert chunk == _rebuilt(chunk)
    assert aggregate(chunks).tool_calls and last.chunk_position == "last"


def test_in_place_stripping_is_proven_against_the_constructors() -> None:
    assert gate._same_in_place() is gate._IN_PLACE
    parts = [tool_call_chunk(name="write_file", args='{"path": "/tmp/a', id="call_1", index=0)]
    streamed = ChatGenerationChunk(message=AIMessageChunk(content="hi", id="run-1", tool_call_chunks=parts))
    stripped = gate._strip_in_place(streamed, streamed.message, "hi", {})  # type: ignore[arg-type]
    # what the gate's constructor path builds: the six fields passed explicitly
    rebuilt = AIMessageChunk(content="hi", additional_kwargs={}, response_metadata={}, usage_metadata=None,
                             id="run-1", name=None)
    expected = ChatGenerationChunk(message=rebuilt, generation_info=None)
    assert stripped is streamed
    assert gate._same_state(stripped.message, expected.message) and gate._same_state(stripped, expected)


def test_an_incomplete_strip_fails_the_proof(monkeypatch: pytest.MonkeyPatch) -> None:
    real = gate._strip_in_place

    def leaves_the_fragments(chunk: Any, message: Any, content: Any, kwargs: Any) -> Any:
        kept = message.tool_call_chunks
        out = real(chunk, message, content, kwargs)
        message.__dict__["tool_call_chunks"] = kept
        return out

    monkeypatch.setattr(gate, "_strip_in_place", leaves_the_fragments)
    assert gate._same_in_place() is False


def test_in_place_and_rebuilt_chunks_are_the_same(api: str, emu: VendorEmulator,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    if not gate._IN_PLACE:
        pytest.skip("this langchain-core / pydantic pair uses the constructors only")

    def streamed() -> list[tuple[Any, ...]]:
        emu.queue(api, "parallel_calls" if applies(api, "parallel_calls") else "single_call")
        chunks = list(with_toolstream(make_model(api, emu)).bind_tools(TOOL_DICTS).stream("go"))
        assert aggregate(chunks).tool_calls
        return [
            (type(c), c.content, c.additional_kwargs, c.response_metadata, c.usage_metadata, c.name,
             c.tool_call_chunks, c.tool_calls, c.invalid_tool_calls, c.chunk_position,
             sorted(c.model_fields_set), c.model_extra)
            for c in chunks[:-1]  # the last one carries the run's record (timings)
        ]

    in_place = streamed()
    monkeypatch.setattr(gate, "_IN_PLACE", False)
    assert in_place == streamed()
