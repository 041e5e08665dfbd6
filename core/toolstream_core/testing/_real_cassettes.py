"""Real vendor streams (the JSONL corpus) as vcrpy cassettes the vendor SDKs replay.

The corpus (``tests/streams/<api>/*.jsonl``, see its MANIFEST) holds recordings of real
vendor streams from public repositories, one parsed event per line. This module writes each
recording of the four target APIs back as the body the vendor serves and the request the
SDK sends, so the real SDK clients (and the LangChain / LlamaIndex integrations above them)
read it through vcrpy at their default base URLs:

* OpenAI Chat Completions: ``POST https://api.openai.com/v1/chat/completions``, SSE
  ``data:`` lines, ``data: [DONE]`` where the recording has it;
* OpenAI Responses: ``POST https://api.openai.com/v1/responses``, SSE with ``event:`` names;
* Anthropic Messages: ``POST https://api.anthropic.com/v1/messages``, SSE with ``event:``;
* Gemini: ``POST https://generativelanguage.googleapis.com/v1beta/models/<model>:
  streamGenerateContent?alt=sse``, SSE ``data:`` lines with CRLF framing (as Google sends).

The host and path are the API family's own even when the recording came from a compatible
server (Groq, Azure, OpenRouter, Vertex...): the original URL is kept in the cassette's
comment header and in ``LICENSES.md``. The events' values are unchanged; only whitespace and
number formatting of the JSON may differ from the original bytes (as in the corpus). Request
bodies are not part of the corpus and replay does not match on them, so the cassettes hold
none; request headers are the scrubbed minimum (``content-type``), so no secret can be in them.

Streams left out are listed in :data:`EXCLUDED` with the reason (``cassettes/real/README.md``
repeats them). Regenerate after refreshing the corpus::

    python -m toolstream_core.testing._real_cassettes [STREAMS_DIR [OUT_DIR]]
"""

from __future__ import annotations

import json
import logging
import shutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ._wire_common import dumps, sse

__all__ = [
    "EXCLUDED",
    "REAL_APIS",
    "RealStream",
    "cassette_document",
    "load_real_stream",
    "vendor_url",
    "write_real_cassettes",
]

logger = logging.getLogger(__name__)

REAL_APIS: tuple[str, ...] = ("openai-chat", "openai-responses", "anthropic", "gemini")
_REPO = Path(__file__).resolve().parents[3]
DEFAULT_STREAMS = _REPO / "tests" / "streams"
DEFAULT_OUT = _REPO / "cassettes" / "real"

#: ``"<api>/<stem>"`` -> why the stream has no cassette. Streams flagged ``synthetic`` in
#: their header are excluded as a class (they are not real vendor output) and listed here too.
EXCLUDED: dict[str, str] = {}

_SSE_NAMED = frozenset({"openai-responses", "anthropic"})
_CONTENT_TYPE = {
    "openai-chat": "text/event-stream; charset=utf-8",
    "openai-responses": "text/event-stream; charset=utf-8",
    "anthropic": "text/event-stream; charset=utf-8",
    "gemini": "text/event-stream",
}
_DEFAULT_GEMINI_MODEL = "gemini-2.5-flash"


@dataclass(frozen=True)
class RealStream:
    """One corpus recording: its header and its lines (``{"event"?, "data"}`` / ``{"done"}``)."""

    api: str
    stem: str
    header: dict[str, Any]
    lines: list[dict[str, Any]]

    @property
    def id(self) -> str:
        return f"{self.api}/{self.stem}"

    @property
    def synthetic(self) -> bool:
        return bool(self.header.get("synthetic"))


