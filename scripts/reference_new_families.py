#!/usr/bin/env python3
"""Write the factual reassembly (``*.expected.json``) of the Bedrock Converse and Cohere streams.

The upstream corpus ships ``*.expected.json`` only for the four families it targeted; the
``bedrock-converse`` and ``cohere`` folders came without. This script computes the same facts
for them, independently of ``toolstream_core`` (a plain concatenation of what the vendor sent,
no policy): each tool call with its id, name, raw argument text and parse, the stop / finish
reason, the terminal event, text and reasoning sizes. Run::

    python scripts/reference_new_families.py [tests/streams]

Standard library only.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def _load(path: Path) -> tuple[dict[str, Any], list[tuple[str | None, Any]]]:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return lines[0], [(line.get("event"), line.get("data")) for line in lines[1:] if "data" in line]


def _call(key: dict[str, Any], call_id: Any, name: Any, kind: str, parts: list[str]) -> dict[str, Any]:
    raw = "".join(parts)
    arguments, error = None, None
    if raw.strip():
        try:
            arguments = json.loads(raw)
        except ValueError as exc:
            error = str(exc)
    return {"provider_key": key, "id": call_id, "name": name, "raw_arguments": raw if parts else None,
            "arguments": arguments, "parse_error": error, "kind": kind, "raw_from": "fragments",
            "argument_fragments": sum(1 for p in parts if p)}


def _facts(finish_key: str) -> dict[str, Any]:
    """The per-stream facts both families report, before the first event (``finish_key``:
    the family's own name for its finish field)."""
    return {finish_key: None, "text_chars": 0, "reasoning_chars": 0, "terminal_event": None,
            "error_event": False}


def bedrock(events: list[tuple[str | None, Any]]) -> dict[str, Any]:
    calls: dict[int, dict[str, Any]] = {}
    parts: dict[int, list[str]] = {}
    facts = _facts("stop_reason")
    for name, data in events:
        if name == "contentBlockStart" and "toolUse" in data["start"]:
            tool = data["start"]["toolUse"]
            calls[data["contentBlockIndex"]] = {"id": tool.get("toolUseId"), "name": tool.get("name"),
                                                "kind": tool.get("type", "tool_use")}
            parts[data["contentBlockIndex"]] = []
        elif name == "contentBlockDelta":
            delta = data["delta"]
            if "toolUse" in delta:
                parts[data["contentBlockIndex"]].append(delta["toolUse"].get("input", ""))
            facts["text_chars"] += len(delta.get("text", ""))
            facts["reasoning_chars"] += len((delta.get("reasoningContent") or {}).get("text", ""))
        elif name == "messageStop":
            facts["stop_reason"] = data.get("stopReason")
        elif name and name.endswith("Exception"):
            facts["error_event"] = True
        facts["terminal_event"] = name if name in ("messageStop", "metadata") else facts["terminal_event"]
    facts["tool_calls"] = [_call({"index": i}, c["id"], c["name"], c["kind"], parts[i]) for i, c in calls.items()]
    return facts


def cohere(events: list[tuple[str | None, Any]]) -> dict[str, Any]:
    calls: dict[int, dict[str, Any]] = {}
    parts: dict[int, list[str]] = {}
    facts = _facts("finish_reason")
    for _, data in events:
        kind = data.get("type")
        message = (data.get("delta") or {}).get("message") or {}
        if kind == "tool-call-start":
            call = message["tool_calls"]
            calls[data["index"]] = {"id": call.get("id"), "name": call["function"].get("name")}
            first = call["function"].get("arguments") or ""
            parts[data["index"]] = [first] if first else []
        elif kind == "tool-call-delta":
            parts[data["index"]].append(message["tool_calls"]["function"].get("arguments", ""))
        elif kind == "content-delta":
            facts["text_chars"] += len(((message.get("content") or {}).get("text")) or "")
        elif kind == "tool-plan-delta":
            facts["reasoning_chars"] += len(message.get("tool_plan") or "")
        elif kind == "message-end":
            facts["finish_reason"] = data["delta"].get("finish_reason")
            facts["error_event"] = bool(data["delta"].get("error"))
            facts["terminal_event"] = kind
    facts["tool_calls"] = [_call({"index": i}, c["id"], c["name"], "function", parts[i]) for i, c in calls.items()]
    return facts


def main(root: Path) -> None:
    for api, reference in (("bedrock-converse", bedrock), ("cohere", cohere)):
        for path in sorted((root / api).glob("*.jsonl")):
            header, events = _load(path)
            facts = {"stream": path.name, "api": api, "vendor": header.get("vendor"),
                     "model": header.get("model"), "reference_version": 1,
                     "reference": "scripts/reference_new_families.py", **reference(events),
                     "saw_done_marker": False, "anomalies": {}}
            out = path.with_name(path.name.removesuffix(".jsonl") + ".expected.json")
            out.write_text(json.dumps(facts, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            print(out.relative_to(root))  # noqa: T201 - a script's report


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "tests" / "streams")
