"""Issue 28: ``with_structured_output`` keeps the gate's promise (DESIGN §6, structured output).

Through the real partner classes (``ChatOpenAI`` chat and Responses, ``ChatAnthropic``,
``ChatGoogleGenerativeAI``) over the emulator: the schema's object only from an output the
vendor finished; a cut output (a call, or a JSON text cut by the token limit) raises
``StructuredOutputError`` naming ``stream_truncated``, or is the ``parsing_error`` with
``include_raw``; the request is the one the wrapped model sends.
"""

from __future__ import annotations

from typing import Any

import pytest
from lc_util import APIS, make_model
from pydantic import BaseModel
from toolstream_core import Reason
from toolstream_core.testing import VendorEmulator
from typing_extensions import TypedDict

from langchain_toolstream import StructuredOutputError, with_toolstream


class Weather(BaseModel):
    city: str
    unit: str


class WeatherDict(TypedDict):
    city: str
    unit: str


WHOLE = Weather(city="Paris", unit="celsius")
#: Each method and the scenario pair that plays it: a call, or a JSON text.
METHODS = {"function_calling": "structured_call", "json_schema": "structured_json",
           "json_mode": "structured_json"}
CASES = [(api, method) for api in APIS for method in METHODS]
IDS = [f"{a}-{m}" for a, m in CASES]


async def _run(runnable: Any, mode: str) -> Any:
    if mode == "invoke":
        return runnable.invoke("What is the weather in Paris?")
    if mode == "ainvoke":
        return await runnable.ainvoke("What is the weather in Paris?")
    if mode == "stream":
        values = list(runnable.stream("What is the weather in Paris?"))
    else:
        values = [v async for v in runnable.astream("What is the weather in Paris?")]
    assert len(values) == 1  # the final object once: no value built from part of an output
    return values[0]


def _structured(api: str, emu: VendorEmulator, scenario: str, method: str,
                schema: Any = Weather, **kwargs: Any) -> Any:
    emu.queue(api, scenario)
    return with_toolstream(make_model(api, emu)).with_structured_output(
        schema, method=method, **kwargs)


@pytest.mark.parametrize(("api", "method"), CASES, ids=IDS)
@pytest.mark.parametrize("mode", ["invoke", "ainvoke", "stream", "astream"])
@pytest.mark.asyncio(loop_scope="session")
async def test_a_finished_output_gives_the_schemas_object(emu: VendorEmulator, api: str,
                                                         method: str, mode: str) -> None:
    assert await _run(_structured(api, emu, METHODS[method], method), mode) == WHOLE


@pytest.mark.parametrize(("api", "method"), CASES, ids=IDS)
@pytest.mark.parametrize("mode", ["invoke", "ainvoke", "stream", "astream"])
@pytest.mark.asyncio(loop_scope="session")
async def test_a_cut_output_raises_and_names_the_reason(emu: VendorEmulator, api: str,
                                                       method: str, mode: str) -> None:
    runnable = _structured(api, emu, METHODS[method] + "_truncated", method)
    with pytest.raises(StructuredOutputError) as caught:
        await _run(runnable, mode)
    error = caught.value
    assert error.reason is Reason.stream_truncated and "stream_truncated" in str(error)
    assert error.raw is not None and error.raw.startswith('{"city":"Paris","unit":"cel')
    if method == "function_calling":
        assert error.call_id  # the call the output came in
    else:
        assert error.call_id is None and error.raw == '{"city":"Paris","unit":"cel'


@pytest.mark.parametrize(("api", "method"), CASES, ids=IDS)
def test_plain_langchain_hands_out_none_a_repair_or_its_sdks_error(emu: VendorEmulator,
                                                                 api: str, method: str) -> None:
    """What the gate replaces (issue 28's table): never the clear error above."""
    emu.queue(api, METHODS[method] + "_truncated")
    plain = make_model(api, emu).with_structured_output(Weather, method=method)
    try:
        value = plain.invoke("What is the weather in Paris?")
    except StructuredOutputError:  # pragma: no cover - plain LangChain never raises it
        raise
    except Exception as exc:  # the SDK's or pydantic's own error (OpenAI chat, Responses)
        assert not isinstance(exc, StructuredOutputError)
        return
    assert value in (None, Weather(city="Paris", unit="cel"))


