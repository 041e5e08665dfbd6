"""`toolstream replay`: recorded streams fed through a fresh `Assembler`, as plain JSON data.

Reading the recordings (JSONL streams, vcrpy cassettes) is the test kit's
(`toolstream_core.testing.load_sources`); this module assembles each one and builds
the document the CLI renders. Nothing here prints.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from toolstream_core import PROVIDERS
from toolstream_core.testing import StreamSource

if TYPE_CHECKING:
    from toolstream_core import Provider


def enum_text(value: Any) -> Any:
    """The stable string of a str-enum member (and anything else unchanged)."""
    return getattr(value, "value", value)


def call_document(call: Any) -> dict[str, Any]:
    """A `ToolCall` as plain JSON data (the replay document's per-call schema)."""
    raw = call.raw_arguments if isinstance(call.raw_arguments, str) else ""
    return {
        "index": call.index,
        "id": call.id,
        "name": call.name,
        "kind": enum_text(call.kind),
        "state": enum_text(call.state),
        "reason": enum_text(call.reason),
        "detail": call.detail,
        "bytes": len(raw.encode("utf-8", "surrogatepass")),
        "raw_arguments": raw,
        "arguments": call.arguments,
    }


def error_result_document(result: Any) -> dict[str, Any]:
    return {
        "tool_call_id": result.tool_call_id,
        "name": result.name,
        "reason": enum_text(result.reason),
        "content": result.content,
        "is_error": result.is_error,
    }


def replay_source(
    source: StreamSource,
    *,
    provider: str | None = None,
    tools: Mapping[str, Any] | None = None,
    config: Any = None,
) -> dict[str, Any]:
    """Feed one recorded stream through a fresh `Assembler`; the JSON-ready outcome.

    The provider is the override when given, else the recording's API when it
    is one the core speaks, else left to the core's detection from the first
    chunk (and the document says so).
    """
    from toolstream_core import Assembler

    notes = list(source.notes)
    chosen = provider
    if chosen is None and source.api in PROVIDERS:
        chosen = source.api
    elif chosen is None and source.api is not None:
        notes.append(f"api {source.api!r} is not a toolstream provider; detecting from chunks")
    document: dict[str, Any] = {
        "source": source.origin,
        "interaction": source.interaction,
        "api": source.api,
        "provider": chosen,
        "model": source.model,
        "http_status": source.http_status,
        "events": len(source.events),
        "transport_complete": source.transport_complete,
    }
    if source.http_status is not None and source.http_status >= 400:
        document.update(
            assembled=False,
            complete=False,
            finish_reason=None,
            error=None,
            calls=[],
            server_calls=[],
            dropped=[],
            error_results=[],
            notes=notes,
        )
        return document
    assembler = Assembler(tools=tools, config=config, provider=cast("Provider | None", chosen))
    for event in source.events:
        assembler.feed(event)
    turn = assembler.finish(transport_complete=source.transport_complete)
    document.update(
        assembled=True,
        provider=chosen or _detected_provider(turn),
        complete=bool(turn.complete),
        finish_reason=turn.finish_reason,
        error=None if turn.error is None else repr(turn.error),
        calls=[call_document(c) for c in turn.calls],
        server_calls=[call_document(c) for c in turn.server_calls],
        dropped=[call_document(c) for c in turn.dropped],
        error_results=[error_result_document(r) for r in turn.error_results()],
        notes=notes,
    )
    return document


def _detected_provider(turn: Any) -> str | None:
    for call in [*turn.calls, *turn.server_calls, *turn.dropped]:
        if getattr(call, "provider", None):
            return str(call.provider)
    return None


def totals(streams: list[dict[str, Any]]) -> dict[str, int]:
    """Counts over a replay run, for the summary line and `--strict-exit`."""
    calls = [c for s in streams for c in s["calls"]]
    return {
        "streams": len(streams),
        "calls": len(calls),
        "committed": sum(1 for c in calls if c["state"] == "committed"),
        "rejected": sum(1 for c in calls if c["state"] in ("failed", "cancelled")),
        "server_calls": sum(len(s["server_calls"]) for s in streams),
        "dropped": sum(len(s["dropped"]) for s in streams),
        "error_results": sum(len(s["error_results"]) for s in streams),
    }
