"""The stored assistant message agrees with the core's verdict (ids, arguments, positions).

Stock google_genai turns every streamed ``functionCall`` part into its own ToolCallBlock, so a
``partialArgs`` call becomes one named block with ``{}`` and several nameless ones; its thought
signatures are kept per block position.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.llms.types import ChatMessage, TextBlock, ToolCallBlock
from toolstream_core import Assembler

from llamaindex_toolstream._messages import rebuild_message


def _gemini_partial_turn() -> Any:
    assembler = Assembler(provider="gemini")
    parts = [
        {"functionCall": {"name": "write_file", "willContinue": True}},
        {"functionCall": {"partialArgs": [{"jsonPath": "$.path", "stringValue": "/tmp/a.txt"}],
                          "willContinue": True}},
        {"functionCall": {"partialArgs": [{"jsonPath": "$.content", "stringValue": "hi"}],
                          "willContinue": False}},
    ]
    for i, part in enumerate(parts):
        chunk: dict[str, Any] = {"candidates": [{"content": {"role": "model", "parts": [part]}}]}
        if i == len(parts) - 1:
            chunk["candidates"][0]["finishReason"] = "STOP"
        assembler.feed(chunk)
    return assembler.finish()


def test_phantom_blocks_collapse_and_signatures_follow() -> None:
    turn = _gemini_partial_turn()
    [call] = turn.committed
    stock_like = ChatMessage(role="assistant", blocks=[
        ToolCallBlock(tool_call_id="write_file", tool_name="write_file", tool_kwargs={}),
        ToolCallBlock(tool_call_id="", tool_name="", tool_kwargs={}),
        ToolCallBlock(tool_call_id="", tool_name="", tool_kwargs={}),
    ], additional_kwargs={"thought_signatures": ["sig-1", None, None]})
    rebuilt = rebuild_message(stock_like, turn)
    [block] = rebuilt.blocks
    assert isinstance(block, ToolCallBlock)
    assert (block.tool_name, block.tool_kwargs) == ("write_file",
                                                    {"path": "/tmp/a.txt", "content": "hi"})
    assert block.tool_call_id == call.id
    assert rebuilt.additional_kwargs["thought_signatures"] == ["sig-1"]


def test_text_and_call_keep_their_positions() -> None:
    turn = _gemini_partial_turn()
    message = ChatMessage(role="assistant", blocks=[
        TextBlock(text="Writing it now."),
        ToolCallBlock(tool_call_id="write_file", tool_name="write_file", tool_kwargs={}),
    ], additional_kwargs={"thought_signatures": [None, "sig-call"]})
    rebuilt = rebuild_message(message, turn)
    assert isinstance(rebuilt.blocks[0], TextBlock)
    assert rebuilt.additional_kwargs["thought_signatures"] == [None, "sig-call"]


def test_untouched_without_calls() -> None:
    assembler = Assembler(provider="openai-chat")
    assembler.feed({"choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]})
    message = ChatMessage(role="assistant", content="hi")
    assert rebuild_message(message, assembler.finish()) is message
