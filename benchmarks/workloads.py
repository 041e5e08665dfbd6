"""Benchmark inputs: realistic tool-call arguments cut into vendor-shaped chunks.

Every contender is fed the *same* wire text (one JSON document per SSE event, exactly the
shape OpenAI Chat Completions or the Anthropic Messages API sends). Contenders that take dicts
or SDK objects get them decoded from that text outside the timed section, batch by batch, so a
16 MiB call cut into 4-byte fragments (four million chunks) never has to sit in memory whole.
"""

from __future__ import annotations

import bisect
import itertools
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KiB = 1024
MiB = 1024 * KiB

#: A short Python module, quoted and re-quoted the way a coding agent's ``write_file`` call
#: carries it: newlines, tabs, quotes, backslashes and some non-ASCII text, so the JSON text
#: has escapes that fragments cut through.
_SOURCE_TEXT = '''"""Order service: résumé of the pricing rules (see docs/prix.md)."""
import json
from decimal import Decimal


class OrderService:
\t"""Prices an order; raises ValueError on an unknown SKU → caller retries."""

\tdef __init__(self, catalog: dict[str, Decimal]) -> None:
\t\tself.catalog = catalog  # SKU -> unit price, e.g. {"A-1": Decimal("9.99")}

\tdef total(self, lines: list[tuple[str, int]]) -> Decimal:
\t\tsubtotal = sum(self.catalog[sku] * qty for sku, qty in lines)
\t\tif subtotal > 100:
\t\t\tsubtotal *= Decimal("0.95")  # 5 % off — «remise fidélité»
\t\treturn subtotal.quantize(Decimal("0.01"))

\tdef describe(self) -> str:
\t\treturn json.dumps({"skus": sorted(self.catalog), "path": "C:\\\\orders\\\\今日"})

'''


@dataclass(frozen=True)
class ToolCallSpec:
    """One tool call of a workload: identity plus its arguments as text and as a value."""

    id: str
    name: str
    args_text: str
    args: dict[str, Any]

    @property
    def nbytes(self) -> int:
        """Argument size in UTF-8 bytes, the unit DESIGN §4.8 counts in."""
        return len(self.args_text.encode("utf-8"))


def _encoded_len(ch: str) -> int:
    """UTF-8 bytes one character of a string value takes inside JSON text."""
    return len(json.dumps(ch, ensure_ascii=False).encode("utf-8")) - 2


def _json_string_prefix(text: str, budget: int) -> str:
    """Longest repetition-prefix of ``text`` whose JSON-escaped form fits ``budget`` bytes.

    Works on one period of ``text`` so a 16 MiB content string needs no per-character table.
    """
    costs = [_encoded_len(ch) for ch in text]
    period = sum(costs)
    whole, rest = divmod(max(budget, 0), period)
    cumulative = list(itertools.accumulate(costs))
    tail = bisect.bisect_right(cumulative, rest)
    return text * whole + text[:tail]


def write_file_call(nbytes: int, *, call_id: str = "call_bench_write_0") -> ToolCallSpec:
    """A ``write_file`` call whose JSON arguments are exactly ``nbytes`` UTF-8 bytes long.

    The long ``content`` string is what coding agents stream: most of the bytes of a big tool
    call are one string value, so this is the case where quadratic string merging shows.
    """
    path = "src/orders/service.py"
    empty = json.dumps({"path": path, "content": "", "overwrite": True}, ensure_ascii=False)
    budget = nbytes - len(empty.encode("utf-8"))
    content = _json_string_prefix(_SOURCE_TEXT, budget)
    args = {"path": path, "content": content, "overwrite": True}
    text = json.dumps(args, ensure_ascii=False)
    pad = nbytes - len(text.encode("utf-8"))
    if pad > 0:
        args["content"] = content + "#" * pad
        text = json.dumps(args, ensure_ascii=False)
    return ToolCallSpec(call_id, "write_file", text, args)


