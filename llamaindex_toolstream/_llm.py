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
from ._providers import TEST_DOUBLES, resolve_provider
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

    # -- one call: the request prepared once, then the twins' loops -------------------------
    # What a call means is ``ResponseStream``'s (the non-I/O base: ``absorb``, ``absorb_whole``,
    # ``ending``); each sync/async twin below only sends the request and loops over the answer.

    def _request(self, tools: Sequence[BaseTool] | None, kwargs: Mapping[str, Any],
                 messages: Sequence[ChatMessage] | None, user_msg: str | ChatMessage | None = None,
                 *, streamed: bool) -> tuple[ResponseStream, Any, list[ChatMessage]]:
        """One call, prepared once: its ``ResponseStream``; the LLM object that sends it; the
        outgoing history (``messages`` prepared by the history policy, then as the class's
        converter serialises it). ``kwargs`` are the call's own (they may set the limit).

        The sender of a streamed call is a private copy whose SDK client feeds the stream
        (``_tap.py``), or the wrapped LLM itself, read from ``ChatResponse.raw``. A whole
        (non-streamed) call goes through the tapped copy only where the tap changes what the
        request says (Anthropic's ``is_error`` on the gate's error results, for which the
        class has no field); its answer is read from ``ChatResponse.raw`` either way."""
        stream = self._response_stream(tools, kwargs)
        sender: Any = self.llm
        if streamed or GateSession.rewrites_requests(self.provider):
            tapped = tap_llm(self.llm, self.provider, stream.gate)
            if tapped is not None:
                sender = tapped
                if streamed:
                    stream.read_from_tap()
        history = MESSAGES.prepare(messages or [], self.provider, self.history, self.llm, sent_after(user_msg))
        return stream, sender, for_llm_converter(self.llm, history)

    def _response_stream(self, tools: Sequence[BaseTool] | None,
                kwargs: Mapping[str, Any] | None = None) -> ResponseStream:
        registry = self._registry if self._registry is not None else registry_from_llama_tools(tools)
        return ResponseStream(
            self.llm,
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

    # The UI events of a response are reported once the consumer has taken it (after the
    # ``yield``), so an agent that writes its own event for the response writes it first.

    @staticmethod
    def _relay(gen: ChatResponseGen, stream: ResponseStream) -> ChatResponseGen:
        error: BaseException | None = None
        try:
            # the idle timeout, where no tap has it (``GateSession.guarded``)
            with stream.gate.guarded(gen, asynchronous=False) as responses:
                for response in responses:
                    handed = stream.absorb(response)
                    if handed is not None:
                        yield handed
                    stream.report()
        except BaseException as exc:  # the consumer stopped (``GeneratorExit``), or the stream broke
            error = exc
        yield from stream.ending(error)

    @staticmethod
    async def _arelay(gen: ChatResponseAsyncGen, stream: ResponseStream) -> ChatResponseAsyncGen:
        error: BaseException | None = None
        try:
            async with stream.gate.guarded(gen, asynchronous=True) as responses:
                async for response in responses:
                    handed = stream.absorb(response)
                    if handed is not None:
                        yield handed
                    stream.report()
        except BaseException as exc:  # ``GeneratorExit``, ``CancelledError`` or a broken stream
            error = exc
        for closing in stream.ending(error):
            yield closing

    # -- chat --------------------------------------------------------------------------------

    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        stream, sender, history = self._request(None, kwargs, messages, streamed=False)
        return stream.absorb_whole(sender.chat(history, **kwargs))

    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        stream, sender, history = self._request(None, kwargs, messages, streamed=False)
        return stream.absorb_whole(await sender.achat(history, **kwargs))

    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponseGen:
        stream, sender, history = self._request(None, kwargs, messages, streamed=True)
        return self._relay(sender.stream_chat(history, **kwargs), stream)

    async def astream_chat(
        self, messages: Sequence[ChatMessage], **kwargs: Any
    ) -> ChatResponseAsyncGen:
        stream, sender, history = self._request(None, kwargs, messages, streamed=True)
        return self._arelay(await sender.astream_chat(history, **kwargs), stream)

    # -- chat with tools ---------------------------------------------------------------------
    # LlamaIndex's signatures, each over the same three lines: prepare (``_request``), send
    # (the class's own method, given the prepared history), read (``ResponseStream``).

    def chat_with_tools(self, tools: Sequence[BaseTool], user_msg: str | ChatMessage | None = None,
                        chat_history: list[ChatMessage] | None = None, verbose: bool = False,
                        allow_parallel_tool_calls: bool = False, tool_required: bool = False,
                        **kwargs: Any) -> ChatResponse:
        stream, sender, history = self._request(tools, kwargs, chat_history, user_msg, streamed=False)
        options = _options(user_msg, verbose, allow_parallel_tool_calls, tool_required, kwargs)
        return stream.absorb_whole(sender.chat_with_tools(tools, chat_history=history, **options))

    async def achat_with_tools(self, tools: Sequence[BaseTool],
                               user_msg: str | ChatMessage | None = None,
                               chat_history: list[ChatMessage] | None = None,
                               verbose: bool = False, allow_parallel_tool_calls: bool = False,
                               tool_required: bool = False, **kwargs: Any) -> ChatResponse:
        stream, sender, history = self._request(tools, kwargs, chat_history, user_msg, streamed=False)
        options = _options(user_msg, verbose, allow_parallel_tool_calls, tool_required, kwargs)
        response = await sender.achat_with_tools(tools, chat_history=history, **options)
        return stream.absorb_whole(response)

    def stream_chat_with_tools(self, tools: Sequence[BaseTool],
                               user_msg: str | ChatMessage | None = None,
                               chat_history: list[ChatMessage] | None = None,
                               verbose: bool = False, allow_parallel_tool_calls: bool = False,
                               tool_required: bool = False, **kwargs: Any) -> ChatResponseGen:
        stream, sender, history = self._request(tools, kwargs, chat_history, user_msg, streamed=True)
        options = _options(user_msg, verbose, allow_parallel_tool_calls, tool_required, kwargs)
        return self._relay(sender.stream_chat_with_tools(tools, chat_history=history, **options),
                           stream)

    async def astream_chat_with_tools(self, tools: Sequence[BaseTool],
                                      user_msg: str | ChatMessage | None = None,
                                      chat_history: list[ChatMessage] | None = None,
                                      verbose: bool = False,
                                      allow_parallel_tool_calls: bool = False,
                                      tool_required: bool = False,
                                      **kwargs: Any) -> ChatResponseAsyncGen:
        stream, sender, history = self._request(tools, kwargs, chat_history, user_msg, streamed=True)
        options = _options(user_msg, verbose, allow_parallel_tool_calls, tool_required, kwargs)
        gen = await sender.astream_chat_with_tools(tools, chat_history=history, **options)
        return self._arelay(gen, stream)

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
        """The stream behind ``response``; a foreign whole response gets one on demand."""
        stream = stream_of(response)
        if stream is not None:
            return stream
        if not self._reads_messages and (response.raw is None or GateSession.events_for_response(
                self.provider, response.raw) is None):
            return None  # nothing the gate can read
        stream = self._response_stream(None)
        stream.take_whole(response)
        return stream

    def turn_of(self, response: ChatResponse) -> Turn | None:
        """The core's decided ``Turn`` for ``response``; ``None`` while its stream is open."""
        stream = stream_of(response)
        return stream.gate.turn if stream is not None else None

    def get_tool_calls_from_response(
        self,
        response: ChatResponse,
        error_on_no_tool_call: bool = True,
        **kwargs: Any,
    ) -> list[ToolSelection]:
        """Committed calls only, with strictly parsed arguments; ``[]`` while streaming."""
        stream = self.stream_for(response)
        turn = stream.gate.turn if stream is not None else None
        selections: list[ToolSelection] = []
        if turn is not None:
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
        stream = stream_of(response)
        return stream.error_results() if stream is not None else []

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


def _options(user_msg: str | ChatMessage | None, verbose: bool, allow_parallel_tool_calls: bool,
             tool_required: bool, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """A ``*_chat_with_tools`` call's own arguments (all but the tools and the history), to
    hand on to the wrapped class's method of the same name."""
    return {"user_msg": user_msg, "verbose": verbose,
            "allow_parallel_tool_calls": allow_parallel_tool_calls,
            "tool_required": tool_required, **kwargs}
