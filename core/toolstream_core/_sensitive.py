"""Sensitive tools: which calls' arguments never leave the process except to the tool itself.

A tool is marked with ``ToolSpec(sensitive=...)`` or the config's ``sensitive_tools``:
``True`` means the whole of its arguments, a tuple of dotted paths (``"headers.Authorization"``,
``"items.*.token"``) means only the values at those paths. While a sensitive call streams, a
UI sees its name and byte count only (no path can be masked in half a JSON text); once it is
committed, a UI or a trace with content capture sees its arguments with the sensitive values
replaced by :data:`MASK` (the whole arguments: nothing at all). The tool itself always gets the
real arguments: this is about what other channels carry, not what runs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "CAPTURE_ENV",
    "MASK",
    "Sensitive",
    "capture_content",
    "masked_arguments",
    "masked_text",
    "parse_sensitive",
    "parse_sensitive_tools",
]

Sensitive = bool | tuple[str, ...]
"""``False``: not sensitive; ``True``: every argument; a tuple: the values at these paths."""

MASK = "[redacted]"
"""What a masked argument value reads in a UI event or a trace."""

CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The OpenTelemetry GenAI instrumentations' opt-in for message and tool-call content."""

# ``true`` is the convention's value; the newer GenAI utilities name where content goes.
_CAPTURE_ON = frozenset({"true", "span_only", "event_only", "span_and_event"})


def capture_content(explicit: bool | None) -> bool:
    """Whether traces may carry argument text: the config's ``trace_tool_arguments`` when set,
    else the GenAI convention's environment variable (read per turn, so a test or an app that
    sets it late is obeyed)."""
    if explicit is not None:
        return explicit
    return os.environ.get(CAPTURE_ENV, "").strip().lower() in _CAPTURE_ON


def parse_sensitive(value: Any, where: str) -> Sensitive:
    """``True``/``False``, or an iterable of dotted paths (a list from YAML), checked."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise ValueError(f"{where}: expected true, false or a list of argument paths, got {value!r}")
    paths = tuple(value)
    if not paths or not all(isinstance(p, str) and p and "" not in p.split(".") for p in paths):
        raise ValueError(f"{where}: every argument path must be a dotted name like 'headers.Authorization'")
    return paths


def parse_sensitive_tools(value: Any, where: str) -> tuple[tuple[str, Sensitive], ...]:
    """The config's ``sensitive_tools``: a list of tool names (whole calls), or a mapping of
    tool name to ``true`` or a list of argument paths, or a list mixing both forms. Kept as
    ``(name, sensitive)`` pairs so the frozen config stays hashable."""
    if isinstance(value, Mapping):
        items = list(value.items())
    elif isinstance(value, str) or not isinstance(value, Iterable):
        raise ValueError(f"{where}: expected a list of tool names or a mapping name -> paths")
    else:
        items = []
        for item in value:
            if isinstance(item, Mapping):  # YAML: "- http_request: [headers.Authorization]"
                items.extend(item.items())
            else:
                items.append(item if isinstance(item, tuple) and len(item) == 2 else (item, True))
    pairs: list[tuple[str, Sensitive]] = []
    for name, marked in items:
        if not isinstance(name, str) or not name:
            raise ValueError(f"{where}: every entry must be a tool name, got {name!r}")
        pairs.append((name, parse_sensitive(marked, f"{where}.{name}")))
    return tuple(pairs)


def masked_arguments(arguments: Any, sensitive: Sensitive) -> Any:
    """A copy of ``arguments`` with the sensitive values replaced by :data:`MASK`.

    ``True``: ``None`` (nothing of it may be shown). Paths name object keys; ``*`` matches every
    key or list item at that level. A path that is not there masks nothing.
    """
    if sensitive is False:
        return arguments
    if sensitive is True:
        return None
    for path in sensitive:
        arguments = _mask_path(arguments, path.split("."))
    return arguments


def masked_text(call_arguments: Any, raw: str | None, sensitive: Sensitive,
                committed: bool) -> str | None:
    """The argument text a channel that shows content may carry for this call.

    Not sensitive: the raw text as received. Sensitive paths: the compact JSON of the masked
    arguments, and only for a committed call (uncommitted text cannot be masked reliably).
    Wholly sensitive: nothing.
    """
    if sensitive is False:
        return raw
    if sensitive is True or not committed:
        return None
    return json.dumps(masked_arguments(call_arguments, sensitive), ensure_ascii=False,
                      separators=(",", ":"))


def _mask_path(value: Any, parts: list[str]) -> Any:
    head, rest = parts[0], parts[1:]
    if isinstance(value, Mapping):
        keys = list(value) if head == "*" else [head] if head in value else []
        if not keys:
            return value
        copy = dict(value)
        for key in keys:
            copy[key] = _mask_path(copy[key], rest) if rest else MASK
        return copy
    if isinstance(value, list) and (head == "*" or head.isdigit()):
        indexes = range(len(value)) if head == "*" else [int(head)] if int(head) < len(value) else []
        copy_list = list(value)
        for i in indexes:
            copy_list[i] = _mask_path(copy_list[i], rest) if rest else MASK
        return copy_list
    return value
