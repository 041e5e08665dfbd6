"""The recordings the fuzz harness mutates: one `FuzzStream` per recorded vendor stream.

Reading is delegated to `toolstream_core._replay` (the same reader `toolstream replay` uses),
so a recording means the same thing to the fuzzer as to every other command. The harness
needs one thing more: the raw body bytes, to cut them anywhere and feed them through
`toolstream_core.sse`. A cassette has them; a JSONL stream gets a faithful SSE body (or, for
Gemini, sometimes a streamed JSON array) built from its events.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolstream_core._models import PROVIDERS, Provider
from toolstream_core._replay import (
    SourceError,
    expand_paths,
    header_value,
    load_sources,
    read_cassette,
    response_body,
)
from toolstream_core.sse import UNPARSABLE_KEY

__all__ = ["FuzzStream", "SourceError", "collect_streams", "synthesize_body"]


@dataclass(frozen=True)
class FuzzStream:
    """One stream: its events as recorded, and (for a cassette) the body they came from."""

    origin: str
    label: str
    api: str
    provider: Provider | None
    events: list[Any]
    transport_complete: bool
    body: bytes | None = None
    content_type: str = ""


def collect_streams(paths: Iterable[str]) -> tuple[list[FuzzStream], list[str]]:
    """Every fuzzable stream under ``paths``, and a note for each recording skipped.

    A cassette interaction with an HTTP error status has no stream to mutate; it is skipped
    with a note, not an error. An unreadable file raises `SourceError` (an input error).
    """
    streams: list[FuzzStream] = []
    skipped: list[str] = []
    for path in expand_paths(paths):
        sources = load_sources(path)
        bodies = _cassette_bodies(path) if path.suffix in (".yaml", ".yml") else {}
        for source in sources:
            if source.http_status is not None and source.http_status >= 400:
                skipped.append(f"{source.label}: HTTP {source.http_status}, no stream")
                continue
            api = source.api or path.parent.name
            provider: Provider | None = None
            for known in PROVIDERS:
                if api == known:
                    provider = known
            body, content_type = bodies.get(source.interaction, (None, ""))
            streams.append(
                FuzzStream(
                    origin=source.origin,
                    label=source.label,
                    api=api,
                    provider=provider,
                    events=source.events,
                    transport_complete=source.transport_complete,
                    body=body,
                    content_type=content_type,
                )
            )
    return streams, skipped


def _cassette_bodies(path: Path) -> dict[int | None, tuple[bytes, str]]:
    """Interaction number -> (body bytes, content type), numbered as `load_sources` numbers them."""
    found: dict[int | None, tuple[bytes, str]] = {}
    for number, interaction in enumerate(read_cassette(path)):
        response = interaction.get("response") or {}
        content_type = (header_value(response.get("headers"), "content-type") or "").lower()
        found[number] = (response_body(response), content_type)
    return found


def synthesize_body(stream: FuzzStream, *, json_array: bool) -> tuple[bytes, str]:
    """The body a server would have sent for these events: (bytes, content type).

    SSE for every vendor (``data: [DONE]`` closing OpenAI chat, as the wire does); a streamed
    JSON array when ``json_array`` (Gemini without ``alt=sse``). Non-ASCII stays raw UTF-8 so
    a cut can land inside a multi-byte character.
    """
    texts = [_payload_text(event) for event in stream.events]
    if json_array:
        return ("[" + ",\r\n".join(texts) + "]").encode("utf-8", "surrogatepass"), "application/json"
    lines = [f"data: {text}\n\n" for text in texts]
    if stream.api == "openai-chat":
        lines.append("data: [DONE]\n\n")
    return "".join(lines).encode("utf-8", "surrogatepass"), "text/event-stream"


def _payload_text(event: Any) -> str:
    if isinstance(event, dict) and len(event) == 1 and isinstance(event.get(UNPARSABLE_KEY), str):
        return str(event[UNPARSABLE_KEY])  # a payload that was not JSON on the wire, as sent
    return json.dumps(event, ensure_ascii=False, separators=(",", ":"))
