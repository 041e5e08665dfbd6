"""The gate's UI events as plain JSON dicts (schema version 1), for streams that cross a wire.

LangGraph's custom stream, a server-sent-events endpoint or a log line need values that
``json.dumps`` takes as they are: strings, numbers, lists and dicts, no dataclasses, no
enums, no hashable-but-arbitrary keys. ``ArgumentsDelta`` only names its call by key, so the
encoder remembers each call's id and name from its ``CallOpened`` and repeats them on every
delta: a consumer can render one event without having kept the others.

The schema is documented in ``docs/observability.md``; a field is only ever added.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from ._models import (
    ArgumentsDelta,
    AssemblerEvent,
    CallCommitted,
    CallOpened,
    CallRejected,
    Reason,
    ToolCall,
)
from ._results import error_result
from ._sensitive import masked_arguments

__all__ = ["SCHEMA_VERSION", "ProgressEncoder", "rejection_content", "rejection_detail"]

SCHEMA_VERSION = 1


def rejection_detail(call: ToolCall, forward_args: bool) -> str | None:
    """The call's detail, unless it may quote argument text the config or the tool's
    ``sensitive`` marking keeps private (a JSON parse message can)."""
    if call.detail is None or (call.reason is Reason.invalid_json
                               and not (forward_args and call.sensitive is False)):
        return None
    return call.detail


def rejection_content(call: ToolCall, forward_args: bool) -> str:
    """The error result text the model receives for this rejected call (the core's own rule:
    a sensitive call's parse message is never echoed, DESIGN 4.9)."""
    return error_result(call, call.id or "", echo=forward_args and call.sensitive is False).content


class ProgressEncoder:
    """Encodes one stream's events (keys are only unique within one response).

    ``forward_args`` is the config's ``ui_forward_partial_args``: it already decides whether
    a delta carries its fragment; here it also decides whether a rejection's detail may be
    shown (a JSON parse message can quote the arguments). A call of a sensitive tool carries
    no fragment (the core sends none), its committed arguments masked, and ``"sensitive": true``.
    """

    def __init__(self, *, forward_args: bool = True) -> None:
        self._forward = forward_args
        self._identity: dict[Hashable, tuple[str | None, str | None]] = {}

    def arguments(self, call: ToolCall) -> Any:
        """What a UI may show of a committed call's arguments: a sensitive tool's masked (§3)."""
        return masked_arguments(call.arguments, call.sensitive)

    def detail(self, call: ToolCall) -> str | None:
        """What a UI may show of a rejection's detail: none that could quote private argument
        text (``rejection_detail``, 4.9), so every channel applies the same rule."""
        return rejection_detail(call, self._forward)

    def encode(self, event: AssemblerEvent) -> dict[str, Any]:
        if isinstance(event, ArgumentsDelta):
            call_id, name = self._identity.get(event.key, (None, None))
            return {"type": "toolstream.arguments_delta", "v": SCHEMA_VERSION, "key": str(event.key),
                    "id": call_id, "name": name, "fragment": event.fragment,
                    "total_bytes": event.total_bytes}
        if isinstance(event, CallOpened):
            self._identity[event.key] = (event.id, event.name)
            return {"type": "toolstream.call_opened", "v": SCHEMA_VERSION, "key": str(event.key),
                    "id": event.id, "name": event.name}
        call = event.call
        self._identity.pop(call.key, None)
        out: dict[str, Any]
        if isinstance(event, CallCommitted):
            out = {"type": "toolstream.call_committed", "v": SCHEMA_VERSION, "key": str(call.key),
                   "id": call.id, "name": call.name,
                   "arguments": self.arguments(call)}
        else:
            assert isinstance(event, CallRejected)
            out = {"type": "toolstream.call_rejected", "v": SCHEMA_VERSION, "key": str(call.key),
                   "id": call.id, "name": call.name, "state": str(call.state),
                   "reason": str(call.reason or Reason.upstream_error),
                   "detail": self.detail(call),
                   "content": rejection_content(call, self._forward)}
        if call.sensitive is not False:
            out["sensitive"] = True
        return out
