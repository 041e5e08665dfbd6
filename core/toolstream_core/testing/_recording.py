"""vcrpy configuration for recording and replaying cassettes, with secret scrubbing.

Shared by the cassette recorder, ``toolstream record`` and the pytest plugin, so
that every cassette the project writes goes through the same scrubbing:

* request headers ``Authorization`` (bearer keys and tokens of OpenAI, Azure AD,
  Vertex and Gemini OAuth, Cohere, Mistral, a proxy in front of Ollama; AWS
  SigV4's credential scope and signature), ``Proxy-Authorization``,
  ``x-api-key``, ``api-key`` (Azure OpenAI), ``x-goog-api-key``,
  ``X-Amz-Security-Token`` (AWS temporary credentials), ``Cookie``,
  ``OpenAI-Organization``, ``OpenAI-Project``, ``anthropic-organization-id`` are
  replaced by ``REDACTED`` (vcrpy ``filter_headers``); the query parameters
  ``key``, ``api_key``, ``api-key``, ``access_token`` and a presigned AWS URL's
  ``X-Amz-Security-Token``, ``X-Amz-Credential``, ``X-Amz-Signature`` are removed
  (``filter_query_parameters``). ``X-Amz-Date`` and ``amz-sdk-*`` are kept: a
  time and a retry count, no secret;
* response headers ``Set-Cookie``, ``OpenAI-Organization``, ``OpenAI-Project``,
  ``anthropic-organization-id`` are dropped (``before_record_response``);
* every value seen in those places is remembered and replaced wherever else it
  appears (URI, bodies, other headers), and token-shaped strings (``sk-...``,
  ``sk-ant-...``, ``AIza...``, Google OAuth ``ya29....``, AWS key ids
  ``AKIA...``/``ASIA...``, a SigV4 ``Signature=``, ``Bearer ...``) are replaced
  too, as a second net.

Host rewrite: a request to a local server (``127.0.0.1``, ``localhost``, ``::1``:
the emulator) is recorded under the vendor's real host (``https://api.openai.com``,
``https://api.anthropic.com``, ``https://generativelanguage.googleapis.com``,
chosen by the path), so a cassette replays with the SDKs' default base URLs. The
same rewrite applies when matching, so replaying with the emulator's base URL
also works.

Matching ignores what differs between SDK majors asking the same question: the
API version path segment (google-genai 3 asks ``/v1/models/...``, 2.x asked
``/v1beta/models/...``), the order of query parameters and the case of the HTTP
method; bodies and headers are not compared at all. A body recorded as a dropped connection
replays as one (``_drops``).
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from ._drops import replaying_drops

__all__ = [
    "CASSETTE_DIR",
    "REDACTED",
    "SECRET_HEADERS",
    "SECRET_QUERY_PARAMETERS",
    "Scrubber",
    "cassette_path",
    "default_cassette_dir",
    "recording_vcr",
    "replay_vcr",
    "use_cassette",
    "vendor_host_for_path",
    "versionless_path",
]

REDACTED = "REDACTED"
SECRET_HEADERS: tuple[str, ...] = (
    "authorization",
    "proxy-authorization",
    "x-api-key",
    "api-key",
    "x-goog-api-key",
    "x-amz-security-token",
    "cookie",
    "openai-organization",
    "openai-project",
    "anthropic-organization-id",
)
SECRET_QUERY_PARAMETERS: tuple[str, ...] = (
    "key", "api_key", "api-key", "access_token",
    # a presigned AWS URL (vcrpy compares query names exactly: AWS's own spelling)
    "X-Amz-Security-Token", "X-Amz-Credential", "X-Amz-Signature",
)
RESPONSE_DROP_HEADERS: frozenset[str] = frozenset(
    {"set-cookie", "openai-organization", "openai-project", "anthropic-organization-id"}
)
LOCAL_HOSTS: frozenset[str] = frozenset({"127.0.0.1", "localhost", "::1", "0.0.0.0"})
#: Replay matches on these only: bodies differ with every agent, the key query is scrubbed.
#: ``method``, ``path`` and ``query`` are this module's lenient versions (see `_same_path`).
MATCH_ON: tuple[str, ...] = ("method", "scheme", "host", "port", "path", "query")

#: An API version path segment: ``/v1``, ``/v1beta``, ``/v1alpha``, ``/v2beta1``.
_VERSION_SEGMENT = re.compile(r"/v\d+(?:(?:alpha|beta)\d*)?(?=/|$)")

#: Environment variable naming a cassette directory to use instead of the bundled one.
CASSETTES_ENV = "TOOLSTREAM_CASSETTES"


def default_cassette_dir() -> Path:
    """``$TOOLSTREAM_CASSETTES``, else a copy inside the package, else the repo's ``cassettes/``."""
    env = os.environ.get(CASSETTES_ENV)
    if env:
        return Path(env)
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "_cassettes", here.parents[2] / "cassettes"):
        if candidate.is_dir():
            return candidate
    return here.parents[2] / "cassettes"


