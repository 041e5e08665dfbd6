"""Rules 5 and 7: the single decision made about a complete call.

Called once per call, after completion is proven. The order of checks is the order of the
questions a tool runner would ask: who is this for, is it mine, what are the arguments, do they
fit the tool.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ._models import CallKind, Provider, Reason
from ._registry import Registry, schema_violation_detail
from ._strict_json import StrictJSONError, decodes_to, loads_strict, split_concatenated

__all__ = ["NO_VALUE", "Decision", "Deferred", "decide", "same_copy"]

NO_VALUE: Any = object()


class Deferred:
    """Structured arguments still being built (Gemini ``partialArgs``); resolved once, at the end."""

    __slots__ = ()

    def resolve(self) -> Any:
        raise NotImplementedError
# RFC 8259 whitespace only: a no-break space or another Unicode space is not JSON (4.5).
_JSON_WHITESPACE = " \t\n\r"
_ID_VENDORS = frozenset({"openai-chat", "openai-responses", "anthropic"})
# The kinds the registry names (``tools=``). A Responses built-in call (computer, shell, ...)
# has the vendor's fixed shape and exists only because the request declared that built-in
# tool, so the registry does not gate it (DESIGN §4.11).
_NAMED_KINDS = frozenset({"function", "custom"})


@dataclass(slots=True)
class Decision:
    arguments: Any = None
    reason: Reason | None = None
    detail: str | None = None
    deduplicated: bool = False


def _parse(text: str | None, *, strict: bool, provider: Provider | None) -> Decision:
    if text is None or not text.strip(_JSON_WHITESPACE):
        return Decision(arguments={})
    try:
        return Decision(arguments=loads_strict(text, reject_duplicate_keys=strict))
    except StrictJSONError as exc:
        failure = Decision(reason=Reason.invalid_json, detail=str(exc))
    if provider != "openai-chat":
        return failure
    # The GPT-4.1-nano re-send: the same arguments object streamed twice onto one call; a
    # LiteLLM summary chunk re-sends it encoded once more as a JSON string (DESIGN §5).
    pieces = split_concatenated(text)
    if pieces is None:
        return failure
    if any(piece != pieces[0] and not decodes_to(piece, pieces[0]) for piece in pieces):
        return Decision(
            reason=Reason.duplicate_conflict,
            detail=f"{len(pieces)} different argument objects were sent for one call",
        )
    try:
        value = loads_strict(pieces[0], reject_duplicate_keys=strict)
    except StrictJSONError:
        return failure
    if not isinstance(value, dict):
        return failure
    return Decision(arguments=value, deduplicated=True)


def same_copy(copy: str | None, first: str | None) -> bool:
    """Rule 7: does a re-sent copy carry the same arguments as the first copy?

    Compared as text, after undoing the two re-send shapes the contract names: pieces of one
    buffer that repeat one object (``{..}{..}``) count once, and a copy encoded once more as a
    JSON string (the LiteLLM summary chunk, DESIGN §5) is decoded once.
    """
    return copy == first or _one_copy(copy) == _one_copy(first)


def _one_copy(raw: str | None) -> str | None:
    if not raw:
        return raw
    pieces = split_concatenated(raw)
    if pieces is not None and all(p == pieces[0] or decodes_to(p, pieces[0]) for p in pieces):
        return pieces[0]
    if raw.lstrip().startswith('"'):
        try:
            decoded = loads_strict(raw)
        except StrictJSONError:
            return raw
        if isinstance(decoded, str):
            return decoded
    return raw


def decide(
    *,
    name: str | None,
    has_id: bool,
    kind: CallKind,
    provider: Provider | None,
    text: str | None,
    registry: Registry,
    strict: bool,
    must_be_object: bool,
) -> Decision:
    """Commit-or-reject for one complete call.

    ``text`` is the argument text, or the compact JSON of structured arguments: both get the
    one strict parse, so a structured value can never commit what its text would not.
    """
    if not name:
        return Decision(reason=Reason.missing_id_or_name, detail="the call has no tool name")
    if not has_id and strict and provider in _ID_VENDORS:
        return Decision(reason=Reason.missing_id_or_name, detail="the call has no call id")
    if registry.specs is not None and kind in _NAMED_KINDS and name not in registry.specs:
        return Decision(reason=Reason.unknown_tool, detail=f"no tool named {name!r}")

    if kind == "custom":
        decision = Decision(arguments={"input": text or ""})
    else:
        decision = _parse(text, strict=strict, provider=provider)
        if decision.reason is not None:
            return decision

    if must_be_object and not isinstance(decision.arguments, dict):
        kind_name = type(decision.arguments).__name__
        return Decision(reason=Reason.arguments_not_object, detail=f"top-level value is a {kind_name}")
    validator = registry.validators.get(name)
    if validator is not None:
        detail = schema_violation_detail(validator, decision.arguments)
        if detail is not None:
            return Decision(reason=Reason.schema_violation, detail=detail)
    return decision
