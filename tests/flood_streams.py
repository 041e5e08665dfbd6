"""The capped flood (issue 37.3) as vendor wire bytes, for the emulator's ``queue_body``.

One ``write_file`` call whose arguments run far past the gate's cap, in small fragments, then a
proper end (finish reason, stop events). The tests set the cap (``CONFIG``) and count what the
framework saw after the call failed: the gate withholds the rest of a failed call's fragments
(``GateSession.spent``), so that count stays near ``cap / FRAGMENT`` whatever ``FRAGMENTS``
is. Without it, every fragment reached the framework (``FRAGMENTS`` chunks).
"""

from __future__ import annotations

import json

#: The cap the flood passes, its fragment size and how many fragments it sends (256 KiB).
CAP = 4096
FRAGMENT = 64
FRAGMENTS = 4096
CONFIG = {"max_tool_argument_bytes": CAP}
#: The most chunks a framework may see of a flood whose call failed: the fragments up to the
#: cap, the table's lazy count past it (``_call.ROOM``: 32), and the stream's other events.
SEEN_AT_MOST = CAP // FRAGMENT + 32 + 16
#: The wires this module writes a flood for, which both frameworks' classes stream through an
#: SDK the tap wraps (the parity suite floods the other wires with ``large_args``).
APIS = ("openai-chat", "anthropic")

_PIECE = ("0123456789abcdef" * (FRAGMENT // 16 + 1))[:FRAGMENT]
_OPENING = '{"path": "big.txt", "content": "'


def _arguments() -> list[str]:
    return [_OPENING, *([_PIECE] * FRAGMENTS), '"}']


def _chat(delta: dict[str, object], finish: str | None = None) -> str:
    chunk = {"id": "chatcmpl-flood", "object": "chat.completion.chunk", "created": 1,
             "model": "gpt-4o-mini",
             "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return f"data: {json.dumps(chunk)}\n\n"


def _openai_chat() -> str:
    lines = [_chat({"role": "assistant", "content": None, "tool_calls": [
        {"index": 0, "id": "call_flood", "type": "function",
         "function": {"name": "write_file", "arguments": ""}}]})]
    lines += [_chat({"tool_calls": [{"index": 0, "function": {"arguments": text}}]})
              for text in _arguments()]
    lines += [_chat({}, "tool_calls"), "data: [DONE]\n\n"]
    return "".join(lines)


def _event(kind: str, data: dict[str, object]) -> str:
    return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"


def _anthropic() -> str:
    message = {"id": "msg_flood", "type": "message", "role": "assistant",
               "model": "claude-sonnet-4-5", "content": [], "stop_reason": None,
               "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}
    lines = [_event("message_start", {"message": message}),
             _event("content_block_start", {"index": 0, "content_block": {
                 "type": "tool_use", "id": "toolu_01flood", "name": "write_file", "input": {}}})]
    lines += [_event("content_block_delta", {"index": 0, "delta": {
        "type": "input_json_delta", "partial_json": text}}) for text in _arguments()]
    lines += [_event("content_block_stop", {"index": 0}),
              _event("message_delta", {"delta": {"stop_reason": "tool_use", "stop_sequence": None},
                                       "usage": {"output_tokens": 100}}),
              _event("message_stop", {})]
    return "".join(lines)


def flood_body(api: str) -> bytes:
    """The flood as ``api``'s SSE body."""
    return {"openai-chat": _openai_chat, "anthropic": _anthropic}[api]().encode()


#: The flood call's id on each wire.
CALL_ID = {"openai-chat": "call_flood", "anthropic": "toolu_01flood"}


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(_text(b.get("text", b.get("content"))) if isinstance(b, dict) else str(b)
                       for b in content)
    return "" if content is None else str(content)


def flood_answer(api: str, body: dict[str, object]) -> tuple[list[str], list[tuple[str, str]]]:
    """The next request's view of the flood: the ids of the assistant's calls, and each result
    (call id, text) that follows them, in order, as the framework's class really sent it."""
    calls: list[str] = []
    results: list[tuple[str, str]] = []
    messages = body.get("messages")
    assert isinstance(messages, list)
    for message in messages:
        if api == "openai-chat":
            calls += [c["id"] for c in message.get("tool_calls") or []]
            if message.get("role") == "tool":
                results.append((message["tool_call_id"], _text(message.get("content"))))
            continue
        for block in message.get("content") if isinstance(message.get("content"), list) else []:
            if block.get("type") == "tool_use":
                calls.append(block["id"])
            elif block.get("type") == "tool_result":
                results.append((block["tool_use_id"], _text(block.get("content"))))
    return calls, results
