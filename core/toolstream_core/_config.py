"""``AssembleConfig``: the ``agent_stream_assemble:`` YAML section, validated once, up front.

A typo in a safety setting must not silently fall back to a default, so unknown keys and bad
values are errors that name the key.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from ._sensitive import Sensitive, parse_sensitive_tools

__all__ = ["SECTION", "AssembleConfig"]

SECTION = "agent_stream_assemble"

_CHOICES: dict[str, tuple[str, ...]] = {
    "mode": ("strict", "lenient"),
    "on_invalid_json": ("error_result", "drop_with_protocol_repair"),
    "on_args_overflow": ("error_result", "drop_with_protocol_repair"),
    "finalize_order": ("provider_index", "arrival"),
}
_POSITIVE_INTS = ("max_tool_argument_bytes", "max_tool_calls_in_flight_assemble")
_BOOLS = (
    "execute_before_stream_end",
    "ui_forward_partial_args",
    "arguments_must_be_object",
)


_YAML_SUFFIXES = (".yaml", ".yml")


def yaml_problem(exc: Exception) -> str:
    """A PyYAML error in one line ("<problem> at line L, column C"), for a one-line message.

    PyYAML's own text quotes the source over several lines, which a command's one-line error
    cannot hold.
    """
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    mark = getattr(exc, "problem_mark", None)
    if mark is None:
        return str(problem)
    return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"


def _yaml_text(source: str | os.PathLike[str]) -> str:
    """The YAML text ``from_yaml`` reads: a file's content, or the text itself.

    A one-line string ending in ``.yaml``/``.yml`` is a file name, so a missing file is
    reported as missing instead of being parsed as YAML text that lacks the section.
    """
    if isinstance(source, str) and ("\n" in source or not source.strip()):
        return source
    path = Path(source)
    if path.is_file():
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ValueError(f"{source}: cannot read the config file: {exc}") from exc
    if isinstance(source, os.PathLike) or path.suffix.lower() in _YAML_SUFFIXES:
        what = "is a directory, not a config file" if path.is_dir() else "no such config file"
        raise ValueError(f"{source}: {what}; give the YAML file with an {SECTION}: section")
    return source


@dataclass(frozen=True, slots=True)
class AssembleConfig:
    """Policy for one assembler. Defaults are the safe ones: strict, no pipelining."""

    mode: Literal["strict", "lenient"] = "strict"
    max_tool_argument_bytes: int = 262144
    max_tool_calls_in_flight_assemble: int = 32
    assemble_idle_timeout_s: float = 60
    execute_before_stream_end: bool = False
    ui_forward_partial_args: bool = True
    arguments_must_be_object: bool = True
    on_invalid_json: Literal["error_result", "drop_with_protocol_repair"] = "error_result"
    on_args_overflow: Literal["error_result", "drop_with_protocol_repair"] = "error_result"
    finalize_order: Literal["provider_index", "arrival"] = "provider_index"
    allow_pipelined_execute: tuple[str, ...] = ()
    trace_tool_arguments: bool | None = None
    """Argument text on trace spans: ``None`` follows the GenAI convention's
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``; ``True``/``False`` decide here."""
    sensitive_tools: tuple[tuple[str, Sensitive], ...] = ()
    """Tools whose arguments stay private everywhere (see ``_sensitive``): given as a list of
    names or a mapping name -> ``true`` / argument paths, kept as ``(name, sensitive)`` pairs."""
    tenant: str | None = None
    max_tool_calls_per_run: int | None = None
    """Seed 004's run budget: calls one agent run may commit in all; ``None``: unbounded. The
    core sees one turn, so the agent tells each ``Assembler`` what is left (``run_budget``)."""
    """The ``tenant`` label on every metric (DESIGN §4.12); ``None``: no such label."""

    def __post_init__(self) -> None:
        for key, choices in _CHOICES.items():
            value = getattr(self, key)
            if value not in choices:
                raise ValueError(f"{SECTION}.{key}: {value!r} is not one of {', '.join(choices)}")
        for key in _POSITIVE_INTS:
            value = getattr(self, key)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{SECTION}.{key}: expected a positive integer, got {value!r}")
        budget = self.max_tool_calls_per_run
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int) or budget < 1):
            raise ValueError(f"{SECTION}.max_tool_calls_per_run: expected a positive integer or null, "
                             f"got {budget!r}")
        timeout = self.assemble_idle_timeout_s
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            raise ValueError(
                f"{SECTION}.assemble_idle_timeout_s: expected a positive number, got {timeout!r}"
            )
        for key in _BOOLS:
            if not isinstance(getattr(self, key), bool):
                raise ValueError(f"{SECTION}.{key}: expected true or false, got {getattr(self, key)!r}")
        names = self.allow_pipelined_execute
        if isinstance(names, str) or not isinstance(names, Iterable):
            raise ValueError(f"{SECTION}.allow_pipelined_execute: expected a list of tool names")
        names = tuple(names)
        if not all(isinstance(n, str) and n for n in names):
            raise ValueError(f"{SECTION}.allow_pipelined_execute: every entry must be a tool name")
        object.__setattr__(self, "allow_pipelined_execute", names)
        if self.trace_tool_arguments is not None and not isinstance(self.trace_tool_arguments, bool):
            raise ValueError(f"{SECTION}.trace_tool_arguments: expected true, false or null, "
                             f"got {self.trace_tool_arguments!r}")
        object.__setattr__(self, "sensitive_tools",
                           parse_sensitive_tools(self.sensitive_tools, f"{SECTION}.sensitive_tools"))
        if self.tenant is not None and (not isinstance(self.tenant, str) or not self.tenant.strip()):
            raise ValueError(f"{SECTION}.tenant: expected a tenant name or null, got {self.tenant!r}")

    @property
    def strict(self) -> bool:
        return self.mode == "strict"

    @classmethod
    def from_mapping(cls, mapping: Mapping[str, Any]) -> AssembleConfig:
        """Build from the section's mapping (or from a document holding the section)."""
        if not isinstance(mapping, Mapping):
            raise ValueError(f"{SECTION}: expected a mapping, got {type(mapping).__name__}")
        if set(mapping) == {SECTION}:
            mapping = mapping[SECTION] or {}
            if not isinstance(mapping, Mapping):
                raise ValueError(f"{SECTION}: expected a mapping, got {type(mapping).__name__}")
        known = {f.name for f in fields(cls)}
        for key in mapping:
            if key not in known:
                raise ValueError(f"{SECTION}: unknown key {key!r}")
        return cls(**dict(mapping))

    @classmethod
    def from_yaml(cls, source: str | os.PathLike[str]) -> AssembleConfig:
        """Read the ``agent_stream_assemble:`` section from YAML text, a Path, or a file name."""
        text = _yaml_text(source)
        import yaml  # only a YAML config needs it: `import toolstream_core` stays light

        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ValueError(f"{SECTION}: the YAML does not parse: {yaml_problem(exc)}") from exc
        if not isinstance(document, Mapping) or SECTION not in document:
            raise ValueError(f"the YAML has no {SECTION}: section")
        section = document[SECTION]
        if section is None:
            section = {}
        if not isinstance(section, Mapping):
            raise ValueError(f"{SECTION}: expected a mapping, got {type(section).__name__}")
        return cls.from_mapping(section)

    @classmethod
    def coerce(cls, value: AssembleConfig | Mapping[str, Any] | str | os.PathLike[str] | None
               ) -> AssembleConfig:
        """The config from any form a user is likely to have at hand: itself, its mapping, YAML
        (text, a file name or a Path), or ``None`` for the defaults.

        One function so that every ``config=`` (both shims, anything built on the core) accepts
        exactly the same inputs and fails with the same message on anything else.
        """
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping):
            return cls.from_mapping(value)
        if isinstance(value, (str, os.PathLike)):
            return cls.from_yaml(value)
        raise TypeError(f"config: expected AssembleConfig, a mapping or YAML, got {type(value)!r}")
