"""Whether a request body pairs every tool call with exactly one result, both ways.

The promise "the next request is legal" is about the bytes a framework class really sends,
so tests read it off the emulator's request log, not off the framework's message objects:
each wire puts a call and its result somewhere else (a chat ``tool_calls`` entry and a
``role: "tool"`` message, an Anthropic ``tool_use`` block and a ``tool_result`` block in the
next user message, a Bedrock ``toolUse`` and ``toolResult``, a Gemini ``functionCall`` and
``functionResponse`` part, Cohere v1's ``tool_calls`` and ``tool_results``). Each wire is
read here into one neutral sequence, and one rule judges it:

- every call of an assistant turn is answered by exactly one result right after that turn
  (``unanswered``, ``answered_twice``);
- every result answers a call of the assistant turn right before it (``orphan_result``: a
  result without its call, which the vendors refuse as well);
- every call's arguments, as sent, are a JSON object (``arguments``: servers that parse the
  history's arguments, such as llama.cpp and vLLM chat templates, answer 500 otherwise).

Calls are keyed by their id where the wire carries ids on both sides, else by their name
(Ollama's tool messages, Cohere v1, Gemini parts without ids); an Ollama tool message with
neither answers the oldest call still open, as the server reads it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Literal, NamedTuple

__all__ = ["PairingProblem", "history_pairing", "sent_calls"]

Kind = Literal["unanswered", "answered_twice", "orphan_result", "arguments"]


class PairingProblem(NamedTuple):
    """One way a request body breaks the pairing: what, where (the history index), which call."""

    kind: Kind
    position: int
    key: str


#: The key of a result that names no call: it answers the oldest call still open (Ollama's
#: tool messages from clients that send neither a name nor an id: the server reads them in
#: order).
_ANY = ""


class _Item(NamedTuple):
    position: int
    calls: tuple[tuple[str, bool], ...] = ()  # (key, arguments are a JSON object)
    results: tuple[str, ...] = ()


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _object_text(value: Any) -> bool:
    """Argument text (or an already-parsed value) that is a JSON object."""
    if isinstance(value, dict):
        return True
    if not isinstance(value, str):
        return False
    try:
        return isinstance(json.loads(value), dict)
    except ValueError:
        return False


def _chat(body: Mapping[str, Any], by_name: bool = False) -> list[_Item]:
    """OpenAI chat and the servers that copy it (Mistral, NVIDIA, LiteLLM's upstreams),
    Cohere v2, and Ollama (``by_name``: its tool messages carry a name, not an id)."""
    items: list[_Item] = []
    for i, msg in enumerate(_dicts(body.get("messages"))):
        role = msg.get("role")
        if role == "assistant" and msg.get("tool_calls"):
            calls = []
            for call in _dicts(msg["tool_calls"]):
                raw = call.get("function")
                function: dict[str, Any] = raw if isinstance(raw, dict) else {}
                key = function.get("name") if by_name else call.get("id")
                calls.append((str(key), _object_text(function.get("arguments"))))
            items.append(_Item(i, calls=tuple(calls)))
        elif role == "tool":
            key = (msg.get("tool_name") or msg.get("name")) if by_name else msg.get("tool_call_id")
            items.append(_Item(i, results=(_ANY if key is None and by_name else str(key),)))
        else:
            items.append(_Item(i))
    return items


def _blocks(body: Mapping[str, Any], use: Callable[[dict[str, Any]], tuple[str, bool] | None],
            result: Callable[[dict[str, Any]], str | None], key: str = "messages",
            parts: str = "content") -> list[_Item]:
    """Wires whose calls and results are blocks inside messages (Anthropic, Bedrock, Gemini)."""
    items: list[_Item] = []
    for i, msg in enumerate(_dicts(body.get(key))):
        blocks = _dicts(msg.get(parts))
        calls = tuple(c for c in (use(b) for b in blocks) if c is not None)
        results = tuple(r for r in (result(b) for b in blocks) if r is not None)
        items.append(_Item(i, calls=calls, results=results))
    return items


def _anthropic(body: Mapping[str, Any]) -> list[_Item]:
    return _blocks(
        body,
        lambda b: (str(b.get("id")), isinstance(b.get("input"), dict))
        if b.get("type") == "tool_use" else None,
        lambda b: str(b.get("tool_use_id")) if b.get("type") == "tool_result" else None)


def _bedrock(body: Mapping[str, Any]) -> list[_Item]:
    def use(block: dict[str, Any]) -> tuple[str, bool] | None:
        call = block.get("toolUse")
        return (str(call.get("toolUseId")), isinstance(call.get("input"), dict)) \
            if isinstance(call, dict) else None

    def result(block: dict[str, Any]) -> str | None:
        answer = block.get("toolResult")
        return str(answer.get("toolUseId")) if isinstance(answer, dict) else None

    return _blocks(body, use, result)


def _gemini(body: Mapping[str, Any]) -> list[_Item]:
    contents = _dicts(body.get("contents"))
    parts = [p for c in contents for p in _dicts(c.get("parts"))]
    calls = [p.get("functionCall") or p.get("function_call") for p in parts]
    answers = [p.get("functionResponse") or p.get("function_response") for p in parts]
    with_ids = all(isinstance(x, dict) and x.get("id") for x in calls + answers if x is not None)

    def key(value: dict[str, Any]) -> str:
        return str(value.get("id") if with_ids else value.get("name"))

    def use(part: dict[str, Any]) -> tuple[str, bool] | None:
        call = part.get("functionCall") or part.get("function_call")
        return (key(call), isinstance(call.get("args", {}), dict)) if isinstance(call, dict) else None

    def result(part: dict[str, Any]) -> str | None:
        answer = part.get("functionResponse") or part.get("function_response")
        return key(answer) if isinstance(answer, dict) else None

    return _blocks(body, use, result, key="contents", parts="parts")


def _responses(body: Mapping[str, Any]) -> list[_Item]:
    items: list[_Item] = []
    for i, entry in enumerate(_dicts(body.get("input"))):
        kind = str(entry.get("type") or "")
        if kind == "function_call":
            items.append(_Item(i, calls=((str(entry.get("call_id")),
                                          _object_text(entry.get("arguments"))),)))
        elif kind.endswith("_call") and "call_id" in entry:
            items.append(_Item(i, calls=((str(entry.get("call_id")), True),)))
        elif kind.endswith("_call_output"):
            items.append(_Item(i, results=(str(entry.get("call_id")),)))
        else:
            items.append(_Item(i))
    # consecutive call items are one turn, as the API reads them
    merged: list[_Item] = []
    for item in items:
        if item.calls and merged and merged[-1].calls and not merged[-1].results:
            merged[-1] = merged[-1]._replace(calls=merged[-1].calls + item.calls)
        else:
            merged.append(item)
    return merged


def _cohere_v1(body: Mapping[str, Any]) -> list[_Item]:
    """Cohere v1: a ``CHATBOT`` turn's ``tool_calls`` (no ids) answered by the ``TOOL`` turns
    after it, or by the request's top-level ``tool_results`` when it is the last turn."""
    items: list[_Item] = []
    history = _dicts(body.get("chat_history"))
    for i, turn in enumerate(history):
        role = str(turn.get("role") or "").upper()  # the cohere SDK sends "Chatbot", "Tool"
        if role == "CHATBOT" and turn.get("tool_calls"):
            items.append(_Item(i, calls=tuple((str(c.get("name")), isinstance(c.get("parameters", {}), dict))
                                              for c in _dicts(turn["tool_calls"]))))
        elif role == "TOOL":
            items.append(_Item(i, results=tuple(str((r.get("call") or {}).get("name"))
                                                for r in _dicts(turn.get("tool_results")))))
        else:
            items.append(_Item(i))
    top = _dicts(body.get("tool_results"))
    if top:
        items.append(_Item(len(history), results=tuple(str((r.get("call") or {}).get("name"))
                                                       for r in top)))
    return items


_READERS: dict[str, Callable[[Mapping[str, Any]], list[_Item]]] = {
    "openai-chat": _chat,
    "cohere": _chat,
    "ollama": lambda body: _chat(body, by_name=True),
    "openai-responses": _responses,
    "anthropic": _anthropic,
    "bedrock-converse": _bedrock,
    "gemini": _gemini,
}


def _judge(items: list[_Item]) -> list[PairingProblem]:
    problems: list[PairingProblem] = []
    pending: list[str] = []
    answered: set[str] = set()
    opened = -1
    for item in items:
        for key in item.results:
            if key == _ANY and pending:
                key = pending[0]
            if key in pending:
                pending.remove(key)
                answered.add(key)
            elif key in answered:
                problems.append(PairingProblem("answered_twice", item.position, key))
            else:
                problems.append(PairingProblem("orphan_result", item.position, key))
        if item.results and not item.calls:
            continue
        problems += [PairingProblem("unanswered", opened, key) for key in pending]
        pending, answered, opened = [key for key, _ in item.calls], set(), item.position
        problems += [PairingProblem("arguments", item.position, key)
                     for key, ok in item.calls if not ok]
    problems += [PairingProblem("unanswered", opened, key) for key in pending]
    return problems


def _items(api: str, body: Mapping[str, Any], path: str) -> list[_Item]:
    if api == "cohere" and path.rstrip("/").endswith("/v1/chat"):
        return _cohere_v1(body)
    reader = _READERS.get(api)
    if reader is None:
        raise ValueError(f"no pairing reader for the {api!r} wire")
    return reader(body)


def sent_calls(api: str, body: Mapping[str, Any], *, path: str = "") -> list[str]:
    """The key of every call ``body`` sends, in order: its id, or its name where the wire
    pairs by name (Ollama, Cohere v1, Gemini parts without ids)."""
    return [key for item in _items(api, body, path) for key, _ in item.calls]


def history_pairing(api: str, body: Mapping[str, Any], *, path: str = "") -> list[PairingProblem]:
    """What breaks the pairing in ``body``, a request on ``api`` (``path``: the URL path, which
    tells Cohere's v1 ``/v1/chat`` from v2); empty when every call and result pair up.

    For a request the emulator logged: ``history_pairing(r.api, r.body, path=r.path)``.
    """
    return _judge(_items(api, body, path))
