"""Mutations of one recorded stream, each paired with what it obliges the assembler to do.

A `Mutant` says how the stream changed (events, or raw body bytes cut into pieces) and which
invariants apply beyond the ones every case gets: ``removes_info`` (every committed call must
be one the unmutated stream committed), ``exact`` (the outcome must equal the unmutated one),
``poison`` (the position of a garbage or mistyped event: no call it could have touched may
commit; ``scope`` says which calls those are, see `_scope`) and ``blind`` (a difference nobody
can detect: a lost or repeated argument fragment on an API with neither sequence numbers nor a
final copy of the arguments). ``interrupted`` lists the Gemini streaming calls (position, name)
the mutated stream never ends (a new named ``functionCall`` begins over them, or the stream
ends while they are declared to continue): each must fail.

Every choice comes from the `random.Random` handed in, so a case replays bit for bit.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from typing import Any

from ._fuzz_shape import PART, Path, StreamShape, find, gemini_interrupted, tool_elements

__all__ = ["KINDS", "Mutant", "StreamShape", "make_mutant"]

#: One round of mutation kinds; case ``n`` takes entry ``n % len`` among the applicable ones.
KINDS: tuple[str, ...] = (
    "truncate", "drop", "rechunk", "garbage", "retype", "truncate",
    "duplicate", "swap", "char", "keepalive", "rawcut", "rebyte", "unknown",
)
_BLIND_APIS = frozenset({"openai-chat", "anthropic", "gemini", "bedrock-converse", "cohere", "ollama"})

_WRONG_TYPES: tuple[Any, ...] = ("x", 7, 1.5, [], {}, True)
_ABSENT: Any = object()  # retype to "no such field": a Gemini partialArgs entry with no value
_GARBAGE: tuple[str, ...] = ("None", "list", "str", "int", "bytes", "{}", "float", "json-text")
# Replacement characters for a one-character mutation: structure, escapes, multi-byte, halves.
_CHARS = ('"', "\\", "{", "}", ",", ":", "0", "a", " ", "\x00", "\u00e9", "\U0001f600", "\ud800",
          "\udc00", "\ufeff")

# Split rules: keys copied to every piece ("*": all keys not on the path and not tail-only);
# keys only the last piece carries (the finish signal, usage). Everything else: first piece.
_COPY: dict[str, dict[str, frozenset[str] | str]] = {
    "openai-chat": {"": "*", "choices": frozenset({"index"}), "tool_calls": frozenset({"index"})},
    "openai-responses": {"": "*"},
    "anthropic": {"": "*", "delta": "*"},
    "gemini": {"": "*", "candidates": frozenset({"index"}), "content": frozenset({"role"}),
               "partialArgs": frozenset({"jsonPath", "willContinue"})},
    "bedrock-converse": {"": "*", "contentBlockDelta": "*", "delta": "*", "toolUse": "*"},
    "cohere": {"": "*", "delta": "*", "message": "*", "tool_calls": "*", "function": "*"},
}
_TAIL: dict[str, dict[str, frozenset[str]]] = {
    "openai-chat": {"": frozenset({"usage", "error"}),
                    "choices": frozenset({"finish_reason", "error"})},
    "gemini": {"": frozenset({"usageMetadata", "error", "promptFeedback"}),
               "candidates": frozenset({"finishReason", "finishMessage", "safetyRatings",
                                        "citationMetadata", "groundingMetadata"}),
               "functionCall": frozenset({"willContinue"})},
}


@dataclass
class Mutant:
    """One mutated stream and the invariants it adds (see the module docstring)."""

    kind: str
    detail: str
    events: list[Any] | None = None
    body: bytes | None = None
    content_type: str = ""
    pieces: list[int] = field(default_factory=list)
    transport_complete: bool = True
    removes_info: bool = False
    exact: bool = False
    poison: int | None = None
    scope: tuple[str, Any] = ("all", None)
    blind: bool = False
    interrupted: list[tuple[int, str]] = field(default_factory=list)


def replace_at(node: Any, path: Path, value: Any) -> Any:
    """A copy of ``node`` with ``path`` set to ``value``; only the containers on the path copy."""
    step, rest = path[0], path[1:]
    copy: Any = list(node) if isinstance(node, list) else dict(node)
    if not rest and value is _ABSENT:
        del copy[step]
    else:
        copy[step] = replace_at(node[step], rest, value) if rest else value
    return copy


def make_mutant(shape: StreamShape, kind: str, rng: random.Random) -> Mutant:
    """Build one mutant of ``kind`` (which must be applicable) from ``rng``."""
    mutant = _BUILDERS[kind](shape, rng)
    if shape.stream.api == "gemini" and mutant.events is not None:
        mutant.interrupted = gemini_interrupted(mutant.events)
    return mutant


def _truncate(shape: StreamShape, rng: random.Random) -> Mutant:
    events = shape.stream.events
    complete = rng.random() < 0.5
    keep = rng.randrange(len(events)) if complete else rng.randrange(len(events) + 1)
    return Mutant("truncate", f"keep {keep} of {len(events)} events, transport_complete={complete}",
                  events=events[:keep], transport_complete=complete and shape.stream.transport_complete,
                  removes_info=True)


def _drop(shape: StreamShape, rng: random.Random) -> Mutant:
    events = shape.stream.events
    i = rng.randrange(len(events))
    return _with(shape, Mutant("drop", f"drop event {i}", events=events[:i] + events[i + 1:],
                               removes_info=True, blind=_blind(shape, i)))


def _duplicate(shape: StreamShape, rng: random.Random) -> Mutant:
    events = shape.stream.events
    i = rng.randrange(len(events))
    return _with(shape, Mutant("duplicate", f"repeat event {i}",
                               events=[*events[:i + 1], events[i], *events[i + 1:]],
                               removes_info=True, blind=_blind(shape, i, reorder=True)))


def _swap(shape: StreamShape, rng: random.Random) -> Mutant:
    events = list(shape.stream.events)
    i = rng.randrange(len(events) - 1)
    j = i + 1 if rng.random() < 0.7 else rng.randrange(i + 1, len(events))
    events[i], events[j] = events[j], events[i]
    return _with(shape, Mutant("swap", f"swap events {i} and {j}", events=events, removes_info=True,
                               blind=_blind(shape, i, reorder=True) or _blind(shape, j, reorder=True)))


def _blind(shape: StreamShape, i: int, *, reorder: bool = False) -> bool:
    """Can a changed outcome go unnoticed by anyone? Only on APIs with no sequence numbers and
    no final copy, and only when the event carries argument data (or, for a repeat or a
    reordering, any part of a tool call: a repeated or moved start/end marker makes another
    well-formed stream, e.g. a Gemini call that ends before its arguments)."""
    events = shape.tool_events if reorder else shape.fragment_events
    return shape.stream.api in _BLIND_APIS and i in events


def _with(shape: StreamShape, mutant: Mutant) -> Mutant:
    mutant.transport_complete = shape.stream.transport_complete
    return mutant


def _cut_points(rng: random.Random, text: str) -> list[int]:
    """2-5 cut points, biased to land inside ``\\uXXXX`` escapes and next to non-ASCII text."""
    special = [i for i in range(1, len(text)) if not text[i].isascii() or not text[i - 1].isascii()]
    start = 0
    while (start := text.find("\\u", start)) != -1:
        special.extend(p for p in range(start + 1, start + 6) if 0 < p < len(text))
        start += 2
    cuts: set[int] = set()
    for _ in range(rng.randint(1, min(4, len(text) - 1))):
        pool = special if special and rng.random() < 0.5 else range(1, len(text))
        cuts.add(rng.choice(list(pool)) if not isinstance(pool, range) else rng.choice(pool))
    return sorted(cuts)


def _rechunk(shape: StreamShape, rng: random.Random) -> Mutant:
    i, path, text = rng.choice([f for f in shape.fragments if len(f[2]) >= 2])
    cuts = _cut_points(rng, text)
    bounds = [0, *cuts, len(text)]
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
    api = shape.stream.api
    events = shape.stream.events
    split = [_split_event(api, events[i], path, piece, k, len(pieces)) for k, piece in enumerate(pieces)]
    return _with(shape, Mutant("rechunk", f"split the fragment of event {i} at {cuts}",
                               events=[*events[:i], *split, *events[i + 1:]], exact=True))


def _split_event(api: str, node: Any, path: Path, piece: str, k: int, n: int, level: str = "") -> Any:
    """Piece ``k`` of ``n`` of an event whose fragment at ``path`` is split (see `_COPY`)."""
    if not path:
        return piece
    step, rest = path[0], path[1:]
    if isinstance(node, list):
        assert isinstance(step, int)
        item = _split_event(api, node[step], rest, piece, k, n, level)
        if k == 0:
            return [*node[:step], item]
        return [item, *node[step + 1:]] if k == n - 1 else [item]
    copy_keys = _COPY.get(api, {}).get(level, frozenset())
    tail_keys = _TAIL.get(api, {}).get(level, frozenset())
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == step:
            out[key] = _split_event(api, value, rest, piece, k, n, key)
        elif key in tail_keys:
            if k == n - 1:
                out[key] = value
        elif copy_keys == "*" or key in copy_keys or k == 0:
            out[key] = value
    if api == "gemini" and level == "functionCall" and k < n - 1:
        out["willContinue"] = True  # every piece but the last keeps the call open
    return out


def _keepalive(shape: StreamShape, rng: random.Random) -> Mutant:
    picks = sorted(rng.choice(shape.keepalive_after) for _ in range(rng.randint(1, 3)))
    events: list[Any] = []
    for i, event in enumerate(shape.stream.events):
        events.append(event)
        for at, ci in picks:
            if at == i:
                candidate: dict[str, Any] = {
                    "content": {"role": "model", "parts": [{"functionCall": {"willContinue": True}}]}}
                if ci is not None:
                    candidate["index"] = ci
                events.append({"candidates": [candidate]})
    where = ", ".join(f"after event {i}" for i, _ in picks)
    return _with(shape, Mutant("keepalive", f"keep-alive part(s) {where}", events=events, exact=True))


def _garbage(shape: StreamShape, rng: random.Random) -> Mutant:
    events = shape.stream.events
    i = rng.randrange(len(events))
    choice = rng.choice(_GARBAGE)
    value = _garbage_value(choice, events[i])
    return _with(shape, Mutant("garbage", f"event {i} replaced by {choice}",
                               events=[*events[:i], value, *events[i + 1:]], removes_info=True,
                               poison=i))


def _garbage_value(choice: str, event: Any) -> Any:
    import json

    text = json.dumps(event)
    return {"None": None, "list": [event], "str": "garbage", "int": 42, "bytes": text.encode(),
            "{}": {}, "float": 3.5, "json-text": text}[choice]


def _retype(shape: StreamShape, rng: random.Random) -> Mutant:
    i, path, current = rng.choice(shape.fields)
    pool = [v for v in _WRONG_TYPES if type(v) is not type(current)]
    if shape.stream.api == "openai-chat" and path[-1] == "arguments":
        pool = [v for v in pool if not isinstance(v, dict)]  # a JSON object is legal (DESIGN §5)
    if shape.stream.api == "anthropic" and path == ("index",):
        pool.append(None)  # a null block index
    if path[-1] == "stringValue":
        pool.extend([None, _ABSENT])  # a partialArgs entry with a null value, or none at all
    value = rng.choice(pool)
    events = shape.stream.events
    mutated = replace_at(events[i], path, value)
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    shown = "<removed>" if value is _ABSENT else repr(value)
    return _with(shape, Mutant("retype", f"event {i}: {where} = {shown}",
                               events=[*events[:i], mutated, *events[i + 1:]], removes_info=True,
                               poison=i, scope=_scope(shape.stream.api, events[i], path)))


def _scope(api: str, event: Any, path: Path) -> tuple[str, Any]:
    """Which calls a mistyped field at ``path`` could have touched ("could have touched" made exact).

    When the fields that attribute the event to a call are still readable (an Anthropic block
    index, a chat tool-call index, a Responses output index, a Gemini part's name), only that
    call: ``("index", n)`` / ``("nth", n)`` (the n-th call the event opens) / ``("id", id)``
    (a chat fragment by its id: with no index, or a new id on a known index, rule 1) /
    ``("key", key)`` (a Responses argument event by its ``item_id``); a Gemini part without a
    name, or a bare chat fragment, continues the latest call: ``("last", None)``. Otherwise every call
    live when the event arrived, and the calls the event opened when it holds no other call:
    ``("all+opened", None)``.
    """
    if api == "anthropic" and path[0] in ("delta", "content_block") and _is_int(event.get("index")):
        return ("index", event["index"])
    if api == "openai-responses" and path[0] in ("delta", "arguments", "item", "item_id") \
            and _is_int(event.get("output_index")):
        return ("index", event["output_index"])
    if api == "openai-responses" and path == ("output_index",) and isinstance(event.get("item_id"), str):
        return ("key", ("item", event["item_id"]))  # an argument event still names its item
    if api == "openai-chat" and len(path) > 5 and path[-1] != "index":
        call = event["choices"][path[1]]["delta"]["tool_calls"][path[4]]
        call_id = call.get("id") if isinstance(call, dict) else None
        # the id attributes the event unless the id itself is the mistyped field
        by_id = path[-1] != "id" and isinstance(call_id, str) and bool(call_id)
        if isinstance(call, dict) and _is_int(call.get("index")):
            return ("id", call_id) if by_id else ("index", call["index"])  # rule 1: new id, new call
        if isinstance(call, dict) and "index" not in call:  # rule 1 without an index
            function = call.get("function")
            named = isinstance(function, dict) and function.get("name")
            if by_id:
                return ("id", call_id)
            if not named:
                return ("last", None)
    if api == "gemini" and len(path) > 6:
        named = [p for p, call in find(event, (*PART, "functionCall"))
                 if isinstance(call, dict) and isinstance(call.get("name"), str) and call["name"]]
        here = tuple(path[:6])
        return ("nth", named.index(here)) if here in named else ("last", None)
    scope = _new_family_scope(api, event, path)
    if scope is not None:
        return scope
    return ("all+opened", None) if tool_elements(api, event) <= 1 else ("all", None)


def _new_family_scope(api: str, event: Any, path: Path) -> tuple[str, Any] | None:
    """Bedrock and Cohere events name their call by index; an Ollama call by its position."""
    if api == "bedrock-converse" and len(path) > 2 and path[1] in ("delta", "start"):
        index = event[path[0]].get("contentBlockIndex")
        return ("index", index) if _is_int(index) else None
    if api == "cohere" and path[0] == "delta" and _is_int(event.get("index")):
        return ("index", event["index"])
    if api == "ollama" and len(path) > 4 and path[-1] not in ("id", "index"):
        assert isinstance(path[2], int)
        return ("nth", path[2])  # a name or the arguments: only the call this entry opens
    return None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _char(shape: StreamShape, rng: random.Random) -> Mutant:
    i, path, text = rng.choice(shape.texts)
    pos = rng.randrange(len(text))
    new = rng.choice([c for c in _CHARS if c != text[pos]])
    events = shape.stream.events
    mutated = replace_at(events[i], path, text[:pos] + new + text[pos + 1:])
    blind = shape.stream.api in _BLIND_APIS
    return _with(shape, Mutant("char", f"event {i}: character {pos} -> {new!r}",
                               events=[*events[:i], mutated, *events[i + 1:]], removes_info=True,
                               blind=blind))


def _byte_pieces(rng: random.Random, size: int) -> list[int]:
    """Chunk sizes covering ``size`` bytes: up to 64 random cuts plus a run of one-byte pieces
    somewhere (inside a multi-byte character, between CR and LF, inside ``data:``)."""
    if size <= 0:
        return []
    cuts = set(rng.sample(range(1, size), min(size - 1, rng.randint(1, 64)))) if size > 1 else set()
    start = rng.randrange(size)
    cuts.update(range(start, min(size, start + 16)))
    bounds = sorted(cuts | {0, size})
    return [b - a for a, b in itertools.pairwise(bounds) if b > a]


def _rawcut(shape: StreamShape, rng: random.Random) -> Mutant:
    body, content_type, how = shape.body(rng)
    cut = rng.randrange(len(body)) if body else 0
    return Mutant("rawcut", f"{how} cut after byte {cut} of {len(body)}", body=body[:cut],
                  content_type=content_type, pieces=_byte_pieces(rng, cut),
                  transport_complete=shape.stream.transport_complete, removes_info=True)


def _rebyte(shape: StreamShape, rng: random.Random) -> Mutant:
    body, content_type, how = shape.body(rng)
    pieces = _byte_pieces(rng, len(body))
    return Mutant("rebyte", f"{how} of {len(body)} bytes fed in {len(pieces)} pieces", body=body,
                  content_type=content_type, pieces=pieces,
                  transport_complete=shape.stream.transport_complete, exact=True)


def _unknown(shape: StreamShape, rng: random.Random) -> Mutant:
    """A well-formed event of a kind the adapter does not know: vendors add kinds all the time,
    so it must change nothing (DESIGN §5: unknown kinds stay ignored)."""
    events = shape.stream.events
    at = rng.randrange(len(events) + 1)
    api = shape.stream.api
    new: dict[str, Any]
    if api == "anthropic":
        index = next((e.get("index") for e in reversed(events[:at])
                      if isinstance(e, dict) and isinstance(e.get("index"), int)), 0)
        new = rng.choice([
            {"type": "ping"},
            {"type": "content_block_delta", "index": index,
             "delta": {"type": "citations_delta", "citation": {"cited_text": "x"}}},
            {"type": "content_block_delta", "index": index,
             "delta": {"type": "signature_delta", "signature": "abc"}},
            {"type": "message_new_kind", "data": {"x": 1}},
        ])
    elif api == "openai-responses":
        new = rng.choice([{"type": "response.new_kind.delta", "sequence_number": 10_000, "delta": "x"},
                          {"type": "response.in_progress", "sequence_number": 10_001,
                           "response": {"id": "resp_x", "status": "in_progress"}}])
    elif api == "openai-chat":
        delta = rng.choice([{"content": ""}, {"reasoning_content": "hm"}])
        new = {"id": "chatcmpl-x", "object": "chat.completion.chunk",
               "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
    elif api in _UNKNOWN_EVENTS:
        new = rng.choice(_UNKNOWN_EVENTS[api])
    else:
        new = rng.choice([{"usageMetadata": {"promptTokenCount": 1}, "modelVersion": "m"},
                          {"candidates": [{"content": {"role": "model",
                                                       "parts": [{"thought": True, "text": "hm"}]}}]}])
    return _with(shape, Mutant("unknown", f"{new!r:.70} inserted before event {at}",
                               events=[*events[:at], new, *events[at:]], exact=True))


#: Well-formed events of kinds (or content) the new families' adapters ignore.
_UNKNOWN_EVENTS: dict[str, list[dict[str, Any]]] = {
    "bedrock-converse": [
        {"newKindOfEvent": {"x": 1}},
        {"contentBlockDelta": {"contentBlockIndex": 99, "delta": {"reasoningContent": {"text": "hm"}}}},
        {"contentBlockDelta": {"contentBlockIndex": 98, "delta": {"text": "x"}}},
    ],
    "cohere": [
        {"type": "debug", "prompt": "x"},
        {"type": "citation-start", "index": 0, "delta": {"message": {"citations": {"start": 0, "end": 1}}}},
        {"type": "content-delta", "index": 0, "delta": {"message": {"content": {"text": "x"}}}},
        {"type": "new-kind-of-event"},
    ],
    "ollama": [
        {"model": "m", "created_at": "2025-01-01T00:00:00Z",
         "message": {"role": "assistant", "content": "", "thinking": "hm"}, "done": False},
    ],
}

_BUILDERS = {
    "truncate": _truncate, "drop": _drop, "duplicate": _duplicate, "swap": _swap,
    "rechunk": _rechunk, "keepalive": _keepalive, "garbage": _garbage, "retype": _retype,
    "char": _char, "rawcut": _rawcut, "rebyte": _rebyte, "unknown": _unknown,
}
