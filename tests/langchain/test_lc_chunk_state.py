"""The chunks the gate streams on are exactly what LangChain's constructors would build.

The gate strips the tool-call parts from every streamed chunk through pydantic's public
``model_copy(update=...)`` (``_gate._without_tool_parts``), which skips validators that have
nothing left to do; these tests hold the result to what the constructors build, on the real
integrations over HTTP, and check the chunk it came from is left as it was.
"""

from __future__ import annotations

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


def test_stripping_builds_what_the_constructors_build_and_leaves_the_source_alone() -> None:
    parts = [tool_call_chunk(name="write_file", args='{"path": "/tmp/a', id="call_1", index=0)]
    source = AIMessageChunk(content="hi", id="run-1", tool_call_chunks=parts,
                            response_metadata={"model_provider": "openai"})
    streamed = ChatGenerationChunk(message=source)
    stripped = gate._without_tool_parts(streamed, source, "hi", {})
    rebuilt = AIMessageChunk(content="hi", additional_kwargs={},
                             response_metadata={"model_provider": "openai"},
                             usage_metadata=None, id="run-1", name=None)
    assert stripped.message == rebuilt and stripped == ChatGenerationChunk(message=rebuilt)
    assert stripped.text == "hi"
    assert streamed.message is source and source.tool_call_chunks == parts
    assert stripped.message.response_metadata is not source.response_metadata
