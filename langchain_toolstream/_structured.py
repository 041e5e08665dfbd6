"""Structured output through the gate: an object only from an output proven finished.

``with_structured_output`` on a gated model keeps the integration's own request (its tool
binding or its ``response_format`` / JSON-schema setting: ``function_calling``,
``json_schema``, ``json_mode``), because the wrapped model builds the runnable and only its
model step is taken, pointed at the gated model. What changes is the parser: LangChain's
parsers return ``None`` when no call came (a cut call), repair cut JSON text
(``parse_partial_json``), or raise the SDK's own error; here the core's one rule judges the
output (``toolstream_core.integration.StructuredOutput.judge_call`` / ``judge_text``: the turn proven finished,
one strict parse, the schema) and a failure is ``StructuredOutputError``, with
``include_raw=True`` its ``parsing_error``.

The agents' side (``create_agent`` with ``ToolStrategy`` / ``ProviderStrategy``) is
`agent_outcome`: the verdict on one model turn of an agent that asks for a structured
response, which ``ToolstreamMiddleware`` answers and retries like a rejected call.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, NamedTuple

from langchain_core.callbacks import AsyncCallbackManagerForChainRun, CallbackManagerForChainRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, message_chunk_to_message
from langchain_core.runnables import Runnable, RunnableConfig, RunnableSequence, RunnableSerializable
from langchain_core.runnables.config import patch_config
from langchain_core.utils.function_calling import convert_to_json_schema
from pydantic import BaseModel, ConfigDict
from toolstream_core import Reason, Turn
from toolstream_core.integration import (
    RECORD_KEY,
    DecisionRecord,
    RecordView,
    StructuredOutput,
    StructuredOutputError,
    turn_record,
)

from ._messages import MESSAGES, message_with_rejected_calls, read_record
from ._rebind import rebind
from ._tools import registry_from_bound_tools

__all__ = ["AgentVerdict", "GatedStructuredOutput", "StructuredOutputError", "acall_structured",
           "agent_verdict", "call_structured", "output_tool_names", "structured_output"]

_log = logging.getLogger(__name__)

Validate = Callable[[Any], Any]


def _validator(schema: Any) -> Validate | None:
    """How LangChain turns the parsed value into the schema's object: a pydantic class
    validates (v2 ``model_validate``, v1 ``parse_obj``); a dict / TypedDict schema keeps
    the value (checked against its JSON Schema instead)."""
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_validate
    parse_obj = getattr(schema, "parse_obj", None) if isinstance(schema, type) else None
    return parse_obj if callable(parse_obj) else None


def _json_schema(schema: Any) -> dict[str, Any] | None:
    """The JSON Schema a JSON-text output must satisfy (``None``: json_mode without one, or a
    pydantic class, whose own validation is stricter)."""
    if schema is None or _validator(schema) is not None:
        return None
    try:
        return convert_to_json_schema(schema)
    except Exception:  # a schema LangChain itself cannot convert: its own parse decides
        _log.debug("toolstream: no JSON Schema for %r", schema, exc_info=True)
        return None


def _model_step(built: Any) -> Runnable[Any, Any]:
    """The model step of what an integration's ``with_structured_output`` built: every
    integration the gate reads returns ``model | parser`` (a ``RunnableSequence``)."""
    if isinstance(built, RunnableSequence):
        return built.first
    raise TypeError(
        f"toolstream: cannot gate the structured output of a {type(built).__name__}; "
        "expected the integration's `model | parser` sequence")


def _tool_of(step: Any) -> str | None:
    """The schema's tool when the step binds exactly one (a call method), else ``None`` (a
    JSON-text method: ``response_format``, JSON mode, a response schema)."""
    tools = getattr(step, "kwargs", {}).get("tools")
    registry = registry_from_bound_tools(tools) if tools else None
    if registry and len(registry) == 1:
        return next(iter(registry))
    return None


class _Collected(NamedTuple):
    message: AIMessage | None
    error: Exception | None


class GatedStructuredOutput(RunnableSerializable[LanguageModelInput, Any]):
    """``model | judge``: the integration's model step, gated, and the core's one rule.

    Built by ``ToolstreamChatModel.with_structured_output``. ``invoke`` / ``stream`` return
    the schema's object (a ``dict`` for dict schemas), or raise `StructuredOutputError`;
    with ``include_raw`` they return ``{"raw", "parsed", "parsing_error"}`` as LangChain
    does. Streaming yields the final object once: a value built from part of an output is a
    value from a cut output (progress is in the gate's UI events and the model's tokens).
    """

    step: Any
    """The integration's model step (its tool or JSON-schema binding) around ``inner``."""
    inner: Any
    """The wrapped (vendor) chat model inside ``step``."""
    gated: Any
    """The ``ToolstreamChatModel`` that gates ``inner``."""
    tool: str | None = None
    """The schema's tool (a call method); ``None``: the output is a JSON text."""
    json_schema: dict[str, Any] | None = None
    validate_value: Any = None
    include_raw: bool = False

    model_config = ConfigDict(arbitrary_types_allowed=True)

    def _gated_step(self, turns: list[Turn]) -> Runnable[Any, Any]:
        """The model step for one call, its gate reporting the decided turn to ``turns``."""
        user = self.gated.on_turn

        def observe(turn: Turn) -> None:
            turns.append(turn)
            if user is not None:
                user(turn)

        gated = self.gated.model_copy(update={"on_turn": observe})
        step: Runnable[Any, Any] = rebind(self.step, self.inner, gated, registry_from_bound_tools)
        return step

    # -- the verdict -----------------------------------------------------------------------

    def _judge(self, collected: _Collected, turns: list[Turn]) -> Any:
        turn = turns[-1] if turns else None
        message, error = collected
        if error is not None and (turn is None or turn.complete or message is None):
            raise error  # the request failed before any output: the SDK's own error
        record: DecisionRecord | None = read_record(message) if message is not None else None
        if record is None and turn is not None:  # the stream raised before its last chunk
            record = turn_record(turn, mode="tap", error=error)
            message = _with_record(message, record)
        raw = StructuredOutput.rejected_arguments(turn)
        try:
            if self.tool is not None:
                calls = [(c.get("id"), c.get("name"), c.get("args"))
                         for c in (message.tool_calls if message is not None else [])]
                value = StructuredOutput.judge_call(record, calls, name=self.tool, raw=raw,
                                                    validate=self.validate_value)
            else:
                value = StructuredOutput.judge_text(record, message.text if message is not None else None,
                                                    schema=self.json_schema, validate=self.validate_value)
        except StructuredOutputError as failure:
            if error is not None:
                failure.__cause__ = error
            if not self.include_raw:
                raise failure from error
            return {"raw": message, "parsed": None, "parsing_error": failure}
        if self.include_raw:
            return {"raw": message, "parsed": value, "parsing_error": None}
        return value

    # -- sync ------------------------------------------------------------------------------

    def invoke(self, input: LanguageModelInput, config: RunnableConfig | None = None,
               **kwargs: Any) -> Any:
        return self._call_with_config(self._run, input, config, **kwargs)

    def _run(self, input: LanguageModelInput, run_manager: CallbackManagerForChainRun,
             config: RunnableConfig) -> Any:
        turns: list[Turn] = []
        child = patch_config(config, callbacks=run_manager.get_child())
        collected = _collect(self._gated_step(turns).stream(input, child))
        return self._judge(collected, turns)

    def stream(self, input: LanguageModelInput, config: RunnableConfig | None = None,
               **kwargs: Any) -> Iterator[Any]:
        yield self.invoke(input, config, **kwargs)

    # -- async -----------------------------------------------------------------------------

    async def ainvoke(self, input: LanguageModelInput, config: RunnableConfig | None = None,
                      **kwargs: Any) -> Any:
        return await self._acall_with_config(self._arun, input, config, **kwargs)

    async def _arun(self, input: LanguageModelInput,
                    run_manager: AsyncCallbackManagerForChainRun,
                    config: RunnableConfig) -> Any:
        turns: list[Turn] = []
        child = patch_config(config, callbacks=run_manager.get_child())
        collected = await _acollect(self._gated_step(turns).astream(input, child))
        return self._judge(collected, turns)

    async def astream(self, input: LanguageModelInput, config: RunnableConfig | None = None,
                      **kwargs: Any) -> AsyncIterator[Any]:
        yield await self.ainvoke(input, config, **kwargs)


