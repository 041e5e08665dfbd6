"""``with_toolstream(model)``: a chat model whose tool calls are only the ones proven complete.

It is a real ``BaseChatModel``, so it goes wherever the wrapped model went (LCEL, LangGraph
``ToolNode`` graphs, ``create_agent``) and keeps every streaming behaviour: text streams chunk by
chunk; only the tool-call parts wait for the vendor's completion signal. See ``_gate`` for what
happens to each chunk and ``_tap`` for how the vendor's own events are reached.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, overload

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.language_models.chat_models import (
    agenerate_from_stream,
    generate_from_stream,
)
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableBinding
from pydantic import ConfigDict, Field
from toolstream_core import AssembleConfig, AssemblerEvent, ToolCall, ToolSpec, Turn
from toolstream_core.integration import DEFAULT_HISTORY, GateSession, HistoryPolicy

from ._convert import is_test_double
from ._gate import ChunkStream, OnStreamError
from ._limits import chat_model_output_limit
from ._link import model_run
from ._messages import message_with_rejected_calls
from ._rebind import rebind
from ._structured import structured_output
from ._tools import (
    ConfigArg,
    Registry,
    ToolsArg,
    merge_registries,
    registry_from_bound_tools,
    registry_from_tools,
)

if TYPE_CHECKING:  # annotations only: typing.Unpack is Python 3.11+
    from typing_extensions import Unpack

__all__ = ["ToolstreamChatModel", "with_toolstream"]

_log = logging.getLogger(__name__)


class ToolstreamChatModel(BaseChatModel):
    """A chat model wrapper that gates streamed tool calls through ``toolstream_core``.

    The final ``AIMessage.tool_calls`` holds only committed calls, with arguments from one
    strict parse; every other call is in ``invalid_tool_calls`` with ``error`` set to the
    reason, and ``response_metadata["toolstream"]`` records the decision (see
    ``error_tool_messages`` to pair the rejected ids).
    """

    chat_model: BaseChatModel
    """The model being gated (``ChatOpenAI``, ``ChatAnthropic``, ``ChatGoogleGenerativeAI``...)."""

    tool_registry: Registry | None = None
    """``name -> JSON Schema | ToolSpec`` the gate validates against. ``None``: the tools bound
    with ``bind_tools`` (if any) are the registry."""

    toolstream_config: AssembleConfig = Field(default_factory=AssembleConfig)
    """The ``AssembleConfig`` policy (``agent_stream_assemble:``)."""

    on_stream_error: OnStreamError = GateSession.DEFAULT_ON_STREAM_ERROR
    """When the stream fails (a dropped connection, a vendor error, an idle timeout) after a
    tool call started: ``"pair"`` (default) returns the partial message with every call
    rejected, so an agent answers each id and the model can retry; ``"raise"`` propagates the
    error. A failure before any tool call always propagates (DESIGN 6)."""

    on_turn: Callable[[Turn], None] | None = Field(default=None, exclude=True)
    """Called with the core's ``Turn`` after every model call, cancelled ones included."""

    on_event: Callable[[AssemblerEvent], None] | None = Field(default=None, exclude=True)
    """Called with each UI progress event (opened, argument bytes, committed, rejected) as the
    core emits it; never a reason to run anything."""

    history: HistoryPolicy = DEFAULT_HISTORY
    """Before each request: ``"repair"`` answers every tool-call id of the outgoing history
    that has no result with one error result, in the calls' order; ``"check"`` (default) also
    raises ``HistoryError`` for what the vendor would reject and only the model could fix
    (lost thinking, reasoning or signatures, see ``check_history``); ``"off"`` sends the
    history as given, answering only the calls this gate rejected."""

    run_budget: int | None = Field(default=None, exclude=True)
    """How many more calls this model call may commit, set by ``ToolstreamMiddleware`` from the
    count of calls its agent run committed (the agent state); ``None``: the config's
    ``max_tool_calls_per_run`` for the one call alone."""

    on_early_commit: Callable[[ToolCall], None] | None = Field(default=None, exclude=True)
    """Set by ``ToolstreamMiddleware``: starts a pipelined tool when its call commits, before
    the stream ends (DESIGN 4.10)."""

    bound_registry: Registry | None = Field(default=None, exclude=True)
    """Set by ``bind_tools``: the registry derived from the bound tools."""

    output_tools: frozenset[str] = Field(default=frozenset(), exclude=True)
    """Set by ``ToolstreamMiddleware``: the tools of the agent's ``ToolStrategy``. Their calls
    carry the structured response, which the strategy parses and validates itself (its own
    errors and ``handle_errors`` retries), so the gate checks them up to the strict parse and
    not against their schema (DESIGN §6, structured output)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    # -- identity: the wrapper reports the wrapped model ---------------------------------------

    @property
    def _llm_type(self) -> str:
        return f"toolstream-{self.chat_model._llm_type}"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"chat_model": self.chat_model._identifying_params, "gate": "toolstream"}

    @property
    def model_name(self) -> str | None:
        """The wrapped model's name, for code that inspects ``model_name`` / ``model``."""
        name = getattr(self.chat_model, "model_name", None) or getattr(self.chat_model, "model", None)
        return name if isinstance(name, str) else None

    def _resolve_model_profile(self) -> Any:
        return self.chat_model.profile

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> Any:
        return self.chat_model._get_ls_params(stop=stop, **kwargs)

    def get_num_tokens_from_messages(self, messages: list[BaseMessage], tools: Any = None) -> int:
        return self.chat_model.get_num_tokens_from_messages(messages, tools=tools)

    def get_token_ids(self, text: str) -> list[int]:
        return self.chat_model.get_token_ids(text)

    # -- binding -------------------------------------------------------------------------------

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | Any],
        *,
        tool_choice: Any = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind through the wrapped model's own ``bind_tools``; the result stays gated."""
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        bound = self.chat_model.bind_tools(tools, **kwargs)
        gated = self.model_copy(update={"bound_registry": registry_from_tools(list(tools))})
        result: Runnable[LanguageModelInput, AIMessage] = rebind(bound, self.chat_model, gated)
        return result

    def with_structured_output(self, schema: Any = None, *, include_raw: bool = False,
                               **kwargs: Any) -> Any:
        """The wrapped model's own structured-output request (its method: ``function_calling``,
        ``json_schema``, ``json_mode``), gated, with the core's rule instead of its parser:
        the schema's object only from an output the vendor provably finished, else
        ``StructuredOutputError`` (with ``include_raw``, the ``parsing_error``)."""
        return structured_output(self, schema, include_raw=include_raw, **kwargs)

    # -- the gate ------------------------------------------------------------------------------

    def _registry(self, kwargs: Mapping[str, Any]) -> Registry | None:
        bound = self.bound_registry
        if bound is None and kwargs.get("tools"):
            bound = registry_from_bound_tools(kwargs["tools"])
        registry = merge_registries(self.tool_registry, bound)
        if registry is None or not self.output_tools:
            return registry
        return {**registry, **{name: _unchecked(registry[name]) for name in self.output_tools
                               if name in registry}}

    def _gate(self, messages: list[BaseMessage], kwargs: Mapping[str, Any],
              run_manager: Any) -> ChunkStream:
        """This call through the gate, its request prepared (``ChunkStream.messages``)."""
        return ChunkStream(self.chat_model, messages, tools=self._registry(kwargs),
                           config=self.toolstream_config, history=self.history,
                           run_manager=run_manager,
                           output_limit=chat_model_output_limit(self.chat_model, kwargs),
                           on_event=self.on_event, on_turn=self.on_turn,
                           on_stream_error=self.on_stream_error, run_budget=self.run_budget,
                           on_early_commit=self.on_early_commit,
                           unstreamed=streaming_off(self.chat_model, kwargs))

    # Whether LangChain streams a call (callbacks, ``astream_events``, ``stream``) is asked of
    # the wrapper, which always implements ``_stream``: a wrapped class that implements none
    # is answered whole by LangChain, and so it is through the gate (the same one message in
    # the event log and the callbacks; the gate reads its whole answer either way).

    def _should_stream(self, *, async_api: bool, run_manager: Any = None, **kwargs: Any) -> bool:
        if not can_stream(self.chat_model, async_api=async_api):
            return False
        return super()._should_stream(async_api=async_api, run_manager=run_manager, **kwargs)

    def _should_use_protocol_streaming(self, *, async_api: bool, run_manager: Any = None,
                                       **kwargs: Any) -> bool:
        if not can_stream(self.chat_model, async_api=async_api):
            return False
        return super()._should_use_protocol_streaming(async_api=async_api,
                                                      run_manager=run_manager, **kwargs)

    # The sync and async twins below only call the wrapped model: what its answer becomes is
    # ``ChunkStream``'s (one loop: read, observe, sanitise, emit; ``stream`` / ``astream``).

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                run_manager: CallbackManagerForLLMRun | None = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        gate = self._gate(messages, kwargs, run_manager)
        answer = gate.model._generate if gate.unstreamed else gate.model._stream
        yield from gate.stream(answer(gate.messages, stop=stop, **kwargs))

    async def _astream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                       run_manager: AsyncCallbackManagerForLLMRun | None = None,
                       **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        gate = self._gate(messages, kwargs, run_manager)
        answer = gate.model._agenerate if gate.unstreamed else gate.model._astream
        async for chunk in gate.astream(answer(gate.messages, stop=stop, **kwargs)):
            yield chunk

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        if not self._whole_answer(kwargs):
            return generate_from_stream(self._stream(messages, stop, run_manager, **kwargs))
        gate = self._gate(messages, kwargs, run_manager)
        return gate.whole(gate.model._generate(gate.messages, stop=stop, **kwargs))

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: AsyncCallbackManagerForLLMRun | None = None,
                         **kwargs: Any) -> ChatResult:
        if not self._whole_answer(kwargs):
            return await agenerate_from_stream(self._astream(messages, stop, run_manager, **kwargs))
        gate = self._gate(messages, kwargs, run_manager)
        return gate.whole(await gate.model._agenerate(gate.messages, stop=stop, **kwargs))

    def _whole_answer(self, kwargs: Mapping[str, Any]) -> bool:
        """Whether ``invoke`` gates the wrapped model's whole answer instead of its stream.

        For a test double (decision 0095), where LangChain chose not to stream and the double
        would not stream on its own: a fake's stream need not carry its whole answer
        (``GenericFakeChatModel`` streams no ``tool_calls``), so the gate reads what the stock
        agent reads. A real model's ``invoke`` streams (decision 0096).
        """
        model = self.chat_model
        if not is_test_double(type(model)) or kwargs.get("stream"):
            return False
        return not ("streaming" in model.model_fields_set and getattr(model, "streaming", None) is True)

    # A wrapped model with a ``batch`` of its own (``FakeListChatModel`` answers in input order,
    # one at a time) keeps it: the gated inputs run one by one, in order. Any other model gets
    # LangChain's concurrent ``batch``.
    def _own_batch(self) -> bool:
        return type(self.chat_model).batch is not BaseChatModel.batch

    def batch(self, inputs: list[Any], config: Any = None, *, return_exceptions: bool = False,
              **kwargs: Any) -> list[Any]:
        if not self._own_batch() or len(inputs) < 2:
            return super().batch(inputs, config, return_exceptions=return_exceptions, **kwargs)
        configs = config if isinstance(config, list) else [config] * len(inputs)
        return [super(ToolstreamChatModel, self).batch([item], one, return_exceptions=return_exceptions,
                                                       **kwargs)[0]
                for item, one in zip(inputs, configs, strict=False)]

    async def abatch(self, inputs: list[Any], config: Any = None, *, return_exceptions: bool = False,
                     **kwargs: Any) -> list[Any]:
        if type(self.chat_model).abatch is BaseChatModel.abatch or len(inputs) < 2:
            return await super().abatch(inputs, config, return_exceptions=return_exceptions, **kwargs)
        configs = config if isinstance(config, list) else [config] * len(inputs)
        return [(await super(ToolstreamChatModel, self).abatch(
                    [item], one, return_exceptions=return_exceptions, **kwargs))[0]
                for item, one in zip(inputs, configs, strict=False)]

    # Every invoke path (plain, v1 streaming callbacks, v2 protocol events) ends here; the
    # rejected calls go into ``invalid_tool_calls`` now, where aggregation cannot undo it.
    # The run manager is kept for the gate's trace: LangChain's streaming path calls ``_stream``
    # without it.
    def _generate_with_cache(self, *args: Any, **kwargs: Any) -> ChatResult:
        with model_run(kwargs.get("run_manager")):
            return _finalize(super()._generate_with_cache(*args, **kwargs))

    async def _agenerate_with_cache(self, *args: Any, **kwargs: Any) -> ChatResult:
        with model_run(kwargs.get("run_manager")):
            return _finalize(await super()._agenerate_with_cache(*args, **kwargs))


