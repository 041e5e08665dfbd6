"""``toolstream demo --gateway``: one scenario across the OpenAI-compatible servers.

The aggregator's seat: one OpenAI-compatible interface, many backends, each
serialising tool calls a little differently. For each server profile of the
emulator (``toolstream_core.testing.PROFILES``) the same scenario is streamed
live from 127.0.0.1 through the real OpenAI SDK into the same engines the demo
compares (plain LangChain, plain LlamaIndex, the SDK helper, toolstream;
``_peers`` computes each column, unchanged), so the table shows what each stack
would hand its tool runner behind each server. Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from toolstream_core.app import _peers as peers
from toolstream_core.app.demo import Style, clip, compact

__all__ = ["DEFAULT_SCENARIO", "render_gateway", "run_gateway"]

#: The call cut by the output limit: on vLLM the stream also claims it finished.
DEFAULT_SCENARIO = "truncated_length"
_MODEL = "gpt-4o-mini"  # a real model name: LlamaIndex checks it; the emulator's queue picks


def _outcome(engine: str, target: peers.Target) -> peers.Outcome:
    """One engine against the live emulator."""
    return peers.run_engine(engine, target, live=True)


def run_gateway(scenario: str = DEFAULT_SCENARIO, profiles: Iterable[str] | None = None,
                engines: Iterable[str] = peers.ENGINES) -> dict[str, Any]:
    """Stream ``scenario`` from every profile into every engine; the demo's JSON shape."""
    from toolstream_core.testing import (
        DEFAULT_PROMPT,
        PROFILES,
        SCENARIOS,
        TOOLS,
        VendorEmulator,
        openai_chat_tools,
    )

    if scenario not in SCENARIOS or "openai-chat" not in SCENARIOS[scenario].apis:
        names = sorted(n for n, s in SCENARIOS.items() if "openai-chat" in s.apis)
        raise ValueError(f"{scenario!r} is not an openai-chat scenario; choose from: "
                         f"{', '.join(names)}")
    names = list(profiles) if profiles is not None else list(PROFILES)
    unknown = [p for p in names if p not in PROFILES]
    if unknown:
        raise ValueError(f"unknown profile(s) {unknown}; known: {sorted(PROFILES)}")
    engines = list(engines)
    rows = []
    for name in names:
        profile = PROFILES[name]
        with VendorEmulator(profile=name) as emu:
            target = peers.Target(
                cassette=Path("-"), interaction=0, api="openai-chat", model=_MODEL,
                base_url=emu.base_url + "/v1", api_version=None, prompt=DEFAULT_PROMPT,
                tools=dict(TOOLS), wire_tools=openai_chat_tools())
            outcomes = {}
            for engine in engines:
                emu.clear()
                emu.queue("openai-chat", scenario)
                outcomes[engine] = _outcome(engine, target).as_dict()
        rows.append({"profile": name, "server": profile.server, "quirks": list(profile.quirks),
                     "finish_reason": outcomes.get("toolstream", {}).get("finish_reason"),
                     "outcomes": outcomes})
    return {"scenario": scenario, "description": SCENARIOS[scenario].description,
            "engines": engines, "rows": rows}


def _cell(outcome: dict[str, Any], style: Style) -> str:
    if outcome["status"] != "ok":
        text = outcome["error"] or outcome["status"]
        return style.dim(text) if outcome["status"] == "unavailable" else style.yellow(text)
    if not outcome["calls"]:
        return style.dim("no call")
    parts = []
    for call in outcome["calls"]:
        name = call["name"] or "(no name)"
        verdict = call["verdict"]
        if verdict == peers.RUN:
            parts.append(style.red(f"RUNS {name}{compact(call['arguments'])}"))
        elif verdict == peers.COMMIT:
            parts.append(style.green(f"commit {name}{compact(call['arguments'])}"))
        elif verdict == peers.REJECT:
            parts.append(style.green(f"reject {name}: {call['reason']}"))
        else:
            parts.append(f"not run {name}: {call['reason']}")
    return "; ".join(parts)


def render_gateway(doc: dict[str, Any], style: Style, total_width: int = 100) -> str:
    """Rows of ``profile (finish reason the server sent)``, then one line per engine."""
    lines = [style.bold(f"gateway view: scenario {doc['scenario']}"),
             style.dim(doc["description"]), ""]
    titles = {e: peers.ENGINE_TITLES.get(e, e) for e in doc["engines"]}
    pad = max(len(t) for t in titles.values()) + 2
    for row in doc["rows"]:
        finish = row["finish_reason"] or "none"
        lines.append(style.bold(row["profile"]) + f" ({row['server']}; the server said "
                     f"finish_reason {finish})")
        lines.append("  " + style.dim(clip("quirks: " + "; ".join(row["quirks"]),
                                            max(20, total_width - 2))))
        for engine, title in titles.items():
            plain = _cell(row["outcomes"][engine], Style(False))
            room = max(20, total_width - pad - 2)
            # colour only what fits whole: clipping a coloured cell could cut an escape
            cell = _cell(row["outcomes"][engine], style) if len(plain) <= room \
                else clip(plain, room)
            lines.append(f"  {title.ljust(pad)}{cell}")
        lines.append("")
    lines.append(style.dim("RUNS: handed to the tool runner. toolstream commits only what the "
                           "stream proved; each reject is one paired error result."))
    return "\n".join(lines) + "\n"
