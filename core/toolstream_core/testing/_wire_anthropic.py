"""Anthropic Messages wire format (``POST /v1/messages``).

Streamed as ``event: <type>`` + ``data:`` frames: ``message_start``, per
content block ``content_block_start`` / ``content_block_delta`` (``text_delta``
or ``input_json_delta``) / ``content_block_stop``, ``ping``, then
``message_delta`` (``stop_reason``) and ``message_stop``; with extended thinking the
first block is a ``thinking`` block (``thinking_delta`` pieces, then one
``signature_delta`` just before its stop); a paused turn is a
``server_tool_use`` block and ``stop_reason: "pause_turn"``; errors are an
``event: error`` frame. Blocks are sequential on the real wire, so parallel
calls are consecutive ``tool_use`` blocks.
"""

from __future__ import annotations

import random
from typing import Any

from ._scenarios import Script, split_text
from ._vendor_events import (
    anthropic_block_start,
    anthropic_block_stop,
    anthropic_error,
    anthropic_message,
    anthropic_message_delta,
    anthropic_signature_delta,
    anthropic_text_delta,
    anthropic_thinking_delta,
    anthropic_tool_block,
    anthropic_tool_events,
)
from ._wire_common import Rendered, Reply, entries, failed_reply, neighbour, rand_id, sse

API = "anthropic"

_ERROR_EVENT = anthropic_error()


def _blocks(script: Script, rng: random.Random) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    thinking = script.extra.get("thinking")
    if thinking is not None:
        blocks.append({"type": "thinking", "thinking": thinking,
                       "signature": rand_id(rng, "EqQBCkYIBxgCKkA", 160)})
    if script.text is not None:
        blocks.append({"type": "text", "text": script.text})
    for i, call in enumerate(script.calls):
        args = call.args_text
        if script.cut_at is not None and i == len(script.calls) - 1:
            args = args[: script.cut_at]
        server = script.ending == "pause"  # a paused turn: the vendor's own (web search) tool
        block = {"type": "server_tool_use" if server else "tool_use",
                 "id": rand_id(rng, "srvtoolu_01" if server else "toolu_01", 22),
                 "name": call.name, "args": args}
        blocks.append(block)
        if script.scenario == "resent_duplicate":
            blocks.append(dict(block))
    return blocks


def _usage(body: dict[str, Any], output: int) -> dict[str, Any]:
    return {"input_tokens": 20 + len(body.get("messages") or []) * 10,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
            "output_tokens": output}


def _stop_reason(script: Script) -> str | None:
    if script.ending == "length":
        return "max_tokens"
    if script.ending == "pause":
        return "pause_turn"
    if script.ending == "stop":
        return "tool_use" if script.calls else "end_turn"
    return None


def _output_tokens(blocks: list[dict[str, Any]]) -> int:
    """The usage the emulator reports: about four characters of call arguments a token."""
    return sum(len(b.get("args", "")) for b in blocks) // 4 + 5


def _frame(event: dict[str, Any]) -> bytes:
    """An SSE frame named after the event's type, as Anthropic sends them."""
    return sse(event, event["type"])


def _open_block(idx: int, block: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    """A block's events up to (not including) its ``content_block_stop``; Anthropic sends
    one ``ping`` after the first block's start."""
    if block["type"] == "text":
        return [anthropic_block_start(idx, {"type": "text", "text": ""}), {"type": "ping"},
                *(anthropic_text_delta(idx, piece) for piece in split_text(block["text"], rng, max_piece=8))]
    if block["type"] == "thinking":
        pieces = split_text(block["thinking"], rng, max_piece=40)
        return [anthropic_block_start(idx, {"type": "thinking", "thinking": "", "signature": ""}),
                {"type": "ping"}, *(anthropic_thinking_delta(idx, piece) for piece in pieces),
                anthropic_signature_delta(idx, block["signature"])]
    tool = anthropic_tool_block(block["type"], block["id"], block["name"], {})
    start, *deltas = anthropic_tool_events(idx, tool, ["", *split_text(block["args"], rng)])[:-1]
    return [start, {"type": "ping"}, *deltas] if idx == 0 else [start, *deltas]


def stream_events(script: Script, rng: random.Random, model: str,
                  body: dict[str, Any]) -> tuple[list[dict[str, Any]], str | None]:
    """The Messages events of the streamed answer for ``script``, and how the stream breaks
    right after them: ``"error"`` (an error event follows), ``"drop"`` (the socket drops), or
    ``None`` (it ends with them). Framed as SSE here, as AWS event-stream chunks by Bedrock's
    InvokeModel (``_wire_bedrock_invoke``)."""
    msg_id = rand_id(rng, "msg_01", 22)
    blocks = _blocks(script, rng)
    events = [{"type": "message_start",
               "message": anthropic_message(msg_id, model, _usage(body, 1))}]
    last = len(blocks) - 1
    for idx, block in enumerate(blocks):
        # The stop is sent below, unless an error or a dropped socket comes first.
        events.extend(_open_block(idx, block, rng))
        if idx == last and script.ending in ("error", "drop"):
            return events, script.ending
        events.append(anthropic_block_stop(idx))
    if script.ending == "no_finish":
        return events, None
    output = _output_tokens(blocks)
    events.append(anthropic_message_delta(_stop_reason(script), _usage(body, output)))
    events.append({"type": "message_stop"})
    return events, None


def render_stream(script: Script, rng: random.Random, model: str, body: dict[str, Any]) -> Rendered:
    """The streamed answer for ``script``."""
    events, broken = stream_events(script, rng, model, body)
    frames = [_frame(event) for event in events]
    if broken == "error":
        frames.append(_frame(_ERROR_EVENT))
    return Rendered(frames, drop=broken == "drop")


def render_complete(script: Script, rng: random.Random, model: str, body: dict[str, Any]) -> Reply:
    """The non-streamed ``message``; a call cut by max_tokens is left out (no partial input)."""
    failed = failed_reply(script, Reply(529, _ERROR_EVENT))
    if failed is not None:
        return failed
    msg_id = rand_id(rng, "msg_01", 22)
    content: list[dict[str, Any]] = []
    blocks = _blocks(script, rng)
    for block in blocks:
        if block["type"] in ("text", "thinking"):
            content.append(block)
        elif script.ending != "length":
            content.append(anthropic_tool_block(block["type"], block["id"], block["name"],
                                                _loads(block["args"])))
    output = _output_tokens(blocks)
    return Reply(200, anthropic_message(msg_id, model, _usage(body, output), content=content,
                                        stop_reason=_stop_reason(script)))


def _loads(text: str) -> Any:
    import json

    return json.loads(text) if text.strip() else {}


def _blocks_of(message: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict) and b.get("type") == kind]


