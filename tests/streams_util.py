"""Find and read the corpus of real vendor streams (``tests/streams``, plus ``$TOOLSTREAM_STREAMS``).

The streams are unmodified third-party recordings from public repositories under MIT or
Apache-2.0; ``tests/streams/MANIFEST.md`` names every source and commit and ``licenses/``
holds the license texts, which is what lets the repository (and its sdist) ship them. The
copy is refreshed from the upstream collection (a folder of the same layout) by
``scripts/refresh_streams.py``. ``$TOOLSTREAM_STREAMS`` (one folder, or several joined with
``os.pathsep``) ADDS folders of the same layout, e.g. a larger private set; a stream id
already seen in an earlier folder is not read again, so pointing it at the upstream copy
does not run everything twice (the in-repo copy wins; refresh it to pick up edits).

This module is the one place that knows the on-disk format (see the MANIFEST): a header
line, then ``{"event"?: name, "data": <vendor event>}``, ``{"done": true}`` for
``data: [DONE]`` or ``{"raw": text}`` per line, and an ``<name>.expected.json`` of factual
reassembly beside streams of the four main APIs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, TypeVar

__all__ = [
    "BONUS_APIS",
    "DONE",
    "ENV_VAR",
    "MAIN_APIS",
    "REPO_STREAMS",
    "RawPayload",
    "StreamCase",
    "find_streams_dir",
    "iter_streams",
    "load_stream",
    "stream_id",
    "stream_paths",
    "streams_dirs",
]

ENV_VAR: Final = "TOOLSTREAM_STREAMS"
MAIN_APIS: Final = ("openai-chat", "openai-responses", "anthropic", "gemini")
# Folders recorded from APIs toolstream does not target; useful only as "odd input" material.
BONUS_APIS: Final = ("cohere", "bedrock-converse", "gemini-interactions")


class _DoneMarker:
    """The ``data: [DONE]`` sentinel: a singleton so ``event is DONE`` reads naturally."""

    _instance: _DoneMarker | None = None

    def __new__(cls) -> _DoneMarker:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "DONE"


DONE: Final = _DoneMarker()


@dataclass(frozen=True)
class RawPayload:
    """A non-JSON SSE payload, kept verbatim (the corpus has none today, the format allows it)."""

    text: str


@dataclass(frozen=True)
class StreamCase:
    """One recorded stream: where it lives, its header, its events and the factual reassembly.

    ``events`` holds the vendor ``data`` objects in order (plain dicts as parsed from the wire),
    with :data:`DONE` where the stream sent ``[DONE]``; ``sse_events`` is parallel to it and
    holds the SSE ``event:`` name or ``None``. ``expected`` is ``None`` for bonus folders.
    """

    path: Path
    header: dict[str, Any]
    events: list[Any]
    expected: dict[str, Any] | None
    sse_events: list[str | None]

    @property
    def api(self) -> str:
        return self.path.parent.name

    @property
    def id(self) -> str:
        return stream_id(self.path)

    def data_events(self) -> list[Any]:
        """The events a vendor SDK would hand to its caller: everything but the DONE marker."""
        return [e for e in self.events if e is not DONE]

    def __iter__(self) -> Iterator[Any]:
        # Lets callers write ``for path, header, events, expected in iter_streams()``.
        return iter((self.path, self.header, self.events, self.expected))


#: The corpus shipped with the repository (and the sdist).
REPO_STREAMS: Final = Path(__file__).resolve().parent / "streams"


def find_streams_dir() -> Path:
    """The in-repo corpus. Its absence is a broken checkout, so it raises instead of skipping."""
    if not (REPO_STREAMS / "MANIFEST.md").is_file():
        raise FileNotFoundError(
            f"the stream corpus is missing from {REPO_STREAMS}: it ships with the repository "
            "(restore it, or run scripts/refresh_streams.py)"
        )
    return REPO_STREAMS


def streams_dirs() -> list[Path]:
    """The in-repo corpus first, then every existing folder named in ``$TOOLSTREAM_STREAMS``."""
    dirs = [find_streams_dir()]
    for entry in os.environ.get(ENV_VAR, "").split(os.pathsep):
        extra = Path(entry).expanduser() if entry.strip() else None
        if extra is not None and extra.is_dir() and extra.resolve() not in {d.resolve() for d in dirs}:
            dirs.append(extra)
    return dirs


def stream_id(path: Path) -> str:
    """``"<api>/<file stem>"``: the key the expectation tables use."""
    return f"{path.parent.name}/{path.name.removesuffix('.jsonl')}"


def load_stream(path: Path) -> StreamCase:
    """Parse one JSONL recording (and its ``.expected.json`` when there is one)."""
    header: dict[str, Any] | None = None
    events: list[Any] = []
    names: list[str | None] = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            obj = json.loads(line)
            if header is None:
                header = obj
                continue
            if obj.get("done") is True:
                events.append(DONE)
            elif "data" in obj:
                events.append(obj["data"])
            elif "raw" in obj:
                events.append(RawPayload(obj["raw"]))
            else:  # pragma: no cover - the corpus format has no other line kind
                raise ValueError(f"{path}: unrecognised line {line[:80]!r}")
            names.append(obj.get("event"))
    if header is None:
        raise ValueError(f"{path}: empty stream file")
    expected_path = path.with_name(path.name.removesuffix(".jsonl") + ".expected.json")
    expected = (
        json.loads(expected_path.read_text(encoding="utf-8")) if expected_path.exists() else None
    )
    return StreamCase(path=path, header=header, events=events, expected=expected, sse_events=names)


def stream_paths(root: Path | None = None, apis: tuple[str, ...] = MAIN_APIS) -> list[Path]:
    """Every ``*.jsonl`` under the given API folders, sorted for stable test ids.

    With ``root`` only that folder is read; without it, :func:`streams_dirs` (the in-repo
    corpus plus ``$TOOLSTREAM_STREAMS``), keeping the first file of each stream id.
    """
    roots = [root] if root is not None else streams_dirs()
    seen: set[str] = set()
    paths: list[Path] = []
    for api in apis:
        for base in roots:
            for path in sorted((base / api).glob("*.jsonl")):
                if stream_id(path) not in seen:
                    seen.add(stream_id(path))
                    paths.append(path)
    return paths


def iter_streams(
    root: Path | None = None, apis: tuple[str, ...] = MAIN_APIS
) -> Iterator[StreamCase]:
    """Yield each stream of the given API folders (see :func:`stream_paths` for which)."""
    for path in stream_paths(root, apis):
        yield load_stream(path)


_Seen = TypeVar("_Seen")


def scenario_through_sdk(base_url: str, api: str, name: str,
                         collect: Callable[[str, list[Any]], _Seen]) -> tuple[Any, _Seen, Any]:
    """Stream emulator scenario ``name`` through ``api``'s real SDK client: the SDK's result,
    what ``collect`` (the calling test's reader for its vendors) saw in its events, and the
    script the emulator played (seed 0), to check the one against the other."""
    from toolstream_core.testing._clients import stream_sdk
    from toolstream_core.testing._scenarios import build_script, scenario_rng

    result = stream_sdk(api, base_url=base_url, model=f"scenario:{name}")
    return result, collect(api, result.events), build_script(name, scenario_rng(0, api, name))
