"""What each vendor's stream events look like: one constructor per kind of event.

The emulator's wire renderers (``_wire_*``, ``_profiles``) put these on the wire; the
core tests' stream builders (``tests/core/builders.py``) feed them to the assembler as
dicts. Both build every event here, so a vendor's shape (its field names, their order,
the fields it always sends) is written once: a fix to a shape reaches the emulator, the
cassettes it records and the ~1,900 rule tests together. What differs between the two
on purpose (ids, model names, where a stream is cut, how calls interleave, which ending
is sent) is each caller's choice, passed in as arguments.

Key order is part of the shape: the emulator serialises these dicts, and its bytes (and
so the recorded cassettes) must stay the same for the same script and seed.

Vendors only the emulator renders (Bedrock, Cohere, Ollama) keep their shapes in their
own ``_wire_*`` module: there is no second renderer of them to share with.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

__all__ = [
    "CREATED",
    "CallKind",
    "ChatIdentity",
    "GeminiEnd",
    "anthropic_block_start",
    "anthropic_block_stop",
    "anthropic_error",
    "anthropic_input_delta",
    "anthropic_message",
    "anthropic_message_delta",
    "anthropic_signature_delta",
    "anthropic_text_delta",
    "anthropic_thinking_delta",
    "anthropic_tool_block",
    "anthropic_tool_events",
    "chat_base",
    "chat_call_deltas",
    "chat_chunk",
    "chat_role_delta",
    "chat_tool_delta",
    "chat_usage_chunk",
    "gemini_call",
    "gemini_chunk",
    "gemini_error",
    "gemini_partial",
    "gemini_partial_parts",
    "gemini_partial_value",
    "gemini_string_entries",
    "responses_arguments_delta",
    "responses_arguments_done",
    "responses_call_events",
    "responses_call_item",
    "responses_error",
    "responses_event",
    "responses_object",
]

#: A fixed timestamp so a rendered stream does not depend on the clock.
CREATED = 1_750_000_000

# -- OpenAI Chat Completions ----------------------------------------------------------------


def chat_base(chunk_id: str, model: str, *, created: int = CREATED, fingerprint: str | None = None,
              **extra: Any) -> dict[str, Any]:
    """The fields every ``chat.completion.chunk`` of one completion repeats.

    ``extra`` (e.g. ``service_tier``, a proxy's ``provider``) sits between ``model`` and
    ``system_fingerprint``, where OpenAI and the compatible servers put them.
    """
    base: dict[str, Any] = {"id": chunk_id, "object": "chat.completion.chunk", "created": created,
                            "model": model, **extra}
    if fingerprint is not None:
        base["system_fingerprint"] = fingerprint
    return base


def chat_chunk(base: Mapping[str, Any], delta: dict[str, Any], finish: str | None = None, *,
               choice: int = 0, **top: Any) -> dict[str, Any]:
    """One chunk with one choice; ``top`` adds fields beside ``choices`` (``usage``, ``error``)."""
    entry = {"index": choice, "delta": delta, "logprobs": None, "finish_reason": finish}
    return {**base, "choices": [entry], **top}


def chat_role_delta(content: str | None = None, *, refusal: bool = False, **more: Any) -> dict[str, Any]:
    """The delta that opens the assistant's message: ``content`` ``None`` before tool calls,
    ``""`` before text; OpenAI adds ``refusal: null``; ``more`` (e.g. ``reasoning_content``)
    follows."""
    delta: dict[str, Any] = {"role": "assistant", "content": content}
    if refusal:
        delta["refusal"] = None
    return {**delta, **more}


def chat_usage_chunk(base: Mapping[str, Any], usage: dict[str, Any]) -> dict[str, Any]:
    """The usage-only chunk (no choices) sent when ``stream_options.include_usage`` asks."""
    return {**base, "choices": [], "usage": usage}


def chat_tool_delta(index: int | None, arguments: Any, *,
                    ident: tuple[str | None, str | None] | None = None,
                    typed: bool = True) -> dict[str, Any]:
    """One entry of ``delta.tool_calls``.

    ``index`` ``None`` leaves the key out (servers that omit it). ``ident`` is
    ``(id, name)``: given, the entry opens a call (``id``, ``type``, ``function.name``,
    sent as they are, even ``None`` or ``""``); absent, it is a bare argument fragment.
    ``typed=False`` drops ``type`` (servers that omit it). ``arguments`` is the text
    sent (``""`` on OpenAI's opening delta), or ``None`` / an object where a server
    sends that.
    """
    entry: dict[str, Any] = {} if index is None else {"index": index}
    function: dict[str, Any] = {}
    if ident is not None:
        entry["id"] = ident[0]
        if typed:
            entry["type"] = "function"
        function["name"] = ident[1]
    function["arguments"] = arguments
    entry["function"] = function
    return entry


#: Where a chat server repeats a call's identity after the opening delta: nowhere (OpenAI),
#: on ``every`` delta (OpenRouter, Novita), or as ``blank`` ``""`` id and name (some proxies).
ChatIdentity = Literal["first", "every", "blank"]


def chat_call_deltas(index: int | None, call_id: str | None, name: str | None, fragments: list[str], *,
                     identity: ChatIdentity = "first", opening: Any = "",
                     typed: bool = True) -> list[dict[str, Any]]:
    """One call's ``tool_calls`` entries in order: the opening delta (identity and
    ``opening`` as its arguments), then one delta per argument fragment."""
    later = {"first": None, "every": (call_id, name), "blank": ("", "")}[identity]
    return [chat_tool_delta(index, opening, ident=(call_id, name), typed=typed),
            *(chat_tool_delta(index, fragment, ident=later, typed=typed) for fragment in fragments)]


# -- OpenAI Responses -----------------------------------------------------------------------

CallKind = Literal["function", "custom"]

# Per kind of client call: the item type, its argument field, the delta and done events.
_RESPONSES_KINDS: dict[str, tuple[str, str, str]] = {
    "function": ("function_call", "arguments", "response.function_call_arguments"),
    "custom": ("custom_tool_call", "input", "response.custom_tool_call_input"),
}


def responses_event(kind: str, **fields: Any) -> dict[str, Any]:
    """A stream event; ``sequence_number`` is a placeholder the caller numbers in order."""
    return {"type": kind, "sequence_number": 0, **fields}


def responses_call_item(item_id: str, call_id: str | None, name: str | None, arguments: str,
                        status: str | None, *, kind: CallKind = "function") -> dict[str, Any]:
    """A function (or custom tool) call output item; ``status`` ``None`` leaves it out, as
    the recorded ``custom_tool_call`` items do until they are done."""
    item_type, field, _ = _RESPONSES_KINDS[kind]
    item: dict[str, Any] = {"id": item_id, "type": item_type}
    if status is not None:
        item["status"] = status
    return {**item, field: arguments, "call_id": call_id, "name": name}


def responses_arguments_delta(item_id: str, output_index: int, delta: str, *,
                              kind: CallKind = "function") -> dict[str, Any]:
    """One argument (or custom input) fragment of the item at ``output_index``."""
    return responses_event(f"{_RESPONSES_KINDS[kind][2]}.delta", item_id=item_id,
                           output_index=output_index, delta=delta)


def responses_arguments_done(item_id: str, output_index: int, name: str | None, text: str, *,
                             kind: CallKind = "function") -> dict[str, Any]:
    """The whole argument text once it is complete (function calls also carry ``name``:
    the SDK's type requires it; older servers omit it)."""
    _, field, prefix = _RESPONSES_KINDS[kind]
    named = {"name": name} if kind == "function" else {}
    return responses_event(f"{prefix}.done", item_id=item_id, output_index=output_index,
                           **named, **{field: text})


def responses_call_events(item_id: str, output_index: int, call_id: str | None, name: str | None,
                          fragments: list[str], final_text: str, *, kind: CallKind = "function",
                          added_status: str | None = "in_progress", final_status: str = "completed",
                          done_event: bool = True) -> list[dict[str, Any]]:
    """One call's events in order: ``output_item.added`` (empty arguments), one delta per
    fragment, the arguments ``done`` event (unless ``done_event`` is off) and
    ``output_item.done`` with ``final_text``. A stream cut mid-call sends only the first
    ``1 + len(fragments)``."""
    added = responses_call_item(item_id, call_id, name, "", added_status, kind=kind)
    done = responses_call_item(item_id, call_id, name, final_text, final_status, kind=kind)
    events = [responses_event("response.output_item.added", output_index=output_index, item=added)]
    events += [responses_arguments_delta(item_id, output_index, f, kind=kind) for f in fragments]
    if done_event:
        events.append(responses_arguments_done(item_id, output_index, name, final_text, kind=kind))
    events.append(responses_event("response.output_item.done", output_index=output_index, item=done))
    return events


def responses_error(code: str, message: str, *, nested: bool = False) -> dict[str, Any]:
    """The in-stream ``error`` event: the SDK's flat ``code``/``message``/``param``, or
    (``nested``) the whole error object under ``error``, as OpenAI's servers send it."""
    if nested:
        return responses_event("error", error={"type": code, "code": code, "message": message,
                                               "param": None})
    return responses_event("error", code=code, message=message, param=None)


def responses_object(response_id: str, model: str, status: str, output: list[dict[str, Any]], *,
                     body: Mapping[str, Any] | None = None, created: int = CREATED,
                     usage: dict[str, Any] | None = None, incomplete: str | None = None,
                     error: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``response`` object of ``response.created`` / ``.completed`` / ``.incomplete`` /
    ``.failed`` (and the non-streamed answer); request fields echo ``body``."""
    req: Mapping[str, Any] = body or {}
    return {
        "id": response_id,
        "object": "response",
        "created_at": created,
        "status": status,
        "background": False,
        "error": error,
        "incomplete_details": {"reason": incomplete} if incomplete else None,
        "instructions": req.get("instructions"),
        "max_output_tokens": req.get("max_output_tokens"),
        "max_tool_calls": None,
        "model": model,
        "output": output,
        "parallel_tool_calls": req.get("parallel_tool_calls", True),
        "previous_response_id": req.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "service_tier": "default",
        "store": req.get("store", True),
        "temperature": req.get("temperature", 1.0),
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": req.get("tool_choice", "auto"),
        "tools": req.get("tools") or [],
        "top_logprobs": 0,
        "top_p": req.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": usage,
        "user": None,
        "metadata": req.get("metadata") or {},
    }


# -- Anthropic Messages ---------------------------------------------------------------------

def anthropic_error(error_type: str = "overloaded_error", message: str = "Overloaded") -> dict[str, Any]:
    """The ``error`` event Anthropic sends mid-stream (by default: overloaded)."""
    return {"type": "error", "error": {"type": error_type, "message": message}}


def anthropic_message(message_id: str, model: str, usage: dict[str, Any], *,
                      content: list[Any] | None = None, stop_reason: str | None = None) -> dict[str, Any]:
    """The ``message`` of ``message_start`` (empty content and no stop reason while streaming)."""
    return {"id": message_id, "type": "message", "role": "assistant", "model": model,
            "content": content or [], "stop_reason": stop_reason, "stop_sequence": None,
            "usage": usage}


def anthropic_tool_block(block_type: str, block_id: str | None, name: str | None, tool_input: Any,
                         **extra: Any) -> dict[str, Any]:
    """A ``tool_use`` (or ``server_tool_use`` / ``mcp_tool_use``) content block; while
    streaming ``tool_input`` is the ``{}`` placeholder the deltas then fill."""
    return {"type": block_type, "id": block_id, "name": name, "input": tool_input, **extra}


def anthropic_block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def anthropic_input_delta(index: int, partial_json: str) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta", "partial_json": partial_json}}


def anthropic_text_delta(index: int, text: str) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}


def anthropic_thinking_delta(index: int, thinking: str) -> dict[str, Any]:
    """A piece of a ``thinking`` block's text (extended thinking)."""
    return {"type": "content_block_delta", "index": index,
            "delta": {"type": "thinking_delta", "thinking": thinking}}


def anthropic_signature_delta(index: int, signature: str) -> dict[str, Any]:
    """A ``thinking`` block's whole signature, sent once just before its ``content_block_stop``
    (the client must send the block back with it while thinking is on)."""
    return {"type": "content_block_delta", "index": index,
            "delta": {"type": "signature_delta", "signature": signature}}


def anthropic_block_stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def anthropic_tool_events(index: int, block: dict[str, Any], fragments: list[str]) -> list[dict[str, Any]]:
    """One tool block's events in order: its start, one ``input_json_delta`` per fragment,
    its stop."""
    return [anthropic_block_start(index, block), *(anthropic_input_delta(index, f) for f in fragments),
            anthropic_block_stop(index)]


def anthropic_message_delta(stop_reason: str | None, usage: dict[str, Any]) -> dict[str, Any]:
    """The closing ``message_delta``: the stop reason and the final usage."""
    return {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": usage}


# -- Gemini ---------------------------------------------------------------------------------


def gemini_chunk(parts: list[dict[str, Any]], *, model: str, finish: str | None = None,
                 usage: dict[str, Any] | None = None, response_id: str | None = None) -> dict[str, Any]:
    """One ``GenerateContentResponse`` (camelCase, as on the wire) with one candidate."""
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    chunk: dict[str, Any] = {"candidates": [candidate]}
    if usage is not None:
        chunk["usageMetadata"] = usage
    chunk["modelVersion"] = model
    if response_id is not None:
        chunk["responseId"] = response_id
    return chunk


def gemini_call(name: str | None = None, call_id: str | None = None, **fields: Any) -> dict[str, Any]:
    """A ``functionCall`` part: ``name``, then ``fields`` (``args``, ``willContinue``,
    ``partialArgs``), then ``id`` when the API sends ids; no arguments at all is the
    empty ``functionCall`` that ends a streamed call."""
    body: dict[str, Any] = {} if name is None else {"name": name}
    body.update(fields)
    if call_id is not None:
        body["id"] = call_id
    return {"functionCall": body}


def gemini_partial_value(path: str, value: Any, *, will_continue: bool = False) -> dict[str, Any]:
    """One ``partialArgs`` entry: a scalar at ``jsonPath`` under its typed key (string
    pieces carry ``willContinue`` until the empty string that ends the value)."""
    entry: dict[str, Any] = {"jsonPath": path}
    if isinstance(value, str):
        entry["stringValue"] = value
    elif isinstance(value, bool):
        entry["boolValue"] = value
    elif value is None:
        entry["nullValue"] = "NULL_VALUE"
    else:
        entry["numberValue"] = value
    if will_continue:
        entry["willContinue"] = True
    return entry


def gemini_partial(entry: dict[str, Any], *, will_continue: bool = True) -> dict[str, Any]:
    """A ``functionCall`` part carrying one ``partialArgs`` entry (Gemini 3
    ``streamFunctionCallArguments``)."""
    fields: dict[str, Any] = {"partialArgs": [entry]}
    if will_continue:
        fields["willContinue"] = True
    return gemini_call(**fields)


def gemini_string_entries(path: str, pieces: list[str], *, closed: bool = True) -> list[dict[str, Any]]:
    """A string value streamed in ``pieces`` (each with ``willContinue``), then the empty
    piece that ends it unless the stream is cut first (``closed=False``)."""
    entries = [gemini_partial_value(path, piece, will_continue=True) for piece in pieces]
    return [*entries, gemini_partial_value(path, "")] if closed else entries


#: How a streamed Gemini call ends: an ``empty`` ``functionCall{}`` (the documented
#: terminator), its ``last`` entry without ``willContinue``, or not at all (``cut``).
GeminiEnd = Literal["empty", "last", "cut"]


def gemini_partial_parts(name: str | None, call_id: str | None, entries: list[dict[str, Any]], *,
                         end: GeminiEnd = "empty") -> list[dict[str, Any]]:
    """One call's parts with ``streamFunctionCallArguments``: ``functionCall{name,
    willContinue}``, one part per ``partialArgs`` entry, then the end (a call with no
    entries still gets the empty terminator unless cut)."""
    last = len(entries) - 1
    parts = [gemini_call(name, call_id, willContinue=True)]
    parts += [gemini_partial(entry, will_continue=not (end == "last" and n == last))
              for n, entry in enumerate(entries)]
    if end == "empty" or (end == "last" and not entries):
        parts.append(gemini_call())
    return parts


def gemini_error(code: int, message: str, status: str) -> dict[str, Any]:
    """The ``{"error": ...}`` payload Google sends instead of a chunk."""
    return {"error": {"code": code, "message": message, "status": status}}