def _finished(total: Any) -> AIMessage | None:
    """The aggregated chunks as the message the gated model's ``invoke`` returns."""
    if total is None:
        return None
    message = message_chunk_to_message(total)
    if not isinstance(message, AIMessage):
        return None
    finished = message_with_rejected_calls(message)
    return finished if isinstance(finished, AIMessage) else None


def _with_record(message: AIMessage | None, record: DecisionRecord) -> AIMessage:
    """``message`` (what streamed before the error; empty if nothing did) with the record."""
    base = message if message is not None else AIMessage(content="")
    metadata = {**base.response_metadata, RECORD_KEY: record}
    return base.model_copy(update={"response_metadata": metadata})


def _collect(chunks: Iterator[Any]) -> _Collected:
    total: Any = None
    try:
        for chunk in chunks:
            total = chunk if total is None else total + chunk
    except Exception as exc:  # judged with what arrived, on the decided turn
        return _Collected(_finished(total), exc)
    return _Collected(_finished(total), None)


async def _acollect(chunks: AsyncIterator[Any]) -> _Collected:
    total: Any = None
    try:
        async for chunk in chunks:
            total = chunk if total is None else total + chunk
    except Exception as exc:
        return _Collected(_finished(total), exc)
    return _Collected(_finished(total), None)


