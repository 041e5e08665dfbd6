"""Structured output through ``ToolstreamLLM``: the wrapped LLM's own method, judged by the core.

LlamaIndex's LLM classes each pick how to ask for a structured output: a JSON-schema text
(``OpenAI`` in program mode ``DEFAULT`` on a model that supports it, ``OpenAIResponses``,
``Anthropic`` on a model with structured outputs, ``GoogleGenAI`` and ``Ollama`` in
``DEFAULT``), a forced tool call (``FunctionCallingProgram``: mode ``FUNCTION``, or ``DEFAULT``
elsewhere), or a prompted text (mode ``LLM``: ``LLMTextCompletionProgram``). A gated LLM asks
the same way (`_JSON_REQUESTS` says, per class, which chat keywords make its own ``chat`` send
that JSON-schema request), through the gate, and hands the answer to the core's one rule
(``toolstream_core.integration.StructuredOutput.judge_call`` / ``judge_text``): the schema's object only from an
output the vendor provably finished, parsed once and strictly; else ``StructuredOutputError``.

Every structured request is streamed through the gate (the turn is judged on the vendor's
own events, as the LangChain gate does). ``stream_structured_predict`` yields the final object
once: a value built from part of an output is a value from a cut output
(progress is in the gate's events). ``structured_retries`` (``ToolstreamFunctionAgent`` sets
it) answers an output cut short (the gate's error result for a call, a user message naming the
reason for a text) and asks again, at most that many times; a finished output that fails is
not asked again (decision 0113).

Private names of other libraries touched here (``LLM._extend_messages``, OpenAI's
``_should_use_structure_outputs`` / ``_prepare_schema``, the SDK's
``type_to_text_format_param``) are rows of ``PRIVATE_CONTACTS``, with why.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Callable, Generator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole
from llama_index.core.output_parsers import PydanticOutputParser
from llama_index.core.output_parsers.utils import extract_json_str
from llama_index.core.program.function_program import get_function_tool
from llama_index.core.types import PydanticProgramMode
from toolstream_core.integration import DecisionRecord, RecordView, StructuredOutput, StructuredOutputError

from ._messages import error_tool_messages, message_with_rejected_calls, read_record
from ._session import stream_of

if TYPE_CHECKING:
    from llama_index.core.prompts import BasePromptTemplate

    from ._llm import ToolstreamLLM

__all__ = ["STRUCTURED_RETRIES", "StructuredOutputError", "apredict", "astream_predict", "no_committed_call",
           "predict", "stream_predict"]

Kind = Literal["json", "function", "text"]

#: How many times an agent's structured output is answered and asked again (the middleware's
#: ``max_retries`` default): ``ToolstreamFunctionAgent`` gives it to the LLM it wraps.
STRUCTURED_RETRIES = 2

_ANSWER = ("Your last answer was not used as the structured output: {detail} [{reason}]. "
           "Answer again with the complete structured output.")


# -- how each class asks for a JSON-schema text -------------------------------------------------

JSONRequest = Callable[[Any, type, list[ChatMessage], dict[str, Any]],
                       "tuple[list[ChatMessage], dict[str, Any]] | None"]


def _openai(llm: Any, output_cls: type, messages: list[ChatMessage],
            kwargs: dict[str, Any]) -> tuple[list[ChatMessage], dict[str, Any]] | None:
    if not llm._should_use_structure_outputs():
        return None
    return llm._extend_messages(messages), llm._prepare_schema(kwargs, output_cls)


def _responses(llm: Any, output_cls: type, messages: list[ChatMessage],
               kwargs: dict[str, Any]) -> tuple[list[ChatMessage], dict[str, Any]]:
    from openai.lib._parsing._responses import type_to_text_format_param

    return messages, {"text": {"format": type_to_text_format_param(output_cls)},
                      "tool_choice": "none", **kwargs}


def _anthropic(llm: Any, output_cls: type, messages: list[ChatMessage],
               kwargs: dict[str, Any]) -> tuple[list[ChatMessage], dict[str, Any]] | None:
    import anthropic
    from llama_index.llms.anthropic.utils import is_anthropic_structured_output_supported

    client = getattr(llm, "_client", None)
    if isinstance(client, (anthropic.AnthropicVertex, anthropic.AnthropicBedrock)) \
            or not is_anthropic_structured_output_supported(llm.model):
        return None
    schema = anthropic.transform_schema(output_cls)
    return messages, {"max_tokens": kwargs.pop("max_tokens", 8192), **kwargs,
                      "output_config": {"format": {"type": "json_schema", "schema": schema}}}


def _gemini(llm: Any, output_cls: type, messages: list[ChatMessage],
            kwargs: dict[str, Any]) -> tuple[list[ChatMessage], dict[str, Any]] | None:
    if llm.pydantic_program_mode != PydanticProgramMode.DEFAULT:
        return None
    config = {**kwargs.pop("generation_config", {}), "response_mime_type": "application/json",
              "response_schema": output_cls}
    return messages, {"generation_config": config}


def _ollama(llm: Any, output_cls: type, messages: list[ChatMessage],
            kwargs: dict[str, Any]) -> tuple[list[ChatMessage], dict[str, Any]] | None:
    if llm.pydantic_program_mode != PydanticProgramMode.DEFAULT:
        return None
    return messages, {**kwargs, "format": output_cls.model_json_schema()}  # type: ignore[attr-defined]


#: LlamaIndex class (module, name) -> how its own ``structured_predict`` asks for a JSON text,
#: as chat keywords; subclasses inherit their base's entry. A class not listed uses the
#: program of its mode (a forced call, or the prompted text of mode ``LLM``).
_JSON_REQUESTS: dict[tuple[str, str], JSONRequest] = {
    ("llama_index.llms.openai.base", "OpenAI"): _openai,
    ("llama_index.llms.openai.responses", "OpenAIResponses"): _responses,
    ("llama_index.llms.anthropic.base", "Anthropic"): _anthropic,
    ("llama_index.llms.google_genai.base", "GoogleGenAI"): _gemini,
    ("llama_index.llms.ollama.base", "Ollama"): _ollama,
}


def _json_request(llm: Any) -> JSONRequest | None:
    for cls in type(llm).__mro__:
        found = _JSON_REQUESTS.get((cls.__module__, cls.__name__))
        if found is not None:
            return found
    return None


# -- one structured request ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Plan:
    """What to send, and how to read the answer."""

    kind: Kind
    messages: list[ChatMessage]
    kwargs: dict[str, Any]
    output_cls: Any
    tool: Any = None  # the schema's FunctionTool (``function``)

    def answered(self, answer: _Answer, failure: StructuredOutputError) -> _Plan:
        """The plan of the next attempt: the failed answer in the history, then its answer."""
        response = answer.response
        if self.kind == "function":
            replies = [message_with_rejected_calls(response), *error_tool_messages(response)]
        else:
            said = [ChatMessage(role=MessageRole.ASSISTANT, content=answer.text)] \
                if answer.text else []
            replies = [*said, ChatMessage(role=MessageRole.USER, content=_ANSWER.format(
                detail=failure.detail, reason=failure.reason.value))]
        return replace(self, messages=[*self.messages, *replies])


class _Answer(NamedTuple):
    """One streamed answer: its last response (the gate's record is on it) and its text (the
    streamed deltas: ``OpenAIResponses`` keeps only the last delta in ``message.content``)."""

    response: ChatResponse
    text: str


def _plan(gated: ToolstreamLLM, output_cls: Any, prompt: BasePromptTemplate,
          llm_kwargs: Mapping[str, Any] | None, prompt_args: Mapping[str, Any]) -> _Plan:
    """How the wrapped LLM's own ``structured_predict`` would ask (see the module doc)."""
    llm = gated.llm
    kwargs = dict(llm_kwargs or {})
    mode = llm.pydantic_program_mode
    request = _json_request(llm)
    found = request(llm, output_cls, prompt.format_messages(**prompt_args), kwargs) \
        if request is not None else None
    if found is not None:
        return _Plan("json", found[0], found[1], output_cls)
    if mode == PydanticProgramMode.LLM:
        parser = PydanticOutputParser(output_cls=output_cls)
        shown = prompt.model_copy(update={"output_parser": parser})
        messages = llm._extend_messages(shown.format_messages(llm=llm, **prompt_args))
        return _Plan("text", messages, kwargs, output_cls)
    for key in ("tool_required", "tool_choice", "allow_parallel_tool_calls"):
        kwargs.pop(key, None)  # as FunctionCallingProgram does: the program decides them
    messages = llm._extend_messages(prompt.format_messages(llm=llm, **prompt_args))
    return _Plan("function", messages, kwargs, output_cls, tool=get_function_tool(output_cls))


