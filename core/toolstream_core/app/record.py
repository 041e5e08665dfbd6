"""`toolstream record`: one real streamed tool-call turn, captured as a scrubbed cassette.

The request goes through the vendor's own SDK (so the cassette holds exactly what
that SDK sends and parses) inside a vcrpy cassette configured by
`toolstream_core.testing.recording_vcr`, which removes credentials before anything
is written. Nothing here prints; the CLI reports the returned summary.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from toolstream_core.vendors import SDK_EXTRA, declare_tools, make_client, open_stream

API_KEY_ENV: dict[str, tuple[str, ...]] = {
    "openai-chat": ("OPENAI_API_KEY",),
    "openai-responses": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    # boto3 signs with its own credential chain; one of these says there is one to use
    "bedrock-converse": ("AWS_SECRET_ACCESS_KEY", "AWS_BEARER_TOKEN_BEDROCK", "AWS_PROFILE"),
    "ollama": (),  # a local server takes no key
    "cohere": ("CO_API_KEY", "COHERE_API_KEY"),
}
"""Where each API's key is read from, in order of preference (none: no key needed)."""


class RecordUsageError(Exception):
    """The request cannot be made as asked (missing key, bad tools file): exit code 2/3."""


class RecordInputError(Exception):
    """A file the command needs is missing or unreadable: exit code 3."""


class VendorError(Exception):
    """The vendor (or the network) failed the request: exit code 4."""


@dataclass(frozen=True)
class RecordResult:
    """What was written, for the CLI's report."""

    cassette: Path
    interactions: int
    chunks: int
    stream_error: str | None


def load_tools(path: str) -> dict[str, dict[str, Any]]:
    """A ``name -> JSON Schema`` mapping from a JSON or YAML file.

    The same file feeds the vendor request (as each vendor's tool declaration) and
    the assembler's registry, so what is recorded and what is validated agree.
    """
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise RecordInputError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise RecordInputError(f"{path}: not UTF-8 text") from exc
    try:
        doc = json.loads(text) if file.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise RecordInputError(f"{path}: not valid JSON/YAML: {exc}") from exc
    if not isinstance(doc, Mapping) or not all(
        isinstance(k, str) and isinstance(v, Mapping) for k, v in doc.items()
    ):
        raise RecordInputError(f"{path}: expected a mapping of tool name -> JSON Schema object")
    return {name: dict(schema) for name, schema in doc.items()}


def api_key(api: str, environ: Mapping[str, str] | None = None) -> str:
    """The key for ``api`` from the environment; a clear error naming the variables if absent."""
    env = os.environ if environ is None else environ
    if not API_KEY_ENV[api]:
        return ""
    for name in API_KEY_ENV[api]:
        value = env.get(name)
        if value:
            return value
    names = " or ".join(API_KEY_ENV[api])
    raise RecordUsageError(f"set {names} in the environment to record {api}")


def _stream_once(
    api: str,
    *,
    key: str,
    model: str,
    prompt: str,
    tools: Mapping[str, Mapping[str, Any]],
    base_url: str | None,
    max_tokens: int,
) -> tuple[int, BaseException | None]:
    """Make the streamed request with the real SDK and read it to the end.

    Returns the chunk count and the exception that ended the stream, if any: a
    stream cut by the vendor is still worth keeping (it is exactly the kind of
    recording this project exists for).
    """
    count = 0
    try:
        client = make_client(api, api_key=key, base_url=base_url)
        stream = open_stream(api, client, model=model, contents=prompt,
                             tools=declare_tools(api, tools, strict=False),
                             max_tokens=max_tokens)
    except ImportError as exc:
        raise RecordUsageError(
            f"recording {api} needs its SDK: pip install 'toolstream-gate[{SDK_EXTRA[api]}]'"
        ) from exc
    except Exception as exc:  # the request itself failed: connection refused, 4xx, 5xx
        raise VendorError(_vendor_error_text(exc)) from exc
    try:
        for _chunk in stream:
            count += 1
    except Exception as exc:
        return count, exc
    return count, None


def _vendor_error_text(exc: BaseException) -> str:
    status = getattr(exc, "status_code", None) or getattr(exc, "code", None)
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    prefix = f"HTTP {status}: " if isinstance(status, int) else ""
    return f"{prefix}{type(exc).__name__}: {text}"[:300]


def record(
    *,
    api: str,
    model: str,
    prompt: str,
    tools: Mapping[str, Mapping[str, Any]],
    output: Path,
    base_url: str | None = None,
    max_tokens: int = 1024,
    overwrite: bool = False,
    environ: Mapping[str, str] | None = None,
) -> RecordResult:
    """Record one streamed turn to ``output`` through the scrubbing vcrpy configuration."""
    key = api_key(api, environ)
    if output.exists() and not overwrite:
        raise RecordUsageError(f"{output} exists; pass --force to replace it")
    from toolstream_core.testing import recording_vcr

    try:
        recorder = recording_vcr()  # imports vcrpy
    except ImportError as exc:
        raise RecordUsageError(
            "recording needs vcrpy: pip install 'toolstream-gate[record]'"
        ) from exc
    output.parent.mkdir(parents=True, exist_ok=True)
    if output.exists():
        output.unlink()
    try:
        with recorder.use_cassette(str(output), record_mode="all"):
            count, stream_error = _stream_once(
                api,
                key=key,
                model=model,
                prompt=prompt,
                tools=tools,
                base_url=base_url,
                max_tokens=max_tokens,
            )
    except VendorError:
        # vcrpy saves whatever it captured (an error response) on the way out; the
        # request failed, so `-o` must not be left holding something that looks usable.
        output.unlink(missing_ok=True)
        raise
    if not output.exists():
        raise VendorError(f"no HTTP exchange was captured for {output}")
    from toolstream_core.testing import read_cassette

    interactions = read_cassette(output)
    return RecordResult(
        cassette=output,
        interactions=len(interactions),
        chunks=count,
        stream_error=None if stream_error is None else _vendor_error_text(stream_error),
    )