def _record(i: int) -> dict[str, Any]:
    """One row of the nested workload: objects, arrays, numbers, nulls, non-ASCII text."""
    return {
        "id": i,
        "name": f"Customer {i} — Zoë Ångström",
        "active": i % 3 != 0,
        "score": round(i * 1.37 % 100, 2),
        "tags": ["vip", "eu", f"cohort-{i % 7}"],
        "address": {
            "street": f"{i} Rue de l'Église",
            "city": "Zürich",
            "geo": {"lat": 47.3769 + i / 1e4, "lng": 8.5417 - i / 1e4},
        },
        "orders": [{"sku": f"A-{i % 13}", "qty": i % 5 + 1, "note": None}],
    }


def nested_call(nbytes: int, *, call_id: str = "call_bench_nested_0") -> ToolCallSpec:
    """An ``upsert_records`` call: a list of nested records, padded to exactly ``nbytes``."""
    records: list[dict[str, Any]] = []
    base = len(json.dumps({"records": [], "comment": ""}, ensure_ascii=False).encode("utf-8"))
    used = base
    i = 0
    while True:
        row = _record(i)
        cost = len(json.dumps(row, ensure_ascii=False).encode("utf-8")) + (2 if records else 0)
        if used + cost > nbytes:
            break
        records.append(row)
        used += cost
        i += 1
    args: dict[str, Any] = {"records": records, "comment": "#" * max(nbytes - used, 0)}
    text = json.dumps(args, ensure_ascii=False)
    return ToolCallSpec(call_id, "upsert_records", text, args)


def small_call(i: int) -> ToolCallSpec:
    """One of the 32 parallel calls: a few hundred bytes, like a search or a lookup."""
    args = {
        "query": f"open invoices for customer {i} in région Île-de-France",
        "filters": {"status": ["open", "overdue"], "min_amount": 10 * i, "currency": "EUR"},
        "limit": 25,
        "include": ["lines", "payments"],
    }
    return ToolCallSpec(f"call_bench_par_{i:02d}", "search_invoices", json.dumps(args), args)


PAYLOADS = {"write_file": write_file_call, "nested": nested_call}


def cut(text: str, fragment: int) -> Iterator[str]:
    """Split ``text`` into ``fragment``-character pieces, cutting wherever that falls."""
    for i in range(0, len(text), fragment):
        yield text[i : i + fragment]


#: One encoder for every event: ``json.dumps`` with options builds a new one per call.
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _dumps(value: Any) -> str:
    """Compact JSON, non-ASCII kept raw: how both vendors put events on the wire."""
    return _ENCODE(value)


# --- vendor event shapes -------------------------------------------------------------------
#
# A stream is a sequence of *steps*: ``(None, text)`` for an event given as its wire text, or
# ``(index, piece)`` for one argument fragment of call ``index``. Fragment steps are rendered
# either as wire text or straight into the dict ``json.loads`` would return (same value, built
# without paying a decode, so preparing millions of chunks stays cheap).

Step = tuple["int | None", str]

_OA_HEAD = (
    '{"id":"chatcmpl-BenchBenchBenchBench01","object":"chat.completion.chunk",'
    '"created":1782321900,"model":"gpt-4.1-2025-04-14","service_tier":"default",'
    '"system_fingerprint":"fp_bench","usage":null,"choices":[{"index":0,"delta":'
)
_OA_TAIL = ',"logprobs":null,"finish_reason":%s}],"obfuscation":"x"}'


def _oa_chunk(delta: str, finish: str | None = None) -> str:
    return _OA_HEAD + delta + _OA_TAIL % ("null" if finish is None else f'"{finish}"')


