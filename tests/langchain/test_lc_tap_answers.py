"""The tap table's three answers are three: a tapped copy, "read through LangChain's chunks"
(``CHUNKS``), and "the client is not where the class kept it" (``TapUnavailableError``).

One ``None`` once meant both of the last two, so ``ChatBedrock`` over InvokeModel and
``ChatLiteLLMRouter``, documented as read through the chunks, were refused before any
request. Their wire tests are in ``test_lc_partners.py``; here each class of the table that
reads chunks on purpose is told apart from the same class with its client gone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from toolstream_core import AssembleConfig
from toolstream_core.integration import GateSession
from toolstream_core.testing import VendorEmulator

from langchain_toolstream import TapUnavailableError
from langchain_toolstream._tap import CHUNKS, tap_model


def _session() -> GateSession:
    return GateSession(tools=None, config=AssembleConfig())


def _is_tap(client: Any) -> bool:
    return repr(client).startswith("<toolstream tap")


def _bedrock(emu: VendorEmulator, *, converse: bool) -> Any:
    aws = pytest.importorskip("langchain_aws")
    return aws.ChatBedrock(model_id="anthropic.claude-3-5-sonnet-20240620-v1:0",
                           region_name="us-east-1", endpoint_url=emu.base_url,
                           aws_access_key_id="a", aws_secret_access_key="b",
                           beta_use_converse_api=converse)


def _litellm(emu: VendorEmulator) -> Any:
    litellm = pytest.importorskip("langchain_litellm")
    return litellm.ChatLiteLLM(model="openai/gpt-4.1-mini", api_base=emu.base_url + "/v1",
                               api_key="test")


def _router(emu: VendorEmulator) -> Any:
    litellm = pytest.importorskip("langchain_litellm")
    from litellm import Router

    router = Router(model_list=[{"model_name": "gpt", "litellm_params": {
        "model": "openai/gpt-4.1-mini", "api_base": emu.base_url + "/v1", "api_key": "t"}}])
    return litellm.ChatLiteLLMRouter(router=router)


#: name -> (the model read through chunks on purpose, the model of its row that is tapped)
ROWS: dict[str, tuple[Callable[[VendorEmulator], Any], Callable[[VendorEmulator], Any]]] = {
    "ChatBedrock": (lambda emu: _bedrock(emu, converse=False),
                    lambda emu: _bedrock(emu, converse=True)),
    "ChatLiteLLM": (_router, _litellm),
}


@pytest.mark.parametrize("row", sorted(ROWS))
def test_a_class_read_through_chunks_is_not_refused(row: str, emu: VendorEmulator) -> None:
    chunks, _ = ROWS[row]
    assert tap_model(chunks(emu), _session()) is None  # read through LangChain's chunks
    assert emu.requests == []


@pytest.mark.parametrize("row", sorted(ROWS))
def test_the_same_row_taps_its_client_and_refuses_a_missing_one(row: str,
                                                                emu: VendorEmulator) -> None:
    _, tapped = ROWS[row]
    model = tapped(emu)
    copy = tap_model(model, _session())
    assert copy is not None and _is_tap(copy.client)
    assert not _is_tap(model.client)  # the user's model keeps its own
    gone = model.model_copy(update={"client": None})  # a release that keeps it elsewhere
    with pytest.raises(TapUnavailableError, match="holds no SDK client to tap"):
        tap_model(gone, _session())
    assert emu.requests == []


def test_chunks_is_a_value_of_its_own() -> None:
    """Neither ``None`` nor anything falsy: a row's answer cannot be mistaken for "no client"."""
    assert CHUNKS is not None and bool(CHUNKS)
    assert CHUNKS.value == "chunks"
