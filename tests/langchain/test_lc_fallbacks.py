"""The gate's two fallbacks: a model it cannot tap, and a model that does not stream."""

from __future__ import annotations

from typing import Any

import pytest
from lc_util import aggregate, make_model
from toolstream_core.testing import TOOLS, VendorEmulator

import langchain_toolstream._gate as gate_module
from langchain_toolstream import with_toolstream

TOOL_DICTS = [
    {"type": "function", "function": {"name": n, "description": n, "parameters": s}}
    for n, s in TOOLS.items()
]


@pytest.fixture
def untapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend the integration is one the tap does not know (any other chat model class)."""
    monkeypatch.setattr(gate_module, "tap_model", lambda model, sink: None)


@pytest.mark.usefixtures("untapped")
@pytest.mark.parametrize("api", ["openai-chat", "anthropic"])
def test_untappable_model_is_gated_on_langchain_chunks(api: str, emu: VendorEmulator) -> None:
    emu.queue(api, "single_call")
    good = with_toolstream(make_model(api, emu)).bind_tools(TOOL_DICTS).invoke("x")
    assert good.response_metadata["toolstream"]["mode"] == "chunks"
    assert [c["name"] for c in good.tool_calls] == ["write_file"]

    emu.queue(api, "truncated_length")
    cut = with_toolstream(make_model(api, emu)).bind_tools(TOOL_DICTS).invoke("x")
    assert cut.tool_calls == []  # plain LangChain: write_file(path="/tmp/a")
    assert [c["error"] for c in cut.invalid_tool_calls] == ["stream_truncated"]


@pytest.mark.usefixtures("untapped")
def test_chunk_fallback_applies_the_core_identity_rules(emu: VendorEmulator) -> None:
    # LangChain's own chunks still carry each fragment (with index None); it is LangChain's
    # aggregation that then fails (plain: get_weather({}) plus id-less calls). Fed to the
    # core as index-less chat deltas, the id-based identity rule (DESIGN 4.1) rebuilds both.
    emu.queue("openai-chat", "missing_index")
    message = with_toolstream(make_model("openai-chat", emu)).bind_tools(TOOL_DICTS).invoke("x")
    assert message.response_metadata["toolstream"]["mode"] == "chunks"
    assert [c["name"] for c in message.tool_calls] == ["get_weather", "write_file"]
    assert message.tool_calls[0]["args"] == {"city": "Paris"}


@pytest.mark.parametrize("api", ["openai-chat", "anthropic", "gemini"])
@pytest.mark.parametrize("style", ["invoke", "stream"])
def test_model_with_streaming_disabled_is_gated_on_its_answer(
    api: str, style: str, emu: VendorEmulator
) -> None:
    model = with_toolstream(make_model(api, emu, disable_streaming=True)).bind_tools(TOOL_DICTS)

    def call() -> Any:
        return model.invoke("x") if style == "invoke" else aggregate(list(model.stream("x")))

    emu.queue(api, "parallel_calls")
    both = call()
    assert [(c["name"], c["args"]) for c in both.tool_calls] == [
        ("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Tokyo"})]
    assert both.response_metadata["toolstream"]["mode"] == "message"
    assert "stream" not in emu.requests[-1].body or not emu.requests[-1].body["stream"]

    emu.queue(api, "truncated_length")
    cut = call()
    assert cut.tool_calls == []