def _judged(gated: ToolstreamLLM, plan: _Plan, answer: _Answer) -> Any:
    """The core's verdict on ``answer``: the schema's object, or `StructuredOutputError`."""
    response = answer.response
    record = read_record(response)
    validate = plan.output_cls.model_validate
    if plan.kind == "function":
        selections = gated.get_tool_calls_from_response(response, error_on_no_tool_call=False)
        committed = [(s.tool_id, s.tool_name, s.tool_kwargs) for s in selections]
        return StructuredOutput.judge_call(record, committed, name=plan.tool.metadata.name,
                                           raw=raw_arguments(response), validate=validate)
    text: str | None = answer.text
    if plan.kind == "text" and text:
        # the JSON in the prose, as the program's parser reads it; none: the strict parse says so
        with contextlib.suppress(ValueError):
            text = extract_json_str(text)
    return StructuredOutput.judge_text(record, text, validate=validate)


def raw_arguments(response: ChatResponse) -> dict[str, str]:
    """The argument text of each rejected call of ``response`` by its answer id."""
    session = stream_of(response)
    return StructuredOutput.rejected_arguments(session.gate.turn if session is not None else None)


def no_committed_call(response: ChatResponse) -> StructuredOutputError:
    """Why ``response`` has no committed call, for a caller that required one
    (``get_tool_calls_from_response(error_on_no_tool_call=True)``, ``FunctionCallingProgram``)."""
    record: DecisionRecord | None = read_record(response)
    try:
        StructuredOutput.judge_call(record, [], raw=raw_arguments(response))
    except StructuredOutputError as failure:
        return failure
    raise AssertionError("judge_call returns only a committed call")  # pragma: no cover


