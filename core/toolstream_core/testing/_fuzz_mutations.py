"""Mutations of one recorded stream, each paired with what it obliges the assembler to do.

A `Mutant` says how the stream changed (events, or raw body bytes cut into pieces) and which
invariants apply beyond the ones every case gets: ``removes_info`` (every committed call must
be one the unmutated stream committed), ``exact`` (the outcome must equal the unmutated one),
``poison`` (the position of a garbage or mistyped event: no call it could have touched may
commit; ``scope`` says which calls those are, see `poison_scope`) and ``blind`` (a difference nobody
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

from ._fuzz_scope import poison_scope
from ._fuzz_shape import Path, StreamShape, gemini_interrupted

__all__ = ["KINDS", "Mutant", "StreamShape", "make_mutant"]

#: One round of mutation kinds; case ``n`` takes entry ``n % len`` among the applicable ones.
KINDS: tuple[str, ...] = (
    "truncate", "drop", "rechunk", "garbage", "retype", "truncate",
    "duplicate", "swap", "char", "keepalive", "rawcut", "rebyte", "unknown",
    "lose", "finalcopy",
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
    return _numbered(shape, Mutant("drop", f"drop event {i}", events=events[:i] + events[i + 1:],
                                   removes_info=True, blind=_blind(shape, i)))


def _duplicate(shape: StreamShape, rng: random.Random) -> Mutant:
    events = shape.stream.events
    i = rng.randrange(len(events))
    return _numbered(shape, Mutant("duplicate", f"repeat event {i}",
                                   events=[*events[:i + 1], events[i], *events[i + 1:]],
                                   removes_info=True, blind=_blind(shape, i, reorder=True)))


def _swap(shape: StreamShape, rng: random.Random) -> Mutant:
    events = list(shape.stream.events)
    i = rng.randrange(len(events) - 1)
    j = i + 1 if rng.random() < 0.7 else rng.randrange(i + 1, len(events))
    events[i], events[j] = events[j], events[i]
    return _numbered(shape, Mutant("swap", f"swap events {i} and {j}", events=events, removes_info=True,
                                   blind=_blind(shape, i, reorder=True) or _blind(shape, j, reorder=True)))


def _lose(shape: StreamShape, rng: random.Random) -> Mutant:
    """Responses: one argument delta of a call and the call's done events lost, the other
    events' numbering kept (the vendor numbered what it sent; the network lost some)."""
    deltas, dones = rng.choice(shape.losses)
    lost = {rng.choice(deltas), *dones}
    events = [e for i, e in enumerate(shape.stream.events) if i not in lost]
    return _numbered(shape, Mutant("lose", f"lose events {sorted(lost)}, numbering kept", events=events,
                                   removes_info=True))


def _final_copy(shape: StreamShape, rng: random.Random) -> Mutant:
    """Responses: the terminal response's copy of one call's arguments differs from what
    streamed, so that call must not commit (DESIGN §4.4: the vendor's own proof)."""
    i, path, text, key = rng.choice(shape.final_copies)
    new = rng.choice([t for t in (text + " ", text[:-1], text + "}", '{"x":1}') if t != text])
    events = shape.stream.events
    mutated = replace_at(events[i], path, new)
    scope = ("key", key) if key[0] == "item" else ("index", key[1])
    return _with(shape, Mutant("finalcopy", f"event {i}: final copy {text!r:.30} -> {new!r:.30}",
                               events=[*events[:i], mutated, *events[i + 1:]], removes_info=True,
                               poison=i, scope=scope))


def _numbered(shape: StreamShape, mutant: Mutant) -> Mutant:
    """Responses with sequence numbers: the first event whose number skips or goes back fails
    every call live then and every call it opens (the adapter checks after the event)."""
    _with(shape, mutant)
    if shape.numbered and mutant.events is not None:
        mutant.poison = _first_break(mutant.events)
        mutant.scope = ("all+opened", None)
    return mutant


def _first_break(events: list[Any]) -> int | None:
    expected = None
    for i, event in enumerate(events):
        seq = event.get("sequence_number") if isinstance(event, dict) else None
        if seq is None:
            continue
        if expected is not None and seq != expected:
            return i
        expected = seq + 1
    return None


def _renumber(shape: StreamShape, events: list[Any]) -> list[Any]:
    """Responses events numbered again in order from the first number: a mutation that must
    change nothing (a re-chunked delta, an unknown kind) is a stream the vendor numbered so."""
    if not shape.numbered:
        return events
    first = next(e["sequence_number"] for e in events if isinstance(e, dict) and "sequence_number" in e)
    numbers = itertools.count(first)
    return [{**e, "sequence_number": next(numbers)} if isinstance(e, dict) and "sequence_number" in e else e
            for e in events]


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
                               events=_renumber(shape, [*events[:i], *split, *events[i + 1:]]), exact=True))


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
                               poison=i, scope=poison_scope(shape.stream.api, events[i], path)))


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
                               events=_renumber(shape, [*events[:at], new, *events[at:]]), exact=True))


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
    "lose": _lose, "finalcopy": _final_copy,
}
