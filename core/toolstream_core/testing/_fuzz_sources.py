"""The recordings the fuzz harness mutates: one `FuzzStream` per recorded vendor stream.

Reading is delegated to `._sources` (the same reader `toolstream replay` uses),
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

import yaml

from toolstream_core._models import PROVIDERS, Provider
from toolstream_core.sse import UNPARSABLE_KEY

from ._eventstream import encode_frame
from ._server import DROPPED_HEADER
from ._sources import (
    SourceError,
    api_from_uri,
    decode_body,
    expand_paths,
    header_value,
    load_sources,
    response_body,
)

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
        if path.suffix in (".yaml", ".yml"):
            streams.extend(_cassette_streams(path, skipped))
            continue
        for source in load_sources(path):
            api = source.api or path.parent.name
            streams.append(FuzzStream(source.origin, source.label, api, _provider(api),
                                      source.events, source.transport_complete))
    return streams, skipped


def _provider(api: str) -> Provider | None:
    for known in PROVIDERS:
        if api == known:
            return known
    return None


class _FastLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """libyaml when present: the pure-Python parser spends seconds on a large cassette.

    Reads what `._sources` reads (safe YAML plus vcrpy's two harmless str tags),
    and the events come from the same decoder (`_sources.decode_body`).
    """


def _str_tag(loader: Any, node: Any) -> Any:
    return loader.construct_scalar(node)


_FastLoader.add_constructor("tag:yaml.org,2002:python/str", _str_tag)
_FastLoader.add_constructor("tag:yaml.org,2002:python/unicode", _str_tag)


def _cassette_streams(path: Path, skipped: list[str]) -> list[FuzzStream]:
    try:
        doc = yaml.load(path.read_bytes(), Loader=_FastLoader)  # a SafeLoader subclass
    except (OSError, yaml.YAMLError) as exc:
        raise SourceError(f"{path}: not a readable YAML cassette: {exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("interactions"), list):
        raise SourceError(f"{path}: not a vcrpy cassette (no 'interactions' list)")
    streams: list[FuzzStream] = []
    interactions = [i for i in doc["interactions"] if isinstance(i, dict)]
    for number, interaction in enumerate(interactions):
        label = f"{path}#{number}"
        response = interaction.get("response") or {}
        status_doc = response.get("status")
        status = status_doc.get("code") if isinstance(status_doc, dict) else None
        if isinstance(status, int) and status >= 400:
            skipped.append(f"{label}: HTTP {status}, no stream")
            continue
        headers = response.get("headers")
        content_type = (header_value(headers, "content-type") or "").lower()
        body = response_body(response)
        events, complete, _ = decode_body(body, content_type)
        if (header_value(headers, DROPPED_HEADER) or "").lower() == "dropped":
            complete = False
        api = api_from_uri(str((interaction.get("request") or {}).get("uri") or "")) or path.parent.name
        streams.append(FuzzStream(str(path), label, api, _provider(api), events, complete, body,
                                  content_type))
    return streams


def synthesize_body(stream: FuzzStream, *, json_array: bool) -> tuple[bytes, str]:
    """The body a server would have sent for these events: (bytes, content type).

    SSE for every vendor (``data: [DONE]`` closing OpenAI chat, as the wire does); a streamed
    JSON array when ``json_array`` (Gemini without ``alt=sse``). Non-ASCII stays raw UTF-8 so
    a cut can land inside a multi-byte character.
    """
    if stream.api == "bedrock-converse":
        return _aws_frames(stream.events), "application/vnd.amazon.eventstream"
    texts = [_payload_text(event) for event in stream.events]
    if stream.api == "ollama":
        return "".join(f"{text}\n" for text in texts).encode("utf-8", "surrogatepass"), "application/x-ndjson"
    if json_array:
        return ("[" + ",\r\n".join(texts) + "]").encode("utf-8", "surrogatepass"), "application/json"
    lines = [f"data: {text}\n\n" for text in texts]
    if stream.api == "openai-chat":
        lines.append("data: [DONE]\n\n")
    return "".join(lines).encode("utf-8", "surrogatepass"), "text/event-stream"


def _aws_frames(events: list[Any]) -> bytes:
    """Bedrock's body: one AWS event-stream frame per one-key event (exceptions as exception
    frames); anything else (a marker, a malformed event) as a frame whose payload is its text."""
    frames = []
    for event in events:
        if isinstance(event, dict) and len(event) == 1 and isinstance(event.get(UNPARSABLE_KEY), str):
            frames.append(encode_frame({":event-type": "contentBlockDelta", ":message-type": "event"},
                                       event[UNPARSABLE_KEY].encode("utf-8", "surrogatepass")))
        elif isinstance(event, dict) and len(event) == 1 and isinstance(next(iter(event.values())), dict):
            name, body = next(iter(event.items()))
            frames.append(_aws_frame(str(name), body))
        else:
            frames.append(encode_frame({":event-type": "unknownEvent", ":message-type": "event"},
                                       _payload_text(event).encode("utf-8", "surrogatepass")))
    return b"".join(frames)


def _aws_frame(name: str, body: dict[str, Any]) -> bytes:
    kind = "exception" if name.endswith("Exception") else "event"
    headers = {":exception-type" if kind == "exception" else ":event-type": name,
               ":content-type": "application/json", ":message-type": kind}
    return encode_frame(headers, _payload_text(body).encode("utf-8", "surrogatepass"))


def _payload_text(event: Any) -> str:
    if isinstance(event, dict) and len(event) == 1 and isinstance(event.get(UNPARSABLE_KEY), str):
        return str(event[UNPARSABLE_KEY])  # a payload that was not JSON on the wire, as sent
    return json.dumps(event, ensure_ascii=False, separators=(",", ":"))
