"""Read a field from a wire dict or an SDK object with one call, without converting either.

Converting SDK objects with ``model_dump`` per chunk would cost more than the assembly itself,
and so would plain ``getattr`` for an absent field: pydantic's ``__getattr__`` builds an
exception each time (about 20 µs), and most fields of a chunk are absent most of the time.
"""

from __future__ import annotations

import enum
from typing import Any

__all__ = ["field", "field2", "text_of"]

_MISSING: Any = object()


def field(obj: Any, name: str) -> Any:
    if type(obj) is dict:
        return obj.get(name)
    attrs = getattr(obj, "__dict__", None)
    if attrs is not None:
        value = attrs.get(name, _MISSING)
        if value is not _MISSING:
            return value
        if hasattr(type(obj), "__pydantic_fields__"):  # a class lookup: cheap
            extra = getattr(obj, "__pydantic_extra__", None)
            return extra.get(name) if extra else None
    return getattr(obj, name, None)


def field2(obj: Any, wire: str, sdk: str) -> Any:
    """Gemini: the wire is camelCase, google-genai objects are snake_case."""
    if type(obj) is dict:
        value = obj.get(wire)
        return obj.get(sdk) if value is None else value
    if obj is None:
        return None
    return field(obj, sdk)


def text_of(value: Any) -> str | None:
    """Enum members (google-genai ``FinishReason``) and plain strings as their string value."""
    if isinstance(value, enum.Enum):  # str-mixin enums would otherwise print as Class.MEMBER
        value = value.value
    if value is None or isinstance(value, str):
        return value
    inner = getattr(value, "value", None)
    return inner if isinstance(inner, str) else str(value)
