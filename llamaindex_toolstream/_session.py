"""One gated LLM call as LlamaIndex sees it: its ``ChatResponse`` objects and their verdict.

A ``ResponseStream`` is registered for every ``ChatResponse`` of its stream (``stream_of``: a
registry keyed by the response, nothing written into it), so the agent (or any caller) can ask
"what did this response commit?" in O(1): while the stream is open the answer is "nothing
yet"; the core parses arguments once, after the stream has ended.
"""

from __future__ import annotations

import logging
import re
import threading
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from llama_index.core.base.llms.types import ChatMessage, ChatResponse
from toolstream_core import AssembleConfig, AssemblerEvent, ErrorResult, Provider, ToolCall, ToolSpec, Turn
from toolstream_core.integration import RECORD_KEY, DecisionRecord, GateSession, OnStreamError

from ._convert import MessageView
from ._messages import rebuild_message

__all__ = ["ResponseStream", "StepSettings", "stream_of"]

logger = logging.getLogger(__name__)


# google-genai's LlamaIndex class raises this for any finishReason other than STOP before it
# yields the chunk; the reason is the vendor's verbatim, so it is given back to the core.
_GEMINI_EARLY = re.compile(r"Response was terminated early: ([A-Z_]+)")


class _Streams:
    """Which stream produced which ``ChatResponse``, without writing into the response.

    ``ChatResponse`` is an unhashable pydantic model, so a ``WeakKeyDictionary`` cannot hold
    it: entries are keyed by ``id()``, each holds a weak reference whose callback removes the
    entry when the response is collected, and a lookup checks the reference still points at
    the very object asked about. A stream lives as long as a response it produced.
    """

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ref[ChatResponse], ResponseStream]] = {}

    def attach(self, response: ChatResponse, stream: ResponseStream) -> None:
        key = id(response)
        entry = self._entries.get(key)
        if entry is not None and entry[0]() is response:
            self._entries[key] = (entry[0], stream)
            return
        self._entries[key] = (weakref.ref(response, self._forget(key)), stream)

    def _forget(self, key: int) -> Callable[[weakref.ref[ChatResponse]], None]:
        def forget(ref: weakref.ref[ChatResponse]) -> None:
            entry = self._entries.get(key)
            if entry is not None and entry[0] is ref:
                del self._entries[key]
        return forget

    def get(self, response: ChatResponse) -> ResponseStream | None:
        entry = self._entries.get(id(response))
        return entry[1] if entry is not None and entry[0]() is response else None


_STREAMS = _Streams()

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
    """The stream that produced ``response``, if a ``ToolstreamLLM`` did."""
    return _STREAMS.get(response)


