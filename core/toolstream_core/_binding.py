"""Arguments bound to the commit: a committed call runs only with the arguments the vendor
finished, or with a human's recorded edit of them.

A framework keeps a call's arguments in its state (LangGraph's checkpoint, LlamaIndex's
workflow context), and that state can be changed after the gate committed the call: a
LangGraph ``update_state`` that replaces a paused message's arguments under the same call id,
a saved context edited before it is restored. Checking the id alone then runs arguments no
vendor stream produced. So each committed entry of the decision record carries ``digest``,
the SHA-256 of the call's name and arguments in one canonical JSON form, and an executor runs
a call only when the name and arguments it is about to run hash to it.

A human reviewer's decision is recorded next to it (``review``), never merged into it: an
``edit`` keeps the vendor's digest and adds the edit's own, so a trace or an audit always
tells what the vendor sent from what a person chose; a ``reject`` marks a call that must
never run, whatever later happens to the message that answered it. The first review of a
call is the one kept.

For a sensitive tool the digest covers the masked arguments (``masked`` says which paths),
so the record says nothing of what is private (DESIGN 3, ``ToolSpec.sensitive``); a change
to a masked value is not seen by it. The digest binds the arguments to the record; whoever
can rewrite the record as well is not stopped by it (that needs a key, not a hash).
A record written before digests existed has none: its calls are checked by id, as then.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal, NamedTuple, TypedDict, cast

from ._finalize import decide
from ._models import ToolCall
from ._registry import Registry, ToolsArg
from ._sensitive import Sensitive, masked_arguments

__all__ = [
    "DIGEST_PREFIX",
    "Review",
    "Unbound",
    "arguments_digest",
    "binding_refusal",
    "bound_fields",
    "edit_problem",
    "with_reviews",
]

#: Names the hash, so a later change of hash is a new prefix, not a silent mismatch.
DIGEST_PREFIX = "sha256:"

ReviewDecision = Literal["edit", "reject"]


class Review(TypedDict, total=False):
    """A human's decision about one committed call, as the record keeps it."""

    decision: ReviewDecision
    name: str | None
    """The tool an edit runs (a reviewer may name another tool)."""
    digest: str
    """The digest of the edit's name and arguments."""


class Unbound(NamedTuple):
    """Why a committed call may not run with what it was given, and what the model is told."""

    reason: str
    """``arguments_changed``, ``human_rejected``, or why a human edit cannot run (the gate's
    own reason for such arguments, e.g. ``schema_violation``)."""
    content: str


def _canonical(value: Any) -> Any:
    """One form for equal JSON values: an integral float is its integer (a framework may turn
    ``1`` into ``1.0``), tuples are lists."""
    if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    return str(value)  # not JSON: compared by its text, never equal to a JSON value's digest


def arguments_digest(name: str | None, arguments: Any, sensitive: Sensitive = False) -> str:
    """The digest of a call's name and arguments (masked as ``sensitive`` says)."""
    shown = masked_arguments(arguments, sensitive)
    text = json.dumps([name, _canonical(shown)], sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False, allow_nan=True)
    return DIGEST_PREFIX + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def bound_fields(call: ToolCall) -> dict[str, Any]:
    """What a committed entry of the record adds to id and name: its ``digest``, and for a
    sensitive tool the ``masked`` paths (``True``: the whole arguments)."""
    fields: dict[str, Any] = {"digest": arguments_digest(call.name, call.arguments, call.sensitive)}
    if call.sensitive is not False:
        fields["masked"] = call.sensitive if call.sensitive is True else list(call.sensitive)
    return fields


def _masking(entry: Mapping[str, Any]) -> Sensitive:
    masked = entry.get("masked", False)
    if isinstance(masked, bool):
        return masked
    return tuple(str(path) for path in masked) if isinstance(masked, list) else True


def binding_refusal(entry: Mapping[str, Any], name: str | None, arguments: Any, *,
                    pending_edit: tuple[str | None, Any] | None = None) -> Unbound | None:
    """Whether the committed call ``entry`` may run as ``name(arguments)``: ``None`` when it
    may, else why not. ``pending_edit`` is a reviewer's edit the framework will substitute
    further in (LangChain's HITL middleware, when it is inside this check): it must be the
    recorded one."""
    review = cast(Review, entry.get("review") or {})
    call_id = entry.get("id")
    if review.get("decision") == "reject":
        return Unbound("human_rejected", _rejected_text(entry.get("name"), call_id))
    digest = entry.get("digest")
    if not isinstance(digest, str):
        return None  # a record from before digests: the id is all it binds
    masking = _masking(entry)
    allowed = {digest}
    if review.get("decision") == "edit" and isinstance(review.get("digest"), str):
        allowed.add(review["digest"])
    seen = {arguments_digest(name, arguments, masking)}
    if pending_edit is not None:
        recorded = review.get("digest") if review.get("decision") == "edit" else None
        edit = arguments_digest(pending_edit[0], pending_edit[1], masking)
        if edit != recorded:
            return Unbound("arguments_changed", _changed_text(name, call_id))
        seen.add(edit)
    if seen <= allowed:
        return None
    return Unbound("arguments_changed", _changed_text(name, call_id))


def with_reviews(record: Mapping[str, Any], *, edits: Mapping[str, tuple[str | None, Any]],
                 answered: Iterable[str]) -> dict[str, Any] | None:
    """``record`` with the human decisions on its committed calls added: ``edits`` (call id ->
    the edit's name and arguments) and ``answered`` (ids a reviewer answered instead of the
    tool: rejected, or responded for it). ``None`` when nothing new is to be recorded; a call
    already reviewed keeps its first review."""
    answered = set(answered)
    committed: list[dict[str, Any]] = []
    changed = False
    for entry in record.get("committed") or []:
        entry = dict(entry)
        call_id = entry.get("id")
        if call_id is not None and "review" not in entry:
            if call_id in answered:
                entry["review"] = Review(decision="reject")
            elif call_id in edits:
                name, arguments = edits[call_id]
                entry["review"] = Review(decision="edit", name=name,
                                         digest=arguments_digest(name, arguments, _masking(entry)))
            changed = changed or "review" in entry
        committed.append(entry)
    return {**record, "committed": committed} if changed else None


def edit_problem(name: str | None, arguments: Any, tools: ToolsArg, *,
                 call_id: Any = None) -> Unbound | None:
    """Why a human's edit cannot run, or ``None``: the edit gets the decision a vendor's
    arguments get (DESIGN 4.5, strict: a JSON object, valid against ``tools``' schema for
    ``name``), never a looser one because a person wrote it."""
    try:
        text = json.dumps(arguments, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError):
        text = "\u0000"  # not JSON at all: the strict parse says so
    decision = decide(name=name, has_id=True, kind="function", provider=None, text=text,
                      registry=Registry(tools), strict=True, must_be_object=True)
    if decision.reason is None:
        return None
    detail = f" ({decision.detail})" if decision.detail else ""
    return Unbound(str(decision.reason),
                   f"Tool call {name!r} (id {call_id}) was not run: the human edit of its arguments "
                   f"is not valid for the tool{detail}. [{decision.reason}]")


def _changed_text(name: str | None, call_id: Any) -> str:
    return (f"Tool call {name!r} (id {call_id}) was not run: its arguments are not the ones the "
            "model's stream finished, nor a recorded human edit of them (they changed after the "
            "toolstream gate committed the call). [arguments_changed]")


def _rejected_text(name: str | None, call_id: Any) -> str:
    return (f"Tool call {name!r} (id {call_id}) was not run: a human reviewer rejected it. "
            "[human_rejected]")
