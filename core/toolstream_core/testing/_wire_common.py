"""Pieces shared by the per-vendor wire renderers: SSE framing, ids, results."""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._vendor_events import CREATED

if TYPE_CHECKING:
    from ._scenarios import CallSpec, Script

__all__ = ["CREATED", "SSE", "Rendered", "Reply", "dumps", "entries", "neighbour", "rand_id", "sse",
           "unanswered_calls", "wire_calls"]

_ALNUM = string.ascii_letters + string.digits

#: The content type of a streamed answer framed as Server-Sent Events.
SSE = "text/event-stream; charset=utf-8"


def dumps(obj: Any) -> str:
    """Compact JSON with raw UTF-8, as the vendors send it."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def sse(data: Any, event: str | None = None, *, crlf: bool = False) -> bytes:
    """One Server-Sent Event frame (``data`` a JSON value or a raw string)."""
    nl = "\r\n" if crlf else "\n"
    payload = data if isinstance(data, str) else dumps(data)
    head = f"event: {event}{nl}" if event else ""
    return f"{head}data: {payload}{nl}{nl}".encode()


def rand_id(rng: random.Random, prefix: str, length: int) -> str:
    """A vendor-looking id drawn from the scenario's seeded RNG."""
    return prefix + "".join(rng.choice(_ALNUM) for _ in range(length))


@dataclass
class Rendered:
    """A streamed answer: its frames, and whether the socket drops after them.

    ``drop`` means the server closes the connection without finishing the
    chunked body, which the SDKs surface as a transport error. Frames are SSE
    unless ``content_type`` says otherwise (Ollama's NDJSON lines, Bedrock's
    binary AWS event-stream messages).
    """

    frames: list[bytes]
    drop: bool = False
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = SSE


@dataclass
class Reply:
    """A non-streamed answer: status and a JSON body (``None`` body: drop the socket)."""

    status: int
    body: dict[str, Any] | None
    headers: dict[str, str] = field(default_factory=dict)


def failed_reply(script: Script, error: Reply) -> Reply | None:
    """A non-streamed answer's scripted failure: ``drop`` cuts the socket, ``error`` sends
    the vendor's error reply; ``None`` when the script ends otherwise."""
    if script.ending == "drop":
        return Reply(200, None)
    if script.ending == "error":
        return error
    return None


def _call_key(call: Any) -> str:
    """A call's id, else its function name (Ollama's older servers send no id)."""
    if not isinstance(call, dict):
        return ""
    fn = call.get("function")
    name = fn.get("name") if isinstance(fn, dict) else None
    return str(call.get("id") or name or "")


def unanswered_calls(messages: Any) -> tuple[int, list[str]] | None:
    """The first assistant ``tool_calls`` turn whose calls lack ``tool`` messages after it.

    For the chat shapes that answer a call with ``{"role": "tool", ...}`` messages
    (Cohere v2, Ollama): a tool message answers its ``tool_call_id`` when it names
    one, else the oldest call still open. Returns the index where a result was due
    and the keys (id, else name) left unanswered; ``None`` when every call is paired.
    """
    if not isinstance(messages, list):
        return None
    for i, msg in enumerate(messages):
        if not isinstance(msg, dict) or msg.get("role") != "assistant" \
                or not msg.get("tool_calls"):
            continue
        pending = [_call_key(c) for c in msg["tool_calls"]]
        j = i + 1
        while j < len(messages) and isinstance(messages[j], dict) \
                and messages[j].get("role") == "tool" and pending:
            answered = messages[j].get("tool_call_id")
            pending.remove(answered if answered in pending else pending[0])
            j += 1
        if pending:
            return j, pending
    return None


def wire_calls(script: Script, make_id: Callable[[CallSpec], str]
               ) -> list[tuple[str, CallSpec, str]]:
    """``(id, call, argument text sent)`` per call of a wire that streams argument text.

    The last call is cut at ``script.cut_at`` (a max-token stop or an error
    mid-arguments); ``resent_duplicate`` sends each call twice under one id.
    """
    calls: list[tuple[str, CallSpec, str]] = []
    for i, call in enumerate(script.calls):
        args = call.args_text
        if script.cut_at is not None and i == len(script.calls) - 1:
            args = args[: script.cut_at]
        calls.append((make_id(call), call, args))
        if script.scenario == "resent_duplicate":
            calls.append(calls[-1])
    return calls


def entries(body: dict[str, Any], key: str) -> Iterator[tuple[int, dict[str, Any], list[Any]]]:
    """Each object in the history list ``body[key]`` with its index and the whole list (for
    its neighbours): what every ``check_history`` walks. Nothing when the field is no list;
    entries that are not objects are the vendor's schema error, not a pairing one."""
    items = body.get(key)
    if not isinstance(items, list):
        return
    for i, item in enumerate(items):
        if isinstance(item, dict):
            yield i, item, items


def neighbour(items: list[Any], j: int) -> dict[str, Any]:
    """``items[j]`` when it exists and is an object, else an empty one."""
    item = items[j] if 0 <= j < len(items) else None
    return item if isinstance(item, dict) else {}
