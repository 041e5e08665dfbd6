"""The one strict JSON parse a call gets, after it is complete (DESIGN §4.5, §4.6).

Python's ``json`` is lenient in ways that matter for tool arguments: it accepts NaN/Infinity,
overflows ``1e400`` to ``inf``, keeps the last of duplicate keys, and passes lone surrogates
through. Each of those is refused here with a message, never repaired. Every check is a C-speed
scan or a hook that only runs on the rare values it guards, so the parse stays linear.
"""

from __future__ import annotations

import json
import math
import re
import sys
from typing import Any

__all__ = [
    "MAX_DEPTH",
    "StrictJSONError",
    "compact",
    "decodes_to",
    "dump_structured",
    "loads_strict",
    "split_concatenated",
]

MAX_DEPTH = 256
_MAX_INT_DIGITS = getattr(sys, "get_int_max_str_digits", lambda: 4300)() or 4300
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89abcdefABCDEF]")
# UTF-8 encodes every code point but the surrogates, so a strict encode finds a raw one; it
# runs at C speed (the regex ``[\ud800-\udfff]`` scanned ~35 instructions a character), a
# slice at a time so the bytes it makes stay small.
_SURROGATE_SLICE = 1 << 16


def _has_raw_surrogate(text: str) -> bool:
    """Whether ``text`` holds a surrogate code point (a half of a UTF-16 pair, raw)."""
    for start in range(0, len(text), _SURROGATE_SLICE):
        try:
            text[start:start + _SURROGATE_SLICE].encode("utf-8")
        except UnicodeEncodeError:
            return True
    return False


class StrictJSONError(ValueError):
    """The text is not one strictly valid JSON value."""


def _reject_constant(name: str) -> Any:
    raise StrictJSONError(f"{name} is not JSON")


def _parse_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise StrictJSONError(f"number {text[:40]} overflows a double")
    return value


def _parse_int(text: str) -> int:
    if len(text) - (text[0] == "-") > _MAX_INT_DIGITS:
        raise StrictJSONError(f"integer with {len(text)} digits exceeds the digit limit")
    return int(text)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise StrictJSONError(f"duplicate key {key!r}")
            seen.add(key)
    return result


_DECODER_STRICT = json.JSONDecoder(
    parse_float=_parse_float,
    parse_int=_parse_int,
    parse_constant=_reject_constant,
    object_pairs_hook=_no_duplicates,
)
_DECODER_LENIENT_KEYS = json.JSONDecoder(
    parse_float=_parse_float, parse_int=_parse_int, parse_constant=_reject_constant
)


def _walk(value: Any, *, check_depth: bool, check_surrogates: bool) -> None:
    """Depth and surrogate checks on the parsed value: containers only, iteratively."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            if check_depth and depth > MAX_DEPTH:
                raise StrictJSONError(f"nesting deeper than {MAX_DEPTH}")
            for key, item in node.items():
                if check_surrogates and _has_raw_surrogate(key):
                    raise StrictJSONError("lone surrogate escape in a key")
                stack.append((item, depth + 1))
        elif isinstance(node, list):
            if check_depth and depth > MAX_DEPTH:
                raise StrictJSONError(f"nesting deeper than {MAX_DEPTH}")
            stack.extend((item, depth + 1) for item in node)
        elif check_surrogates and isinstance(node, str) and _has_raw_surrogate(node):
            raise StrictJSONError("lone surrogate escape in a string")


def loads_strict(text: str, *, reject_duplicate_keys: bool = True) -> Any:
    """Parse ``text`` as exactly one JSON value, or raise ``StrictJSONError`` saying why."""
    if not text.isascii() and _has_raw_surrogate(text):
        # A JS server may cut a UTF-16 pair between two fragments; the pair is still one
        # character. Re-joining pairs is decoding, not repair; a lone half stays an error.
        try:
            text = text.encode("utf-16", "surrogatepass").decode("utf-16")
        except UnicodeDecodeError:
            raise StrictJSONError("lone surrogate character") from None
    if text.startswith("\ufeff"):
        raise StrictJSONError("a byte order mark precedes the JSON text")
    decoder = _DECODER_STRICT if reject_duplicate_keys else _DECODER_LENIENT_KEYS
    try:
        value = decoder.decode(text)
    except StrictJSONError:
        raise
    except RecursionError:
        raise StrictJSONError(f"nesting deeper than {MAX_DEPTH}") from None
    except ValueError as exc:  # JSONDecodeError, and int() past the digit limit
        raise StrictJSONError(str(exc)) from None
    check_depth = text.count("[") + text.count("{") > MAX_DEPTH
    check_surrogates = "\\u" in text and _ESCAPED_SURROGATE.search(text) is not None
    if check_depth or check_surrogates:
        _walk(value, check_depth=check_depth, check_surrogates=check_surrogates)
    return value


def split_concatenated(text: str) -> list[str] | None:
    """Split ``{..}{..}`` into the texts of its top-level values; ``None`` if it is not that.

    Used only for the OpenAI re-sent-call quirk (DESIGN §4.7): boundaries come from the stdlib
    scanner, and each piece is still parsed strictly by the caller.
    """
    decoder = json.JSONDecoder()
    pieces: list[str] = []
    pos, end = 0, len(text)
    try:
        while True:
            while pos < end and text[pos] in " \t\r\n":
                pos += 1
            if pos == end:
                break
            _, stop = decoder.raw_decode(text, pos)
            pieces.append(text[pos:stop])
            pos = stop
    except (ValueError, RecursionError):
        return None
    return pieces if len(pieces) >= 2 else None


def compact(value: Any) -> str:
    """The compact JSON text of a structured value (Gemini ``args``, Anthropic ``input``)."""
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise StrictJSONError(f"structured arguments are not JSON: {exc}") from None


def dump_structured(value: Any) -> tuple[str | None, str | None]:
    """Structured arguments as text: ``(compact JSON, None)``, or ``(shown text, why not JSON)``.

    DESIGN §5: a structured value gets the verdict its text would get. Non-finite numbers and
    values JSON cannot hold fail here; a UTF-16 pair split across two streamed pieces is one
    character (decoding, as in ``loads_strict``); a lone surrogate fails. The text returned for
    a failure is still valid UTF-8 (escaped), because it becomes ``raw_arguments``. Depth and
    digit limits are left to the ``loads_strict`` every committed text goes through.
    """
    try:
        text = compact(value)
    except StrictJSONError as exc:
        return _shown(value), str(exc)
    if text.isascii() or not _has_raw_surrogate(text):
        return text, None
    try:
        return text.encode("utf-16", "surrogatepass").decode("utf-16"), None
    except UnicodeDecodeError:
        return _shown(value), "lone surrogate in structured arguments"


def _shown(value: Any) -> str | None:
    """Compact JSON of a value that is not strict JSON, for diagnosis: always encodable."""
    try:
        text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        if not text.isascii() and _has_raw_surrogate(text):
            text = json.dumps(value, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return None
    return text


def decodes_to(text: str | None, original: str | None) -> bool:
    """Is ``text`` a JSON string whose content is exactly ``original`` (decoded once)?

    The LiteLLM summary chunk re-sends a call's arguments encoded again as a JSON string
    (DESIGN §5): the same arguments, not a conflicting copy.
    """
    if not text or original is None or not text.lstrip().startswith('"'):
        return False
    try:
        return bool(loads_strict(text) == original)
    except StrictJSONError:
        return False
