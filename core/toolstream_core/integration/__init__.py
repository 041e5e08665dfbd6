"""What a framework integration needs from the core beyond ``Assembler`` and its results.

The shims (``langchain_toolstream``, ``llamaindex_toolstream``) import only the core's public
API, so what they share with it lives here under stable names rather than being reached for in
private modules; a third integration (another framework, a web endpoint) uses the same ones.
A name is here because a shim or the app uses it, or because DESIGN makes it an integration's
duty (``tests/test_public_surface.py`` pins the list, so a new name is a decision). Nothing
here imports a framework, an SDK or OpenTelemetry: the SDK knowledge (``toolstream_core.vendors``)
recognises SDK objects by module, so importing this module costs what importing
``toolstream_core`` costs. It stands above ``vendors`` in the package's layers.

One model call through the gate:

- :class:`GateSession`: the same object under every shim (begin, observe, end, cancel; the
  decided ``Turn``, its record, the observers and the fault policy :data:`OnStreamError`,
  default ``GateSession.DEFAULT_ON_STREAM_ERROR``); it is the :class:`RawSink` the SDK tap
  feeds. Its static rules, the same in every shim: ``call_observer`` (a user's ``on_event`` /
  ``on_turn``, a failure logged), ``rewrites_requests`` (whether the tap also changes what a
  provider's request says, Anthropic's ``is_error``, so a shim sends a whole request through
  its tapped copy too), ``events_for_response`` (a whole, non-streamed, response as the events
  it stands for), ``refuse_options`` (the one rule for an agent given an already-gated model).
- :func:`tap_client` and :class:`RawSink`: wrap an SDK client (or resource) so that the
  events of its streaming calls reach a sink before the framework reads them.
  :func:`ollama_tap_kwargs`: the keyword arguments of an ``ollama`` client that tee its
  ``/api/chat`` lines to a sink (the client's own objects drop each call's id and index).
- :data:`FINISH` (a :class:`~toolstream_core._finish.FinishRule`): a framework's metadata (where
  the shim reads the framework's view, not the vendor's events) as the Chat Completions finish
  reason (``reason_of``); where a class the gate cannot read puts its end of turn
  (``declare_finish_signal``, ``signal_of``, :data:`FinishSignal`) and a project's own test
  double, whose clean end is its finish (``declare_test_double``, ``is_test_double``), declared
  once for both shims; ``unread_note``, the one text for a class that showed none.
- :func:`settings_limit`: the output-token limit a settings object carries.
- :class:`StreamIdleTimeout`: what a stream that stayed silent past
  ``assemble_idle_timeout_s`` raises (``GateSession`` guards tapped and untapped streams).

The decision record a shim keeps on its message:

- :data:`RECORD_KEY`, :class:`DecisionRecord`, :func:`turn_record`: where, in what shape, and
  built from a ``Turn``; ``RecordView.read`` reads it once into a :class:`RecordView` (calls
  by id, order, paused and gated flags), the same way in every shim; ``RecordView.paused_stop``
  reads a paused turn off a message without a record. :func:`history_args`: a call's
  arguments as the history may carry them.
The outgoing history:

- :class:`MessageKit`: a framework's messages as the core reads them. The shim says where a
  message keeps the record, the stop reason and its neutral form, and gives its constructors;
  the kit decides paused turns, error results (the same words in both shims) and the history
  the core plans, over
  neutral :class:`HistoryEntry` / :class:`HistoryCall` values (``HistoryEntry.signed_before_calls``:
  whether a message's signed reasoning comes first); its ``check`` lists what the vendor would
  refuse (:class:`HistoryProblem`), ``prepare`` lays out a request's history under a
  ``history=`` policy (:data:`HistoryPolicy`, default :data:`DEFAULT_HISTORY`; under ``"check"``
  it raises :class:`HistoryError`), applying :class:`HistoryEdit` s, and ``pair_orphans`` is the
  one repair path behind ``pair_orphan_calls``.

Structured output:

- :class:`StructuredOutput`: the one rule (a schema's tool call, ``judge_call``, or a JSON text,
  ``judge_text``): an object only from an output the vendor provably finished, parsed once and
  strictly, valid against the schema; else :class:`StructuredOutputError`. ``judge_finished``
  is its first question alone (did the turn end normally); ``rejected_arguments`` the raw text
  of a turn's rejected calls, for the error.

What a UI, a trace and a metric see:

- :class:`ProgressEncoder`: the gate's UI events as plain JSON dicts (schema in
  ``docs/observability.md``), for LangGraph's custom stream, SSE or a log line; its
  ``arguments`` and ``detail``: what a UI event may show of a call's arguments (a sensitive
  tool's masked) and of a rejection's detail (no parse message that could quote private
  argument text), so every channel (LlamaIndex's event classes too) applies the same rule.
- :class:`RunPolicy` / :class:`RunState` / :class:`Pipeline`: the agent run's decisions,
  the same in both shims (the seed's five steps top to bottom): ``budget_left`` before a
  model turn, ``admit`` at the tool runner (not committed, arguments changed or a human's
  rejection, the run budget; each with its error result and metric), ``continue_paused``,
  ``after_turn`` (the consecutive-failure count and retries), the registry of tools started
  before the stream ends. ``with_reviews``: a record with a reviewer's decisions added.
- :class:`StartedLedger`: the started-ledger's rule (an entry's key, value and states, whether
  a call may run, the ``not_repeated`` words, repeatable tools); each agent keeps the store.

Another library's private names and tracing internals are not here: the shims import them
from ``toolstream_core.integration._private``. :class:`TapUnavailableError` is, since both
shims re-export it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._contacts import TapUnavailableError
from .._decision import (
    RECORD_KEY,
    DecisionRecord,
    RecordView,
    history_args,
    turn_record,
)
from .._finish import FINISH, FinishSignal
from .._history import (
    DEFAULT_HISTORY,
    HistoryCall,
    HistoryEdit,
    HistoryEntry,
    HistoryError,
    HistoryPolicy,
    HistoryProblem,
)
from .._history_kit import MessageKit
from .._idle import StreamIdleTimeout
from .._ledger import StartedLedger
from .._progress import ProgressEncoder
from .._run_policy import Pipeline, RunPolicy, RunState
from .._structured import StructuredOutput, StructuredOutputError
from ..vendors._limits import settings_limit
from ..vendors._tap import RawSink, tap_client
from ._session import GateSession, OnStreamError

__all__ = [
    "DEFAULT_HISTORY",
    "FINISH",
    "RECORD_KEY",
    "DecisionRecord",
    "FinishSignal",
    "GateSession",
    "HistoryCall",
    "HistoryEdit",
    "HistoryEntry",
    "HistoryError",
    "HistoryPolicy",
    "HistoryProblem",
    "MessageKit",
    "OnStreamError",
    "Pipeline",
    "ProgressEncoder",
    "RawSink",
    "RecordView",
    "RunPolicy",
    "RunState",
    "StartedLedger",
    "StreamIdleTimeout",
    "StructuredOutput",
    "StructuredOutputError",
    "TapUnavailableError",
    "history_args",
    "ollama_tap_kwargs",
    "settings_limit",
    "tap_client",
    "turn_record",
]


def ollama_tap_kwargs(kwargs: Mapping[str, Any], sink: RawSink, *,
                      asynchronous: bool = False) -> dict[str, Any]:
    """``kwargs`` for ``ollama.Client`` (``AsyncClient`` with ``asynchronous``) whose
    ``/api/chat`` lines reach ``sink`` as the server sent them, ids and indexes included.

    Use it instead of `tap_client` for Ollama wherever the client can be built: the
    ``ollama`` client's objects drop each tool call's ``id`` and ``function.index``, so a call
    the server re-sends would read as a second call. Imports httpx when called.
    """
    from ..vendors._ollama_tap import ollama_tap_kwargs as build

    return build(kwargs, sink, asynchronous=asynchronous)
