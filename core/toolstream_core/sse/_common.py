"""What every body decoder shares: bytes that may be cut anywhere, payloads that may not be JSON."""

from __future__ import annotations

import codecs
import json
from typing import Any, TypeAlias

#: Key of the marker event emitted for a payload that is not a JSON object.
UNPARSABLE_KEY = "toolstream_unparsable"

#: What ``feed`` accepts: anything the incremental UTF-8 decoder can read.
Bytes: TypeAlias = bytes | bytearray | memoryview


def _utf8_decoder() -> codecs.IncrementalDecoder:
    # Incremental so a character cut across two feeds is decoded whole; "replace" because
    # garbage bytes must never raise (WHATWG decodes event streams the same way).
    return codecs.getincrementaldecoder("utf-8")(errors="replace")


def _reject_constant(name: str) -> Any:
    # NaN / Infinity are not JSON; a payload carrying them is an anomaly, not data.
    raise ValueError(f"non-standard JSON constant {name}")


def _parse_object(text: str) -> dict[str, Any]:
    """Parse one payload; anything that is not a JSON object becomes the marker event.

    Deeply nested garbage makes ``json`` hit the recursion limit and huge integers hit
    Python's digit limit: both are bad input, so both are caught here rather than raised.
    """
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return {UNPARSABLE_KEY: text}
    if isinstance(value, dict):
        return value
    return {UNPARSABLE_KEY: text}


def _body_text(text: str, started: bool) -> str:
    """``text`` without the byte-order mark a body's first text may start with."""
    return text[1:] if not started and text[:1] == "\ufeff" else text
