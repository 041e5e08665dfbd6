"""Pieces shared by the per-vendor wire renderers: SSE framing, ids, results."""

from __future__ import annotations

import json
import random
import string
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CREATED", "Rendered", "Reply", "dumps", "rand_id", "sse"]

#: A fixed timestamp so a scenario's bytes do not depend on the clock.
CREATED = 1_750_000_000

_ALNUM = string.ascii_letters + string.digits


def dumps(obj: Any) -> str:
    """Compact JSON with raw UTF-8, as the vendors send it."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def sse(data: Any, event: str | None = None, *, crlf: bool = False) -> bytes:
    """One Server-Sent Event frame (``data`` a JSON value or a raw string)."""
    nl = "\r\n" if crlf else "\n"
    payload = data if isinstance(data, str) else dumps(data)
    head = f"event: {event}{nl}" if event else ""
    return f"{head}data: {payload}{nl}{nl}".encode()


def rand_id(rng: random.Random, prefix: str, length: int) -> str:
    """A vendor-looking id drawn from the scenario's seeded RNG."""
    return prefix + "".join(rng.choice(_ALNUM) for _ in range(length))


@dataclass
class Rendered:
    """A streamed answer: SSE frames, and whether the socket drops after them.

    ``drop`` means the server closes the connection without finishing the
    chunked body, which the SDKs surface as a transport error.
    """

    frames: list[bytes]
    drop: bool = False
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Reply:
    """A non-streamed answer: status and a JSON body (``None`` body: drop the socket)."""

    status: int
    body: dict[str, Any] | None
    headers: dict[str, str] = field(default_factory=dict)
