"""Real vendor cassettes (``cassettes/real``) through a gated LangChain chat model.

Each cassette is a real vendor stream at the vendor's URL; ``with_toolstream(ChatOpenAI /
ChatAnthropic / ChatGoogleGenerativeAI)`` reads it through the real SDK (vcrpy replay, default
base URLs, ``@pytest.mark.toolstream_cassette``). The AIMessage it returns must carry exactly
the calls the corpus expectation commits (``tool_calls``) and rejects (``invalid_tool_calls``,
``error`` = the reason), and the gate's record must say whether the turn was complete. A
stream the vendor ends with an error event before any call started makes the gate re-raise
the SDK's error (what any chat model does); its ``on_turn`` Turn is checked then.
No tools are bound: the expectations are for the default config, which has no tool registry.
"""

from __future__ import annotations

from typing import Any

import pytest
from lc_util import make_model
from real_cassettes_util import RealCase, check_verdict, real_case_params
from toolstream_core import Turn

from langchain_toolstream import with_toolstream

CASES = real_case_params(marker=True)


def _model(case: RealCase) -> Any:
    """The real integration class at its default vendor URL (Gemini: the cassette's model)."""
    if case.api == "gemini":
        from langchain_google_genai import ChatGoogleGenerativeAI

        return ChatGoogleGenerativeAI(model=case.model, google_api_key="test", max_retries=0)
    return make_model(case.api)


@pytest.mark.parametrize("case", CASES)
def test_real_cassette_through_the_gated_model(case: RealCase, toolstream_cassette: Any) -> None:
    turns: list[Turn] = []
    # "pair": a stream that breaks after a call started returns its verdict instead of raising.
    gated = with_toolstream(_model(case), on_stream_error="pair", on_turn=turns.append)
    try:
        message = gated.invoke("replay")
    except Exception as exc:  # the vendor SDK's own error type, whichever version
        # A stream the vendor ends with an error event before any tool call started: the gate
        # re-raises it, as a chat model does. Its Turn still decides, and nothing committed.
        (turn,) = turns
        assert case.outcome.committed == case.outcome.rejected == 0 and not case.outcome.complete, exc
        check_verdict(case, [], [], turn.complete)
        assert not turn.calls and turn.error is not None
    else:
        record = message.response_metadata["toolstream"]
        check_verdict(case, [(c["id"], c["name"]) for c in message.tool_calls],
                      [(c["id"], c["name"], c["error"]) for c in message.invalid_tool_calls],
                      record["complete"])
        assert [t.complete for t in turns] == [record["complete"]]
    assert toolstream_cassette.all_played