def can_stream(model: BaseChatModel, *, async_api: bool) -> bool:
    """Whether ``model``'s class implements a stream LangChain would read (the async path
    falls back to the sync one), as ``BaseChatModel`` itself decides it."""
    cls = type(model)
    if cls._stream is not BaseChatModel._stream:
        return True
    return async_api and cls._astream is not BaseChatModel._astream


def streaming_off(model: BaseChatModel, kwargs: Mapping[str, Any]) -> bool:
    """Whether LangChain would answer this call of ``model`` whole rather than stream it.

    Read from public settings, as ``BaseChatModel`` documents them: a class that implements no
    ``_stream`` (the extension point, listed among the private contact points),
    ``disable_streaming`` (``True``, or ``"tool_calling"`` with tools in the call), a
    ``stream=False`` keyword, and a ``streaming=False`` the user set on the model.
    """
    if type(model)._stream is BaseChatModel._stream:
        return True
    disabled = model.disable_streaming
    if disabled is True or (disabled == "tool_calling" and kwargs.get("tools")):
        return True
    if "stream" in kwargs and not kwargs["stream"]:
        return True
    return "streaming" in model.model_fields_set and getattr(model, "streaming", None) is False


def _unchecked(entry: Any) -> Any:
    """A registry entry without its schema (a ``ToolSpec`` keeps its other settings)."""
    return dataclasses.replace(entry, schema=None) if isinstance(entry, ToolSpec) else None


