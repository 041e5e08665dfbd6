"""Synthetic vendor streams for the core tests: wire dicts and the SDKs' own objects.

Each builder takes a list of ``Call(id=..., name=..., arguments=..., cuts=...)`` (keyword-only,
so a spec reads the same at every call site) and returns the list of events one vendor would
send for them: the arguments cut into fragments at the given code-point offsets, the calls'
steps interleaved by a *schedule*, and a chosen ending. The shapes follow the real recordings
in ``tests/streams`` (checked by ``test_builders.py::test_builders_match_real_stream_shapes``)
so a test that passes on a built stream says something about a real one.

Every event is built by ``toolstream_core.testing._vendor_events``, the constructors the vendor
emulator puts on the wire too: this module only decides what to send (ids, cuts, order,
ending), never what an event looks like.

A *schedule* is a sequence of call positions: each occurrence emits that call's next step
(open, one fragment, close). Steps left over when the schedule runs out follow in call order,
so ``None`` means "one call after another" and ``round_robin`` interleaves.

Endings: ``"finish"`` (the vendor's normal end), ``"truncated"`` (length / max_tokens /
``response.incomplete`` / ``MAX_TOKENS``), ``"none"`` (the stream just stops), ``"error"`` (an
error event or error object). ``finish_reason=`` overrides the value sent for ``"finish"`` and
``"truncated"`` so any value of the completion table can be sent.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from toolstream_core import AssembleConfig, Assembler, CallState, Reason, ToolCall, Turn
from toolstream_core.testing import _vendor_events as ve

__all__ = [
    "ADD",
    "ID_VENDORS",
    "PIPELINE",
    "PROVIDERS",
    "SEARCH",
    "SEARCH_SCHEMA",
    "TEXT_VENDORS",
    "Call",
    "Ending",
    "anthropic",
    "as_calls",
    "build",
    "fragments",
    "gemini",
    "gemini_chunk",
    "lenient",
    "make",
    "openai_chat",
    "openai_responses",
    "record_events",
    "responses_server_item",
    "round_robin",
    "run",
    "snapshot",
    "states",
    "to_sdk",
]

PROVIDERS = ("openai-chat", "openai-responses", "anthropic", "gemini")
TEXT_VENDORS = ("openai-chat", "openai-responses", "anthropic")
ID_VENDORS = TEXT_VENDORS  # vendors whose protocol carries call ids (DESIGN §4.5)
# Argument texts the rule tests share (test_rule_NN_*.py): one with a string, one all numbers.
SEARCH = '{"query":"weather in Paris","limit":10}'
ADD = '{"a":2,"b":3}'
# A schema SEARCH satisfies and that a limit over 50, a missing query or an extra key breaks.
SEARCH_SCHEMA = {
    "type": "object",
    "properties": {"query": {"type": "string"}, "limit": {"type": "integer", "maximum": 50}},
    "required": ["query"],
    "additionalProperties": False,
}
# Pipelining on for the two tools the rule tests stream (§4.10; cancel keeps these commits).
PIPELINE = AssembleConfig(execute_before_stream_end=True, allow_pipelined_execute=("add", "search"))
Ending = Literal["finish", "truncated", "none", "error"]

_CHAT_BASE = ve.chat_base("chatcmpl-builder0001", "gpt-4o-2024-08-06", created=1782321900,
                         fingerprint="fp_builder")
_RESPONSE_ID = "resp_builder0001"
# Anthropic block fields beyond the shared ones: mcp_tool_use names its server, and tool_use
# carries ``caller`` since programmatic tool calling.
_BLOCK_EXTRA: dict[str, dict[str, Any]] = {"mcp_tool_use": {"server_name": "echo"},
                                           "tool_use": {"caller": {"type": "direct"}}}
_MESSAGE_ID = "msg_builder0001"


@dataclass(frozen=True, kw_only=True)
class Call:
    """One tool call to stream: identity, the exact argument text, and where to cut it.

    Keyword-only: a positional ``("call_1", "add", ADD, (3,))`` hid which string was the id and
    which the name, and a test swapping them still passed. ``cuts`` are code-point offsets into
    ``arguments`` (any iterable, e.g. a ``range``; kept as a tuple); ``None`` sends one fragment.
    """

    id: str | None
    name: str | None
    arguments: str
    cuts: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        if self.cuts is not None and not isinstance(self.cuts, tuple):
            object.__setattr__(self, "cuts", tuple(self.cuts))

    def fragments(self) -> list[str]:
        return fragments(self.arguments, self.cuts)


def as_calls(calls: Iterable[Call]) -> list[Call]:
    """The calls as a list; anything but a ``Call`` is refused so a leftover tuple spec fails loudly."""
    out = list(calls)
    for call in out:
        if not isinstance(call, Call):
            raise TypeError(f"a call spec is a builders.Call, not {type(call).__name__}: {call!r}")
    return out


def fragments(text: str, cuts: Iterable[int] | None) -> list[str]:
    """Cut ``text`` at the given offsets (sorted, de-duplicated, clipped); ``None``: one piece.

    An empty text is one empty fragment, as vendors send ``"arguments": ""``.
    """
    if cuts is None:
        return [text]
    points = sorted({c for c in cuts if 0 < c < len(text)})
    pieces: list[str] = []
    start = 0
    for point in [*points, len(text)]:
        pieces.append(text[start:point])
        start = point
    return pieces


def round_robin(step_counts: Sequence[int]) -> list[int]:
    """A schedule taking one step from each call in turn."""
    schedule: list[int] = []
    left = list(step_counts)
    while any(left):
        for position, remaining in enumerate(left):
            if remaining:
                schedule.append(position)
                left[position] -= 1
    return schedule


def _ordered(steps: Sequence[Sequence[Any]], schedule: Sequence[int] | None) -> Iterator[tuple[int, int, Any]]:
    """Yield ``(call position, step number, step)`` in schedule order, then the leftovers."""
    taken = [0] * len(steps)
    for position in schedule or ():
        if 0 <= position < len(steps) and taken[position] < len(steps[position]):
            yield position, taken[position], steps[position][taken[position]]
            taken[position] += 1
    for position, call_steps in enumerate(steps):
        while taken[position] < len(call_steps):
            yield position, taken[position], call_steps[taken[position]]
            taken[position] += 1


# -- OpenAI Chat Completions ----------------------------------------------------------------


def openai_chat(
    calls: Iterable[Call],
    *,
    schedule: Sequence[int] | None = None,
    ending: Ending = "finish",
    finish_reason: str | None = None,
    choice: int = 0,
    indexes: Sequence[int | None] | None = None,
    omit_index: bool = False,
    identity: ve.ChatIdentity = "first",
    args_on_open: bool = False,
    null_arguments: bool = False,
    finish_in_last_chunk: bool = False,
    role_chunk: bool = True,
    usage_chunk: bool = False,
) -> list[dict[str, Any]]:
    """``chat.completion.chunk`` dicts, one tool-call delta per chunk.

    ``identity``: id/type/name on the opening delta only (OpenAI), on ``every`` delta
    (OpenRouter/Novita), or ``blank`` — ``""`` id and name on later deltas (some proxies).
    ``indexes`` overrides each call's ``index`` (e.g. ``[0, 0]``: a server reusing index 0);
    ``omit_index`` drops the key entirely. ``args_on_open`` puts the first fragment in the
    opening delta instead of ``""``; ``null_arguments`` sends ``"arguments": null`` there.
    ``finish_in_last_chunk`` puts ``finish_reason`` on the last tool-call chunk.
    """
    call_list = as_calls(calls)
    steps: list[list[dict[str, Any]]] = []
    for position, call in enumerate(call_list):
        index = None if omit_index else indexes[position] if indexes is not None else position
        frags = call.fragments()
        opening = frags.pop(0) if args_on_open else None if null_arguments else ""
        steps.append(ve.chat_call_deltas(index, call.id, call.name, frags, identity=identity, opening=opening))

    def chunk(delta: dict[str, Any], reason: str | None = None, **top: Any) -> dict[str, Any]:
        return ve.chat_chunk(_CHAT_BASE, delta, reason, choice=choice, **top)

    reason = finish_reason or {"finish": "tool_calls", "truncated": "length"}.get(ending)
    events: list[dict[str, Any]] = []
    if role_chunk:
        events.append(chunk(ve.chat_role_delta()))
    ordered = list(_ordered(steps, schedule))
    for number, (_, _, delta) in enumerate(ordered):
        last = number == len(ordered) - 1
        put_reason = reason if (last and finish_in_last_chunk and ending in ("finish", "truncated")) else None
        events.append(chunk({"tool_calls": [delta]}, put_reason))
    if ending in ("finish", "truncated") and not (finish_in_last_chunk and ordered):
        events.append(chunk({}, reason))
    elif ending == "error":
        events.append(chunk(ve.chat_role_delta(""), error={"code": 502, "message": "upstream"}))
    if usage_chunk:
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        events.append(ve.chat_usage_chunk(_CHAT_BASE, usage))
    return events


# -- OpenAI Responses -----------------------------------------------------------------------


def _response(status: str, output: list[dict[str, Any]], incomplete: str | None = None) -> dict[str, Any]:
    failed = {"code": "server_error", "message": "failed"} if status == "failed" else None
    return ve.responses_object(_RESPONSE_ID, "gpt-5-2025-08-07", status, output, created=1782321708,
                               incomplete=incomplete, error=failed)


def openai_responses(
    calls: Iterable[Call],
    *,
    schedule: Sequence[int] | None = None,
    ending: Ending = "finish",
    finish_reason: str | None = None,
    incomplete_reason: str = "max_output_tokens",
    kinds: Sequence[ve.CallKind] | None = None,
    deltas: bool = True,
    done_arguments: Mapping[int, str] | None = None,
    arguments_done_event: bool = True,
    first_output_index: int = 0,
) -> list[dict[str, Any]]:
    """Responses stream events: ``output_item.added``, argument deltas, done events, terminal.

    ``deltas=False`` is a no-delta server (LM Studio): the arguments only arrive in the done
    events. ``done_arguments`` replaces the text the done events carry for some calls (to
    contradict the deltas). ``finish_reason`` picks the terminal event for ``"finish"`` /
    ``"truncated"`` by status: ``completed``, ``incomplete``, ``failed`` or ``cancelled``.
    """
    call_list = as_calls(calls)
    steps: list[list[dict[str, Any]]] = []
    finished_items: list[dict[str, Any]] = []
    for position, call in enumerate(call_list):
        kind = kinds[position] if kinds is not None else "function"
        output_index = first_output_index + position
        item_id = f"{'ctc' if kind == 'custom' else 'fc'}_builder{position:04d}"
        final_text = (done_arguments or {}).get(position, call.arguments)
        frags = call.fragments() if deltas else []
        # The recorded custom_tool_call items only carry status when done.
        call_events = ve.responses_call_events(
            item_id, output_index, call.id, call.name, frags, final_text, kind=kind,
            added_status="in_progress" if kind == "function" else None, done_event=arguments_done_event)
        finished_items.append(call_events[-1]["item"])
        # Steps for the schedule: the opening, each fragment, then the closing events together.
        steps.append([*call_events[: 1 + len(frags)], {"__group__": call_events[1 + len(frags):]}])

    events = [
        ve.responses_event("response.created", response=_response("in_progress", [])),
        ve.responses_event("response.in_progress", response=_response("in_progress", [])),
    ]
    for _, _, step in _ordered(steps, schedule):
        events.extend(step.get("__group__", [step]))
    status = finish_reason or {"finish": "completed", "truncated": "incomplete"}.get(ending)
    if ending in ("finish", "truncated"):
        assert status is not None
        incomplete = incomplete_reason if status == "incomplete" else None
        events.append(ve.responses_event(f"response.{status}", response=_response(status, finished_items, incomplete)))
    elif ending == "error":
        events.append(ve.responses_error("server_error", "The server had an error"))
    return renumber(events)


def renumber(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Responses events spliced together, numbered again in order (``sequence_number`` 0..n):
    a stream whose numbers skip or go back is a stream that lost events (DESIGN §4.4)."""
    return [{**event, "sequence_number": n} for n, event in enumerate(events)]


