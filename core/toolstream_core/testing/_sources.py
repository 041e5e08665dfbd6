"""Recorded streams -> the vendor events they hold, for the fuzz harness, replay and the demo.

Two recording formats exist in this project and both are read here so the CLI,
the demo, the fuzz harness and the tests agree on what a recording *says*:

* the JSONL streams of ``tests/streams`` (a header line, then one
  ``{"event"?: ..., "data": <vendor event>}`` or ``{"done": true}`` per line);
* vcrpy cassettes (``cassettes/<api>/<scenario>.yaml``), whose response bodies
  are the raw wire bytes: SSE for every vendor, or a JSON array for Gemini's
  ``streamGenerateContent`` without ``alt=sse``.

Nothing here prints and nothing assembles: `toolstream_core.app.replay` feeds the
events to an `Assembler` and builds the replay document.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import yaml

from toolstream_core._adapters import unwrap
from toolstream_core.sse import UNPARSABLE_KEY, EventDecoder, format_for

from ._server import DROPPED_HEADER

STREAM_SUFFIXES: tuple[str, ...] = (".jsonl", ".yaml", ".yml")

class SourceError(Exception):
    """A recording that cannot be read or understood (the CLI's exit code 3)."""


@dataclass(frozen=True)
class StreamSource:
    """One recorded vendor stream, decoded to the events the assembler is fed.

    ``transport_complete`` is false only when the recording itself shows the
    connection ended mid-event (an SSE event or JSON array cut at end of body):
    that is the same signal a live client gets as an exception.
    """

    origin: str
    interaction: int | None
    api: str | None
    events: list[Any]
    transport_complete: bool = True
    http_status: int | None = None
    model: str | None = None
    request_uri: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        """A short, stable name for humans: the file, plus `#n` for multi-stream files."""
        return self.origin if self.interaction is None else f"{self.origin}#{self.interaction}"


# --------------------------------------------------------------------------- discovery


def expand_paths(paths: Iterable[str]) -> list[Path]:
    """Files to replay: each file as given, directories searched for recordings.

    Raises `SourceError` for a path that does not exist so a typo is an input
    error, not a silent "0 streams".
    """
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(
                sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in STREAM_SUFFIXES)
            )
        elif path.is_file():
            found.append(path)
        else:
            raise SourceError(f"{raw}: no such file or directory")
    return found