class ResponseStream:
    """LlamaIndex's side of one gated call: its ``ChatResponse`` objects in, the verdict on them.

    The call itself is ``gate``, a ``toolstream_core.integration.GateSession`` (the same object
    under the LangChain shim: the tap's sink, the core, the verdict, the observers, the fault
    policy). What is LlamaIndex's is here: reading ``ChatResponse.raw`` where the class is not
    tapped, the registry that maps each response to its stream, the UI events queued for the
    agent, and the assistant message rebuilt from the verdict.
    """

    def __init__(
        self,
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
                                forward=self._queue, on_stream_error=on_stream_error,
                                mode="raw" if view is None else "chunks", log=logger,
                                run_budget=step.run_budget, on_early_commit=step.on_early_commit)
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
    def turn(self) -> Turn | None:
        return self.gate.turn

    @property
    def record(self) -> DecisionRecord | None:
        return self.gate.record

    @property
    def tapped(self) -> bool:
        """Read from the SDK tap (``read_from_tap``) rather than ``ChatResponse.raw``."""
        return self.gate.mode == "tap"

    # -- events ------------------------------------------------------------------------------

    def _queue(self, event: AssemblerEvent) -> None:
        with self._pending_lock:
            self._pending.append(event)

    def drain_events(self) -> list[AssemblerEvent]:
        """UI events since the last call (opened, argument bytes, committed, rejected)."""
        with self._pending_lock:
            events, self._pending = self._pending, []
        return events

    def report(self) -> None:
        """Tell the step's watcher (``StepSettings.watcher``) that UI events may be waiting: after each response
        the consumer has taken, and at the end."""
        if self._watcher is not None:
            self._watcher(self)

    def read_from_tap(self) -> None:
        """This call streams from a tapped copy: the SDK's events, not ``ChatResponse.raw``."""
        self.gate.mode = "tap"

    # -- feeding -----------------------------------------------------------------------------

    def absorb(self, response: ChatResponse) -> ChatResponse | None:
        """Take one streamed ``ChatResponse``: observe its vendor event(s), register it;
        ``response`` itself, to hand on, or ``None`` where its event touched only calls that
        already failed (``GateSession.spent``, issue 37.3): a class read through ``raw`` has
        built it, but the agent need not parse it again nor stream it (each response holds
        the whole message so far, so the next one says all it said). The last one is handed
        on at the end (`closing_response`) if no later one was."""
        if self.turn is not None:
            return response
        spent = False
        if self.view is not None:
            self.view.take(response)
        elif not self.tapped and response.raw is not None:
            self.gate.observe(self._normalise(response.raw))
            spent = self.gate.spent and not response.delta
        if response.delta:
            self._text.append(response.delta)
        _STREAMS.attach(response, self)
        self.last = response
        self._held = response if spent else None
        return None if spent else response

    def absorb_whole(self, response: ChatResponse, events: list[Any] | None) -> None:
        """A non-streamed response: its events, a complete transport, and the verdict."""
        if self.view is not None:
            self.view.take(response)
            events = []  # its calls are read when it is decided (``finish``)
        else:
            self.gate.mode = "message"
        if events is None:
            logger.warning("toolstream: cannot read the %s response; its tool calls are rejected",
                           self.provider)
        else:
            for event in events:
                self.gate.observe(event)
        _STREAMS.attach(response, self)
        self.last = response
        self.finish(transport_complete=events is not None)

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

    def finish(self, *, transport_complete: bool = True,
               error: BaseException | None = None) -> Turn:
        """Decide every call (idempotent) and fix up the last message's tool-call blocks."""
        if self.turn is not None:
            return self.turn
        if error is not None and self.provider == "gemini":
            match = _GEMINI_EARLY.search(str(error))
            if match:
                # Not a transport failure: the vendor ended the turn with this reason.
                self.gate.observe({"candidates": [{"finish_reason": match.group(1)}]})
                transport_complete, error = True, None
                self.error_absorbed = True
        note = None
        if self.view is not None:
            ended = transport_complete and error is None
            for event in self.view.events(ended=ended):
                self.gate.observe(event)
            note = self.view.note() if ended else None
        turn = self.gate.end(error, transport_complete=transport_complete, note=note)
        self._settle()
        return turn

    def cancel(self, reason: str) -> Turn:
        """The consumer stopped (task cancelled, stream closed): no open call may commit."""
        if self.turn is not None:
            return self.turn
        if self.view is not None:  # its calls so far, so each is cancelled and answered
            for event in self.view.events(ended=False):
                self.gate.observe(event)
        turn = self.gate.cancel(reason)
        self._settle()
        return turn

    def _settle(self) -> None:
        """The verdict reaches the last response: its message rebuilt, the record on both."""
        if self.last is not None and self.record is not None:
            self._original = self.last.message
            self.last.message = self.final_message(self._original)
            self.last.additional_kwargs[RECORD_KEY] = self.record

    def should_raise(self, error: BaseException) -> bool:
        """Whether the integration's ``error`` propagates: the session's fault policy, except
        for an error absorbed as the vendor's finish reason, which ends a turn with calls
        normally and keeps the integration's exception for a text-only answer."""
        if self.error_absorbed:
            return not (self.turn is not None and bool(self.turn.calls))
        return self.gate.raises(error)

    def closing_response(self) -> ChatResponse | None:
        """A last ``ChatResponse`` when the stream yielded none before ending, or held back
        its last one (`absorb`): that one, with the verdict on it."""
        held, self._held = self._held, None
        if held is not None and held is self.last:
            return held
        if self.last is not None or self.turn is None or not self.turn.calls:
            return None
        self._original = ChatMessage(role="assistant")
        response = ChatResponse(message=self.final_message(self._original))
        if self.record is not None:
            response.additional_kwargs[RECORD_KEY] = self.record
        _STREAMS.attach(response, self)
        self.last = response
        return response

    @property
    def finished(self) -> bool:
        return self.turn is not None

    @property
    def framework_message(self) -> ChatMessage | None:
        """The last message as the LlamaIndex class built it, before the gate rebuilt it."""
        return self._original

    # -- results -----------------------------------------------------------------------------

    def error_results(self) -> list[ErrorResult]:
        return self.gate.error_results()

    def result_for(self, call: ToolCall) -> ErrorResult | None:
        """The error result that answers a rejected ``call`` (``Turn.result_for``)."""
        return self.gate.result_for(call)

    def final_message(self, message: ChatMessage, *, keep_rejected: bool = False) -> ChatMessage:
        """``message`` with the core's calls: committed only, or every call when the caller
        will answer the rejected ones (``keep_rejected``)."""
        assert self.turn is not None
        rebuilt = rebuild_message(message, self.turn, text="".join(self._text),
                                  keep_rejected=keep_rejected)
        if self.record is not None:
            rebuilt.additional_kwargs[RECORD_KEY] = self.record
        return rebuilt

    def message_with_rejected(self) -> ChatMessage | None:
        """The assistant message with every call, committed and rejected, for a caller that
        answers each rejected id with its error result; ``None`` before the end."""
        if self.turn is None or self._original is None:
            return None
        return self.final_message(self._original, keep_rejected=True)
