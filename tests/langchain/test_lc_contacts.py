"""How the LangChain shim reaches each partner class's SDK client (issue 26, item 5).

Through public API wherever the class has one (``ChatOllama`` is rebuilt by its constructor
with the tapped client settings; streaming is decided from public settings); through the
private names of the table (``ChatAnthropic``'s cached clients) only on the per-call copy,
never on the user's model, and never by writing its ``__dict__`` or ``model_fields_set``. When
an integration release moves such a name, the gated call raises ``TapUnavailableError`` before
any request is sent, instead of judging LangChain's chunks without a word.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import httpx
import pytest
from langchain_core.messages import AIMessage
from langchain_models import MODEL_NAMES
from lc_util import aggregate, make_model
from toolstream_core import AssembleConfig
from toolstream_core.integration import GateSession
from toolstream_core.testing import TOOLS, VendorEmulator

from langchain_toolstream import TapUnavailableError, with_toolstream
from langchain_toolstream._tap import tap_model

TOOL_DICTS = [
    {"type": "function", "function": {"name": n, "description": n, "parameters": s}}
    for n, s in TOOLS.items()
]


def _is_tap(client: Any) -> bool:
    return repr(client).startswith("<toolstream tap")


# -- a moved private name: told, before any request -------------------------------------------


@pytest.mark.parametrize("style", ["invoke", "astream"])
async def test_a_moved_private_client_raises_before_any_request(
        style: str, emu: VendorEmulator, monkeypatch: pytest.MonkeyPatch) -> None:
    from langchain_anthropic import ChatAnthropic

    monkeypatch.delattr(ChatAnthropic, "_client")  # a release that keeps its client elsewhere
    model = with_toolstream(make_model("anthropic", emu)).bind_tools(TOOL_DICTS)
    emu.queue("anthropic", "single_call")
    with pytest.raises(TapUnavailableError) as raised:
        if style == "invoke":
            model.invoke("x")
        else:
            async for _ in model.astream("x"):
                pass
    assert f"ChatAnthropic._client (langchain-anthropic {version('langchain-anthropic')})" \
        in str(raised.value)
    assert emu.requests == []  # nothing was sent, so nothing is left unanswered


# -- ChatAnthropic: the listed private names, on the copy only --------------------------------


def test_anthropic_copy_is_tapped_and_the_users_model_is_not(emu: VendorEmulator) -> None:
    model = make_model("anthropic", emu)
    fields_before = set(model.model_fields_set)
    seen: list[Any] = []
    gated = with_toolstream(model, on_turn=seen.append).bind_tools(TOOL_DICTS)
    emu.queue("anthropic", "single_call")
    message = gated.invoke("x")

    assert message.response_metadata["toolstream"]["mode"] == "tap"
    assert [c["name"] for c in message.tool_calls] == ["write_file"]
    assert not _is_tap(model._client) and not _is_tap(model._async_client)
    assert model.model_fields_set == fields_before

    copy = tap_model(model, GateSession(tools=None, config=AssembleConfig()))
    assert copy is not None and _is_tap(copy._client) and _is_tap(copy._async_client)
    assert copy.model_fields_set == fields_before  # set as attributes, not recorded as fields


# -- ChatOllama: rebuilt through its constructor ----------------------------------------------


async def test_ollama_copy_is_built_by_its_constructor_with_the_users_settings(
        emu: VendorEmulator) -> None:
    from langchain_ollama import ChatOllama

    paths: list[str] = []

    def sync_hook(request: httpx.Request) -> None:
        paths.append(request.url.path)

    async def async_hook(request: httpx.Request) -> None:
        paths.append(request.url.path)

    # credentials in the URL become a header (as ChatOllama does), hooks are the user's own,
    # and the model is checked once, when the user builds it
    url = emu.base_url.replace("http://", "http://user:secret@")
    model = ChatOllama(model=MODEL_NAMES["ollama"], base_url=url, validate_model_on_init=True,
                       sync_client_kwargs={"event_hooks": {"request": [sync_hook]}},
                       async_client_kwargs={"event_hooks": {"request": [async_hook]}})
    own = (model._client, model._async_client)
    gated = with_toolstream(model).bind_tools(TOOL_DICTS)

    emu.queue("ollama", "single_call", "single_call")
    sync_message = gated.invoke("x")
    async_message = aggregate([chunk async for chunk in gated.astream("x")])

    for message in (sync_message, async_message):
        assert isinstance(message, AIMessage)
        assert message.response_metadata["toolstream"]["mode"] == "tap"
        assert [c["name"] for c in message.tool_calls] == ["write_file"]
    assert paths == ["/api/tags", "/api/chat", "/api/chat"]  # no second model check
    assert [h.get("authorization") for h in emu.request_headers] == ["Basic dXNlcjpzZWNyZXQ="] * 2
    assert (model._client, model._async_client) == own
    assert model.validate_model_on_init is True


# -- streaming decided from public settings ----------------------------------------------------


@pytest.mark.parametrize(("settings", "call"), [
    ({"disable_streaming": "tool_calling"}, {}),
    ({"streaming": False}, {}),
    ({}, {"stream": False}),
], ids=["disable_streaming=tool_calling", "streaming=False", "stream=False"])
def test_a_model_set_not_to_stream_is_gated_on_its_answer(
        settings: dict[str, Any], call: dict[str, Any], emu: VendorEmulator) -> None:
    model = with_toolstream(make_model("openai-chat", emu, **settings)).bind_tools(TOOL_DICTS)
    emu.queue("openai-chat", "parallel_calls")
    message = model.invoke("x", **call)
    assert message.response_metadata["toolstream"]["mode"] == "message"
    assert not emu.requests[-1].body.get("stream")
    assert [c["args"] for c in message.tool_calls] == [{"city": "Paris"}, {"city": "Tokyo"}]


def test_tool_calling_setting_streams_a_call_without_tools(emu: VendorEmulator) -> None:
    """``disable_streaming="tool_calling"`` answers whole only when tools are in the call."""
    model = with_toolstream(make_model("openai-chat", emu, disable_streaming="tool_calling"))
    emu.queue("openai-chat", "text")
    message = model.invoke("x")
    assert message.response_metadata["toolstream"]["mode"] == "tap"
    assert emu.requests[-1].body.get("stream") is True