def load_real_stream(path: Path) -> RealStream:
    """Read one ``<api>/<stem>.jsonl`` recording (header line, then one event per line)."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not rows:
        raise ValueError(f"{path}: empty stream file")
    return RealStream(path.parent.name, path.name.removesuffix(".jsonl"), rows[0], rows[1:])


def exclusion_reason(stream: RealStream) -> str | None:
    """Why ``stream`` gets no cassette, or ``None`` when it gets one."""
    if stream.id in EXCLUDED:
        return EXCLUDED[stream.id]
    if stream.synthetic:
        return "flagged synthetic/edited by its upstream source: not a real vendor recording"
    if any("raw" in row for row in stream.lines):
        return "holds a non-JSON payload the vendor SDKs refuse before any caller sees it"
    return None


def _gemini_model(header: dict[str, Any]) -> str:
    """The model in the recorded URL when it was the Gemini API's, else the header's."""
    url = str(header.get("request_url") or "")
    if "/models/" in url and ":" in url.rsplit("/models/", 1)[1]:
        return url.rsplit("/models/", 1)[1].split(":", 1)[0]
    return str(header.get("model") or _DEFAULT_GEMINI_MODEL)


def vendor_url(stream: RealStream) -> str:
    """The URL the vendor SDK requests for this API (the family's real host and path)."""
    if stream.api == "openai-chat":
        return "https://api.openai.com/v1/chat/completions"
    if stream.api == "openai-responses":
        return "https://api.openai.com/v1/responses"
    if stream.api == "anthropic":
        return "https://api.anthropic.com/v1/messages"
    if stream.api == "gemini":
        model = _gemini_model(stream.header)
        return (f"https://generativelanguage.googleapis.com/v1beta/models/{model}"
                ":streamGenerateContent?alt=sse")
    raise ValueError(f"no real cassettes for API {stream.api!r}")


def sse_body(stream: RealStream) -> str:
    """The recorded events framed as the vendor sends them."""
    frames: list[bytes] = []
    crlf = stream.api == "gemini"
    for row in stream.lines:
        if row.get("done") is True:
            frames.append(sse("[DONE]", crlf=crlf))
            continue
        data = row["data"]
        name: str | None = None
        if stream.api in _SSE_NAMED:
            name = row.get("event") or (data.get("type") if isinstance(data, dict) else None)
        frames.append(sse(dumps(data), name, crlf=crlf))
    return b"".join(frames).decode("utf-8")


def source_lines(stream: RealStream) -> list[str]:
    """Where the recording comes from and under which license (the cassette's comment header)."""
    h = stream.header
    return [
        f"Real vendor stream {stream.id} (toolstream corpus, tests/streams/{stream.id}.jsonl).",
        f"Source: https://github.com/{h.get('source_repo')} @ {h.get('source_commit')}",
        f"  path {h.get('source_path')}, interaction #{h.get('interaction')}",
        f"License: {h.get('license')} (text in licenses/; see LICENSES.md). Copyright remains "
        "with the upstream authors.",
        f"Recorded from: {h.get('vendor')} {h.get('request_url') or '(URL not recorded)'}, "
        f"model {h.get('model')}.",
        "Re-framed for replay: the vendor's host/path and SSE framing; event values unchanged.",
    ]


def cassette_document(stream: RealStream) -> dict[str, Any]:
    """The vcrpy cassette (format version 1) for ``stream``: one request, one streamed answer."""
    return {
        "interactions": [{
            "request": {
                "body": None,
                "headers": {"content-type": ["application/json"]},
                "method": "POST",
                "uri": vendor_url(stream),
            },
            "response": {
                "body": {"string": sse_body(stream)},
                "headers": {"content-type": [_CONTENT_TYPE[stream.api]]},
                "status": {"code": 200, "message": "OK"},
            },
        }],
        "version": 1,
    }


def render_cassette(stream: RealStream) -> str:
    """The cassette's YAML text, its source and license in a leading comment."""
    comment = "".join(f"# {line}\n" for line in source_lines(stream))
    body = yaml.safe_dump(cassette_document(stream), allow_unicode=True, sort_keys=True, width=100)
    return comment + body


def _license_files(streams_dir: Path, repo: str) -> list[Path]:
    prefix = repo.replace("/", "__")
    return sorted((streams_dir / "licenses").glob(f"{prefix}.*"))


def _licenses_md(rows: list[tuple[RealStream, str]], skipped: list[tuple[RealStream, str]]) -> str:
    out = [
        "# Licenses of the real-vendor cassettes",
        "",
        "Every cassette under `cassettes/real/` re-frames one recording of the stream corpus",
        "(`tests/streams`, see its `MANIFEST.md`): an unmodified vendor stream taken from the",
        "public repository, path and commit below and used under that repository's license",
        "(texts in `licenses/`). Copyright remains with the upstream authors. Generated by",
        "`scripts/make_real_cassettes.py`; do not edit by hand.",
        "",
        "| cassette | source repository | path | commit | # | license | recorded from |",
        "|---|---|---|---|---|---|---|",
    ]
    for stream, name in rows:
        h = stream.header
        out.append(
            f"| `{name}` | [{h.get('source_repo')}](https://github.com/{h.get('source_repo')}) "
            f"| `{h.get('source_path')}` | `{str(h.get('source_commit'))[:12]}` "
            f"| {h.get('interaction')} | {h.get('license')} | {h.get('vendor')} |"
        )
    if skipped:
        out += ["", "Corpus streams without a cassette (reasons in `README.md`): "
                + ", ".join(f"`{s.id}`" for s, _ in skipped) + "."]
    return "\n".join(out) + "\n"


def write_real_cassettes(streams_dir: Path = DEFAULT_STREAMS, out_dir: Path = DEFAULT_OUT,
                         apis: Iterable[str] = REAL_APIS) -> tuple[list[Path], list[tuple[str, str]]]:
    """Write every cassette, ``licenses/`` and ``LICENSES.md``; return (files, exclusions).

    Cassettes of streams no longer in the corpus are removed, so the folder always mirrors
    the corpus (the README is kept: it is written by hand).
    """
    written: list[Path] = []
    rows: list[tuple[RealStream, str]] = []
    skipped: list[tuple[RealStream, str]] = []
    repos: set[str] = set()
    for api in apis:
        if not (streams_dir / api).is_dir():
            raise FileNotFoundError(f"no {api} folder in {streams_dir}: is that the stream corpus?")
        folder = out_dir / api
        folder.mkdir(parents=True, exist_ok=True)
        keep: set[Path] = set()
        for path in sorted((streams_dir / api).glob("*.jsonl")):
            stream = load_real_stream(path)
            reason = exclusion_reason(stream)
            if reason is not None:
                skipped.append((stream, reason))
                continue
            target = folder / f"{stream.stem}.yaml"
            target.write_text(render_cassette(stream), encoding="utf-8")
            keep.add(target)
            written.append(target)
            rows.append((stream, f"{api}/{target.name}"))
            repos.add(str(stream.header.get("source_repo")))
        for stale in set(folder.glob("*.yaml")) - keep:
            stale.unlink()
    licenses = out_dir / "licenses"
    licenses.mkdir(parents=True, exist_ok=True)
    for repo in sorted(repos):
        files = _license_files(streams_dir, repo)
        if not files:
            raise FileNotFoundError(f"no license text for {repo} under {streams_dir / 'licenses'}")
        for src in files:
            shutil.copyfile(src, licenses / src.name)
    (out_dir / "LICENSES.md").write_text(_licenses_md(rows, skipped), encoding="utf-8")
    return written, [(s.id, reason) for s, reason in skipped]


def main(argv: list[str] | None = None) -> int:
    """Command-line entry: ``[STREAMS_DIR [OUT_DIR]]``."""
    args = sys.argv[1:] if argv is None else argv
    logging.basicConfig(format="%(message)s", level=logging.INFO)
    streams = Path(args[0]) if args else DEFAULT_STREAMS
    out = Path(args[1]) if len(args) > 1 else DEFAULT_OUT
    written, excluded = write_real_cassettes(streams, out)
    per_api: dict[str, int] = {}
    for path in written:
        per_api[path.parent.name] = per_api.get(path.parent.name, 0) + 1
    logger.info("%d cassettes under %s: %s", len(written), out, per_api)
    for stream_id, reason in excluded:
        logger.info("excluded %s: %s", stream_id, reason)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