# -- asking -------------------------------------------------------------------------------------
# Every structured request is streamed, as the LangChain gate streams every call: the turn is
# then judged on the vendor's own events, and a stream the class ends with an error once the
# turn is decided (google-genai's "terminated early: MAX_TOKENS", a dropped connection) is
# still judged on what it said.


def _stream_kwargs(plan: _Plan) -> dict[str, Any]:
    if plan.kind == "function":
        return {"tools": [plan.tool], "chat_history": plan.messages, "tool_required": True,
                "allow_parallel_tool_calls": False, **plan.kwargs}
    return {"messages": plan.messages, **plan.kwargs}


class _Reader:
    """Reads one stream to its end: the last response and the text."""

    def __init__(self) -> None:
        self.last: ChatResponse | None = None
        self.pieces: list[str] = []

    def take(self, response: ChatResponse) -> None:
        self.last = response
        if response.delta:
            self.pieces.append(response.delta)

    def answer(self, error: Exception | None = None) -> _Answer:
        """What was read; a stream that raised counts only when the gate decided its turn
        (an output to judge): otherwise its error is raised."""
        last = self.last
        if error is not None:
            session = stream_of(last) if last is not None else None
            if session is None or session.gate.turn is None or session.gate.turn.complete:
                raise error
        if last is None:
            last = ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT))
        return _Answer(last, "".join(self.pieces))