def responses_server_item(item: Mapping[str, Any], output_index: int) -> list[dict[str, Any]]:
    """The added/done pair for a built-in (vendor-executed) Responses item such as web search."""
    return [
        ve.responses_event("response.output_item.added", item={**item, "status": "in_progress"},
                           output_index=output_index),
        ve.responses_event("response.output_item.done", item={**item, "status": "completed"},
                           output_index=output_index),
    ]


# -- Anthropic Messages ---------------------------------------------------------------------


def anthropic(
    calls: Iterable[Call],
    *,
    schedule: Sequence[int] | None = None,
    ending: Ending = "finish",
    finish_reason: str | None = None,
    block_types: Sequence[str] | None = None,
    text_block: bool = False,
    start_inputs: Mapping[int, Any] | None = None,
    in_message_start: bool = False,
    message_stop: bool = True,
) -> list[dict[str, Any]]:
    """Messages stream events; a text block first when ``text_block``.

    Each call is a ``content_block_start`` with the ``input: {}`` placeholder, its
    ``input_json_delta`` fragments and a ``content_block_stop``. ``block_types`` sets each
    call's block type (``server_tool_use``, ``mcp_tool_use``); ``start_inputs`` replaces the
    placeholder with a complete ``input`` for some calls (then no deltas are sent for them).
    ``in_message_start`` puts every call, complete, inside ``message_start.message.content``
    (programmatic tool calling). ``message_stop=False`` keeps the ``message_delta`` but drops
    the final ``message_stop``.
    """
    call_list = as_calls(calls)
    base = 1 if text_block else 0
    stop = finish_reason or {"finish": "tool_use", "truncated": "max_tokens"}.get(ending)
    content: list[Any] = []
    if in_message_start:
        content = [
            ve.anthropic_tool_block((block_types or ["tool_use"] * len(call_list))[p], c.id, c.name,
                                    json.loads(c.arguments) if c.arguments.strip() else {})
            for p, c in enumerate(call_list)
        ]
    # Programmatic tool calling: the calls and the stop reason ride in message_start, no message_delta.
    message = ve.anthropic_message(_MESSAGE_ID, "claude-sonnet-4-20250514", {"input_tokens": 502, "output_tokens": 4},
                                   content=content, stop_reason=stop if in_message_start else None)
    events: list[dict[str, Any]] = [{"type": "message_start", "message": message}]
    if text_block:
        events += [
            ve.anthropic_block_start(0, {"type": "text", "text": ""}),
            ve.anthropic_text_delta(0, "Let me check."),
            ve.anthropic_block_stop(0),
        ]
    steps: list[list[dict[str, Any]]] = []
    for position, call in enumerate(() if in_message_start else call_list):
        index = base + position
        block_type = block_types[position] if block_types is not None else "tool_use"
        complete = start_inputs is not None and position in start_inputs
        start_input = start_inputs[position] if complete and start_inputs is not None else {}
        extra = _BLOCK_EXTRA.get(block_type, {})
        block = ve.anthropic_tool_block(block_type, call.id, call.name, start_input, **extra)
        steps.append(ve.anthropic_tool_events(index, block, [] if complete else call.fragments()))
    events.extend(step for _, _, step in _ordered(steps, schedule))
    if ending in ("finish", "truncated") and in_message_start:
        if message_stop:
            events.append({"type": "message_stop"})
    elif ending in ("finish", "truncated"):
        events.append(ve.anthropic_message_delta(stop, {"output_tokens": 137}))
        if message_stop:
            events.append({"type": "message_stop"})
    elif ending == "error":
        events.append(ve.anthropic_error())
    return events


