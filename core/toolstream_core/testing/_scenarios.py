"""Vendor-neutral scenario scripts and the seeded fragment cutter.

A scenario says *what* the model does (which calls, with which argument text,
and how the turn ends); the ``_wire_*`` modules say *how* each vendor puts that
on the wire. Keeping the two apart is what lets one scenario name mean the same
fault on every API, so a test can be parametrized over APIs.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from ._conversation import PLAIN_TEXT

__all__ = [
    "API_NAMES",
    "SCENARIOS",
    "TOOLS",
    "CallSpec",
    "Expectation",
    "Scenario",
    "Script",
    "args_json",
    "build_script",
    "scenario_rng",
    "split_text",
]

API_NAMES: tuple[str, ...] = ("openai-chat", "openai-responses", "anthropic", "gemini",
                              "bedrock-converse", "ollama", "cohere")
_ALL = frozenset(API_NAMES)
_CHAT = frozenset({"openai-chat"})
_GEMINI = frozenset({"gemini"})
_ANTHROPIC = frozenset({"anthropic"})

#: JSON Schemas of the tools every scenario uses, keyed by tool name. They are
#: the ``parameters`` object a caller passes to the vendor and the schema the
#: core validates committed arguments against.
def _strings(**described: str) -> dict[str, Any]:
    """A closed object schema of required string properties, each with its description."""
    return {
        "type": "object",
        "properties": {name: {"type": "string", "description": text}
                       for name, text in described.items()},
        "required": list(described),
        "additionalProperties": False,
    }


TOOLS: dict[str, dict[str, Any]] = {
    "write_file": _strings(path="Absolute path of the file to write.",
                           content="Full text to write."),
    "get_weather": _strings(city="City name."),
    "get_time": {"type": "object", "properties": {}, "additionalProperties": False},
    "Weather": _strings(city="City name.", unit="Temperature unit."),
}

TOOL_DESCRIPTIONS: dict[str, str] = {
    "write_file": "Write a text file.",
    "get_weather": "Get the current weather for a city.",
    "get_time": "Get the current time (no arguments).",
    "Weather": "The weather report as structured output (a schema, not an action).",
}

Ending = Literal["stop", "length", "drop", "no_finish", "error", "pause"]


@dataclass(frozen=True)
class Expectation:
    """What a correct assembler must report for a scenario.

    ``committed`` and ``rejected`` are tool names in provider order; a rejected
    call may carry any reason in ``reasons`` (an error event that the SDK turns
    into an exception ends the stream before the assembler sees the event, so
    both ``upstream_error`` and ``stream_truncated`` are honest outcomes).
    """

    committed: tuple[str, ...] = ()
    rejected: tuple[str, ...] = ()
    reasons: frozenset[str] = frozenset()
    complete: bool = True


@dataclass(frozen=True)
class Scenario:
    """One named fault (or the happy path) with the APIs it exists on."""

    name: str
    description: str
    apis: frozenset[str]
    expect: Expectation


_TRUNC = frozenset({"stream_truncated"})
_ERR = frozenset({"upstream_error", "stream_truncated"})
_WRITE = Expectation(committed=("write_file",))
_TWO_WEATHER = Expectation(committed=("get_weather", "get_weather"))
_WRITE_CUT = Expectation(rejected=("write_file",), reasons=_TRUNC, complete=False)

# One row per scenario: name, the APIs it exists on, what a correct assembler reports, and
# what happens on the wire.
_TABLE: tuple[tuple[str, frozenset[str], Expectation, str], ...] = (
    ("text", _ALL, Expectation(), "A short plain-text final answer; no tool calls."),
    ("single_call", _ALL, _WRITE, "One write_file call with escapes in its content."),
    ("parallel_calls", _ALL, _TWO_WEATHER,
     "Two get_weather calls in one turn (interleaved by index on OpenAI chat)."),
    ("no_args", _ALL, Expectation(committed=("get_time",)), "One get_time call with empty arguments."),
    ("large_args", _ALL, _WRITE, "One write_file call whose content is about 200 KB."),
    ("non_ascii", _ALL, _WRITE, "write_file with CJK and emoji, some raw and some as \\uXXXX escapes."),
    ("missing_index", _CHAT, Expectation(committed=("get_weather", "write_file")),
     "Two sequential calls whose tool_call deltas carry no index."),
    ("id_name_repeated", _CHAT, _WRITE, "id, type and name repeated on every tool_call delta."),
    ("empty_id_later", _CHAT, _WRITE, 'Later tool_call deltas carry id "" and name "".'),
    ("resent_duplicate", _ALL, Expectation(committed=("get_weather",)),
     "The whole call is sent twice (chat: same index -> {..}{..}; others: same id twice)."),
    ("truncated_length", _ALL, _WRITE_CUT, 'write_file cut at {"path":"/tmp/a then a max-token stop.'),
    ("dropped_connection", _ALL, _WRITE_CUT,
     "A call whose arguments parse, then the socket closes without the terminal event."),
    ("no_finish", _ALL, _WRITE_CUT,
     "A call whose arguments parse, then a clean end of body with no finish signal."),
    ("error_event", _ALL, Expectation(rejected=("write_file",), reasons=_ERR, complete=False),
     "A call mid-arguments, then the vendor's in-stream error event."),
    ("partial_args", _GEMINI, _WRITE,
     "Gemini streamFunctionCallArguments: partialArgs by jsonPath, willContinue, "
     "empty functionCall terminator."),
    ("parallel_no_ids", _GEMINI, _TWO_WEATHER,
     "Two get_weather calls in one turn whose functionCall parts carry no id (Gemini "
     "pairs results by position)."),
    ("pause_turn", _ANTHROPIC, Expectation(),
     "A long server-tool turn paused: text and a web_search server_tool_use, then "
     "stop_reason pause_turn (the client sends the turn back to continue it)."),
    ("thinking_call", _ANTHROPIC, Expectation(committed=("get_weather",)),
     "Extended thinking: a thinking block (thinking_delta pieces, then its signature_delta) "
     "before a get_weather tool_use; while thinking is on, the next request must send the "
     "signed block back before the call."),
    ("structured_call", _ALL, Expectation(committed=("Weather",)),
     "Structured output as a tool call: one Weather call (the schema's tool)."),
    ("structured_call_truncated", _ALL,
     Expectation(rejected=("Weather",), reasons=_TRUNC, complete=False),
     'The structured output Weather, as a call cut at {"city":"Paris","unit":"cel by a '
     "max-token stop: a framework that repairs it returns Weather(unit='cel')."),
    ("structured_json", _ALL, Expectation(),
     'Structured output as JSON text: {"city":"Paris","unit":"celsius"}, a normal stop.'),
    ("structured_json_truncated", _ALL, Expectation(complete=False),
     'The same JSON text cut at {"city":"Paris","unit":"cel by a max-token stop.'),
)

SCENARIOS: dict[str, Scenario] = {
    name: Scenario(name, description, apis, expect) for name, apis, expect, description in _TABLE
}


@dataclass(frozen=True)
class CallSpec:
    """One tool call: the name and the exact argument JSON text the vendor streams."""

    name: str
    args_text: str

    @property
    def arguments(self) -> dict[str, Any]:
        value: dict[str, Any] = json.loads(self.args_text) if self.args_text.strip() else {}
        return value


@dataclass(frozen=True)
class Script:
    """The neutral plan a wire module renders.

    ``cut_at`` (for ``length``/``error`` endings) is the number of characters of
    the last call's argument text sent before the turn stops.
    """

    scenario: str
    text: str | None
    calls: tuple[CallSpec, ...]
    ending: Ending
    cut_at: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def args_json(args: dict[str, Any], escape: str = "") -> str:
    """Compact JSON text with raw non-ASCII, except astral characters and ``escape``.

    Astral characters (emoji) become ``\\uD83D\\uDE80`` surrogate-pair escapes,
    so the argument text holds both raw multi-byte characters and escapes for
    the cutter to split.
    """
    text = json.dumps(args, ensure_ascii=False, separators=(",", ":"))
    out: list[str] = []
    for ch in text:
        if ord(ch) > 0xFFFF or ch in escape:
            out.append(json.dumps(ch)[1:-1])
        else:
            out.append(ch)
    return "".join(out)


def scenario_rng(seed: int | str, api: str, scenario: str) -> random.Random:
    """One RNG per (seed, api, scenario): a scenario replays byte-identically.

    ``seed`` may be a string (``"0@tag"``) so a request-chosen tag gives that
    request its own ids and cuts.
    """
    return random.Random(f"{seed}|{api}|{scenario}")


_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)")


def split_text(text: str, rng: random.Random, *, max_piece: int | None = None) -> list[str]:
    """Cut ``text`` into non-empty fragments at seeded, adversarial places.

    Besides random piece lengths, one cut is forced inside the first string
    value, inside the first ``\\uXXXX`` escape, inside the first short escape
    (``\\n``, ``\\"``) and next to the first non-ASCII character, because those are
    the places naive consumers get wrong. Cuts are at character level: the wire
    JSON-encodes each fragment, so a fragment can never hold half a UTF-8 byte
    sequence, but it can hold half an escape.
    """
    n = len(text)
    if n == 0:
        return []
    if max_piece is None:
        max_piece = max(7, n // 400)
    cuts: set[int] = set()
    string_start = text.find('":"')
    if string_start != -1 and string_start + 4 < n:
        end = text.find('"', string_start + 3)
        if end > string_start + 4:
            cuts.add(rng.randint(string_start + 4, end - 1))
    unicode_done = short_done = False
    for m in _ESCAPE.finditer(text):
        if m.group(1).startswith("u") and not unicode_done:
            cuts.add(m.start() + rng.randint(1, 5))
            unicode_done = True
        elif not m.group(1).startswith("u") and not short_done:
            cuts.add(m.start() + 1)
            short_done = True
        if unicode_done and short_done:
            break
    for i, ch in enumerate(text):
        if ord(ch) > 0x7F:
            cuts.add(i + 1 if rng.random() < 0.5 else i)
            break
    pos = 0
    while pos < n:
        pos += rng.randint(1, max_piece)
        cuts.add(pos)
    points = sorted(c for c in cuts if 0 < c < n)
    bounds = [0, *points, n]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if b > a]


_SINGLE = {
    "path": "/tmp/notes.txt",
    "content": 'Shopping list:\n- "fresh" bread\n- tea\tgreen\nC:\\temp is not a path here.\n',
}
_NON_ASCII = {
    "path": "/tmp/日本語/メモ.txt",
    "content": "こんにちは世界 — naïve café 🚀✨ 你好\uff0c世界 👋🏽 Ünïcödé ½",
}
_TRUNCATED = {"path": "/tmp/a.txt", "content": "This text never arrives."}
#: The structured output of the ``structured_*`` scenarios, and where their cut falls.
_WEATHER = {"city": "Paris", "unit": "celsius"}
_WEATHER_CUT = len('{"city":"Paris","unit":"cel')
_THINKING = ("The user wants the weather in Paris. I have a get_weather tool that takes a "
             "city, so I should call it with \"Paris\" and report what it returns.")
#: What a scenario's script carries besides its calls: the thinking block's text.
_EXTRAS: dict[str, dict[str, Any]] = {"thinking_call": {"thinking": _THINKING}}
_FINAL_TEXT = PLAIN_TEXT  # the server replaces it with what the request's tool results were


def _large_content(rng: random.Random, size: int = 200_000) -> str:
    words = ["alpha", "beta", "gamma", "delta", "\"quoted\"", "tab\there", "line\n", "x\\y"]
    parts: list[str] = []
    total = 0
    while total < size:
        w = rng.choice(words)
        parts.append(w)
        total += len(w) + 1
    return " ".join(parts)


#: The scenarios whose one call is followed by no finish at all: how the stream ends instead.
_UNFINISHED: dict[str, Ending] = {"dropped_connection": "drop", "no_finish": "no_finish"}


def build_script(name: str, rng: random.Random) -> Script:
    """The neutral plan of scenario ``name`` (see SCENARIOS for the list)."""
    if name not in SCENARIOS:
        raise KeyError(f"unknown scenario {name!r}; known: {sorted(SCENARIOS)}")
    single = CallSpec("write_file", args_json(_SINGLE))
    weather = CallSpec("get_weather", args_json({"city": "Paris"}))
    if name == "text":
        return Script(name, _FINAL_TEXT, (), "stop")
    if name in ("single_call", "id_name_repeated", "empty_id_later", "partial_args"):
        return Script(name, None, (single,), "stop")
    if name in ("parallel_calls", "parallel_no_ids"):
        tokyo = CallSpec("get_weather", args_json({"city": "Tokyo"}))
        return Script(name, None, (weather, tokyo), "stop")
    if name == "pause_turn":
        search = CallSpec("web_search", args_json({"query": "weather in Paris"}))
        return Script(name, "Let me search for that.", (search,), "pause")
    if name == "no_args":
        return Script(name, None, (CallSpec("get_time", "{}"),), "stop")
    if name == "large_args":
        big = {"path": "/tmp/big.txt", "content": _large_content(rng)}
        return Script(name, None, (CallSpec("write_file", args_json(big)),), "stop")
    if name == "non_ascii":
        return Script(name, None, (CallSpec("write_file", args_json(_NON_ASCII, "世")),), "stop")
    if name == "missing_index":
        return Script(name, None, (weather, single), "stop")
    if name in ("resent_duplicate", "thinking_call"):  # one get_weather call (sent twice / after thinking)
        return Script(name, None, (weather,), "stop", extra=dict(_EXTRAS.get(name, {})))
    if name == "truncated_length":
        call = CallSpec("write_file", args_json(_TRUNCATED))
        return Script(name, None, (call,), "length", cut_at=len('{"path":"/tmp/a'))
    if name.startswith("structured_"):
        return _structured(name)
    if name in _UNFINISHED:  # one write_file call, and the stream ends without a finish
        return Script(name, None, (single,), _UNFINISHED[name])
    if name == "error_event":
        return Script(name, None, (single,), "error", cut_at=len(single.args_text) // 2)
    raise AssertionError(name)  # pragma: no cover - SCENARIOS and this function agree


def _structured(name: str) -> Script:
    """A structured output: the Weather object as a call or as a JSON text, whole or cut."""
    text = args_json(_WEATHER)
    cut = name.endswith("_truncated")
    if name.startswith("structured_json"):
        return Script(name, text[:_WEATHER_CUT] if cut else text, (), "length" if cut else "stop")
    call = CallSpec("Weather", text)
    if cut:
        return Script(name, None, (call,), "length", cut_at=_WEATHER_CUT)
    return Script(name, None, (call,), "stop")