def _ask(gated: ToolstreamLLM, plan: _Plan) -> _Answer:
    kwargs = _stream_kwargs(plan)
    stream = (gated.stream_chat_with_tools(**kwargs) if plan.kind == "function"
              else gated.stream_chat(**kwargs))
    reader, error = _Reader(), None
    try:
        for response in stream:
            reader.take(response)
    except Exception as exc:  # judged by ``answer``: raised unless the gate decided the turn
        error = exc
    return reader.answer(error)


async def _aask(gated: ToolstreamLLM, plan: _Plan) -> _Answer:
    kwargs = _stream_kwargs(plan)
    stream = await (gated.astream_chat_with_tools(**kwargs) if plan.kind == "function"
                    else gated.astream_chat(**kwargs))
    reader, error = _Reader(), None
    try:
        async for response in stream:
            reader.take(response)
    except Exception as exc:  # judged by ``answer``: raised unless the gate decided the turn
        error = exc
    return reader.answer(error)


def _next(gated: ToolstreamLLM, plan: _Plan, answer: _Answer, attempt: int) -> Any:
    """The object of ``response``, or the plan of the next attempt (``_Plan``); raises the
    failure once the retries are spent."""
    try:
        return _Done(_judged(gated, plan, answer))
    except StructuredOutputError as failure:
        if attempt >= gated.structured_retries or not _cut_short(answer.response):
            raise
        return plan.answered(answer, failure)


def _cut_short(response: ChatResponse) -> bool:
    """Whether the failed output was cut short (``RecordView.cut_short``; no record: nothing
    proves it finished). Only such an output is answered and asked again: a finished one that
    fails its schema, or none, is the agent's own failure, as without the gate (decision
    0113, the LangChain strategies' rule)."""
    view = RecordView.read(read_record(response))
    return view is None or view.cut_short


@dataclass(frozen=True)
class _Done:
    value: Any


def predict(gated: ToolstreamLLM, output_cls: Any, prompt: BasePromptTemplate,
            llm_kwargs: Mapping[str, Any] | None, prompt_args: Mapping[str, Any]) -> Any:
    """``ToolstreamLLM.structured_predict``."""
    step: Any = _plan(gated, output_cls, prompt, llm_kwargs, prompt_args)
    attempt = 0
    while isinstance(step, _Plan):
        step = _next(gated, step, _ask(gated, step), attempt)
        attempt += 1
    return step.value


def stream_predict(gated: ToolstreamLLM, output_cls: Any, prompt: BasePromptTemplate,
                   llm_kwargs: Mapping[str, Any] | None,
                   prompt_args: Mapping[str, Any]) -> Generator[Any, None, None]:
    """``ToolstreamLLM.stream_structured_predict``: the final object, once."""
    yield predict(gated, output_cls, prompt, llm_kwargs, prompt_args)


async def apredict(gated: ToolstreamLLM, output_cls: Any, prompt: BasePromptTemplate,
                   llm_kwargs: Mapping[str, Any] | None, prompt_args: Mapping[str, Any]) -> Any:
    """``ToolstreamLLM.astructured_predict``."""
    step: Any = _plan(gated, output_cls, prompt, llm_kwargs, prompt_args)
    attempt = 0
    while isinstance(step, _Plan):
        step = _next(gated, step, await _aask(gated, step), attempt)
        attempt += 1
    return step.value


async def astream_predict(gated: ToolstreamLLM, output_cls: Any, prompt: BasePromptTemplate,
                          llm_kwargs: Mapping[str, Any] | None,
                          prompt_args: Mapping[str, Any]) -> AsyncGenerator[Any, None]:
    """``ToolstreamLLM.astream_structured_predict``: the final object, once."""
    yield await apredict(gated, output_cls, prompt, llm_kwargs, prompt_args)
