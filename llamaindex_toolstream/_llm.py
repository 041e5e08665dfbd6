"""``ToolstreamLLM``: a ``FunctionCallingLLM`` that hands out committed tool calls only.

It wraps the user's LLM (OpenAI chat and its ``OpenAILike`` / ``AzureOpenAI`` subclasses,
OpenAI Responses, Anthropic, Google GenAI, Ollama, Bedrock Converse; any other LlamaIndex
``LLM`` is read through LlamaIndex's own messages, ``_convert``) and passes every stream
through unchanged, while feeding the vendor events behind each ``ChatResponse`` to the core
``Assembler``. ``get_tool_calls_from_response`` then answers from the core's
verdict instead of LlamaIndex's ``parse_partial_json`` repair: nothing while the stream is
open (an O(1) answer, so an agent may ask on every chunk), and after the end only calls that
are complete, proven finished by the vendor, strictly parsed and valid for the tool.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable, Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    ChatResponseAsyncGen,
    ChatResponseGen,
    CompletionResponse,
    CompletionResponseAsyncGen,
    CompletionResponseGen,
    LLMMetadata,
)
from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.llms.llm import LLM, ToolSelection
from llama_index.core.prompts import PromptTemplate
from llama_index.core.types import Model
from toolstream_core import AssembleConfig, AssemblerEvent, ErrorResult, Provider, Turn
from toolstream_core.integration import DEFAULT_HISTORY, FINISH, FinishSignal, GateSession, HistoryPolicy, OnStreamError

from . import _structured as structured
from ._convert import MessageView
from ._limits import llm_output_limit
from ._messages import MESSAGES, call_id, call_name, sent_after
from ._outgoing import for_llm_converter
from ._providers import TEST_DOUBLES, ProviderMismatchError, resolve_provider
from ._session import ResponseStream, StepSettings, stream_of
from ._tap import tap_llm
from ._tools import ConfigArg, ToolsArg, registry_from_llama_tools

if TYPE_CHECKING:
    from llama_index.core.tools.types import BaseTool

__all__ = ["ToolstreamLLM"]

logger = logging.getLogger(__name__)

Registry = dict[str, Any]
"""``name -> JSON Schema dict | ToolSpec``, what ``toolstream_core.Assembler(tools=...)`` takes."""


class ToolstreamLLM(FunctionCallingLLM):
    """Wrap a function-calling LLM so its tool calls are run only once proven complete.

    ``tools``: a fixed registry (LlamaIndex tools, callables, or ``name -> JSON Schema``);
    by default each ``*_chat_with_tools`` call uses the tools it was given, so unknown names
    and schema violations are rejected before anything runs. ``config``: an
    ``AssembleConfig``, its mapping, or a YAML path. ``provider``: the wire, when the class is
    an OpenAI-compatible subclass this package cannot recognise. ``on_turn``: called with the
    core's ``Turn`` after every LLM call, cancelled ones included. ``on_event``: a callback for
    UI progress events (never a reason to execute anything). ``on_stream_error``: a stream
    that fails (a dropped connection, a vendor error, an idle timeout) after a tool call
    started ends normally with every call rejected and answered (``"pair"``, the default), or
    raises (``"raise"``); a failure before any call always raises. ``history``: what happens
    to the outgoing history before each request (``"check"``, the default, answers every
    unanswered call id and raises ``HistoryError`` for what only the model could fix;
    ``"repair"`` only answers; ``"off"``). The same options and defaults as
    ``with_toolstream`` in the LangChain shim.

    The decision record (``read_record``) is kept as plain JSON in
    ``ChatResponse.additional_kwargs["toolstream"]`` and on the assistant message.
    """

    llm: LLM = Field(description="The wrapped function-calling LLM.")
    provider: Provider = Field(description="Vendor wire of the wrapped LLM.")
    history: HistoryPolicy = Field(default=DEFAULT_HISTORY, description="What happens to the "
                                   "outgoing history before each request (see ``HistoryPolicy``).")
    on_stream_error: OnStreamError = Field(
        default=GateSession.DEFAULT_ON_STREAM_ERROR, description="A stream that fails after a tool call "
        "started: 'pair' (end the turn with every call answered) or 'raise'.")
    structured_retries: int = Field(default=0, ge=0, description="How many times a structured "
                                    "output cut short is answered and asked again before "
                                    "``StructuredOutputError`` (agents: 2); a finished one "
                                    "that fails its schema raises at once.")

    _config: AssembleConfig = PrivateAttr(default_factory=AssembleConfig)
    _registry: Registry | None = PrivateAttr(default=None)
    _on_event: Callable[[AssemblerEvent], None] | None = PrivateAttr(default=None)
    _on_turn: Callable[[Turn], None] | None = PrivateAttr(default=None)
    _reads_messages: bool = PrivateAttr(default=False)
    _finish: FinishSignal | None = PrivateAttr(default=None)
    _step: StepSettings = PrivateAttr(default_factory=StepSettings)
    _double: bool = PrivateAttr(default=False)

    def __init__(
        self,
        llm: LLM,
        *,
        tools: ToolsArg | None = None,
        config: ConfigArg | None = None,
        provider: Provider | None = None,
        on_turn: Callable[[Turn], None] | None = None,
        on_event: Callable[[AssemblerEvent], None] | None = None,
        history: HistoryPolicy = DEFAULT_HISTORY,
        on_stream_error: OnStreamError = GateSession.DEFAULT_ON_STREAM_ERROR,
        **kwargs: Any,
    ) -> None:
        if isinstance(llm, ToolstreamLLM):
            # The same rule as ``with_toolstream`` in the LangChain shim: a second gate would
            # silently ignore the new options.
            raise TypeError("the LLM is already gated by toolstream; wrap the vendor LLM once "
                            "and give tools=, config= and the callbacks to that one wrapper")
        if not isinstance(llm, LLM):
            raise TypeError(f"ToolstreamLLM wraps a LlamaIndex LLM, got {type(llm).__name__}")
        detected = resolve_provider(llm, provider)
        kwargs.setdefault("callback_manager", llm.callback_manager)
        # A class read through LlamaIndex's messages speaks Chat Completions to the core.
        super().__init__(llm=llm, provider=detected or "openai-chat", history=history,
                         on_stream_error=on_stream_error, **kwargs)
        self._reads_messages = detected is None
        self._finish = FINISH.signal_of(type(llm)) if detected is None else None
        self._double = detected is None and FINISH.is_test_double(type(llm), TEST_DOUBLES)
        self._config = AssembleConfig.coerce(config)
        self._registry = registry_from_llama_tools(tools)
        self._on_event = on_event
        self._on_turn = on_turn

    @classmethod
    def class_name(cls) -> str:
        return "ToolstreamLLM"

    @property
    def metadata(self) -> LLMMetadata:
        return self.llm.metadata

    @property
    def config(self) -> AssembleConfig:
        return self._config

    def for_step(self, step: StepSettings) -> ToolstreamLLM:
        """This LLM for one agent step: its model calls may commit ``step.run_budget`` more
        calls, start an early commit with ``step.on_early_commit`` and hand UI events to
        ``step.watcher`` (``ToolstreamFunctionAgent``, from the run's state in its ``Context``).
        A copy, so steps of concurrent runs never share them."""
        copy = self.model_copy()
        copy._step = step
        return copy

    # -- sessions ----------------------------------------------------------------------------

    def _session(self, tools: Sequence[BaseTool] | None,
                 kwargs: Mapping[str, Any] | None = None) -> ResponseStream:
        """A session for one call; ``kwargs`` are the call's own (they may set the limit)."""
        registry = self._registry if self._registry is not None else registry_from_llama_tools(tools)
        return ResponseStream(
            provider=self.provider,
            tools=registry,
            config=self._config,
            on_event=self._on_event,
            on_turn=self._on_turn,
            max_output_tokens=llm_output_limit(self.llm, kwargs or {}),
            on_stream_error=self.on_stream_error,
            view=MessageView(self.llm, self._finish, double=self._double)
            if self._reads_messages else None,
            step=self._step,
        )

    def _outgoing(self, messages: Sequence[ChatMessage] | None,
                  user_msg: str | ChatMessage | None = None) -> list[ChatMessage]:
        history = MESSAGES.prepare(messages or [], self.provider, self.history, self.llm, sent_after(user_msg))
        return for_llm_converter(self.llm, history)  # what the class's converter serialises

    def _streaming(self, session: ResponseStream) -> Any:
        """The LLM to stream one call from: a private copy whose SDK client feeds ``session``
        (``_tap.py``), or the wrapped LLM itself, read from ``ChatResponse.raw``."""
        tapped = tap_llm(self.llm, self.provider, session.gate)
        if tapped is None:
            return self.llm
        session.read_from_tap()
        return tapped

    def _whole(self, session: ResponseStream) -> Any:
        """The LLM to send a whole (non-streamed) call through: the tapped copy where the tap
        changes what the request says (Anthropic's ``is_error`` on the gate's error results,
        for which the class has no field), else the wrapped LLM. The answer is read from
        ``ChatResponse.raw`` either way."""
        if not GateSession.rewrites_requests(self.provider):
            return self.llm
        return tap_llm(self.llm, self.provider, session.gate) or self.llm

    def _decide_whole(self, response: ChatResponse, session: ResponseStream) -> ChatResponse:
        """A non-streamed response: replay it to the core as the events it stands for."""
        events = (None if session.view is not None
                  else GateSession.events_for_response(session.provider, response.raw))
        session.absorb_whole(response, events)
        try:
            self._check_read(session)
        finally:
            session.report()
        return response

    def _check_read(self, session: ResponseStream) -> None:
        """Refuse a response whose tool calls LlamaIndex found but the gate read none of.

        That is the wrong ``provider=`` (or a class that changed its wire): its calls would
        vanish, neither run nor answered. Checked only when the core saw no call at all, so
        a gated turn pays nothing.
        """
        turn, message = session.turn, session.framework_message
        if turn is None or message is None or turn.calls or turn.server_calls:
            return
        found = self._framework_calls(message)
        if found:
            raise ProviderMismatchError(
                f"{type(self.llm).__name__} returned tool calls ({', '.join(found)}) that the "
                f"gate could not read as the {self.provider} wire, so none of them runs: is "
                f"provider={self.provider!r} what this class sends? (the gate saw: "
                f"{'; '.join(turn.anomalies[:3]) or 'no tool call'})")

    def _framework_calls(self, message: ChatMessage) -> list[str]:
        """The names of the calls the wrapped class itself finds in ``message``."""
        try:
            found = self.llm.get_tool_calls_from_response(  # type: ignore[attr-defined]
                ChatResponse(message=message), error_on_no_tool_call=False)
        except Exception:  # its own parser failed: it found nothing it could hand out
            logger.debug("toolstream: %s could not parse its own message",
                         type(self.llm).__name__, exc_info=True)
            return []
        return [str(getattr(call, "tool_name", "?")) for call in found]

    # The UI events of a response are reported once the consumer has taken it (after the
    # ``yield``), so an agent that writes its own event for the response writes it first.

    # The sync and async twins are only loops: what a response means is ``ResponseStream``'s
    # (``absorb``), how the stream ends is ``_ending``'s.

    def _wrap_sync(self, gen: ChatResponseGen, session: ResponseStream) -> ChatResponseGen:
        def wrapped() -> Generator[ChatResponse, None, None]:
            error: BaseException | None = None
            try:
                # the idle timeout, where no tap has it (``GateSession.guarded``)
                with session.gate.guarded(gen, asynchronous=False) as responses:
                    for response in responses:
                        handed = session.absorb(response)
                        if handed is not None:
                            yield handed
                        session.report()
            except BaseException as exc:  # the consumer stopped (``GeneratorExit``), or the stream broke
                error = exc
            yield from self._ending(session, error)

        return wrapped()

    def _wrap_async(self, gen: ChatResponseAsyncGen, session: ResponseStream) -> ChatResponseAsyncGen:
        async def wrapped() -> AsyncGenerator[ChatResponse, None]:
            error: BaseException | None = None
            try:
                async with session.gate.guarded(gen, asynchronous=True) as responses:
                    async for response in responses:
                        handed = session.absorb(response)
                        if handed is not None:
                            yield handed
                        session.report()
            except BaseException as exc:  # ``GeneratorExit``, ``CancelledError`` or a broken stream
                error = exc
            for closing in self._ending(session, error):
                yield closing

        return wrapped()

    def _ending(self, session: ResponseStream,
                error: BaseException | None) -> Generator[ChatResponse, None, None]:
        """How a stream ends, sync or async: ``error`` is what stopped it, if anything. A
        consumer that stopped (closed the stream, cancelled the task) cancels every open call
        and its exception goes on; a broken stream decides the turn on a broken transport and
        re-raises unless the fault policy answers the calls instead; a clean end decides the
        turn and yields the last response if the stream yielded none. The watcher is told
        at the end either way."""
        try:
            if error is not None and not isinstance(error, Exception):
                session.cancel(_CANCELLED)
                raise error
            if error is not None and _failed(session, error):
                raise error
            closing = self._closing(session)
            if closing is not None:
                yield closing
        finally:
            session.report()

    def _closing(self, session: ResponseStream) -> ChatResponse | None:
        """The stream ended cleanly (or its error was absorbed): decide the turn, and the last
        response to yield if the stream yielded none."""
        session.finish(transport_complete=True)
        self._check_read(session)
        return session.closing_response()

    # -- chat --------------------------------------------------------------------------------

    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        session = self._session(None, kwargs)
        return self._decide_whole(self._whole(session).chat(self._outgoing(messages), **kwargs),
                                  session)

    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        session = self._session(None, kwargs)
        response = await self._whole(session).achat(self._outgoing(messages), **kwargs)
        return self._decide_whole(response, session)

    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        session = self._session(None, kwargs)
        gen = self._streaming(session).stream_chat(self._outgoing(messages), **kwargs)
        return self._wrap_sync(gen, session)

    async def astream_chat(
        self, messages: Sequence[ChatMessage], **kwargs: Any
    ) -> ChatResponseAsyncGen:
        session = self._session(None, kwargs)
        gen = await self._streaming(session).astream_chat(self._outgoing(messages), **kwargs)
        return self._wrap_async(gen, session)

    # -- chat with tools ---------------------------------------------------------------------

    def chat_with_tools(self, tools: Sequence[BaseTool], user_msg: str | ChatMessage | None = None,
                        chat_history: list[ChatMessage] | None = None, verbose: bool = False,
                        allow_parallel_tool_calls: bool = False, tool_required: bool = False,
                        **kwargs: Any) -> ChatResponse:
        session = self._session(tools, kwargs)
        response = self._whole(session).chat_with_tools(
            tools, user_msg=user_msg, chat_history=self._outgoing(chat_history, user_msg), verbose=verbose,
            allow_parallel_tool_calls=allow_parallel_tool_calls, tool_required=tool_required,
            **kwargs)
        return self._decide_whole(response, session)

    async def achat_with_tools(self, tools: Sequence[BaseTool],
                               user_msg: str | ChatMessage | None = None,
                               chat_history: list[ChatMessage] | None = None,
                               verbose: bool = False, allow_parallel_tool_calls: bool = False,
                               tool_required: bool = False, **kwargs: Any) -> ChatResponse:
        session = self._session(tools, kwargs)
        response = await self._whole(session).achat_with_tools(
            tools, user_msg=user_msg, chat_history=self._outgoing(chat_history, user_msg), verbose=verbose,
            allow_parallel_tool_calls=allow_parallel_tool_calls, tool_required=tool_required,
            **kwargs)
        return self._decide_whole(response, session)

    def stream_chat_with_tools(self, tools: Sequence[BaseTool],
                               user_msg: str | ChatMessage | None = None,
                               chat_history: list[ChatMessage] | None = None,
                               verbose: bool = False, allow_parallel_tool_calls: bool = False,
                               tool_required: bool = False, **kwargs: Any) -> ChatResponseGen:
        session = self._session(tools, kwargs)
        gen = self._streaming(session).stream_chat_with_tools(
            tools, user_msg=user_msg, chat_history=self._outgoing(chat_history, user_msg), verbose=verbose,
            allow_parallel_tool_calls=allow_parallel_tool_calls, tool_required=tool_required,
            **kwargs)
        return self._wrap_sync(gen, session)

    async def astream_chat_with_tools(self, tools: Sequence[BaseTool],
                                      user_msg: str | ChatMessage | None = None,
                                      chat_history: list[ChatMessage] | None = None,
                                      verbose: bool = False,
                                      allow_parallel_tool_calls: bool = False,
                                      tool_required: bool = False,
                                      **kwargs: Any) -> ChatResponseAsyncGen:
        session = self._session(tools, kwargs)
        gen = await self._streaming(session).astream_chat_with_tools(
            tools, user_msg=user_msg, chat_history=self._outgoing(chat_history, user_msg), verbose=verbose,
            allow_parallel_tool_calls=allow_parallel_tool_calls, tool_required=tool_required,
            **kwargs)
        return self._wrap_async(gen, session)

    def _prepare_chat_with_tools(self, tools: Sequence[BaseTool],
                                 user_msg: str | ChatMessage | None = None,
                                 chat_history: list[ChatMessage] | None = None,
                                 verbose: bool = False, allow_parallel_tool_calls: bool = False,
                                 tool_required: bool = False, **kwargs: Any) -> dict[str, Any]:
        return self.llm._prepare_chat_with_tools_compat(  # type: ignore[attr-defined, no-any-return]
            tools, user_msg=user_msg, chat_history=chat_history, verbose=verbose,
            allow_parallel_tool_calls=allow_parallel_tool_calls, tool_required=tool_required,
            **kwargs)

    # -- the verdict -------------------------------------------------------------------------

    def stream_for(self, response: ChatResponse) -> ResponseStream | None:
        """The session behind ``response``; a foreign whole response gets one on demand."""
        session = stream_of(response)
        if session is None and self._reads_messages:
            session = self._session(None)
            session.absorb_whole(response, None)
        elif session is None and response.raw is not None:
            events = GateSession.events_for_response(self.provider, response.raw)
            if events is not None:
                session = self._session(None)
                session.absorb_whole(response, events)
        return session

    def turn_of(self, response: ChatResponse) -> Turn | None:
        """The core's decided ``Turn`` for ``response``; ``None`` while its stream is open."""
        session = stream_of(response)
        return session.turn if session is not None else None

    def get_tool_calls_from_response(
        self,
        response: ChatResponse,
        error_on_no_tool_call: bool = True,
        **kwargs: Any,
    ) -> list[ToolSelection]:
        """Committed calls only, with strictly parsed arguments; ``[]`` while streaming."""
        session = stream_of(response)
        if session is None:
            session = self.stream_for(response)
        selections: list[ToolSelection] = []
        if session is not None and session.turn is not None:
            turn = session.turn
            seen: set[str] = set()
            for call in turn.committed:
                ident = call_id(call, turn)
                if ident in seen:
                    continue
                seen.add(ident)
                selections.append(ToolSelection(tool_id=ident, tool_name=call_name(call),
                                                tool_kwargs=call.arguments))
        if not selections and error_on_no_tool_call:
            raise structured.no_committed_call(response)  # a ValueError naming why (reason, id, raw text)
        return selections

    def error_results_from_response(self, response: ChatResponse) -> list[ErrorResult]:
        """One error result per rejected call of ``response`` (empty while streaming)."""
        session = stream_of(response)
        return session.error_results() if session is not None else []

    # -- structured output -------------------------------------------------------------------
    # The wrapped LLM's own method (a JSON-schema text, a forced call or a prompted text), sent
    # through the gate and judged by the core's one rule (``_structured``).

    def structured_predict(self, output_cls: type[Model], prompt: PromptTemplate,
                           llm_kwargs: dict[str, Any] | None = None, **prompt_args: Any) -> Model:
        """The schema's object from an output the vendor provably finished, else
        ``StructuredOutputError`` (reason, call id, raw text)."""
        return cast("Model", structured.predict(self, output_cls, prompt, llm_kwargs, prompt_args))

    async def astructured_predict(self, output_cls: type[Model], prompt: PromptTemplate,
                                  llm_kwargs: dict[str, Any] | None = None,
                                  **prompt_args: Any) -> Model:
        return cast("Model", await structured.apredict(self, output_cls, prompt, llm_kwargs,
                                                       prompt_args))

    def stream_structured_predict(self, output_cls: type[Model], prompt: PromptTemplate,
                                  llm_kwargs: dict[str, Any] | None = None,
                                  **prompt_args: Any) -> Generator[Any, None, None]:
        """Streams the answer through the gate; yields the final object once."""
        return structured.stream_predict(self, output_cls, prompt, llm_kwargs, prompt_args)

    async def astream_structured_predict(self, output_cls: type[Model], prompt: PromptTemplate,
                                         llm_kwargs: dict[str, Any] | None = None,
                                         **prompt_args: Any) -> AsyncGenerator[Any, None]:
        return structured.astream_predict(self, output_cls, prompt, llm_kwargs, prompt_args)

    # -- completion passthrough --------------------------------------------------------------

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return self.llm.complete(prompt, formatted=formatted, **kwargs)

    async def acomplete(self, prompt: str, formatted: bool = False,
                        **kwargs: Any) -> CompletionResponse:
        return await self.llm.acomplete(prompt, formatted=formatted, **kwargs)

    def stream_complete(self, prompt: str, formatted: bool = False,
                        **kwargs: Any) -> CompletionResponseGen:
        return self.llm.stream_complete(prompt, formatted=formatted, **kwargs)

    async def astream_complete(self, prompt: str, formatted: bool = False,
                               **kwargs: Any) -> CompletionResponseAsyncGen:
        return await self.llm.astream_complete(prompt, formatted=formatted, **kwargs)


def agent_llm(llm: LLM, *, config: ConfigArg | None,
              on_turn: Callable[[Turn], None] | None,
              on_event: Callable[[AssemblerEvent], None] | None,
              history: HistoryPolicy | None,
              on_stream_error: OnStreamError | None) -> ToolstreamLLM:
    """The gated LLM of an agent (``ToolstreamFunctionAgent``, ``ToolstreamReActAgent``): an
    LLM already gated keeps its own gate (any gate option given to the agent as well is a
    ``ValueError``); another is wrapped, with the agents' bounded structured-output retries."""
    if isinstance(llm, ToolstreamLLM):
        GateSession.refuse_options("ToolstreamLLM", config=config, on_turn=on_turn, on_event=on_event,
                                   history=history, on_stream_error=on_stream_error)
        return llm
    return ToolstreamLLM(llm, config=config, on_turn=on_turn, on_event=on_event,
                         history=history or DEFAULT_HISTORY,
                         on_stream_error=on_stream_error or GateSession.DEFAULT_ON_STREAM_ERROR,
                         structured_retries=structured.STRUCTURED_RETRIES)


#: Why a stream's open calls were cancelled: the consumer closed it or cancelled the task.
_CANCELLED = "the consumer closed the stream before the response ended"


def _failed(session: ResponseStream, exc: Exception) -> bool:
    """The stream raised: decide the turn on a broken transport; whether to re-raise."""
    session.finish(transport_complete=False, error=exc)
    return session.should_raise(exc)
