"""Structured output keeps the tool promise: an object only from an output proven finished.

LangChain's ``with_structured_output`` and ``create_agent(response_format=...)``, LlamaIndex's
``structured_predict``, ``as_structured_llm`` and programs ask the model for one tool call or
one JSON text and hand back an object. A cut output is the same hazard as a cut tool call,
only the result is returned as data instead of run as a tool, so it gets the same rule
(DESIGN §6, structured output), judged here once for both shims:

- a *call* output is the first call to the schema's tool that the gate committed (complete,
  proven finished, strictly parsed, schema-valid); a rejected one gives its own reason;
- a *JSON text* output counts only when the turn ended normally (a text cut by the token
  limit is a cut output, even where it happens to parse); it is then parsed once, strictly,
  and validated against the schema;
- anything else raises `StructuredOutputError`, which names the reason (a `Reason`), the call
  id when there was a call, and the raw text.

The judges read the turn's decision record (`DecisionRecord`, the plain JSON both shims keep
on their messages), so a shim judges a message as it has it; the shim passes in what the
record does not carry (the committed arguments, the text, a validator for its framework's
schema class). Nothing here imports a framework.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._decision import DecisionRecord, RejectedEntry
from ._models import Reason, Turn
from ._registry import _compile, schema_violation_detail
from ._strict_json import StrictJSONError, loads_strict

__all__ = ["CommittedOutput", "StructuredOutput", "StructuredOutputError", "judge_call", "judge_finished",
           "judge_text", "rejected_arguments"]

Validate = Callable[[Any], Any]
"""Turns the parsed JSON value into the framework's object (a pydantic class's
``model_validate``); a ``ValueError`` or ``TypeError`` from it is a schema violation."""

CommittedOutput = tuple[str | None, str | None, Any]
"""A committed call as a shim holds it: ``(id, name, arguments)``."""

_NOT_PROVEN = "the turn has no decision record, so nothing proves the output complete"


class StructuredOutputError(ValueError):
    """No committed structured output: the one exception of every structured-output path.

    ``reason`` is a `Reason` (``stream_truncated``, ``upstream_error``, ``invalid_json``,
    ``schema_violation``, ``no_output``, ...), ``detail`` says what happened, ``call_id`` is
    the id of the call that carried the output (``None`` for a JSON text, or when no call was
    made) and ``raw`` the text that arrived (the call's argument text or the JSON text; for a
    rejected call as the history keeps it where the shim has nothing more). A ``ValueError``,
    as the frameworks' own parse errors are, so existing ``except ValueError`` code still
    catches it.
    """

    def __init__(self, reason: Reason, detail: str, *, call_id: str | None = None,
                 raw: str | None = None) -> None:
        self.reason = reason
        self.detail = detail
        self.call_id = call_id
        self.raw = raw
        where = f" (call {call_id})" if call_id else ""
        super().__init__(f"no structured output [{reason.value}]{where}: {detail}")

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (self.reason, self.detail, self.call_id, self.raw))


def _rebuild(reason: Reason, detail: str, call_id: str | None,
             raw: str | None) -> StructuredOutputError:
    return StructuredOutputError(reason, detail, call_id=call_id, raw=raw)


def judge_text(record: DecisionRecord | None, text: str | None, *,
               schema: Mapping[str, Any] | None = None,
               validate: Validate | None = None) -> Any:
    """The object of a JSON-text output, or `StructuredOutputError`.

    ``record``: the decision record of the turn that produced ``text``. ``schema``: a JSON
    Schema the parsed value must satisfy; ``validate``: the framework's own conversion, run
    after it. Returns ``validate(value)``, or the parsed value without one.
    """
    judge_finished(record, raw=text)
    if text is None or not text.strip():
        raise StructuredOutputError(Reason.no_output, "the answer holds no JSON text", raw=text)
    try:
        value = loads_strict(text)
    except StrictJSONError as exc:
        raise StructuredOutputError(Reason.invalid_json, str(exc), raw=text) from None
    return _validated(value, schema, validate, call_id=None, raw=text)


def judge_call(record: DecisionRecord | None, committed: Sequence[CommittedOutput], *,
               name: str | None = None, raw: Mapping[str, str] | None = None,
               schema: Mapping[str, Any] | None = None,
               validate: Validate | None = None) -> Any:
    """The object of a tool-call output, or `StructuredOutputError`.

    ``committed``: the message's committed calls; only those the record lists as committed
    count. ``name``: the schema's tool (``None``: the first call, whatever its name).
    ``raw``: the argument text of rejected calls by answer id, where the shim has it (the
    record keeps only the history-safe text).
    """
    if record is None:
        raise StructuredOutputError(Reason.stream_truncated, _NOT_PROVEN)
    proven = {entry.get("id") for entry in record.get("committed") or []}
    for call_id, call_name, arguments in committed:
        if call_id in proven and (name is None or call_name == name):
            return _validated(arguments, schema, validate, call_id=call_id, raw=None)
    for entry in record.get("rejected") or []:
        if name is None or entry.get("name") == name:
            raise _rejected(entry, raw or {})
    judge_finished(record, raw=None)
    wanted = f"a call to {name!r}" if name else "a tool call"
    raise StructuredOutputError(Reason.no_output, f"the model ended its turn without {wanted}")


def rejected_arguments(turn: Turn | None) -> dict[str, str]:
    """The argument text of each rejected call of ``turn`` by the id its result answers: the
    ``raw`` a shim gives `judge_call` (the record keeps only the history-safe text)."""
    if turn is None:
        return {}
    raw: dict[str, str] = {}
    for call in turn.rejected:
        result = turn.result_for(call)
        if result is not None and call.raw_arguments is not None:
            raw[result.tool_call_id] = call.raw_arguments
    return raw


def _rejected(entry: RejectedEntry, raw: Mapping[str, str]) -> StructuredOutputError:
    call_id = entry.get("tool_call_id") or entry.get("id")
    reason = _reason(entry.get("reason"))
    detail = entry.get("detail") or entry.get("content") or reason.value
    text = raw.get(call_id) if call_id else None
    return StructuredOutputError(reason, detail, call_id=call_id,
                                 raw=text if text is not None else entry.get("args"))


def judge_finished(record: DecisionRecord | None, *, raw: str | None = None) -> None:
    """Raise `StructuredOutputError` unless the record proves the turn ended normally (the
    first question of `judge_text`; alone, for an output a framework parses itself, such as
    a ReAct agent's action text). ``raw``: the text to name in the error."""
    if record is None:
        raise StructuredOutputError(Reason.stream_truncated, _NOT_PROVEN, raw=raw)
    if record.get("complete"):
        return
    reason = _reason(record.get("end_reason"))
    detail = record.get("end_detail") or (
        f"the vendor did not finish the turn normally (finish reason "
        f"{record.get('finish_reason')!r})")
    raise StructuredOutputError(reason, detail, raw=raw)


def _reason(value: str | None) -> Reason:
    try:
        return Reason(value)
    except ValueError:
        return Reason.stream_truncated


def _validated(value: Any, schema: Mapping[str, Any] | None, validate: Validate | None, *,
               call_id: str | None, raw: str | None) -> Any:
    if schema is not None:
        detail = schema_violation_detail(_compile(schema), value)
        if detail is not None:
            raise StructuredOutputError(Reason.schema_violation, detail, call_id=call_id, raw=raw)
    if validate is None:
        return value
    try:
        return validate(value)
    except (ValueError, TypeError) as exc:
        raise StructuredOutputError(Reason.schema_violation, str(exc), call_id=call_id,
                                    raw=raw) from exc


class StructuredOutput:
    """The one rule of a structured output (DESIGN §6), as every shim asks it: an object only
    from an output the vendor provably finished, parsed once and strictly, valid against the
    schema; else ``StructuredOutputError``. ``judge_call`` (a schema's tool call),
    ``judge_text`` (a JSON text), ``judge_finished`` (its first question alone: did the turn end
    normally), ``rejected_arguments`` (the raw text of a turn's rejected calls, for the error).
    Not instantiated: the rule has no state."""

    judge_call = staticmethod(judge_call)
    judge_text = staticmethod(judge_text)
    judge_finished = staticmethod(judge_finished)
    rejected_arguments = staticmethod(rejected_arguments)
