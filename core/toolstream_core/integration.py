"""What a framework integration needs from the core beyond ``Assembler`` and its results.

The shims (``langchain_toolstream``, ``llamaindex_toolstream``) import only the core's public
API, so the few helpers they share with it live here under stable names rather than being
reached for in private modules; a third integration (another framework, a web endpoint) uses
the same ones. Nothing here imports a framework, an SDK or OpenTelemetry: the SDK knowledge
(``toolstream_core.vendors``) recognises SDK objects by module, so importing this module costs
what importing ``toolstream_core`` costs. It stands above ``vendors`` in the package's layers.

The shared integration layer, so a vendor family is added once and every shim gets it:

- :class:`GateSession`: one model call through the gate, the same object under every shim
  (begin, observe, end, cancel; the decided ``Turn``, its record, the observers and the fault
  policy ``on_stream_error``); it is the :class:`RawSink` the SDK tap feeds.
- :func:`tap_client` and :class:`RawSink`: wrap an SDK client (or resource) so that the
  events of its streaming calls reach a sink before the framework reads them.
- :func:`ollama_tap_kwargs`: the keyword arguments of an ``ollama`` client that tee its
  ``/api/chat`` lines to a sink (the client's own objects drop each call's id and index).
- :func:`events_for_response`: a whole (non-streamed) response as the events it stands for.
- :func:`request_limit`, :func:`settings_limit`: the output-token limit in an SDK request or
  a settings object; :func:`assembler_limit` the ``Assembler`` keyword for it.

- :func:`with_string_arguments`: the copy of an OpenAI chat chunk a framework can digest
  (tool-call arguments sent as a JSON object, serialised), handed on after the core saw the
  original.
- :class:`ProgressEncoder`: the gate's UI events as plain JSON dicts (schema in
  ``docs/observability.md``), for LangGraph's custom stream, SSE or a log line.
- :func:`masked_arguments`, :func:`rejection_detail`: what a UI event may show of a call's
  arguments (a sensitive tool's masked) and of a rejection's detail (no parse message that
  could quote private argument text), so every channel applies the same rule.
- :func:`ungated_error_text`, :func:`unanswered_text`, :func:`not_committed_text`: the words
  of the error results the shims write themselves (a call an ungated framework could not
  parse; a call left without an answer by a cancelled run; a call refused because the gate
  never committed it), so both shims say the same thing.
- :func:`responses_answer`, ``RESPONSES_OUTPUT_TYPES``: the Responses input item that answers
  a rejected call of each kind (``function_call_output``, ``computer_call_output``,
  ``mcp_approval_response``, ...), built from its ``ErrorResult``.
- :func:`plan_request`, :class:`HistoryPlan`, :class:`HistoryEdit`: the outgoing history under
  a ``history=`` policy, planned over neutral entries (which messages stay, which results are
  added, dropped or moved); each shim applies the edits to its own messages.
  :func:`refuse_history`, :func:`thinking_enabled`: the ``history="check"`` step (raise
  ``HistoryError`` for what the framework's class would send and the vendor refuse) and how a
  model's thinking setting reads for it.
- :func:`as_record`, :func:`is_paused_turn`, :func:`decides_calls`, :func:`rejected_ids`: a
  message's decision record, read the same way in every shim; whether its turn was paused
  (Anthropic ``pause_turn``), whether the gate decided its calls, the ids its errors answer.
- :func:`judge_call`, :func:`judge_text`: the one rule for a structured output (a schema's
  tool call, or a JSON text): an object only from an output the vendor provably finished,
  parsed once and strictly, valid against the schema; else ``StructuredOutputError``.
  :func:`judge_finished` is its first question alone (did the turn end normally);
  :func:`rejected_arguments` the raw text of a turn's rejected calls, for the error.
- :func:`tracing_active`, :func:`trace_parent`, :func:`untraced`: where the turn's OTel span
  goes, for frameworks that keep their own spans out of the OTel context, and how a
  display-only assembler stays out of the trace.
- :class:`IdleGuard`, :class:`AsyncIdleGuard`, :class:`StreamIdleTimeout`,
  :func:`abort_transport`: ``assemble_idle_timeout_s`` for a stream the shim reads itself (an
  idle gap raises ``StreamIdleTimeout`` after closing the source; the open calls then fail
  ``idle_timeout``), the one implementation the core's drivers use too.
- :func:`run_budget_left`, :func:`over_budget`, :func:`budget_refusal`, ``RUN_CALLS_KEY``:
  ``max_tool_calls_per_run`` across an agent run (the count kept in the agent's state, the
  next turn's ``run_budget``, the check again before a call is queued, its error result).
- :func:`record_refused_execution`: count ``tool_execute_rejected_not_committed_total`` where
  an agent refuses to run a call the gate did not commit.
- ``PRIVATE_CONTACTS``: every private name of another library that toolstream touches, why
  and where (the one table); :func:`rebuilt` (a model's copy through its public constructor)
  and :func:`private_copy` (a copy with a listed private attribute set) are how a shim makes
  its tapped copy; :func:`tap_unavailable` builds the :class:`TapUnavailableError` a shim
  raises when a class it claims to tap cannot be tapped.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Literal

from ._budget import RUN_CALLS_KEY, budget_refusal, over_budget, run_budget_left
from ._contacts import (
    PRIVATE_CONTACTS,
    PrivateContact,
    TapUnavailableError,
    contacts_of,
    private_copy,
    rebuilt,
    tap_unavailable,
)
from ._decision import PAUSE_TURN, as_record, decides_calls, is_paused_turn, rejected_ids
from ._history import (
    HistoryEdit,
    HistoryEntry,
    HistoryError,
    HistoryOp,
    HistoryPlan,
    HistoryProblem,
    check_entries,
    plan_history,
)
from ._idle import AsyncIdleGuard, IdleGuard, StreamIdleTimeout, abort_transport
from ._metrics import record_refused_execution
from ._progress import SCHEMA_VERSION, ProgressEncoder, rejection_detail
from ._results import OUTPUT_TYPES as RESPONSES_OUTPUT_TYPES
from ._results import not_committed_text, responses_answer, unanswered_text, ungated_error_text
from ._sensitive import masked_arguments
from ._string_arguments import with_string_arguments
from ._structured import CommittedOutput, judge_call, judge_finished, judge_text, rejected_arguments
from ._tracing import active as tracing_active
from ._tracing import trace_parent, untraced
from .vendors._convert import events_for_response
from .vendors._limits import request_limit, settings_limit
from .vendors._session import (
    DEFAULT_ON_STREAM_ERROR,
    GateSession,
    OnStreamError,
    TapSession,
    TapState,
    call_observer,
)
from .vendors._tap import RawSink, Reshape, tap_client

__all__ = [
    "DEFAULT_HISTORY",
    "DEFAULT_ON_STREAM_ERROR",
    "PAUSE_TURN",
    "PRIVATE_CONTACTS",
    "RESPONSES_OUTPUT_TYPES",
    "RUN_CALLS_KEY",
    "SCHEMA_VERSION",
    "AsyncIdleGuard",
    "CommittedOutput",
    "GateSession",
    "HistoryEdit",
    "HistoryOp",
    "HistoryPlan",
    "HistoryPolicy",
    "IdleGuard",
    "OnStreamError",
    "PrivateContact",
    "ProgressEncoder",
    "RawSink",
    "Reshape",
    "StreamIdleTimeout",
    "TapSession",
    "TapState",
    "TapUnavailableError",
    "abort_transport",
    "as_record",
    "assembler_limit",
    "budget_refusal",
    "call_observer",
    "contacts_of",
    "decides_calls",
    "events_for_response",
    "is_paused_turn",
    "judge_call",
    "judge_finished",
    "judge_text",
    "masked_arguments",
    "not_committed_text",
    "ollama_tap_kwargs",
    "over_budget",
    "plan_history",
    "plan_request",
    "private_copy",
    "rebuilt",
    "record_refused_execution",
    "refuse_gate_options",
    "refuse_history",
    "rejected_arguments",
    "rejected_ids",
    "rejection_detail",
    "request_limit",
    "responses_answer",
    "run_budget_left",
    "settings_limit",
    "tap_client",
    "tap_unavailable",
    "thinking_enabled",
    "trace_parent",
    "tracing_active",
    "unanswered_text",
    "ungated_error_text",
    "untraced",
    "with_string_arguments",
]


def thinking_enabled(setting: Any) -> bool | None:
    """Whether a model's Anthropic thinking setting (``{"type": "enabled", ...}``, as both
    frameworks keep it) turns thinking on; ``None`` when there is no such setting, so the
    history decides (``check_entries``' ``reasoning=None``)."""
    if isinstance(setting, Mapping):
        return setting.get("type") in ("enabled", "adaptive")
    return None


def refuse_history(problems: Iterable[HistoryProblem], provider: str | None, *,
                   exempt: Collection[str], log: logging.Logger) -> None:
    """Raise ``HistoryError`` for the ``problems`` whose kind is not in ``exempt`` (those the
    framework's own class repairs on the wire), logging them first: the vendor's 400, refused
    before the request is sent. Nothing to raise: returns."""
    refused = [p for p in problems if p.kind not in exempt]
    if refused:
        log.warning("toolstream: refusing to send a history the vendor would reject: %s",
                    "; ".join(p.detail for p in refused))
        raise HistoryError(refused, provider)


def assembler_limit(limit: int | None) -> dict[str, Any]:
    """The ``Assembler`` keyword for ``limit``: the one place a shim spells it."""
    return {} if limit is None else {"max_output_tokens": limit}


def ollama_tap_kwargs(kwargs: Mapping[str, Any], sink: RawSink, *,
                      asynchronous: bool = False) -> dict[str, Any]:
    """``kwargs`` for ``ollama.Client`` (``AsyncClient`` with ``asynchronous``) whose
    ``/api/chat`` lines reach ``sink`` as the server sent them, ids and indexes included.

    Use it instead of `tap_client` for Ollama wherever the client can be built: the
    ``ollama`` client's objects drop each tool call's ``id`` and ``function.index``, so a call
    the server re-sends would read as a second call. Imports httpx when called.
    """
    from .vendors._ollama_tap import ollama_tap_kwargs as build

    return build(kwargs, sink, asynchronous=asynchronous)


HistoryPolicy = Literal["repair", "check", "off"]
"""What a gated model does with the outgoing history before each request: ``"repair"``
answers every unanswered call id; ``"check"`` repairs, then raises ``HistoryError`` for what
only the model could fix; ``"off"`` answers only the calls the gate itself rejected."""

#: The one default of ``history=`` in every shim entry point (DESIGN 6).
DEFAULT_HISTORY: HistoryPolicy = "check"


def plan_request(entries: Sequence[HistoryEntry], provider: str | None, policy: HistoryPolicy, *,
                 log: logging.Logger, reasoning: bool | None = None, stored: bool = True,
                 exempt: Collection[str] = (), appended: Sequence[HistoryEntry] = ()) -> HistoryPlan:
    """The outgoing history under ``policy``, planned (``plan_history``); under ``"check"``,
    ``HistoryError`` for what the vendor would still refuse (``refuse_history``: ``exempt``
    are the problem kinds the framework's class repairs itself). ``appended``: messages the
    request adds after the history (a ``user_msg``), checked with it but not planned."""
    if policy not in ("repair", "check", "off"):
        raise ValueError(f"history must be 'repair', 'check' or 'off', not {policy!r}")
    plan = plan_history(entries, provider, repair=policy != "off")
    if policy == "check":
        problems = check_entries([*plan.entries, *appended], provider, reasoning=reasoning,
                                 stored=stored)
        refuse_history(problems, provider, exempt=exempt, log=log)
    return plan


def refuse_gate_options(holder: str, **options: Any) -> None:
    """The one rule for an agent whose model is already gated: that gate is used, so gate
    options given to the agent as well (``tools=``, ``config=``, ``on_stream_error=``,
    ``history=``, ``on_turn=``, ``on_event=``; ``None`` means not given) would be silently
    ignored: a ``ValueError`` naming them and where they belong (``holder``)."""
    given = sorted(name for name, value in options.items() if value is not None)
    if given:
        raise ValueError(f"the agent's model is already gated by toolstream: give "
                         f"{', '.join(f'{name}=' for name in given)} to {holder} instead of the agent")
