"""One gated LLM call as LlamaIndex sees it: its ``ChatResponse`` objects and their verdict.

Every ``ChatResponse`` a ``ResponseStream`` hands on carries a handle to its stream where
LlamaIndex keeps a response's extras, ``additional_kwargs`` (``STREAM_KEY``; ``stream_of``),
so the agent (or any caller) can ask "what did this response commit?" in O(1) without a
registry: while the stream is open the answer is "nothing yet"; the core parses arguments
once, after the stream has ended. The handle is a string (``_StreamHandle``), so a response
still dumps to JSON; a pickled or deep-copied response keeps only the string, and so, like a
response loaded from JSON, is answered from its decision record.

The ``ResponseStream`` is also the non-I/O base of ``ToolstreamLLM``'s sync and async twins:
they only loop over the wrapped LLM's responses (``absorb``, ``report``) and end with
``ending``; a whole (non-streamed) answer is ``absorb_whole``.
"""

from __future__ import annotations

import logging
import re
import threading
import uuid
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, ChatResponse
from toolstream_core import AssembleConfig, AssemblerEvent, ErrorResult, Provider, ToolCall, ToolSpec, Turn
from toolstream_core.integration import RECORD_KEY, GateSession, OnStreamError

from ._convert import STREAM_KEY, MessageView
from ._messages import rebuild_message
from ._providers import ProviderMismatchError

__all__ = ["STREAM_KEY", "ResponseStream", "StepSettings", "stream_of"]

logger = logging.getLogger(__name__)

#: Why a stream's open calls were cancelled: the consumer closed it or cancelled the task.
CANCELLED = "the consumer closed the stream before the response ended"

# google-genai's LlamaIndex class raises this for any finishReason other than STOP before it
# yields the chunk; the reason is the vendor's verbatim, so it is given back to the core.
_GEMINI_EARLY = re.compile(r"Response was terminated early: ([A-Z_]+)")


class _StreamHandle(str):
    """The stream's token as a string, holding the stream itself (``stream``) in this process.

    A string, so a response with it still dumps to JSON; a pickle or a deep copy keeps only
    the string (``__reduce__``), never the live stream."""

    __slots__ = ("stream",)
    stream: ResponseStream

    def __reduce__(self) -> tuple[Any, ...]:
        return (str, (str(self),))


@dataclass(frozen=True, slots=True)
class StepSettings:
    """What an agent step tells the model calls it makes (``ToolstreamLLM.for_step``):
    ``run_budget``, how many more calls the run may commit (``None``: the config's
    ``max_tool_calls_per_run`` for the one call alone); ``on_early_commit``, who starts a call
    committed before the stream ends (a pipelined tool, DESIGN 4.10); ``watcher``, who is told
    that a stream has UI events to hand on (the step, so they reach the workflow's stream chunk
    by chunk without copying LlamaIndex's loop)."""

    run_budget: int | None = None
    on_early_commit: Callable[[ToolCall], None] | None = None
    watcher: Callable[[ResponseStream], None] | None = None


def stream_of(response: ChatResponse) -> ResponseStream | None:
    """The stream that produced ``response``, if a ``ToolstreamLLM`` did in this process."""
    handle = response.additional_kwargs.get(STREAM_KEY)
    return handle.stream if isinstance(handle, _StreamHandle) else None