#: ``cassettes/`` at the repository root (the bundled cassettes).
CASSETTE_DIR = Path(__file__).resolve().parents[3] / "cassettes"

_TOKEN_PATTERNS = re.compile(
    r"(sk-ant-[A-Za-z0-9_\-]{8,}|sk-(?:proj-|svcacct-)?[A-Za-z0-9_\-]{16,}"
    r"|AIza[0-9A-Za-z_\-]{20,}|ya29\.[0-9A-Za-z_\-.]{12,}"
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b|(?<=Signature=)[0-9a-f]{64}"
    r"|(?<=[Bb]earer )[A-Za-z0-9._\-+/=]{12,})"
)
#: The parts of an AWS SigV4 ``Authorization`` value that name or prove the credentials.
_SIGV4_PARTS = re.compile(r"(?:Credential=([^/,\s]+)|Signature=([0-9a-fA-F]+))")


def vendor_host_for_path(path: str) -> str:
    """The vendor origin that serves ``path`` (for rewriting emulator URLs)."""
    if path.startswith("/v1/messages"):
        return "https://api.anthropic.com"
    if path.startswith("/model/"):
        return "https://bedrock-runtime.us-east-1.amazonaws.com"
    if path.startswith("/api/"):
        return "http://localhost:11434"  # Ollama's own origin is the local server
    if path.startswith("/v2/chat"):
        return "https://api.cohere.com"
    if path.startswith(("/v1beta/", "/v1alpha/")) or ":streamGenerateContent" in path \
            or ":generateContent" in path:
        return "https://generativelanguage.googleapis.com"
    return "https://api.openai.com"


class Scrubber:
    """Remembers secret values seen in headers/query and removes them everywhere.

    One instance per VCR configuration: values collected from a request's
    headers are also scrubbed from the response bodies recorded after it.
    """

    def __init__(self, *, rewrite_local_hosts: bool = True) -> None:
        self.rewrite_local_hosts = rewrite_local_hosts
        self._secrets: set[str] = set()
        self._lock = threading.Lock()

    # -- vcrpy callables ---------------------------------------------------------------
    def header_replacement(self, key: str, value: str | bytes, request: Any) -> str:
        """``filter_headers`` replacement: remember the value, write ``REDACTED``.

        botocore signs into ``bytes`` header values (its ``Authorization``).
        """
        self._remember(value.decode("latin-1") if isinstance(value, bytes) else value)
        return REDACTED

    def query_replacement(self, key: str, value: str, request: Any) -> None:
        """``filter_query_parameters`` replacement: remember the value, drop the parameter."""
        self._remember(value)

    def before_record_request(self, request: Any) -> Any:
        """Rewrite a local host to the vendor's; scrub remembered and token-shaped values."""
        uri = request.uri
        parts = urlsplit(uri)
        if self.rewrite_local_hosts and (parts.hostname or "") in LOCAL_HOSTS:
            vendor = urlsplit(vendor_host_for_path(parts.path))
            uri = urlunsplit((vendor.scheme, vendor.netloc, parts.path, parts.query, ""))
            if "host" in request.headers:
                request.headers["host"] = vendor.netloc
        request.uri = self.scrub_text(uri)
        for name in list(request.headers):
            value = request.headers[name]
            if isinstance(value, str):
                request.headers[name] = self.scrub_text(value)
        body = request.body
        if isinstance(body, bytes) and body:
            request.body = self.scrub_bytes(body)
        elif isinstance(body, str) and body:
            request.body = self.scrub_text(body)
        return request

    def before_record_response(self, response: dict[str, Any]) -> dict[str, Any]:
        """Drop cookie/org headers; scrub remembered and token-shaped values from the rest."""
        headers = response.get("headers") or {}
        clean: dict[str, Any] = {}
        for name, values in headers.items():
            if name.lower() in RESPONSE_DROP_HEADERS:
                continue
            if isinstance(values, list):
                clean[name] = [self.scrub_text(v) if isinstance(v, str) else v for v in values]
            else:
                clean[name] = self.scrub_text(values) if isinstance(values, str) else values
        response["headers"] = clean
        body = response.get("body") or {}
        data = body.get("string")
        if isinstance(data, bytes):
            body["string"] = self.scrub_bytes(data)
        elif isinstance(data, str):
            body["string"] = self.scrub_text(data)
        return response

    # -- scrubbing -------------------------------------------------------------------
    def _remember(self, value: str) -> None:
        value = value.strip()
        if not value or value == REDACTED:
            return
        with self._lock:
            self._secrets.add(value)
            for found in _SIGV4_PARTS.finditer(value):
                self._secrets.add(found.group(1) or found.group(2))
            for prefix in ("Bearer ", "bearer ", "Basic "):
                if value.startswith(prefix) and len(value) > len(prefix):
                    self._secrets.add(value[len(prefix):])
            if value.lower().startswith("cookie") or "=" in value:
                for pair in value.split(";"):
                    _, _, v = pair.partition("=")
                    if len(v.strip()) >= 6:
                        self._secrets.add(v.strip())

    def scrub_text(self, text: str) -> str:
        with self._lock:
            secrets = sorted(self._secrets, key=len, reverse=True)
        for secret in secrets:
            if len(secret) >= 6:
                text = text.replace(secret, REDACTED)
        return _TOKEN_PATTERNS.sub(REDACTED, text)

    def scrub_bytes(self, data: bytes) -> bytes:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            with self._lock:
                secrets = [s.encode() for s in self._secrets if len(s) >= 6]
            for secret in secrets:
                data = data.replace(secret, REDACTED.encode())
            return data
        return self.scrub_text(text).encode("utf-8")


