"""AG-UI tool-call events from the gate's decisions (the ``agui`` extra: ``ag-ui-protocol``).

A CopilotKit-style frontend renders a tool call from ``TOOL_CALL_START`` / ``TOOL_CALL_ARGS``
/ ``TOOL_CALL_END``. :class:`AGUIToolCallEvents` produces those from the gate's events, so
the frontend shows a call's arguments growing while the model writes them, and:

- a committed call ends with ``TOOL_CALL_END`` (its arguments are complete and proven; the
  tool's own result follows from whoever runs it);
- a rejected call does not vanish: it ends with ``TOOL_CALL_END``, then a ``CUSTOM`` event
  ``toolstream.call_rejected`` (reason, detail, state) and a ``TOOL_CALL_RESULT`` whose
  content is the error result the model itself receives, which is how AG-UI closes a call
  that will never run.

It reads three kinds of input, so one adapter serves either shim:

- the core's events (``Assembler(on_event=...)``, ``ToolstreamLLM(on_event=...)``,
  ``ToolstreamCallbackHandler(on_event=...)``: every ``on_event`` takes ``(event)``);
- LlamaIndex's ``CallOpenedEvent`` ... ``CallRejectedEvent`` workflow events (from
  ``ToolstreamStreamHandler``), matched by class name so the core never imports LlamaIndex.

The events are the package's own pydantic models (``ag_ui.core``): serialise them with
``ag_ui.encoder.EventEncoder`` or ``model_dump(by_alias=True)``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from ._models import ArgumentsDelta, CallCommitted, CallOpened, CallRejected, Reason, ToolCall
from ._progress import rejection_content, rejection_detail

__all__ = ["REJECTED_EVENT_NAME", "AGUIToolCallEvents"]

REJECTED_EVENT_NAME = "toolstream.call_rejected"
_UNNAMED = "unknown"


@dataclass
class _Call:
    """One call between its start and its verdict."""

    id: str | None
    name: str | None
    started: bool = False
    waiting: list[str] = field(default_factory=list)  # fragments before the id was known
    text: list[str] = field(default_factory=list)  # argument text forwarded (or waiting) so far
    nbytes: int = 0
    is_text: bool = True  # False once the deltas prove not to be argument text (see _delta)
    private: bool = False  # a delta came without its text: ui_forward_partial_args is off


class AGUIToolCallEvents:
    """Translate gate events to AG-UI events; call it, or pass it as an ``on_event`` callback.

    ``emit`` receives each AG-UI event as it is made (default: appended to ``events``).
    ``parent_message_id`` is put on every ``TOOL_CALL_START`` (the assistant message that
    holds the calls, if the frontend tracks one). ``forward_args`` is the config's
    ``ui_forward_partial_args``: whether argument text (and a parse error that may quote it)
    may reach the frontend. By default it is read from the events themselves: a delta without
    its text means the config keeps arguments private, and then the call's final text is not
    sent either. ``scope`` keeps concurrent runs' calls apart (each response numbers its calls
    from the start): a function that returns the current run, e.g. ``lambda: handler.run_id``
    for a LangChain ``ToolstreamCallbackHandler`` that sees several runs at once.
    """

    def __init__(
        self,
        emit: Callable[[BaseEvent], None] | None = None,
        *,
        parent_message_id: str | None = None,
        forward_args: bool | None = None,
        scope: Callable[[], Hashable] | None = None,
    ) -> None:
        self.events: list[BaseEvent] = []
        self._emit = emit if emit is not None else self.events.append
        self._parent = parent_message_id
        self._forward = forward_args
        self._scope = scope
        self._calls: dict[tuple[Any, Hashable], _Call] = {}

    def __call__(self, event: Any) -> None:
        """``on_event(event)``: translate one gate event, in the run ``scope`` names."""
        self.translate(event, scope=None if self._scope is None else self._scope())

    def translate(self, event: Any, *, scope: Any = None) -> list[BaseEvent]:
        """The AG-UI events for one gate event (also emitted); ``[]`` for anything else."""
        out: list[BaseEvent] = []
        if isinstance(event, ArgumentsDelta):
            self._delta(out, (scope, event.key), event.fragment, event.total_bytes)
        elif isinstance(event, CallOpened):
            self._open(out, (scope, event.key), event.id, event.name)
        elif isinstance(event, CallCommitted):
            call = event.call
            self._finish(out, (scope, call.key), call.id, call.name, _shown(call))
        elif isinstance(event, CallRejected):
            call = event.call
            forward = self._forwards(self._calls.get((scope, call.key)))
            self._reject(out, (scope, call.key), call.id, call.name, _shown(call), {
                "reason": str(call.reason or Reason.upstream_error),
                "detail": rejection_detail(call, forward),
                "state": str(call.state),
            }, rejection_content(call, forward))
        else:
            self._workflow_event(out, event, scope)
        for item in out:
            self._emit(item)
        return out

    def _forwards(self, call: _Call | None) -> bool:
        if self._forward is not None:
            return self._forward
        return call is None or not call.private

    # -- LlamaIndex workflow events ------------------------------------------------------------

    def _workflow_event(self, out: list[BaseEvent], event: Any, scope: Any) -> None:
        kind = next((k.__name__ for k in type(event).__mro__ if k.__name__ in _WORKFLOW_EVENTS), None)
        if kind is None:
            return
        key = ((scope, getattr(event, "agent_name", "")), getattr(event, "key", None))
        tool_id, name = event.tool_id, event.tool_name
        if kind == "CallOpenedEvent":
            self._open(out, key, tool_id, name)
        elif kind == "CallProgressEvent":
            self._delta(out, key, event.fragment, event.bytes_so_far)
        elif kind == "CallCommittedEvent":
            arguments = None if getattr(event, "sensitive", False) else event.tool_kwargs
            text = None if arguments is None else json.dumps(
                arguments, ensure_ascii=False, separators=(",", ":"))
            self._finish(out, key, tool_id, name, text, exact=False)
        else:
            self._reject(out, key, tool_id, name, None, {"reason": event.reason, "detail": event.detail,
                                                         "state": "failed"}, event.content)

    # -- the sequence --------------------------------------------------------------------------

    def _open(self, out: list[BaseEvent], key: tuple[Any, Hashable], call_id: str | None,
              name: str | None) -> None:
        call = self._calls[key] = _Call(call_id, name)
        if call_id:
            self._start(out, call)

    def _start(self, out: list[BaseEvent], call: _Call) -> None:
        assert call.id is not None
        call.started = True
        out.append(ToolCallStartEvent(tool_call_id=call.id, tool_call_name=call.name or _UNNAMED,
                                      parent_message_id=self._parent))
        for fragment in call.waiting:
            out.append(ToolCallArgsEvent(tool_call_id=call.id, delta=fragment))
        call.waiting = []

    def _delta(self, out: list[BaseEvent], key: tuple[Any, Hashable], fragment: str | None,
               total_bytes: int) -> None:
        """Forward a fragment only while the deltas are provably the argument text.

        ``TOOL_CALL_ARGS`` deltas must concatenate to the arguments. Text streams (OpenAI,
        Anthropic) report ``total_bytes`` = the bytes of all fragments so far; structured ones
        (Gemini ``partialArgs``: a piece of a value at a JSON path) report the size of the JSON
        built so far, which their fragments do not add up to. Such a call's text is sent whole
        with its verdict instead.
        """
        call = self._calls.get(key)
        if call is None:
            return  # a folded re-sent copy is never opened
        if fragment is None and total_bytes:
            call.private = True
        if not fragment or not call.is_text:
            return
        size = len(fragment.encode("utf-8", "surrogatepass"))
        if call.nbytes + size != total_bytes:
            call.is_text = False
            return
        call.nbytes = total_bytes
        call.text.append(fragment)
        if call.started:
            assert call.id is not None
            out.append(ToolCallArgsEvent(tool_call_id=call.id, delta=fragment))
        else:
            call.waiting.append(fragment)

    def _finish(self, out: list[BaseEvent], key: tuple[Any, Hashable], call_id: str | None,
                name: str | None, text: str | None, *, exact: bool = True) -> str:
        """Start the call if it never was (its id came with the verdict), send the rest of its
        argument text if it is known, then end it.

        ``exact``: ``text`` is the argument text as received (core events); otherwise it is a
        re-serialisation (LlamaIndex's ``tool_kwargs``), only sent when nothing was.
        """
        call = self._calls.pop(key, None) or _Call(call_id, name)
        if not call.started:
            call.id = call.id or call_id or f"toolstream-{key[1]}"
            call.name = call.name or name
            self._start(out, call)
        assert call.id is not None
        if text and self._forwards(call):
            sent = "".join(call.text)
            if exact and text.startswith(sent) and len(text) > len(sent):
                out.append(ToolCallArgsEvent(tool_call_id=call.id, delta=text[len(sent):]))
            elif not exact and not sent:
                out.append(ToolCallArgsEvent(tool_call_id=call.id, delta=text))
        out.append(ToolCallEndEvent(tool_call_id=call.id))
        return call.id

    def _reject(self, out: list[BaseEvent], key: tuple[Any, Hashable], call_id: str | None,
                name: str | None, text: str | None, why: dict[str, Any], content: str) -> None:
        ident = self._finish(out, key, call_id, name, text)
        out.append(CustomEvent(name=REJECTED_EVENT_NAME,
                               value={"toolCallId": ident, "toolCallName": name, **why}))
        out.append(ToolCallResultEvent(message_id=f"{ident}-rejected", tool_call_id=ident,
                                       content=content, role="tool"))


def _shown(call: ToolCall) -> str | None:
    """The argument text a frontend may get: none for a sensitive tool's call. Its deltas
    never carried any, and ``TOOL_CALL_ARGS`` must add up to the arguments, so a masked copy
    cannot be sent in their place."""
    return call.raw_arguments if call.sensitive is False else None


_WORKFLOW_EVENTS = frozenset({"CallOpenedEvent", "CallProgressEvent", "CallCommittedEvent",
                              "CallRejectedEvent"})
