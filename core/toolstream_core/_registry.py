"""Tool registry: names the caller will run, each with its compiled JSON Schema validator.

``jsonschema`` is imported when the first schema is compiled, not with the package: it is
most of ``import toolstream_core`` (about 65 ms), and a caller with no schema never needs it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ._models import ToolSpec
from ._sensitive import Sensitive, parse_sensitive

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = ["Registry", "ToolsArg", "schema_violation_detail"]

ToolsArg = Mapping[str, Mapping[str, Any] | ToolSpec] | Iterable[ToolSpec] | None
"""What ``tools=`` accepts on the Assembler and the drivers: a name -> schema / `ToolSpec`
mapping, `ToolSpec`s, or ``None`` for no registry check."""

_VALIDATORS: dict[str, Validator] = {}


def _compile(schema: Mapping[str, Any]) -> Validator:
    """Compile once per distinct schema: shims build an assembler per turn with the same tools."""
    key = json.dumps(schema, sort_keys=True, default=str)
    validator = _VALIDATORS.get(key)
    if validator is None:
        import jsonschema

        cls = jsonschema.validators.validator_for(schema)
        try:
            cls.check_schema(dict(schema))
        except jsonschema.SchemaError as exc:
            raise ValueError(f"invalid JSON Schema: {exc.message}") from None
        validator = cls(schema)
        if len(_VALIDATORS) < 1024:
            _VALIDATORS[key] = validator
    return validator


class Registry:
    """The ``tools=`` argument, normalised: ``name -> ToolSpec`` plus validators."""

    __slots__ = ("pipelined", "sensitive", "specs", "validators")

    def __init__(
        self,
        tools: ToolsArg,
        pipelined: Iterable[str] = (),
        sensitive: Iterable[tuple[str, Sensitive]] = (),
    ) -> None:
        self.specs: dict[str, ToolSpec] | None = None
        self.validators: dict[str, Validator] = {}
        self.pipelined = set(pipelined)
        self.sensitive: dict[str, Sensitive] = dict(sensitive)
        if tools is None:
            return
        items: Iterable[tuple[str, Any]] = (
            tools.items() if isinstance(tools, Mapping) else ((spec.name, spec) for spec in tools)
        )
        self.specs = {}
        for name, value in items:
            if isinstance(value, ToolSpec):
                spec = value
            elif value is None or isinstance(value, Mapping):
                spec = ToolSpec(name=name, schema=value)
            else:
                raise TypeError(f"tools[{name!r}]: expected a JSON Schema dict or ToolSpec")
            self.specs[name] = spec
            if spec.schema is not None:
                self.validators[name] = _compile(spec.schema)
            if spec.pipelined:
                self.pipelined.add(name)
            if spec.sensitive is not False:
                self.sensitive[name] = _stronger(self.sensitive.get(name, False),
                                                 parse_sensitive(spec.sensitive, f"tools[{name!r}].sensitive"))

    def sensitivity(self, name: str | None) -> Sensitive:
        """How much of a call to ``name`` is private. A call with no name yet, while any tool
        is sensitive, is treated as wholly sensitive: nothing proves it is not one of them."""
        if not self.sensitive:
            return False
        if name is None:
            return True
        return self.sensitive.get(name, False)

    def strict_for(self, name: str | None, default: bool) -> bool:
        if self.specs is not None and name in self.specs:
            override = self.specs[name].strict
            if override is not None:
                return override
        return default


def _stronger(a: Sensitive, b: Sensitive) -> Sensitive:
    """Both markings at once (a ``ToolSpec`` and the config naming the same tool)."""
    if a is True or b is True:
        return True
    if a is False:
        return b
    if b is False:
        return a
    return tuple(dict.fromkeys((*a, *b)))


def _path(parts: Iterable[Any]) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)


def schema_violation_detail(validator: Validator, instance: Any) -> str | None:
    """The first violation, described from the *schema* side so no argument value is echoed."""
    from jsonschema.exceptions import best_match  # loaded already: ``validator`` is compiled

    error = best_match(validator.iter_errors(instance))
    if error is None:
        return None
    expected = error.validator_value
    shown = expected if isinstance(expected, (str, int, float, bool, list)) else None
    text = f"{_path(error.absolute_path)} violates {error.validator!r}"
    if shown is not None and len(repr(shown)) <= 80:
        text += f" ({shown!r})"
    return text