def recording_vcr(*, rewrite_local_hosts: bool = True, **overrides: Any) -> Any:
    """A ``vcr.VCR`` that scrubs secrets before anything is written.

    ``overrides`` go to ``vcr.VCR`` (e.g. ``record_mode``). Used by the cassette
    recorder and by ``toolstream record``.
    """
    import vcr  # type: ignore[import-untyped]

    scrub = Scrubber(rewrite_local_hosts=rewrite_local_hosts)
    header_repl: Callable[[str, str, Any], str] = scrub.header_replacement
    query_repl: Callable[[str, str, Any], None] = scrub.query_replacement
    options: dict[str, Any] = {
        "serializer": "yaml",
        "record_mode": "all",
        "match_on": MATCH_ON,
        "decode_compressed_response": True,
        "filter_headers": [(h, header_repl) for h in SECRET_HEADERS],
        "filter_query_parameters": [(q, query_repl) for q in SECRET_QUERY_PARAMETERS],
        "before_record_request": scrub.before_record_request,
        "before_record_response": scrub.before_record_response,
    }
    options.update(overrides)
    recorder = vcr.VCR(**options)
    recorder.register_matcher("method", _same_method)
    recorder.register_matcher("path", _same_path)
    recorder.register_matcher("query", _same_query)
    return recorder


def _same_method(r1: Any, r2: Any) -> None:
    """HTTP methods are case-insensitive: aiohttp (google-genai's async path) says ``post``."""
    assert r1.method.upper() == r2.method.upper(), f"{r1.method} != {r2.method}"


def versionless_path(path: str) -> str:
    """``path`` with its API version segments replaced by ``/v*``.

    SDK majors move between API versions of the same endpoint (google-genai 3
    asks ``/v1/models/...`` where 2.x asked ``/v1beta/models/...``) while the
    streamed answer is the same, so a cassette must not be tied to one of them.
    """
    return _VERSION_SEGMENT.sub("/v*", unquote(path) or "/")


def _same_path(r1: Any, r2: Any) -> None:
    """Paths match when they differ only in the API version segment."""
    assert versionless_path(r1.path) == versionless_path(r2.path), f"{r1.path} != {r2.path}"


def _query_pairs(request: Any) -> list[tuple[str, str]]:
    secret = set(SECRET_QUERY_PARAMETERS)
    return sorted((k, v) for k, v in request.query if k not in secret)


def _same_query(r1: Any, r2: Any) -> None:
    """The same parameters, in any order; secrets (already scrubbed on record) are not compared."""
    assert _query_pairs(r1) == _query_pairs(r2), f"{r1.query} != {r2.query}"


def replay_vcr(**overrides: Any) -> Any:
    """A ``vcr.VCR`` that only replays (``record_mode="none"``): no network, ever."""
    return recording_vcr(record_mode="none", **overrides)


def cassette_path(name: str | Path, root: Path | None = None) -> Path:
    """``"anthropic/truncated_length"`` -> ``<dir>/anthropic/truncated_length.yaml``.

    Looks under ``root`` first (when given), then in the bundled cassettes, so a
    project's own cassettes can add to or override the bundled ones. An existing
    ``.yaml`` file path is returned as is.
    """
    path = Path(name)
    if path.suffix in (".yaml", ".yml") and path.exists():
        return path
    relative = str(name) if path.suffix in (".yaml", ".yml") else f"{name}.yaml"
    bases = [root] if root is not None else []
    bases.append(default_cassette_dir())
    for base in bases:
        candidate = base / relative
        if candidate.exists():
            return candidate
    looked = ", ".join(str(b / relative) for b in bases)
    raise FileNotFoundError(f"no cassette {str(name)!r} (looked for {looked})")


@contextlib.contextmanager
def use_cassette(name: str | Path, *, root: Path | None = None,
                 allow_playback_repeats: bool = False) -> Iterator[Any]:
    """Replay one cassette offline (``record_mode="none"``), dropped bodies included.

    ``name`` is ``"<api>/<scenario>"`` (a bundled cassette, or one under
    ``root``) or a path to a ``.yaml`` file. Yields the vcrpy ``Cassette``.
    """
    path = cassette_path(name, root)
    config = replay_vcr()
    with replaying_drops(), config.use_cassette(
        str(path), allow_playback_repeats=allow_playback_repeats
    ) as cassette:
        yield cassette
