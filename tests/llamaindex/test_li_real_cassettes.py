"""Real vendor cassettes (``cassettes/real``) through ``ToolstreamLLM`` and the LlamaIndex classes.

Each cassette is a real vendor stream at the vendor's URL; LlamaIndex's ``OpenAI``,
``OpenAIResponses``, ``Anthropic`` and ``GoogleGenAI`` read it through the real SDK (vcrpy
replay, default base URLs, ``@pytest.mark.toolstream_cassette``), wrapped in ``ToolstreamLLM``.
What an agent would run (``get_tool_calls_from_response``) must be exactly the calls the
corpus expectation commits, and the shim's Turn must reject the rest with the expected
reasons. A stream the vendor ends with an error event makes the integration raise; the
chunks that reached the caller before it still carry the verdict.
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("llama_index.core", reason="the LlamaIndex environment runs these")

from google.genai import types as genai_types
from llama_index.core.llms import ChatMessage
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.llms.anthropic import Anthropic
from llama_index.llms.google_genai import GoogleGenAI
from llama_index.llms.openai import OpenAI, OpenAIResponses
from real_cassettes_util import RealCase, check_verdict, real_case_params

from llamaindex_toolstream import ToolstreamLLM

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning")]

CASES = real_case_params(marker=True)


def _llm(case: RealCase) -> FunctionCallingLLM:
    """The real LlamaIndex class for the cassette's API, at the vendor's default URL."""
    if case.api == "openai-chat":
        return OpenAI(model=case.model, api_key="test", max_retries=0)
    if case.api == "openai-responses":
        return OpenAIResponses(model=case.model, api_key="test", max_retries=0)
    if case.api == "anthropic":
        # Above what the recordings report (the class's default, 512, is not): the shim passes
        # the limit to the core's max-token backstop (DESIGN 5.5).
        return Anthropic(model=case.model, api_key="test", max_retries=0, max_tokens=64_000)
    # max_tokens/context_window given, so the class does not ask the server for model metadata
    return GoogleGenAI(model=case.model, api_key="test", max_retries=0, max_tokens=1024,
                       context_window=100_000,
                       http_options=genai_types.HttpOptions(
                           retry_options=genai_types.HttpRetryOptions(attempts=1)))


@pytest.mark.parametrize("case", CASES)
def test_real_cassette_through_toolstream_llm(case: RealCase, toolstream_cassette: Any) -> None:
    llm = ToolstreamLLM(_llm(case))
    last = None
    error: BaseException | None = None
    try:
        for chunk in llm.stream_chat([ChatMessage(role="user", content="replay")]):
            last = chunk
    except Exception as exc:  # the integration's own reaction to a vendor error event
        error = exc
    assert toolstream_cassette.all_played
    if last is None:
        # Nothing reached the caller before the error: no call can have run.
        assert error is not None and case.outcome.committed == case.outcome.rejected == 0
        assert not case.outcome.complete
        return
    turn = llm.turn_of(last)
    assert turn is not None, f"the stream ended without a verdict ({error!r})"
    selections = llm.get_tool_calls_from_response(last, error_on_no_tool_call=False)
    check_verdict(case, [(s.tool_id, s.tool_name) for s in selections],
                  [(c.id, c.name, str(c.reason)) for c in turn.rejected], turn.complete)
    assert [(s.tool_id, s.tool_kwargs) for s in selections] == [(c.id, c.arguments) for c in turn.committed]
    assert (error is not None) == (turn.error is not None), (error, turn.error)