def openai_chat_steps(calls: list[ToolCallSpec], fragment: int) -> Iterator[Step]:
    """Chat Completions chunks as OpenAI sends them: a role chunk, per call an identity chunk
    (``arguments: ""``) then one chunk per fragment, a ``finish_reason`` chunk, a usage chunk.
    Parallel calls come one after another, by index, as OpenAI streams them."""
    yield None, _oa_chunk('{"role":"assistant","content":null,"refusal":null}')
    for index, call in enumerate(calls):
        head = {
            "index": index,
            "id": call.id,
            "type": "function",
            "function": {"name": call.name, "arguments": ""},
        }
        yield None, _oa_chunk('{"tool_calls":[' + _dumps(head) + "]}")
        for piece in cut(call.args_text, fragment):
            yield index, piece
    yield None, _oa_chunk("{}", "tool_calls")
    yield (
        None,
        (
            '{"id":"chatcmpl-BenchBenchBenchBench01","object":"chat.completion.chunk",'
            '"created":1782321900,"model":"gpt-4.1-2025-04-14","service_tier":"default",'
            '"system_fingerprint":"fp_bench","choices":[],"usage":{"prompt_tokens":812,'
            '"completion_tokens":4096,"total_tokens":4908},"obfuscation":"x"}'
        ),
    )


def _oa_fragment_wire(index: int, piece: str) -> str:
    return _oa_chunk('{"tool_calls":[{"index":' + str(index) + ',"function":{"arguments":' + _dumps(piece) + "}}]}")


def _oa_fragment_dict(index: int, piece: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-BenchBenchBenchBench01",
        "object": "chat.completion.chunk",
        "created": 1782321900,
        "model": "gpt-4.1-2025-04-14",
        "service_tier": "default",
        "system_fingerprint": "fp_bench",
        "usage": None,
        "choices": [
            {
                "index": 0,
                "delta": {"tool_calls": [{"index": index, "function": {"arguments": piece}}]},
                "logprobs": None,
                "finish_reason": None,
            }
        ],
        "obfuscation": "x",
    }


def anthropic_steps(calls: list[ToolCallSpec], fragment: int) -> Iterator[Step]:
    """Messages API events: ``message_start``, per call a ``tool_use`` block (``input: {}``,
    an empty first ``input_json_delta`` as Claude sends, one delta per fragment, block stop),
    then ``message_delta`` with ``stop_reason: tool_use`` and ``message_stop``."""
    start = {
        "type": "message_start",
        "message": {
            "model": "claude-sonnet-4-5-20250929",
            "id": "msg_01BenchBenchBenchBench01",
            "type": "message",
            "role": "assistant",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 812, "output_tokens": 4},
        },
    }
    yield None, _dumps(start)
    for index, call in enumerate(calls):
        block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
        yield None, _dumps({"type": "content_block_start", "index": index, "content_block": block})
        yield None, _anth_fragment_wire(index, "")
        for piece in cut(call.args_text, fragment):
            yield index, piece
        yield None, '{"type":"content_block_stop","index":' + str(index) + "}"
    stop = {
        "type": "message_delta",
        "delta": {"stop_reason": "tool_use", "stop_sequence": None},
        "usage": {"output_tokens": 4096},
    }
    yield None, _dumps(stop)
    yield None, '{"type":"message_stop"}'


def _anth_fragment_wire(index: int, piece: str) -> str:
    return (
        '{"type":"content_block_delta","index":'
        + str(index)
        + ',"delta":{"type":"input_json_delta","partial_json":'
        + _dumps(piece)
        + "}}"
    )


def _anth_fragment_dict(index: int, piece: str) -> dict[str, Any]:
    return {
        "type": "content_block_delta",
        "index": index,
        "delta": {"type": "input_json_delta", "partial_json": piece},
    }


STEPS = {"openai-chat": openai_chat_steps, "anthropic": anthropic_steps}
FRAGMENT_WIRE = {"openai-chat": _oa_fragment_wire, "anthropic": _anth_fragment_wire}
FRAGMENT_DICT = {"openai-chat": _oa_fragment_dict, "anthropic": _anth_fragment_dict}