@pytest.mark.parametrize(("api", "method"), CASES, ids=IDS)
def test_include_raw_gives_the_error_as_parsing_error(emu: VendorEmulator, api: str,
                                                     method: str) -> None:
    cut = _structured(api, emu, METHODS[method] + "_truncated", method, include_raw=True)
    out = cut.invoke("What is the weather in Paris?")
    assert out["parsed"] is None
    assert isinstance(out["parsing_error"], StructuredOutputError)
    assert out["parsing_error"].reason is Reason.stream_truncated
    assert out["raw"].response_metadata["toolstream"]["complete"] is False
    whole = _structured(api, emu, METHODS[method], method, include_raw=True)
    out = whole.invoke("What is the weather in Paris?")
    assert (out["parsed"], out["parsing_error"]) == (WHOLE, None)
    assert out["raw"].response_metadata["toolstream"]["complete"] is True


@pytest.mark.parametrize(("api", "method"), CASES, ids=IDS)
def test_the_request_is_the_wrapped_models_own(emu: VendorEmulator, api: str,
                                              method: str) -> None:
    """Drop-in: the same tools / response format / tool choice as the plain model sends."""
    bodies = []
    for gate in (False, True):
        emu.clear()
        emu.queue(api, METHODS[method])
        model = make_model(api, emu)
        model = with_toolstream(model) if gate else model
        # the gate streams every call, so the plain request to compare is a streamed one
        # (plain ChatOpenAI fails to parse a streamed Responses json_schema answer: its
        # request was still sent)
        try:
            list(model.with_structured_output(Weather, method=method).stream("weather?"))
        except ValueError:
            assert not gate
        body = emu.requests[-1].body
        bodies.append({k: v for k, v in body.items() if k != "stream" and k != "stream_options"})
    assert bodies[0] == bodies[1]


@pytest.mark.parametrize("api", APIS)
def test_a_dict_schema_is_checked_against_its_json_schema(emu: VendorEmulator, api: str) -> None:
    assert _structured(api, emu, "structured_json", "json_mode", WeatherDict).invoke("w") == {
        "city": "Paris", "unit": "celsius"}

    class Forecast(TypedDict):
        city: str
        days: int

    with pytest.raises(StructuredOutputError) as caught:
        _structured(api, emu, "structured_json", "json_mode", Forecast).invoke("w")
    assert caught.value.reason is Reason.schema_violation


def test_a_text_answer_to_a_forced_call_is_no_output(emu: VendorEmulator) -> None:
    with pytest.raises(StructuredOutputError) as caught:
        _structured("openai-chat", emu, "text", "function_calling").invoke("w")
    assert caught.value.reason is Reason.no_output and caught.value.call_id is None


def test_a_text_that_is_no_json_is_invalid_json(emu: VendorEmulator) -> None:
    with pytest.raises(StructuredOutputError) as caught:
        _structured("anthropic", emu, "text", "json_mode").invoke("w")
    assert caught.value.reason is Reason.invalid_json
    assert caught.value.raw is not None and caught.value.raw.startswith("Hello")


def test_a_request_that_fails_raises_its_own_error(emu: VendorEmulator) -> None:
    """No output was ever streamed: the SDK's error, not a structured-output verdict."""
    from openai import BadRequestError

    error = b'{"error": {"message": "bad request", "type": "invalid_request_error"}}'
    emu.queue_body("openai-chat", error, status=400, headers={"Content-Type": "application/json"})
    model = with_toolstream(make_model("openai-chat", emu))
    with pytest.raises(BadRequestError):
        model.with_structured_output(Weather).invoke("w")


def test_on_turn_still_sees_the_turn(emu: VendorEmulator) -> None:
    turns: list[Any] = []
    emu.queue("openai-chat", "structured_call_truncated")
    model = with_toolstream(make_model("openai-chat", emu), on_turn=turns.append)
    with pytest.raises(StructuredOutputError):
        model.with_structured_output(Weather, method="function_calling").invoke("w")
    assert [t.end_reason for t in turns] == [Reason.stream_truncated]
