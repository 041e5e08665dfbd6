"""Read a field from a wire dict or an SDK object with one call, without converting either.

Converting SDK objects with ``model_dump`` per chunk would cost more than the assembly itself,
and so would plain ``getattr`` for an absent field: pydantic's ``__getattr__`` builds an
exception each time (about 20 µs), and most fields of a chunk are absent most of the time.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .._completion import Verdict

if TYPE_CHECKING:
    from . import Sink

__all__ = ["Malformed", "accessor", "field", "field2", "is_record", "record", "records", "report_stop", "text_of"]

_NOT_RECORDS = (str, bytes, bytearray, int, float, list, tuple, set, frozenset)


class Malformed(ValueError):
    """An event, or a field an adapter reads, is not the vendor's shape (DESIGN §5).

    Raised inside ``Assembler.feed``, which counts it and fails every live call: the event may
    have carried fragments of any of them.
    """


def is_record(value: Any) -> bool:
    """A dict or an SDK object: something with named fields (not None, a scalar or a list)."""
    return value.__class__ is dict or not (value is None or isinstance(value, _NOT_RECORDS))


def record(value: Any, what: str) -> Any:
    """``value`` when it is absent (None) or a record; ``Malformed`` otherwise."""
    if value is None or value.__class__ is dict or is_record(value):
        return value
    raise Malformed(f"{what} is a {type(value).__name__}")


def records(value: Any, what: str) -> Any:
    """A list of records (``()`` when absent); ``Malformed`` when it is not a list."""
    if value is None:
        return ()
    if value.__class__ is not list and not isinstance(value, (list, tuple)):
        raise Malformed(f"{what} is a {type(value).__name__}, not a list")
    return value


def field(obj: Any, name: str) -> Any:
    """``obj``'s field ``name`` (None when absent), for a wire dict and an SDK object alike.

    Pydantic models are read through their public surface: a declared field is a plain
    attribute, an undeclared one sits in ``model_extra``. A plain ``getattr`` with a default
    would cost pydantic's ``__getattr__`` building an exception for every absent field.
    """
    if type(obj) is dict:
        return obj.get(name)
    if obj is None:
        return None
    declared = _declared_fields(obj.__class__)
    if name in declared:
        return getattr(obj, name, None)
    if declared:
        extra = obj.model_extra
        return extra.get(name) if extra else None
    return getattr(obj, name, None)


def _declared_fields(cls: type) -> frozenset[str]:
    """The field names a pydantic model class declares (empty for anything else), once per class."""
    names = _DECLARED.get(cls)
    if names is None:
        fields = getattr(cls, "model_fields", None)
        names = _DECLARED[cls] = frozenset(fields) if isinstance(fields, dict) else frozenset()
    return names


_DECLARED: dict[type, frozenset[str]] = {}


def accessor(obj: Any) -> Callable[[Any, str], Any]:
    """The one reader an adapter uses for an event and everything inside it: wire dicts are
    dicts all the way down, SDK objects objects."""
    return dict.get if obj.__class__ is dict else field


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


def report_stop(sink: Sink, reason: Any, judge: Callable[[str], Verdict], what: str) -> bool:
    """Tell the sink how the vendor ended the turn; ``True`` when it named a reason.

    A stop event that names no reason proves nothing (``truncated``); one whose reason is not
    a string is malformed.
    """
    if reason is None:
        sink.end_turn(None, Verdict.truncated)
        return False
    if not isinstance(reason, str):
        raise Malformed(f"{what} is a {type(reason).__name__}")
    sink.end_turn(reason, judge(reason))
    return True