@dataclass
class Workload:
    """One input, replayable as many times as the timer needs, in bounded batches."""

    label: str
    api: str
    calls: list[ToolCallSpec]
    fragment: int
    wire: list[str] | None = field(default=None, repr=False)

    @property
    def nbytes(self) -> int:
        return sum(call.nbytes for call in self.calls)

    @property
    def n_chunks(self) -> int:
        if self.wire is not None:
            return len(self.wire)
        fragments = sum(-(-len(c.args_text) // self.fragment) for c in self.calls)
        per_call = 1 if self.api == "openai-chat" else 3
        return fragments + per_call * len(self.calls) + 3

    def iter_events(self, source: str = "wire") -> Iterator[Any]:
        """Every event, as wire text (``source="wire"``) or as the dict it decodes to."""
        if self.wire is not None:
            texts = iter(self.wire)
            return texts if source == "wire" else map(json.loads, texts)
        steps = STEPS[self.api](self.calls, self.fragment)
        if source == "wire":
            render = FRAGMENT_WIRE[self.api]
            return (text if index is None else render(index, text) for index, text in steps)
        build = FRAGMENT_DICT[self.api]
        return (json.loads(text) if index is None else build(index, text) for index, text in steps)

    def batches(self, source: str, batch: int) -> Iterator[list[Any]]:
        """The events in lists of at most ``batch`` (the timer pauses between them)."""
        events = self.iter_events(source)
        while True:
            chunk = list(itertools.islice(events, batch))
            if not chunk:
                return
            yield chunk


def synthetic(payload: str, api: str, nbytes: int, fragment: int) -> Workload:
    """A single big call of ``payload`` kind, ``nbytes`` of arguments, in ``fragment`` cuts."""
    call = PAYLOADS[payload](nbytes)
    if api == "anthropic":
        call = ToolCallSpec("toolu_01" + call.id[5:], call.name, call.args_text, call.args)
    return Workload(f"{payload}/{api}/{fragment}B/{size_label(nbytes)}", api, [call], fragment)


def parallel(api: str, n: int = 32, fragment: int = 4) -> Workload:
    """``n`` small calls in one assistant turn (the DESIGN default in-flight limit is 32)."""
    calls = [small_call(i) for i in range(n)]
    if api == "anthropic":
        calls = [ToolCallSpec("toolu_01" + c.id[5:], c.name, c.args_text, c.args) for c in calls]
    return Workload(f"parallel{n}/{api}/{fragment}B", api, calls, fragment)


def size_label(nbytes: int) -> str:
    if nbytes >= MiB and nbytes % MiB == 0:
        return f"{nbytes // MiB} MiB"
    if nbytes >= KiB and nbytes % KiB == 0:
        return f"{nbytes // KiB} KiB"
    return f"{nbytes} B"


def doubling(lo: int, hi: int) -> list[int]:
    """``lo, 2*lo, 4*lo, ... <= hi``."""
    sizes = []
    size = lo
    while size <= hi:
        sizes.append(size)
        size *= 2
    return sizes


# --- real vendor streams ---------------------------------------------------------------------

STREAM_APIS = ("openai-chat", "openai-responses", "anthropic", "gemini")


def streams_dir() -> Path:
    """Where the real streams live: ``TOOLSTREAM_STREAMS`` if set, else the in-repo ``tests/streams``."""
    return Path(os.environ.get("TOOLSTREAM_STREAMS") or Path(__file__).resolve().parents[1] / "tests" / "streams")


def real_streams(root: Path | None = None, limit: int | None = None) -> list[Workload]:
    """Every stream (or the first ``limit`` per API) of an API the core speaks, as wire text
    (re-serialized; values unchanged)."""
    root = root or streams_dir()
    if not root.is_dir():
        return []
    out: list[Workload] = []
    for api in STREAM_APIS:
        for path in sorted((root / api).glob("*.jsonl"))[:limit]:
            lines = path.read_text(encoding="utf-8").splitlines()
            wire = [_dumps(row["data"]) for row in map(json.loads, lines[1:]) if "data" in row]
            out.append(Workload(path.stem, api, [], 0, wire=wire))
    return out
