"""What the emulator answers when a request carries tool results, and its metadata routes.

An agent loop sends the model's calls back with their results and expects an answer that
ends the turn. Replaying the model-named scenario to that request would make the agent run
its tool again on every turn (until its recursion limit), so a request whose history *ends
with tool results* gets a final text instead, and that text says what actually came back:
which tool returned what, errors included. The readers here know where each wire puts a
tool result; they never decide anything about the history's legality (``check_history`` of
each wire module does that first).

The metadata routes answer the GETs that framework classes make when they are built
(``GoogleGenAI`` asks for the model's token limits, some clients list models), so every
class can be constructed against the emulator as it is against the vendor.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

__all__ = ["PLAIN_TEXT", "ToolResult", "final_text", "model_metadata", "trailing_results"]

#: The text answer of a request that carries no tool results: nothing ran, and it says so.
PLAIN_TEXT = "Hello from the toolstream emulator: no tool ran in this turn."

_SNIPPET = 80
_ERROR_MARKS = ("error", "was not run", "not run:", "has no result", "[stream_truncated]")


class ToolResult(NamedTuple):
    """One tool result at the end of a request's history."""

    name: str
    content: str
    is_error: bool


def _text_of(value: Any) -> str:
    """A result's content as text: strings as they are, text parts joined, else JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [p.get("text") for p in value if isinstance(p, dict)]
        if texts and all(isinstance(t, str) for t in texts):
            return "".join(t for t in texts if isinstance(t, str))
    return json.dumps(value, ensure_ascii=False, default=str)


def _looks_failed(text: str) -> bool:
    """Whether a result reads as a failure (OpenAI and Gemini have no error flag, and
    LlamaIndex does not set Anthropic's)."""
    head = text[:200].lower()
    return any(mark in head for mark in _ERROR_MARKS)


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _trailing(items: list[dict[str, Any]], is_result: Callable[[dict[str, Any]], bool], id_key: str,
              content_key: str, names: Mapping[Any, str]) -> list[ToolResult]:
    """The run of result entries that ends ``items``, in order, each named by its call."""
    tail: list[ToolResult] = []
    for item in reversed(items):
        if not is_result(item):
            break
        text = _text_of(item.get(content_key))
        tail.append(ToolResult(names.get(item.get(id_key), "?"), text, _looks_failed(text)))
    return tail[::-1]


def _chat_results(body: Mapping[str, Any]) -> list[ToolResult]:
    messages = _dicts(body.get("messages"))
    names: dict[Any, str] = {}
    for msg in messages:
        for call in _dicts(msg.get("tool_calls")):
            function = call.get("function")
            name = function.get("name") if isinstance(function, dict) else None
            names[call.get("id")] = str(name or "?")
    return _trailing(messages, lambda m: m.get("role") == "tool", "tool_call_id", "content", names)


def _responses_results(body: Mapping[str, Any]) -> list[ToolResult]:
    items = _dicts(body.get("input"))
    names = {i.get("call_id"): str(i.get("name") or "?") for i in items
             if i.get("type") in ("function_call", "custom_tool_call")}
    return _trailing(items, lambda i: i.get("type") in ("function_call_output", "custom_tool_call_output"),
                     "call_id", "output", names)


def _anthropic_results(body: Mapping[str, Any]) -> list[ToolResult]:
    messages = _dicts(body.get("messages"))
    if not messages or messages[-1].get("role") != "user":
        return []
    names = {b.get("id"): str(b.get("name") or "?") for m in messages
             for b in _dicts(m.get("content")) if b.get("type") == "tool_use"}
    out: list[ToolResult] = []
    for block in _dicts(messages[-1].get("content")):
        if block.get("type") == "tool_result":
            text = _text_of(block.get("content"))
            out.append(ToolResult(names.get(block.get("tool_use_id"), "?"), text,
                                  bool(block.get("is_error")) or _looks_failed(text)))
    return out


def _gemini_results(body: Mapping[str, Any]) -> list[ToolResult]:
    contents = _dicts(body.get("contents"))
    if not contents:
        return []
    out: list[ToolResult] = []
    for part in _dicts(contents[-1].get("parts")):
        response = part.get("functionResponse") or part.get("function_response")
        if not isinstance(response, dict):
            continue
        value = response.get("response")
        text = _text_of(value)
        failed = isinstance(value, dict) and "error" in value
        out.append(ToolResult(str(response.get("name") or "?"), text,
                              failed or _looks_failed(text)))
    return out


def _bedrock_results(body: Mapping[str, Any]) -> list[ToolResult]:
    """Converse: ``toolResult`` blocks in the last user message (``status: "error"`` flags a
    failure), named by the assistant's ``toolUse`` blocks."""
    messages = _dicts(body.get("messages"))
    if not messages or messages[-1].get("role") != "user":
        return []
    uses = [b.get("toolUse") for m in messages for b in _dicts(m.get("content"))]
    names = {u.get("toolUseId"): str(u.get("name") or "?") for u in uses if isinstance(u, dict)}
    out: list[ToolResult] = []
    for block in _dicts(messages[-1].get("content")):
        result = block.get("toolResult")
        if isinstance(result, dict):
            text = _text_of(result.get("content"))
            out.append(ToolResult(names.get(result.get("toolUseId"), "?"), text,
                                  result.get("status") == "error" or _looks_failed(text)))
    return out


def _ollama_results(body: Mapping[str, Any]) -> list[ToolResult]:
    """``role: "tool"`` messages at the end, named by ``tool_name`` (Ollama has no call ids
    on the client side), else by the chat reader's id lookup."""
    named = _chat_results(body)
    tools = [m for m in _dicts(body.get("messages"))][-len(named):] if named else []
    return [r._replace(name=str(m.get("tool_name") or m.get("name") or r.name))
            for r, m in zip(named, tools, strict=True)]


_READERS: dict[str, Callable[[Mapping[str, Any]], list[ToolResult]]] = {
    "openai-chat": _chat_results,
    "openai-responses": _responses_results,
    "anthropic": _anthropic_results,
    "gemini": _gemini_results,
    "bedrock-converse": _bedrock_results,
    "ollama": _ollama_results,
    "cohere": _chat_results,  # v2 tool messages carry tool_call_id, calls function.name
}


def trailing_results(api: str, body: Mapping[str, Any]) -> list[ToolResult]:
    """The tool results that end the request's history (``[]``: it ends otherwise).

    An API this module does not read answers ``[]``, so its requests play their scenario.
    """
    reader = _READERS.get(api)
    return reader(body) if reader is not None else []


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SNIPPET else flat[: _SNIPPET - 1] + "…"


def final_text(results: list[ToolResult]) -> str:
    """The final answer to a request that carried ``results``: what actually happened."""
    if not results:
        return PLAIN_TEXT
    parts = [f"{r.name} {'failed' if r.is_error else 'returned'} {_snippet(r.content)!r}"
             for r in results]
    failed = sum(r.is_error for r in results)
    if failed == len(results):
        head = f"Nothing ran: {failed} tool result(s) came back, every one an error"
    elif failed:
        head = f"Partly done: {len(results)} tool result(s) came back, {failed} of them errors"
    else:
        head = f"All done: {len(results)} tool result(s) came back"
    return f"{head}: {'; '.join(parts)}."


# --------------------------------------------------------------------------- metadata

_OUTPUT_LIMIT = 8192
_INPUT_LIMIT = 1_048_576


def _openai_model(name: str) -> dict[str, Any]:
    return {"id": name, "object": "model", "created": 1_750_000_000, "owned_by": "toolstream"}


def _anthropic_model(name: str) -> dict[str, Any]:
    return {"type": "model", "id": name, "display_name": name,
            "created_at": "2025-06-16T00:00:00Z"}


def _gemini_model(name: str) -> dict[str, Any]:
    return {"name": f"models/{name}", "version": "001", "displayName": name,
            "inputTokenLimit": _INPUT_LIMIT, "outputTokenLimit": _OUTPUT_LIMIT,
            "supportedGenerationMethods": ["generateContent", "streamGenerateContent"]}


def _metadata_kind(prefix: str, target: str, headers: Mapping[str, str]) -> str:
    """Whose model route this is: Gemini's ``v1beta`` or Google headers, Anthropic's header."""
    if prefix == "/v1beta/models" or "x-goog-api-key" in headers \
            or "x-goog-api-client" in headers or "key=" in target.partition("?")[2]:
        return "gemini"
    return "anthropic" if "anthropic-version" in headers else "openai"


_ONE: dict[str, Callable[[str], dict[str, Any]]] = {
    "gemini": _gemini_model, "anthropic": _anthropic_model, "openai": _openai_model}


def _listing(kind: str) -> dict[str, Any]:
    listing = [_ONE[kind]("emulated-model")]
    if kind == "gemini":
        return {"models": listing}
    if kind == "anthropic":
        return {"data": listing, "has_more": False, "first_id": "emulated-model",
                "last_id": "emulated-model"}
    return {"object": "list", "data": listing}


def model_metadata(target: str, headers: Mapping[str, str]) -> dict[str, Any] | None:
    """The body of a model list or model lookup GET, or ``None``: not such a route.

    The three vendors share ``/v1/models``; the request's headers say whose client asks
    (Google clients send ``x-goog-api-key`` or ``x-goog-api-client``, Anthropic's send
    ``anthropic-version``; anything else is an OpenAI client).
    """
    path = target.split("?", 1)[0].rstrip("/")
    for prefix in ("/v1beta/models", "/v1/models"):
        if path != prefix and not path.startswith(prefix + "/"):
            continue
        kind = _metadata_kind(prefix, target, headers)
        name = path[len(prefix) + 1:].removeprefix("models/")
        return _ONE[kind](name) if name else _listing(kind)
    return None