def structured_output(gated: Any, schema: Any, *, include_raw: bool,
                      **kwargs: Any) -> GatedStructuredOutput:
    """``gated.with_structured_output(schema, ...)``: the wrapped model's own request, judged
    by the core (see the module doc)."""
    inner: BaseChatModel = gated.chat_model
    built = inner.with_structured_output(schema, include_raw=False, **kwargs)
    step = _model_step(built)
    tool = _tool_of(step)
    return GatedStructuredOutput(
        step=step, inner=inner, gated=gated, tool=tool,
        json_schema=None if tool is not None else _json_schema(schema),
        validate_value=_validator(schema), include_raw=include_raw)


# -- agents ------------------------------------------------------------------------------------

#: The words that answer a JSON-text structured response the core did not accept (a call is
#: answered by the gate's own error result instead).
_ANSWER = ("Your last answer was not used as the structured response: {detail} [{reason}]. "
           "Answer again with the complete structured response.")


class AgentVerdict(NamedTuple):
    """One model turn of an agent that asks for a structured response, judged.

    ``failure``: why the turn gave no structured response (``None``: it gave one, or it
    asked for ordinary tools first). ``messages``: what replaces the turn's messages in the
    state when the failed output was a JSON text (the cut answer, if it said anything, then
    a user message naming the reason); ``None`` when the gate's error results answer it.
    """

    failure: StructuredOutputError | None
    messages: list[BaseMessage] | None


_NO_VERDICT = AgentVerdict(None, None)


def agent_verdict(response_format: Any, messages: list[BaseMessage],
                  structured: Any) -> AgentVerdict:
    """Judge the last gated AIMessage of an agent's model turn by the core's rule.

    ``structured`` is the ``structured_response`` LangChain parsed from it. The gate judges
    only what the vendor did not finish: an output from a turn the vendor ended itself
    (normally, or with a refusal) is the strategy's, with its own parse, errors and
    ``handle_errors`` retries, exactly as without the gate. From a turn cut short, an object
    LangChain parsed never stands, and a cut output is answered and asked again; a turn that
    committed ordinary tool calls has no structured response yet.
    """
    message = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    view = MESSAGES.view(message) if message is not None else None
    if response_format is None or message is None or view is None:
        return _NO_VERDICT
    record = view.record
    if record.get("complete") or (structured is None and not view.cut_short):
        return _NO_VERDICT
    if structured is None and message.tool_calls:
        return _NO_VERDICT
    try:
        if record.get("rejected") or _asks_for_a_call(response_format):
            StructuredOutput.judge_call(record, [], name=None)
        StructuredOutput.judge_text(record, message.text)
        failure = StructuredOutputError(
            Reason.no_output, "the model answered with text, not the structured response")
    except StructuredOutputError as error:
        failure = error
    if failure.call_id is not None:
        return AgentVerdict(failure, None)
    answer = HumanMessage(content=_ANSWER.format(detail=failure.detail, reason=failure.reason))
    kept = [m for m in messages if m is not message or message.content]
    return AgentVerdict(failure, [*kept, answer])