def _finalize(result: ChatResult) -> ChatResult:
    for generation in result.generations:
        generation.message = message_with_rejected_calls(generation.message)
    return result


#: What ``with_toolstream`` returns for a model bound with tools: the same binding, gated.
GatedBinding = RunnableBinding[LanguageModelInput, BaseMessage]

_ALREADY_GATED = (
    "{what} is already gated by toolstream; wrap the vendor model once and give tools=, "
    "config= and the callbacks to that one wrapper"
)


class _Options(TypedDict, total=False):
    """The keyword options of ``with_toolstream`` (its overloads differ only in the model)."""

    tools: ToolsArg | None
    config: ConfigArg | None
    on_stream_error: OnStreamError
    on_turn: Callable[[Turn], None] | None
    on_event: Callable[[AssemblerEvent], None] | None
    history: HistoryPolicy


@overload
def with_toolstream(model: BaseChatModel, **options: Unpack[_Options]) -> ToolstreamChatModel: ...


@overload
def with_toolstream(model: RunnableBinding[Any, Any], **options: Unpack[_Options]) -> GatedBinding: ...


def with_toolstream(
    model: BaseChatModel | RunnableBinding[Any, Any],
    *,
    tools: ToolsArg | None = None,
    config: ConfigArg | None = None,
    on_stream_error: OnStreamError = GateSession.DEFAULT_ON_STREAM_ERROR,
    on_turn: Callable[[Turn], None] | None = None,
    on_event: Callable[[AssemblerEvent], None] | None = None,
    history: HistoryPolicy = DEFAULT_HISTORY,
) -> ToolstreamChatModel | GatedBinding:
    """Gate ``model``'s streamed tool calls.

    ``tools``: the registry (``name -> JSON Schema | ToolSpec``) or the tools themselves
    (LangChain tools, pydantic classes, functions, tool dicts); by default the tools bound with
    ``bind_tools``. ``config``: an ``AssembleConfig``, its mapping, or a YAML path holding the
    ``agent_stream_assemble:`` section. A model already bound with tools
    (``ChatOpenAI(...).bind_tools(...)``) is accepted and stays bound. ``on_turn`` gets the
    core's ``Turn`` after each model call; ``on_event`` each UI progress event.
    ``on_stream_error``: ``"pair"`` (default) or ``"raise"`` a stream failure after a tool call
    started, see ``ToolstreamChatModel.on_stream_error``. ``history``: what happens to the
    outgoing history before each request (``"check"``, the default, answers every unanswered
    call id and raises ``HistoryError`` for what only the model could fix; ``"repair"`` only
    answers; ``"off"``), see ``ToolstreamChatModel.history``. The same options and defaults as
    ``ToolstreamLLM`` in the LlamaIndex shim.

    A model that is already gated raises ``TypeError`` (as ``ToolstreamLLM`` does in the
    LlamaIndex shim): a second gate would silently ignore the new options.
    """
    if isinstance(model, RunnableBinding) and isinstance(model.bound, BaseChatModel):
        if isinstance(model.bound, ToolstreamChatModel):
            raise TypeError(_ALREADY_GATED.format(what="the bound model"))
        inner = with_toolstream(model.bound, tools=tools, config=config,
                                on_stream_error=on_stream_error, on_turn=on_turn,
                                on_event=on_event, history=history)
        if tools is None and model.kwargs.get("tools"):
            inner = inner.model_copy(
                update={"bound_registry": registry_from_bound_tools(model.kwargs["tools"])}
            )
        gated: GatedBinding = model.model_copy(update={"bound": inner})
        return gated
    if isinstance(model, ToolstreamChatModel):
        raise TypeError(_ALREADY_GATED.format(what="the model"))
    if not isinstance(model, BaseChatModel):
        raise TypeError(f"with_toolstream: expected a chat model, got {type(model).__name__}")
    return ToolstreamChatModel(
        chat_model=model,
        tool_registry=registry_from_tools(tools),
        toolstream_config=AssembleConfig.coerce(config),
        on_stream_error=on_stream_error,
        on_turn=on_turn,
        on_event=on_event,
        history=history,
    )