def load_sources(path: Path) -> list[StreamSource]:
    """Every stream held by one recording file (a cassette may hold several)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if path.suffix == ".jsonl":
        return [_load_jsonl(path, data)]
    if path.suffix in (".yaml", ".yml"):
        return _load_cassette(path, data)
    raise SourceError(f"{path}: not a .jsonl stream or a .yaml cassette")


# --------------------------------------------------------------------------- JSONL


def _load_jsonl(path: Path, data: bytes) -> StreamSource:
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise SourceError(f"{path}: not UTF-8 text") from exc
    records: list[Any] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise SourceError(f"{path}:{number}: not a JSON line: {exc.msg}") from exc
    if not records or not isinstance(records[0], dict) or "toolstream_stream" not in records[0]:
        raise SourceError(f"{path}: missing the stream header line (toolstream_stream)")
    header = records[0]
    events: list[Any] = []
    for record in records[1:]:
        if isinstance(record, dict) and record.get("done") is True:
            continue  # the wire's [DONE] marker: transport framing, not a vendor event
        if isinstance(record, dict) and "data" in record:
            # A Bedrock event's name is its only kind: kept, in the shape boto3 yields.
            events.append(unwrap(record) if "event" in record and isinstance(record["data"], dict)
                          else record["data"])
        elif isinstance(record, dict) and isinstance(record.get("raw"), str):
            # A payload that was not JSON on the wire: fed as the same anomaly marker
            # the byte decoder produces, so the assembler counts it.
            events.append({UNPARSABLE_KEY: record["raw"]})
        else:
            raise SourceError(
                f"{path}: a line is none of {{'data': ...}}, {{'raw': ...}}, {{'done': true}}"
            )
    api = header.get("api")
    return StreamSource(
        origin=str(path),
        interaction=None,
        api=api if isinstance(api, str) else None,
        events=events,
        model=_text_or_none(header.get("model")),
        request_uri=_text_or_none(header.get("request_url")),
    )


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# --------------------------------------------------------------------------- cassettes


class _CassetteLoader(yaml.SafeLoader):
    """A safe loader that also reads the two harmless python tags vcrpy may write."""


def _construct_str(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    return loader.construct_scalar(node)  # type: ignore[arg-type]


_CassetteLoader.add_constructor("tag:yaml.org,2002:python/str", _construct_str)
_CassetteLoader.add_constructor("tag:yaml.org,2002:python/unicode", _construct_str)


def read_cassette(path: Path) -> list[dict[str, Any]]:
    """The interactions of a vcrpy cassette, as plain dicts (no vcrpy needed)."""
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    return _cassette_interactions(path, text)


def _cassette_interactions(path: Path, data: bytes) -> list[dict[str, Any]]:
    try:
        doc = yaml.load(data, Loader=_CassetteLoader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise SourceError(f"{path}: not a YAML cassette: {exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("interactions"), list):
        raise SourceError(f"{path}: not a vcrpy cassette (no 'interactions' list)")
    return [i for i in doc["interactions"] if isinstance(i, dict)]


def api_from_uri(uri: str) -> str | None:
    """Which vendor wire a request URI speaks, from its path alone."""
    path = urlsplit(uri).path
    if path.endswith("/chat/completions"):
        return "openai-chat"
    if path.endswith("/responses"):
        return "openai-responses"
    if path.endswith("/messages"):
        return "anthropic"
    if ":streamGenerateContent" in path or ":generateContent" in path:
        return "gemini"
    return _NEW_FAMILY_PATHS.get(path.rsplit("/", 1)[-1] if "/model/" in path else path)


#: Bedrock ``/model/{id}/converse-stream`` (and ``converse``), Ollama, Cohere v2.
_NEW_FAMILY_PATHS = {"converse-stream": "bedrock-converse", "converse": "bedrock-converse",
                     "/api/chat": "ollama", "/v2/chat": "cohere"}


def header_value(headers: Any, name: str) -> str | None:
    """One header from a vcrpy header mapping (values are lists), case-insensitive."""
    if not isinstance(headers, Mapping):
        return None
    for key, value in headers.items():
        if str(key).lower() == name.lower():
            if isinstance(value, list):
                return str(value[0]) if value else None
            return str(value)
    return None


def response_body(response: Mapping[str, Any]) -> bytes:
    """The response bytes as the client saw them, content-encoding undone."""
    body = response.get("body")
    raw: Any = body.get("string") if isinstance(body, Mapping) else body
    if raw is None:
        data = b""
    elif isinstance(raw, bytes):
        data = raw
    else:
        data = str(raw).encode("utf-8")
    encoding = (header_value(response.get("headers"), "content-encoding") or "").lower()
    try:
        if encoding == "gzip" or data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        elif encoding == "deflate":
            data = zlib.decompress(data)
    except (OSError, zlib.error, EOFError):
        pass  # the cassette already holds decoded bytes despite the header
    return data


def request_model(request: Mapping[str, Any]) -> str | None:
    """The model a recorded request asked for (JSON body, or Gemini's URL path)."""
    uri = str(request.get("uri") or "")
    path = urlsplit(uri).path
    if "/models/" in path and ":" in path.rsplit("/models/", 1)[1]:
        return path.rsplit("/models/", 1)[1].rsplit(":", 1)[0]
    if path.startswith("/model/"):  # Bedrock: /model/{modelId}/converse-stream
        return unquote(path[len("/model/"):].rsplit("/", 1)[0])
    body = request.get("body")
    if isinstance(body, Mapping):
        body = body.get("string")
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if isinstance(body, str):
        try:
            doc = json.loads(body)
        except json.JSONDecodeError:
            return None
        model = doc.get("model") if isinstance(doc, dict) else None
        return model if isinstance(model, str) else None
    return None


def _load_cassette(path: Path, data: bytes) -> list[StreamSource]:
    sources: list[StreamSource] = []
    for number, interaction in enumerate(_cassette_interactions(path, data)):
        request = interaction.get("request") or {}
        response = interaction.get("response") or {}
        uri = str(request.get("uri") or "")
        status_doc = response.get("status")
        status = status_doc.get("code") if isinstance(status_doc, Mapping) else None
        body = response_body(response)
        content_type = (header_value(response.get("headers"), "content-type") or "").lower()
        notes: list[str] = []
        if isinstance(status, int) and status >= 400:
            notes.append(f"HTTP {status}: {body[:200].decode('utf-8', 'replace')}")
            events: list[Any] = []
            complete = True
        else:
            events, complete, notes_body = decode_body(body, content_type)
            notes.extend(notes_body)
            marker = header_value(response.get("headers"), DROPPED_HEADER)
            if marker is not None and marker.lower() == "dropped":
                complete = False
                notes.append(f"recorded as a dropped connection ({DROPPED_HEADER}: dropped)")
        sources.append(
            StreamSource(
                origin=str(path),
                interaction=number,
                api=api_from_uri(uri),
                events=events,
                transport_complete=complete,
                http_status=status if isinstance(status, int) else None,
                model=request_model(request),
                request_uri=uri or None,
                notes=notes,
            )
        )
    return sources


def decode_body(body: bytes, content_type: str = "") -> tuple[list[Any], bool, list[str]]:
    """Vendor events from a response body: (events, transport_complete, notes).

    Uses the project's own byte decoder (`toolstream_core.sse.EventDecoder`), so a
    replay reads a body exactly as the rest of toolstream does: SSE or a streamed
    JSON array, payloads that are not JSON objects passed on as anomaly markers,
    and a body that ends mid-event reported as a cut connection.
    """
    decoder = EventDecoder(format_for(content_type))
    events = [*decoder.feed(body), *decoder.close()]
    notes: list[str] = []
    odd = sum(1 for e in events if isinstance(e, dict) and UNPARSABLE_KEY in e)
    if odd:
        notes.append(f"{odd} payload(s) were not JSON objects (passed on as anomalies)")
    if not body.strip():
        notes.append("empty response body")
    if decoder.truncated:
        notes.append("the body ends mid-event: the connection was cut")
    return events, not decoder.truncated, notes