# -- Gemini ---------------------------------------------------------------------------------


def _leaves(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """``(jsonPath, scalar)`` pairs of a JSON value, depth first, in key order."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}")
    elif isinstance(value, list):
        for position, item in enumerate(value):
            yield from _leaves(item, f"{path}[{position}]")
    else:
        yield path, value


def _partial_args(args: Mapping[str, Any], cuts: tuple[int, ...] | None) -> list[dict[str, Any]]:
    """One ``partialArgs`` entry per scalar; strings cut at ``cuts`` then closed by ``""``.

    This is the shape Gemini 3 sends with ``streamFunctionCallArguments``: string pieces carry
    ``willContinue: true`` and a final empty ``stringValue`` ends the string.
    """
    items: list[dict[str, Any]] = []
    for path, value in _leaves(dict(args), "$"):
        if isinstance(value, str):
            items += ve.gemini_string_entries(path, fragments(value, cuts))
        else:
            items.append(ve.gemini_partial_value(path, value))
    return items


def gemini(
    calls: Iterable[Call],
    *,
    ending: Ending = "finish",
    finish_reason: str | None = None,
    mode: Literal["args", "partial"] = "args",
    together: bool = False,
    finish_with_calls: bool = False,
    terminator: Literal["empty", "last"] = "empty",
    with_ids: bool = False,
    schedule: Sequence[int] | None = None,
) -> list[dict[str, Any]]:
    """``GenerateContentResponse`` dicts (camelCase, as on the wire).

    ``mode="args"``: each call is one complete ``functionCall`` part with structured ``args``
    (the argument text is parsed to get them); ``together`` puts every part in one chunk and
    ``finish_with_calls`` puts ``finishReason`` in that chunk (Gemini 2.5). ``mode="partial"``:
    ``functionCall{name, willContinue}`` then one chunk per ``partialArgs`` entry (string values
    cut at the call's ``cuts``), ended by an empty ``functionCall{}`` (``terminator="empty"``)
    or by dropping ``willContinue`` on the last entry (``"last"``). Gemini never interleaves
    streaming calls, so ``schedule`` only orders whole calls.
    """
    call_list = as_calls(calls)
    if schedule:
        order = list(dict.fromkeys(p for p in schedule if 0 <= p < len(call_list)))
        order += [p for p in range(len(call_list)) if p not in order]
        call_list = [call_list[p] for p in order]
    reason = finish_reason or {"finish": "STOP", "truncated": "MAX_TOKENS"}.get(ending)

    def chunk(parts: list[dict[str, Any]], finish: str | None = None, **usage: Any) -> dict[str, Any]:
        return ve.gemini_chunk(parts, model="gemini-2.5-flash", finish=finish, response_id="builder0001", **usage)

    def function_call(call: Call, **fields: Any) -> dict[str, Any]:
        return ve.gemini_call(call.name, call.id if with_ids else None, **fields)

    events: list[dict[str, Any]] = []
    final_in_chunk = finish_with_calls and ending in ("finish", "truncated")
    if mode == "args":
        parts = [
            function_call(c, args=json.loads(c.arguments) if c.arguments.strip() else {}) for c in call_list
        ]
        if together and parts:
            events.append(chunk(parts, reason if final_in_chunk else None))
        else:
            events.extend(chunk([part]) for part in parts)
            if final_in_chunk and events:
                events[-1] = chunk([parts[-1]], reason)
    else:
        for call in call_list:
            args = json.loads(call.arguments) if call.arguments.strip() else {}
            items = _partial_args(args, call.cuts)
            parts = ve.gemini_partial_parts(call.name, call.id if with_ids else None, items, end=terminator)
            events.extend(chunk([part]) for part in parts)
    if ending in ("finish", "truncated") and not (final_in_chunk and events):
        usage = {"promptTokenCount": 26, "candidatesTokenCount": 23, "totalTokenCount": 49}
        events.append(chunk([{"text": ""}], reason, usage=usage))
    elif ending == "error":
        events.append(ve.gemini_error(500, "Internal error encountered.", "INTERNAL"))
    return events


def build(provider: str, calls: Iterable[Call], **kwargs: Any) -> list[dict[str, Any]]:
    """Dispatch to the builder of ``provider`` (one of ``PROVIDERS``)."""
    builders: dict[str, Callable[..., list[dict[str, Any]]]] = {
        "openai-chat": openai_chat, "openai-responses": openai_responses, "anthropic": anthropic, "gemini": gemini}
    builder = builders[provider]
    return builder(calls, **kwargs)


def make(provider: str, calls: Iterable[Call], **kwargs: Any) -> list[dict[str, Any]]:
    """Build a stream; Gemini gets ids on its calls unless a test says otherwise.

    The rule tests compare calls by id across vendors; Gemini only sends ids on request.
    """
    if provider == "gemini":
        kwargs.setdefault("with_ids", True)
    return build(provider, calls, **kwargs)


# -- running a stream ----------------------------------------------------------------------


def run(
    events: Iterable[Any],
    *,
    provider: str | None = None,
    transport_complete: bool = True,
    **kwargs: Any,
) -> Turn:
    """Feed every event to a fresh ``Assembler`` and return its ``Turn``."""
    assembler = Assembler(provider=provider, **kwargs)  # type: ignore[arg-type]
    for event in events:
        assembler.feed(event)
    return assembler.finish(transport_complete=transport_complete)


def lenient() -> AssembleConfig:
    """``AssembleConfig(mode="lenient")``: the rule tests flip between the two modes often."""
    return AssembleConfig(mode="lenient")


def states(turn: Turn) -> list[tuple[str | None, CallState, Reason | None]]:
    """``(id, state, reason)`` per call: the verdict most rule tests assert on, in one line."""
    return [(c.id, c.state, c.reason) for c in turn.calls]


def named_states(turn: Turn) -> list[tuple[str | None, CallState, Reason | None]]:
    """``states`` by name instead of id: for hand-built calls whose ids are the point."""
    return [(c.name, c.state, c.reason) for c in turn.calls]


def record_events(**kwargs: Any) -> tuple[Assembler, list[Any]]:
    """An ``Assembler`` whose UI events are collected into the returned list, in order."""
    seen: list[Any] = []
    return Assembler(on_event=seen.append, **kwargs), seen


def snapshot(turn: Turn) -> tuple[Any, ...]:
    """Everything a caller can observe about a Turn except the opaque keys."""

    def call_view(call: ToolCall) -> tuple[Any, ...]:
        return (call.index, call.id, call.name, call.kind, call.state, call.reason, call.raw_arguments,
                json.dumps(call.arguments, sort_keys=True) if call.arguments is not None else None)

    return (
        tuple(call_view(c) for c in turn.calls),
        tuple(call_view(c) for c in turn.server_calls),
        tuple(call_view(c) for c in turn.dropped),
        turn.complete,
        turn.finish_reason,
        tuple((r.tool_call_id, r.name, r.reason, r.content) for r in turn.error_results()),
    )


# -- SDK objects ----------------------------------------------------------------------------


@functools.cache
def _type_adapter(name: str) -> Any:
    """Building a TypeAdapter over a 50-member union takes seconds: build each once."""
    from pydantic import TypeAdapter

    if name == "responses":
        from openai.types.responses import ResponseStreamEvent

        return TypeAdapter(ResponseStreamEvent)
    if name == "anthropic":
        from anthropic.types import RawMessageStreamEvent

        return TypeAdapter(RawMessageStreamEvent)
    from anthropic.types.beta import BetaRawMessageStreamEvent

    return TypeAdapter(BetaRawMessageStreamEvent)


def to_sdk(provider: str, events: Iterable[Mapping[str, Any]]) -> list[Any]:
    """The same events as the vendor SDK's own types, validated by the SDK's models.

    Raises ``pydantic.ValidationError`` when an event does not fit the SDK's type — the point:
    a builder shape the SDK rejects is a builder bug. Events the SDK never hands out as objects
    (Anthropic ``error``: the SDK raises instead; Gemini ``error`` payloads) are refused with
    ``ValueError`` so a test cannot silently feed dicts on the SDK path.
    """
    events = list(events)
    if provider == "openai-chat":
        from openai.types.chat import ChatCompletionChunk

        return [ChatCompletionChunk.model_validate(e) for e in events]
    if provider == "openai-responses":
        responses_adapter = _type_adapter("responses")
        return [responses_adapter.validate_python(e) for e in events]
    if provider == "anthropic":
        plain, beta = _type_adapter("anthropic"), _type_adapter("anthropic-beta")
        out: list[Any] = []
        for event in events:
            if event.get("type") == "error":
                raise ValueError("the anthropic SDK raises on an error event; it never yields one")
            block = event.get("content_block") or {}
            # mcp_tool_use blocks only exist in the SDK's beta types.
            out.append((beta if block.get("type") == "mcp_tool_use" else plain).validate_python(event))
        return out
    if provider == "gemini":
        from google.genai.types import GenerateContentResponse

        for event in events:
            if "error" in event:
                raise ValueError("google-genai raises on an error payload; it never yields one")
        return [GenerateContentResponse.model_validate(e) for e in events]
    raise ValueError(f"unknown provider {provider!r}")


def gemini_chunk(parts: list[dict[str, Any]], *, finish_reason: str | None = None,
                 usage: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """One Gemini chunk holding exactly ``parts`` (hand-built streams for the §5 rule tests)."""
    return ve.gemini_chunk(parts, model="gemini-3-pro-preview", finish=finish_reason,
                           usage=None if usage is None else dict(usage))


# -- single hand-built events ---------------------------------------------------------------
# For the bad-input and finalize tests that need one odd field in one event; whole streams come
# from the vendor builders above.


def chat_chunk(tool_calls: list[dict[str, Any]] | None = None, *, ci: int = 0, finish: str | None = None,
               **delta: Any) -> dict[str, Any]:
    """A chat chunk of choice ``ci`` whose delta is exactly ``tool_calls`` and ``delta``."""
    body: dict[str, Any] = dict(delta)
    if tool_calls is not None:
        body["tool_calls"] = tool_calls
    return ve.chat_chunk({"id": "chatcmpl-1", "object": "chat.completion.chunk"}, body, finish, choice=ci)


def chat_call(index: Any, arguments: str | None = None, *, id: Any = None, name: Any = None) -> dict[str, Any]:
    """A ``tool_calls`` entry holding only the fields given (``ve.chat_tool_delta`` always
    sends ``id`` and ``name`` together; these tests need either alone, or of any type)."""
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if arguments is not None:
        function["arguments"] = arguments
    out: dict[str, Any] = {"index": index, "function": function}
    if id is not None:
        out["id"] = id
    return out


def chat_add(ci: int = 0) -> list[dict[str, Any]]:
    return [chat_chunk([chat_call(0, "", id=f"call_a{ci}", name="add")], ci=ci),
            chat_chunk([chat_call(0, '{"a": 1')], ci=ci)]


def chat_tail(ci: int = 0) -> list[dict[str, Any]]:
    return [chat_chunk([chat_call(0, "}")], ci=ci), chat_chunk(ci=ci, finish="tool_calls")]


def gemini_weather() -> list[dict[str, Any]]:
    return [
        gemini_chunk([{"functionCall": {"name": "getWeather", "willContinue": True}}]),
        gemini_chunk([{"functionCall": {"partialArgs": [
            {"jsonPath": "$.location", "stringValue": "Bos", "willContinue": True}], "willContinue": True}}]),
    ]


def gemini_end() -> list[dict[str, Any]]:
    return [
        gemini_chunk([{"functionCall": {"partialArgs": [{"jsonPath": "$.location", "stringValue": "ton"}],
                                   "willContinue": True}}]),
        gemini_chunk([{"functionCall": {}}], finish_reason="STOP"),
    ]
