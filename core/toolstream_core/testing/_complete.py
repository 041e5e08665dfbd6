"""A recorded *streamed* answer as the vendor's *complete* answer, for a non-streaming client.

The bundled cassettes hold streamed answers. A client that does not ask to stream (a plain
``ChatOpenAI``, ``streaming=False`` in LlamaIndex) expects one JSON body and fails on SSE
text, so the pytest marker hands it the complete answer the vendor would have sent for the
same turn: the events concatenated in order, the argument text as streamed (a cut call stays
cut, its finish reason says why). This merges on purpose: it builds a fixture for code under
test, it decides nothing about which call may run.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import Any

from toolstream_core.sse import EventDecoder

__all__ = ["as_complete", "complete_body", "serving_complete_answers"]


def _chat(events: list[dict[str, Any]]) -> dict[str, Any]:
    head = next((e for e in events if e.get("choices")), events[0] if events else {})
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish: Any = None
    usage: Any = None
    for event in events:
        usage = event.get("usage") or usage
        for choice in event.get("choices") or []:
            delta = choice.get("delta") or {}
            text.append(delta.get("content") or "")
            finish = choice.get("finish_reason") or finish
            for part in delta.get("tool_calls") or []:
                call = calls.setdefault(int(part.get("index") or 0), {
                    "id": None, "type": "function", "function": {"name": "", "arguments": ""}})
                call["id"] = call["id"] or part.get("id")
                function = part.get("function") or {}
                call["function"]["name"] += function.get("name") or ""
                call["function"]["arguments"] += function.get("arguments") or ""
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text) or None}
    if calls:
        message["tool_calls"] = [calls[i] for i in sorted(calls)]
    return {"id": head.get("id"), "object": "chat.completion", "created": head.get("created"),
            "model": head.get("model"), "usage": usage,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}]}


def _responses(events: list[dict[str, Any]]) -> dict[str, Any]:
    final = [e["response"] for e in events if isinstance(e.get("response"), dict)]
    if not final:
        raise ValueError("the recorded stream has no response object")
    return dict(final[-1])


def _anthropic(events: list[dict[str, Any]]) -> dict[str, Any]:
    message: dict[str, Any] = {}
    blocks: dict[int, dict[str, Any]] = {}
    partial: dict[int, str] = {}
    for event in events:
        kind = event.get("type")
        if kind == "message_start":
            message = dict(event.get("message") or {})
        elif kind == "content_block_start":
            blocks[int(event.get("index") or 0)] = dict(event.get("content_block") or {})
        elif kind == "content_block_delta":
            index, delta = int(event.get("index") or 0), event.get("delta") or {}
            if delta.get("type") == "text_delta":
                block = blocks.setdefault(index, {"type": "text", "text": ""})
                block["text"] = block.get("text", "") + (delta.get("text") or "")
            elif delta.get("type") == "input_json_delta":
                partial[index] = partial.get(index, "") + (delta.get("partial_json") or "")
        elif kind == "message_delta":
            message.update(event.get("delta") or {})
            message["usage"] = {**(message.get("usage") or {}), **(event.get("usage") or {})}
    for index, text in partial.items():
        try:
            blocks[index]["input"] = json.loads(text) if text.strip() else {}
        except ValueError:
            blocks[index]["input"] = {}  # a cut call: the vendor's complete answer is cut too
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return message


def _gemini(events: list[dict[str, Any]]) -> dict[str, Any]:
    parts: list[Any] = []
    last: dict[str, Any] = {}
    for event in events:
        for candidate in (event.get("candidates") or [])[:1]:
            parts.extend((candidate.get("content") or {}).get("parts") or [])
            last = {**last, **{k: v for k, v in candidate.items() if k != "content"}}
    answer = dict(events[-1]) if events else {}
    answer["candidates"] = [{**last, "content": {"role": "model", "parts": parts}}]
    return answer


_MERGE: dict[str, Callable[[list[dict[str, Any]]], dict[str, Any]]] = {
    "openai-chat": _chat,
    "openai-responses": _responses,
    "anthropic": _anthropic,
    "gemini": _gemini,
}


def complete_body(api: str, body: bytes) -> bytes | None:
    """The complete JSON answer for a streamed ``body`` of ``api`` (``None``: cannot merge)."""
    merge = _MERGE.get(api)
    if merge is None:
        return None
    decoder = EventDecoder("auto")
    events = [e for e in (*decoder.feed(body), *decoder.close()) if isinstance(e, dict)]
    try:
        return json.dumps(merge(events)).encode()
    except (ValueError, TypeError, KeyError):
        return None


def _wants_stream(request: Any) -> bool:
    """Whether a recorded-for request asked to stream (JSON ``stream``, Gemini's URL)."""
    uri = str(getattr(request, "uri", ""))
    if ":streamGenerateContent" in uri or "alt=sse" in uri:
        return True
    body = getattr(request, "body", None) or b""
    try:
        doc = json.loads(body)
    except (ValueError, TypeError):
        return False
    return isinstance(doc, dict) and bool(doc.get("stream"))


def as_complete(vcr_request: Any, vcr_response: dict[str, Any]) -> dict[str, Any]:
    """``vcr_response``, or (non-streaming request, streamed recording) its complete form."""
    from ._sources import api_from_uri, header_value, response_body

    content_type = (header_value(vcr_response.get("headers"), "content-type") or "").lower()
    if _wants_stream(vcr_request) or "event-stream" not in content_type:
        return vcr_response
    merged = complete_body(api_from_uri(str(vcr_request.uri)) or "", response_body(vcr_response))
    if merged is None:
        return vcr_response
    skip = {"content-type", "content-encoding", "content-length", "transfer-encoding"}
    headers = {k: v for k, v in (vcr_response.get("headers") or {}).items()
               if str(k).lower() not in skip}
    headers["content-type"] = ["application/json"]
    return {**vcr_response, "headers": headers, "body": {"string": merged}}


@contextlib.contextmanager
def serving_complete_answers() -> Iterator[None]:
    """While active, a non-streaming request replayed from a streamed cassette gets JSON.

    Wraps vcrpy's httpx playback function (private, as ``replaying_drops`` does; if a
    vcrpy release renames it, such a request gets the SSE body as before).
    """
    try:
        from vcr.stubs import httpx_stubs  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - vcrpy without httpx support
        yield
        return
    original = getattr(httpx_stubs, "_play_responses", None)
    if original is None:  # pragma: no cover - a vcrpy that moved it
        yield
        return

    def play(cassette: Any, vcr_request: Any, httpx: Any) -> Any:
        response = as_complete(vcr_request, cassette.play_response(vcr_request))
        return httpx_stubs._deserialize_response(response, httpx)

    httpx_stubs._play_responses = play
    try:
        yield
    finally:
        httpx_stubs._play_responses = original
