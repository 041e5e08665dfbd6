"""Rule 9: the text a rejected call's error result carries back to the model.

It says what went wrong and that a retry is welcome, in words a model can act on. It never
quotes argument text: arguments can be large, private, or the very garbage that failed.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ._models import CallKind, ErrorResult, Provider, Reason, ToolCall

__all__ = ["OUTPUT_TYPES", "error_result", "is_gate_error", "not_committed_text", "output_type",
           "responses_answer", "unanswered_text", "ungated_error_text"]

#: Responses: the input item type that answers a call of each kind (DESIGN §4.11).
OUTPUT_TYPES: dict[str, str] = {
    "function": "function_call_output", "custom": "custom_tool_call_output",
    "computer": "computer_call_output", "local_shell": "local_shell_call_output",
    "shell": "shell_call_output", "apply_patch": "apply_patch_call_output",
    "tool_search": "tool_search_output", "mcp_approval": "mcp_approval_response",
}
# The other vendors answer every call the same way.
_ANSWERS: dict[str, str] = {"openai-chat": "tool", "anthropic": "tool_result", "gemini": "functionResponse"}
# A computer_call_output must hold a screenshot and has no place for text: one blank pixel.
_BLANK_PNG = ("data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR4nGNgAAIA"
              "AAUAAXpeqz8AAAAASUVORK5CYII=")

_WHY: dict[Reason, str] = {
    Reason.invalid_json: "its arguments were not valid JSON",
    Reason.arguments_not_object: "its arguments were valid JSON but not a JSON object",
    Reason.arguments_exceed_max_bytes: "its arguments were larger than the allowed size",
    Reason.too_many_tool_calls: "the response contained more tool calls than allowed at once",
    Reason.missing_id_or_name: "the call arrived without a tool name or call id",
    Reason.unknown_tool: "no tool with that name is available",
    Reason.schema_violation: "its arguments do not match the tool's parameter schema",
    Reason.stream_truncated: "the response was cut off before the call was complete",
    Reason.upstream_error: "the model provider reported an error during the response",
    Reason.duplicate_conflict: "the same call id was sent twice with different arguments",
    Reason.cancelled: "the response was cancelled before the call completed",
    Reason.idle_timeout: "the response stalled before the call was complete",
    Reason.no_output: "the response ended without the output that was asked for",
    Reason.run_budget_exceeded: "this run has used up its budget of tool calls",
}

_RETRY: dict[Reason, str] = {
    Reason.arguments_exceed_max_bytes: "Retry with smaller arguments, or split the work.",
    Reason.too_many_tool_calls: "Retry with fewer calls in one response.",
    Reason.unknown_tool: "Call one of the available tools instead.",
    Reason.cancelled: "Retry the call if it is still needed.",
    Reason.run_budget_exceeded: ("Do not retry it or call other tools in this run; answer with the "
                                 "information you already have."),
}


#: The shape of the id the call table synthesizes for a call the vendor sent without one
#: (``CallTable._synthesized_id``: ``call_ts<seq>_<16 hex digits>``).
_SYNTHESIZED = re.compile(r"call_ts\d+_[0-9a-f]{16}")


def _named(name: str, tool_call_id: str, quote_id: bool | None) -> str:
    """How the text names the call: with its id only when the model saw that id (an id the
    core synthesized for an id-less call, e.g. on Gemini, would read as the model's own)."""
    if quote_id is None:
        quote_id = _SYNTHESIZED.fullmatch(tool_call_id) is None
    return f"Tool call {name!r} (id {tool_call_id})" if quote_id else f"Tool call {name!r}"


def error_result(call: ToolCall, tool_call_id: str, *, echo: bool = True,
                 quote_id: bool | None = None) -> ErrorResult:
    """Build the paired result for a rejected ``call``.

    The text quotes ``tool_call_id`` unless the core synthesized it (the vendor sent no id,
    so the model never saw one); ``quote_id`` decides it explicitly. The result still
    answers the id either way.

    A schema violation is described from the schema's side (path and rule), so it is always
    safe to show. A JSON parse message can name a key or a number from the arguments, so it is
    only included when the caller lets argument text flow (``ui_forward_partial_args``).
    """
    reason = call.reason or Reason.upstream_error
    name = call.name or "unknown"
    text = f"{_named(name, tool_call_id, quote_id)} was not run: {_WHY[reason]} [{reason.value}]."
    if call.detail and (reason is Reason.schema_violation or (echo and reason is Reason.invalid_json)):
        text += f" Detail: {call.detail}."
    text += " " + _RETRY.get(reason, "Nothing was executed; you may retry the call with complete, valid arguments.")
    return ErrorResult(tool_call_id=tool_call_id, name=call.name, reason=reason, content=text, key=call.key,
                       kind=call.kind, output_type=output_type(call.provider, call.kind))


def output_type(provider: Provider | None, kind: CallKind) -> str | None:
    """What answers a call of ``kind`` on ``provider``'s API (``ErrorResult.output_type``)."""
    if provider == "openai-responses":
        return OUTPUT_TYPES.get(kind)
    return _ANSWERS.get(provider) if provider is not None else None


def responses_answer(result: ErrorResult) -> dict[str, Any]:
    """The Responses input item that answers a rejected call, built from ``result``.

    Each output item type has its own fields (checked against the openai SDK's
    ``ResponseInputItemParam``): the text goes where the item has room for it (``output``,
    ``stderr``, an approval's ``reason``). A ``computer_call_output`` must carry a screenshot
    and a ``tool_search_output`` a tool list, and neither has a text field: they answer with a
    blank pixel and no tools, so the call is paired and the model sees nothing happened.
    """
    kind, call_id, text = result.output_type, result.tool_call_id, result.content
    if kind in ("function_call_output", "custom_tool_call_output"):
        return {"type": kind, "call_id": call_id, "output": text}
    if kind == "computer_call_output":
        return {"type": kind, "call_id": call_id, "output": {"type": "computer_screenshot", "image_url": _BLANK_PNG}}
    if kind == "local_shell_call_output":  # answered by ``id``; ``output`` is JSON text
        return {"type": kind, "id": call_id, "output": json.dumps({"error": text})}
    if kind == "shell_call_output":
        return {"type": kind, "call_id": call_id,
                "output": [{"stdout": "", "stderr": text, "outcome": {"type": "exit", "exit_code": 1}}]}
    if kind == "apply_patch_call_output":
        return {"type": kind, "call_id": call_id, "status": "failed", "output": text}
    if kind == "tool_search_output":
        return {"type": kind, "call_id": call_id, "execution": "client", "tools": []}
    if kind == "mcp_approval_response":
        return {"type": kind, "approval_request_id": call_id, "approve": False, "reason": text}
    raise ValueError(f"not a Responses call's result (output_type {kind!r})")


def ungated_error_text(name: str, tool_call_id: str, error: str) -> str:
    """The result for a call the framework itself could not use, on a turn that never passed
    the gate (the shims' ``error_tool_messages`` on an ungated message): same words in both."""
    return (f"Tool call {name!r} (id {tool_call_id}) was not run: its arguments could not be used "
            f"({error}). Nothing was executed; you may retry the call with complete, valid arguments.")


def not_committed_text(name: str | None, tool_call_id: str | None) -> str:
    """The result of a call an agent refused to run because the gate never committed it (it
    reached the executor by another way): the same words in both agents."""
    return (f"Tool call {name!r} (id {tool_call_id}) was not run: the call was not committed by "
            "the toolstream gate (it did not come complete and valid from the model's stream). "
            "[not_committed]")


def unanswered_text(name: str, tool_call_id: str, *, quote_id: bool | None = None) -> str:
    """The result that pairs a call whose tool never answered (the run was cancelled first),
    so the next request is legal; it may have run, so the model is told to check.
    ``quote_id=False`` where the model never saw the id (Gemini sends none; by default only
    an id the core synthesized is left out)."""
    return (f"{_named(name, tool_call_id, quote_id)} has no result: the run was cancelled before "
            "the tool returned [cancelled]. It may or may not have taken effect; check before retrying.")


def is_gate_error(text: str, tool_call_id: str) -> bool:
    """Whether ``text`` is one of the gate's own error results for the call ``tool_call_id``
    (a rejected call's, or a call left without a result): the sentence these functions
    write, quoting that very id. For a request whose framework cannot mark a result as an
    error, so the wire's own flag can still be set where the vendor has one."""
    head = text[:512]
    marker = f"(id {tool_call_id}) "
    return head.startswith("Tool call ") and (marker + "was not run:" in head
                                               or marker + "has no result:" in head)
