"""Issue 28 (and 26 item 4): structured output through ``ToolstreamLLM`` keeps the promise.

Through the real LlamaIndex classes (``OpenAI``, ``OpenAIResponses``, ``Anthropic``,
``GoogleGenAI``) over the emulator, in program modes ``DEFAULT``, ``FUNCTION`` and ``LLM``:
the gated LLM asks the way the wrapped class asks (a JSON-schema text, a forced call or a
prompted text: the request bodies are compared), and hands out the schema's object only from
an output the vendor finished; a cut output raises ``StructuredOutputError`` naming
``stream_truncated`` on every surface: ``structured_predict`` and its async and stream twins,
``as_structured_llm`` (chat and streams) and ``FunctionCallingProgram``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from li_helpers import APIS, THIRD_PARTY_WARNINGS, make_llm
from llama_index.core.base.llms.types import ChatMessage
from llama_index.core.program import FunctionCallingProgram
from llama_index.core.prompts import PromptTemplate
from llama_index.core.types import PydanticProgramMode
from pydantic import BaseModel
from toolstream_core import Reason
from toolstream_core.testing import VendorEmulator

from llamaindex_toolstream import StructuredOutputError, ToolstreamLLM

pytestmark = THIRD_PARTY_WARNINGS


class Weather(BaseModel):
    city: str
    unit: str


WHOLE = Weather(city="Paris", unit="celsius")
PROMPT = PromptTemplate("What is the weather in {city}?")
MODES = (PydanticProgramMode.DEFAULT, PydanticProgramMode.FUNCTION, PydanticProgramMode.LLM)
#: How each class asks in each mode, as the plain class does: a forced call (``call``) or a
#: JSON text. OpenAI chat and Google GenAI follow the mode; OpenAIResponses and Anthropic (on
#: a model with structured outputs) always ask for a JSON-schema text.
CALLS = {("openai-chat", PydanticProgramMode.FUNCTION), ("gemini", PydanticProgramMode.FUNCTION)}
CASES = [(api, mode) for api in APIS for mode in MODES]
IDS = [f"{a}-{m.value}" for a, m in CASES]


def _scenario(api: str, mode: PydanticProgramMode) -> str:
    return "structured_call" if (api, mode) in CALLS else "structured_json"


def _gated(api: str, emu: VendorEmulator, mode: PydanticProgramMode, *scenarios: str,
           **gate: Any) -> ToolstreamLLM:
    emu.queue(api, *scenarios)
    return ToolstreamLLM(make_llm(api, emu.base_url, pydantic_program_mode=mode), **gate)


async def _predict(llm: Any, surface: str) -> Any:
    """One structured surface, to its final value (a stream must yield exactly one)."""
    # the sync surfaces run on a thread: GoogleGenAI's sync calls start an event loop of their own
    if surface == "structured_predict":
        return await asyncio.to_thread(llm.structured_predict, Weather, PROMPT, city="Paris")
    if surface == "astructured_predict":
        return await llm.astructured_predict(Weather, PROMPT, city="Paris")
    if surface == "stream_structured_predict":
        values = await asyncio.to_thread(
            lambda: list(llm.stream_structured_predict(Weather, PROMPT, city="Paris")))
    else:
        values = [v async for v in await llm.astream_structured_predict(Weather, PROMPT,
                                                                          city="Paris")]
    assert len(values) == 1  # never a value built from part of an output
    return values[0]


SURFACES = ["structured_predict", "astructured_predict", "stream_structured_predict",
            "astream_structured_predict"]


@pytest.mark.parametrize(("api", "mode"), CASES, ids=IDS)
@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.asyncio(loop_scope="session")
async def test_a_finished_output_gives_the_object(emu: VendorEmulator, api: str,
                                                 mode: PydanticProgramMode, surface: str) -> None:
    assert await _predict(_gated(api, emu, mode, _scenario(api, mode)), surface) == WHOLE


@pytest.mark.parametrize(("api", "mode"), CASES, ids=IDS)
@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.asyncio(loop_scope="session")
async def test_a_cut_output_raises_and_names_the_reason(emu: VendorEmulator, api: str,
                                                       mode: PydanticProgramMode,
                                                       surface: str) -> None:
    llm = _gated(api, emu, mode, _scenario(api, mode) + "_truncated")
    with pytest.raises(StructuredOutputError) as caught:
        await _predict(llm, surface)
    error = caught.value
    assert error.reason is Reason.stream_truncated and "stream_truncated" in str(error)
    assert isinstance(error, ValueError)  # what LlamaIndex's own parse errors are
    if (api, mode) in CALLS:
        assert error.call_id and (error.raw or "").startswith('{"city":"Paris","unit":"cel')
    else:  # google-genai's class drops the chunk that carries MAX_TOKENS
        assert error.call_id is None and '{"city":"Paris","unit":"c'.startswith(error.raw[:25]) \
            and error.raw.startswith('{"city":"Paris","unit":"c')


def _method(body: dict[str, Any]) -> Any:
    """What says how a request asks for the structure: its tools, or its JSON-schema setting."""
    config = body.get("generationConfig") or {}
    return {
        "tools": [t.get("function", t).get("name") for t in body.get("tools") or []
                  if isinstance(t, dict)] or [d.get("name") for t in body.get("tools") or []
                                              for d in t.get("functionDeclarations") or []],
        "response_format": body.get("response_format"),
        "text": body.get("text"),
        "output_config": body.get("output_config"),
        "schema": (config.get("responseMimeType"), config.get("responseSchema")),
    }


@pytest.mark.parametrize(("api", "mode"), CASES, ids=IDS)
def test_the_gated_llm_asks_the_way_the_wrapped_class_asks(emu: VendorEmulator, api: str,
                                                          mode: PydanticProgramMode) -> None:
    """Issue 26 item 4: wrapping does not change the structured-output method (the plain
    ``OpenAI`` sends a JSON-schema ``response_format``; so does the gated one)."""
    methods = []
    for gate in (False, True):
        emu.clear()
        emu.queue(api, _scenario(api, mode))
        llm: Any = make_llm(api, emu.base_url, pydantic_program_mode=mode)
        llm = ToolstreamLLM(llm) if gate else llm
        llm.structured_predict(Weather, PROMPT, city="Paris")
        methods.append(_method(emu.requests[-1].body))
    assert methods[0] == methods[1]
    assert bool(methods[0]["tools"]) == ((api, mode) in CALLS)


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("surface", ["chat", "achat", "stream_chat", "astream_chat"])
@pytest.mark.asyncio(loop_scope="session")
async def test_as_structured_llm_raises_on_a_cut_output(emu: VendorEmulator, api: str,
                                                       surface: str) -> None:
    mode = PydanticProgramMode.DEFAULT
    structured = _gated(api, emu, mode, _scenario(api, mode) + "_truncated").as_structured_llm(Weather)
    messages = [ChatMessage(role="user", content="What is the weather in Paris?")]
    with pytest.raises(StructuredOutputError) as caught:
        if surface == "chat":
            await asyncio.to_thread(structured.chat, messages)
        elif surface == "achat":
            await structured.achat(messages)
        elif surface == "stream_chat":
            await asyncio.to_thread(lambda: list(structured.stream_chat(messages)))
        else:
            [r async for r in await structured.astream_chat(messages)]
    assert caught.value.reason is Reason.stream_truncated
    emu.queue(api, _scenario(api, mode))
    whole = await structured.achat(messages)
    assert json.loads(whole.message.content or "") == WHOLE.model_dump()


# Not GoogleGenAI: its whole (non-streamed) ``chat_with_tools`` raises its own "terminated
# early: MAX_TOKENS" before the gate has a response (ToolstreamLLM's whole-response path).
@pytest.mark.parametrize("api", ["openai-chat", "anthropic"])
def test_function_calling_program_names_the_reason(emu: VendorEmulator, api: str) -> None:
    """The program asks ``get_tool_calls_from_response`` for the call it required: the gate's
    answer is the reason, not "Expected at least one tool call"."""
    emu.queue(api, "structured_call_truncated", "structured_call_truncated", "structured_call")
    llm = ToolstreamLLM(make_llm(api, emu.base_url))
    program = FunctionCallingProgram.from_defaults(output_cls=Weather, prompt=PROMPT, llm=llm)
    with pytest.raises(StructuredOutputError) as caught:
        program(city="Paris")
    assert caught.value.reason is Reason.stream_truncated
    if api == "openai-chat":  # (the emulator's whole Anthropic answer omits a cut call)
        assert caught.value.call_id
    with pytest.raises(StructuredOutputError):
        asyncio.run(program.acall(city="Paris"))
    assert program(city="Paris") == WHOLE


@pytest.mark.parametrize(("api", "mode"), CASES, ids=IDS)
def test_retries_answer_the_cut_output_and_end_on_the_whole_one(emu: VendorEmulator, api: str,
                                                                mode: PydanticProgramMode) -> None:
    scenario = _scenario(api, mode)
    llm = _gated(api, emu, mode, scenario + "_truncated", scenario, structured_retries=1)
    assert llm.structured_predict(Weather, PROMPT, city="Paris") == WHOLE
    assert emu.statuses == [200, 200]  # the retry's history was legal
    retry = json.dumps(emu.requests[-1].body)
    assert "stream_truncated" in retry  # the answer named the reason


def test_the_retries_are_bounded(emu: VendorEmulator) -> None:
    cut = "structured_json_truncated"
    llm = _gated("anthropic", emu, PydanticProgramMode.DEFAULT, cut, cut, cut,
                 structured_retries=2)
    with pytest.raises(StructuredOutputError):
        llm.structured_predict(Weather, PROMPT, city="Paris")
    assert len(emu.requests) == 3


def test_a_text_answer_where_a_call_was_required_is_no_output(emu: VendorEmulator) -> None:
    llm = _gated("openai-chat", emu, PydanticProgramMode.FUNCTION, "text")
    with pytest.raises(StructuredOutputError) as caught:
        llm.structured_predict(Weather, PROMPT, city="Paris")
    assert caught.value.reason is Reason.no_output


def test_a_request_that_fails_keeps_its_own_error(emu: VendorEmulator) -> None:
    from openai import BadRequestError

    error = b'{"error": {"message": "bad request", "type": "invalid_request_error"}}'
    emu.queue_body("openai-chat", error, status=400, headers={"Content-Type": "application/json"})
    llm = ToolstreamLLM(make_llm("openai-chat", emu.base_url))
    with pytest.raises(BadRequestError):
        llm.structured_predict(Weather, PROMPT, city="Paris")