def output_tool_names(response_format: Any) -> frozenset[str]:
    """The tools whose call carries the structured response: a ``ToolStrategy``'s schemas,
    or an ``AutoStrategy``'s (a raw schema is one), which LangChain asks for as a call when
    the model cannot give it as a JSON text. A ``ProviderStrategy`` has none."""
    from langchain.agents.structured_output import AutoStrategy, ProviderStrategy, ToolStrategy

    if response_format is None or isinstance(response_format, ProviderStrategy):
        return frozenset()
    if not isinstance(response_format, ToolStrategy):
        schema = (response_format.schema if isinstance(response_format, AutoStrategy)
                  else response_format)
        response_format = ToolStrategy(schema)
    return frozenset(spec.name for spec in response_format.schema_specs)


def _asks_for_a_call(response_format: Any) -> bool:
    """A ``ToolStrategy``: the structured response is a call to one of its schemas' tools."""
    from langchain.agents.structured_output import ToolStrategy

    return isinstance(response_format, ToolStrategy)


def _observed(request: Any, turns: list[Turn]) -> Any:
    """``request`` whose gated model also reports its decided turn to ``turns``."""
    model = request.model
    user = getattr(model, "on_turn", None)

    def observe(turn: Turn) -> None:
        turns.append(turn)
        if user is not None:
            user(turn)

    return request.override(model=model.model_copy(update={"on_turn": observe}))


def _failed_turn(exc: Exception, turns: list[Turn]) -> AIMessage | None:
    """The AIMessage of a model step that raised on a structured output: the one LangChain
    could not parse, or (the SDK raised at the cut, e.g. OpenAI's ``LengthFinishReasonError``)
    an empty one carrying the decided turn's record. ``None``: nothing was decided, or the
    turn is not one the gate judges (finished, or ended by the vendor itself)."""
    message = getattr(exc, "ai_message", None)
    if isinstance(message, AIMessage) and read_record(message) is not None:
        return message
    turn = turns[-1] if turns else None
    if turn is None or turn.complete:
        return None
    view = RecordView.read(turn_record(turn, mode="tap"))
    if view is None or not view.cut_short:
        return None  # the vendor ended the turn itself (a refusal): the error is the strategy's
    return AIMessage(content="", response_metadata={
        RECORD_KEY: turn_record(turn, mode="tap", error=exc)})


def _structured_response(request: Any, message: AIMessage, exc: Exception) -> Any:
    """The failed turn as a model response, when the core's rule has a verdict on it."""
    from langchain.agents.middleware.types import ModelResponse

    verdict = agent_verdict(request.response_format, [message], None)
    if verdict.failure is None:
        raise exc  # a finished output LangChain could not parse: its own error stands
    return ModelResponse(result=[message], structured_response=None)


def call_structured(request: Any, handler: Callable[[Any], Any]) -> Any:
    """The agent's model step for a request that asks for a structured response: an error the
    step raised on a cut output becomes that turn's (failed) response, judged like the rest
    by `agent_verdict`. Any other error, and every request without a response format, is
    the handler's own."""
    if request.response_format is None:
        return handler(request)
    turns: list[Turn] = []
    try:
        return handler(_observed(request, turns))
    except Exception as exc:
        message = _failed_turn(exc, turns)
        if message is None:
            raise
        return _structured_response(request, message, exc)


async def acall_structured(request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
    """`call_structured` for ``awrap_model_call``."""
    if request.response_format is None:
        return await handler(request)
    turns: list[Turn] = []
    try:
        return await handler(_observed(request, turns))
    except Exception as exc:
        message = _failed_turn(exc, turns)
        if message is None:
            raise
        return _structured_response(request, message, exc)