class ResponseStream:
    """LlamaIndex's side of one gated call: its ``ChatResponse`` objects in, the verdict on them.

    The call itself is ``gate``, a ``toolstream_core.integration.GateSession`` (the same object
    under the LangChain shim: the tap's sink, the core, the verdict, the observers, the fault
    policy). What is LlamaIndex's is here: reading ``ChatResponse.raw`` where the class is not
    tapped, the handle each response carries to its stream, the UI events queued for the
    agent, the assistant message rebuilt from the verdict, and how a stream of responses ends.
    """

    def __init__(
        self,
        llm: Any,
        *,
        provider: Provider | None,
        tools: Mapping[str, Mapping[str, Any] | ToolSpec] | None,
        config: AssembleConfig,
        on_event: Callable[[AssemblerEvent], None] | None = None,
        on_turn: Callable[[Turn], None] | None = None,
        max_output_tokens: int | None = None,
        on_stream_error: OnStreamError = GateSession.DEFAULT_ON_STREAM_ERROR,
        view: MessageView | None = None,
        step: StepSettings | None = None,
    ) -> None:
        step = step if step is not None else StepSettings()
        #: The wrapped LLM (its own reading of a message is the check of `_check_read`).
        self._llm = llm
        #: The wire the class speaks (``ToolstreamLLM.provider``).
        self.provider = provider
        #: For a class read through LlamaIndex's messages (``_convert``), not the vendor's.
        self.view = view
        #: The model call (``GateSession``). As the SDK tap's sink it feeds each event the
        #: moment the SDK yields it, before LlamaIndex sees it, because LlamaIndex writes into
        #: the SDK's event objects (its partial-JSON repair goes into the Anthropic
        #: ``content_block_start`` event's ``content_block.input``, Bedrock's into the
        #: ``contentBlockStart`` dict); and the tapped request's provider and output limit
        #: replace the ones read from the class and its settings (DESIGN 5.5).
        self.gate = GateSession(tools=tools, config=config, provider=provider,
                                limit=max_output_tokens, on_event=on_event, on_turn=on_turn,
                                forward=self._queue if step.watcher is not None else None,
                                on_stream_error=on_stream_error,
                                mode="raw" if view is None else "chunks", log=logger,
                                run_budget=step.run_budget, on_early_commit=step.on_early_commit)
        self._handle = _StreamHandle(uuid.uuid4().hex)
        self._handle.stream = self
        self._pending: list[AssemblerEvent] = []
        # BedrockConverse's async paths run boto3 on a worker thread, so the tap (and the UI
        # events it causes) can arrive off the event loop while the agent drains them.
        self._pending_lock = threading.Lock()
        self._text: list[str] = []
        self.last: ChatResponse | None = None
        # The last response, when it was not handed on (``absorb``): the end hands it on.
        self._held: ChatResponse | None = None
        #: The integration raised, but only to report the vendor's own finish reason (Gemini's
        #: "terminated early: MAX_TOKENS"); the core has that reason, and every call it cut
        #: off has an error result, so the stream can end normally.
        self.error_absorbed = False
        self._original: ChatMessage | None = None
        self._watcher = step.watcher

    @property
    def config(self) -> AssembleConfig:
        return self.gate.config

    @property
    def tapped(self) -> bool:
        """Read from the SDK tap (``read_from_tap``) rather than ``ChatResponse.raw``."""
        return self.gate.mode == "tap"

    # -- events ------------------------------------------------------------------------------

    def _queue(self, event: AssemblerEvent) -> None:
        with self._pending_lock:
            self._pending.append(event)

    def drain_events(self) -> list[AssemblerEvent]:
        """UI events since the last call (opened, argument bytes, committed, rejected); queued
        only for a step's watcher (``StepSettings.watcher``), the one who drains them."""
        with self._pending_lock:
            events, self._pending = self._pending, []
        return events

    def report(self) -> None:
        """Tell the step's watcher (``StepSettings.watcher``) that UI events may be waiting:
        after each response the consumer has taken, and at the end."""
        if self._watcher is not None:
            self._watcher(self)

    def read_from_tap(self) -> None:
        """This call streams from a tapped copy: the SDK's events, not ``ChatResponse.raw``."""
        self.gate.mode = "tap"

    # -- feeding -----------------------------------------------------------------------------

    def _keep(self, response: ChatResponse) -> None:
        """``response`` is this stream's latest: it carries the handle (``stream_of``)."""
        response.additional_kwargs[STREAM_KEY] = self._handle
        self.last = response

    def absorb(self, response: ChatResponse) -> ChatResponse | None:
        """Take one streamed ``ChatResponse``: observe its vendor event(s), give it the handle;
        ``response`` itself, to hand on, or ``None`` where its event touched only calls that
        already failed (``GateSession.spent``, issue 37.3): a class read through ``raw`` has
        built it, but the agent need not parse it again nor stream it (each response holds
        the whole message so far, so the next one says all it said). The last one is handed
        on at the end (`ending`) if no later one was."""
        gate = self.gate
        if gate.turn is not None:
            return response
        spent = False
        if self.view is not None:
            self.view.take(response)
        elif gate.mode != "tap" and response.raw is not None:
            gate.observe(self._normalise(response.raw))
            spent = gate.spent and not response.delta
        if response.delta:
            self._text.append(response.delta)
        self._keep(response)
        self._held = response if spent else None
        return None if spent else response

    def absorb_whole(self, response: ChatResponse) -> ChatResponse:
        """A non-streamed response: its events (replayed from ``raw`` unless read through its
        message), a complete transport, the verdict, the check that the gate read it; the
        watcher is told. ``response`` itself, with the verdict on it."""
        try:
            self.take_whole(response)
            self._check_read()
        finally:
            self.report()
        return response

    def take_whole(self, response: ChatResponse) -> None:
        """A non-streamed response decided (``absorb_whole`` without the check), also for a
        foreign one asked about later (``ToolstreamLLM.stream_for``)."""
        events: list[Any] | None = []
        if self.view is not None:
            self.view.take(response)  # its calls are read when it is decided (``_conclude``)
        else:
            events = GateSession.events_for_response(self.provider, response.raw)
            self.gate.mode = "message"
        if events is None:
            logger.warning("toolstream: cannot read the %s response; its tool calls are rejected",
                           self.provider)
        else:
            for event in events:
                self.gate.observe(event)
        self._keep(response)
        self._conclude(transport_complete=events is not None)

    def _normalise(self, raw: Any) -> Any:
        # google_genai keeps the top candidate (model_dump, plus usage) as ``raw``, not the
        # GenerateContentResponse, so it is put back into the response's shape; the usage goes
        # back to the top, where the core reads the output tokens for its max-token backstop.
        if self.provider == "gemini" and isinstance(raw, Mapping) and "candidates" not in raw:
            candidate = dict(raw)
            usage = candidate.pop("usage_metadata", None)
            event: dict[str, Any] = {"candidates": [candidate]}
            if usage is not None:
                event["usage_metadata"] = usage
            return event
        return raw

    # -- ending ------------------------------------------------------------------------------

    def ending(self, error: BaseException | None) -> Generator[ChatResponse, None, None]:
        """How a stream ends, sync or async: ``error`` is what stopped it, if anything. A
        consumer that stopped (closed the stream, cancelled the task) cancels every open call
        and its exception goes on; a broken stream decides the turn on a broken transport and
        re-raises unless the fault policy answers the calls instead; a clean end decides the
        turn and yields the last response if the stream yielded none. The watcher is told
        at the end either way (after the consumer took the last response)."""
        try:
            if error is not None and not isinstance(error, Exception):
                self._stop(CANCELLED)
                raise error
            if error is not None:
                self._conclude(transport_complete=False, error=error)
                if self._raises(error):
                    raise error
            self._conclude(transport_complete=True)
            self._check_read()
            closing = self._closing_response()
            if closing is not None:
                yield closing
        finally:
            self.report()

    def _conclude(self, *, transport_complete: bool = True,
                error: BaseException | None = None) -> Turn:
        """Decide every call (idempotent) and fix up the last message's tool-call blocks."""
        gate = self.gate
        if gate.turn is not None:
            return gate.turn
        if error is not None and self.provider == "gemini":
            match = _GEMINI_EARLY.search(str(error))
            if match:
                # Not a transport failure: the vendor ended the turn with this reason.
                gate.observe({"candidates": [{"finish_reason": match.group(1)}]})
                transport_complete, error = True, None
                self.error_absorbed = True
        note = None
        if self.view is not None:
            ended = transport_complete and error is None
            for event in self.view.completion_chunks(ended=ended):
                gate.observe(event)
            note = self.view.note() if ended else None
        turn = gate.end(error, transport_complete=transport_complete, note=note)
        self._settle()
        return turn

    def _stop(self, reason: str) -> Turn:
        """The consumer stopped (task cancelled, stream closed): no open call may commit."""
        gate = self.gate
        if gate.turn is not None:
            return gate.turn
        if self.view is not None:  # its calls so far, so each is cancelled and answered
            for event in self.view.completion_chunks(ended=False):
                gate.observe(event)
        turn = gate.cancel(reason)
        self._settle()
        return turn

    def _settle(self) -> None:
        """The verdict reaches the last response: its message rebuilt, the record on both."""
        record = self.gate.record
        if self.last is not None and record is not None:
            self._original = self.last.message
            self.last.message = self.final_message(self._original)
            self.last.additional_kwargs[RECORD_KEY] = record

    def _raises(self, error: BaseException) -> bool:
        """Whether the integration's ``error`` propagates: the session's fault policy, except
        for an error absorbed as the vendor's finish reason, which ends a turn with calls
        normally and keeps the integration's exception for a text-only answer."""
        if self.error_absorbed:
            turn = self.gate.turn
            return not (turn is not None and bool(turn.calls))
        return self.gate.raises(error)

    def _closing_response(self) -> ChatResponse | None:
        """A last ``ChatResponse`` when the stream yielded none before ending, or held back
        its last one (`absorb`): that one, with the verdict on it."""
        held, self._held = self._held, None
        if held is not None and held is self.last:
            return held
        turn = self.gate.turn
        if self.last is not None or turn is None or not turn.calls:
            return None
        self._original = ChatMessage(role="assistant")
        response = ChatResponse(message=self.final_message(self._original))
        if self.gate.record is not None:
            response.additional_kwargs[RECORD_KEY] = self.gate.record
        self._keep(response)
        return response

    def _check_read(self) -> None:
        """Refuse a response whose tool calls LlamaIndex found but the gate read none of.

        That is the wrong ``provider=`` (or a class that changed its wire): its calls would
        vanish, neither run nor answered. Checked only when the core saw no call at all, so
        a gated turn pays nothing.
        """
        turn, message = self.gate.turn, self._original
        if turn is None or message is None or turn.calls or turn.server_calls:
            return
        found = self._framework_calls(message)
        if found:
            raise ProviderMismatchError(
                f"{type(self._llm).__name__} returned tool calls ({', '.join(found)}) that the "
                f"gate could not read as the {self.provider} wire, so none of them runs: is "
                f"provider={self.provider!r} what this class sends? (the gate saw: "
                f"{'; '.join(turn.anomalies[:3]) or 'no tool call'})")

    def _framework_calls(self, message: ChatMessage) -> list[str]:
        """The names of the calls the wrapped class itself finds in ``message``."""
        try:
            found = self._llm.get_tool_calls_from_response(
                ChatResponse(message=message), error_on_no_tool_call=False)
        except Exception:  # its own parser failed: it found nothing it could hand out
            logger.debug("toolstream: %s could not parse its own message",
                         type(self._llm).__name__, exc_info=True)
            return []
        return [str(getattr(call, "tool_name", "?")) for call in found]

    # -- results -----------------------------------------------------------------------------

    def error_results(self) -> list[ErrorResult]:
        return self.gate.error_results()

    def result_for(self, call: ToolCall) -> ErrorResult | None:
        """The error result that answers a rejected ``call`` (``Turn.result_for``)."""
        return self.gate.result_for(call)

    def final_message(self, message: ChatMessage, *, keep_rejected: bool = False) -> ChatMessage:
        """``message`` with the core's calls: committed only, or every call when the caller
        will answer the rejected ones (``keep_rejected``)."""
        assert self.gate.turn is not None
        rebuilt = rebuild_message(message, self.gate.turn, text="".join(self._text),
                                  keep_rejected=keep_rejected)
        if self.gate.record is not None:
            rebuilt.additional_kwargs[RECORD_KEY] = self.gate.record
        return rebuilt

    def message_with_rejected(self) -> ChatMessage | None:
        """The assistant message with every call, committed and rejected, for a caller that
        answers each rejected id with its error result; ``None`` before the end."""
        if self.gate.turn is None or self._original is None:
            return None
        return self.final_message(self._original, keep_rejected=True)