def check_history(body: dict[str, Any]) -> Reply | None:
    """Anthropic's 400 when tool_use ids lack tool_result blocks in the very next message."""
    for i, msg, messages in entries(body, "messages"):
        stray = _unpaired(msg, "tool_result", "tool_use_id", neighbour(messages, i - 1), "tool_use", "id")
        if stray:
            return _error(
                f"messages.{i}.content.0: unexpected `tool_use_id` found in `tool_result` "
                f"blocks: {', '.join(map(str, stray))}. Each `tool_result` block must have "
                "a corresponding `tool_use` block in the previous message.")
        if msg.get("role") != "assistant":
            continue
        missing = _unpaired(msg, "tool_use", "id", neighbour(messages, i + 1), "tool_result", "tool_use_id")
        if missing:
            return _error(
                f"messages.{i + 1}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(map(str, missing))}. Each `tool_use` block must "
                "have a corresponding `tool_result` block in the next message.")
    return _thinking_first(body)


_THINKING_ON = frozenset({"enabled", "adaptive"})
_THINKING_BLOCKS = frozenset({"thinking", "redacted_thinking"})


def _thinking_first(body: dict[str, Any]) -> Reply | None:
    """Anthropic's 400 when, with thinking on, the assistant message whose ``tool_use``
    blocks the last message answers does not start with its (signed) thinking block. A last
    message with more than tool results (a new question) starts a new turn: no rule then."""
    thinking = body.get("thinking")
    if not isinstance(thinking, dict) or thinking.get("type") not in _THINKING_ON:
        return None
    messages = body.get("messages")
    if not isinstance(messages, list) or not _only_results(neighbour(messages, len(messages) - 1)):
        return None
    index = len(messages) - 2
    assistant = neighbour(messages, index)
    content = assistant.get("content")
    first = content[0] if isinstance(content, list) and content else {}
    kind = first.get("type") if isinstance(first, dict) else None
    if kind in _THINKING_BLOCKS and (kind == "redacted_thinking" or first.get("signature")):
        return None
    if kind == "thinking":
        return _error(f"messages.{index}.content.0: Invalid `signature` in `thinking` block")
    return _error(
        f"messages.{index}.content.0.type: Expected `thinking` or `redacted_thinking`, but found "
        f"`{kind}`. When `thinking` is enabled, a final `assistant` message must start with a "
        "thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks). "
        "We recommend you include thinking blocks from previous turns. To avoid this "
        "requirement, disable `thinking`.")


def _only_results(message: dict[str, Any]) -> bool:
    """The message is tool results and nothing else (the tool loop goes on)."""
    content = message.get("content")
    return isinstance(content, list) and bool(content) and len(_blocks_of(message, "tool_result")) == len(content)


def _unpaired(msg: dict[str, Any], kind: str, key: str,
              other: dict[str, Any], other_kind: str, other_key: str) -> list[Any]:
    """The ``key`` of each ``kind`` block in ``msg`` that no ``other_kind`` block of ``other`` names."""
    paired = {b.get(other_key) for b in _blocks_of(other, other_kind)}
    return [b.get(key) for b in _blocks_of(msg, kind) if b.get(key) not in paired]


def _error(message: str) -> Reply:
    return Reply(400, {"type": "error",
                       "error": {"type": "invalid_request_error", "message": message},
                       "request_id": "req_toolstream_emulator"})
