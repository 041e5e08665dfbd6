"""The outgoing step flags an error result wherever the vendor's wire has a flag for it.

Read off the request body the partner class really sent: Anthropic ``tool_result.is_error``
(``ChatAnthropic``), Bedrock Converse ``toolResult.status: "error"`` (``ChatBedrockConverse``,
and ``ChatBedrock`` with the Converse switch), Gemini's ``functionResponse.response.error``
(``ChatGoogleGenerativeAI``), and Anthropic's ``is_error`` again from ``ChatBedrock`` over
InvokeModel, whose converter sends none of its own (the emulator's InvokeModel route).
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from lc_util import Recorder, make_model, recording_tools
from toolstream_core.testing import VendorEmulator

from langchain_toolstream import error_tool_messages, with_toolstream


def _flags(api: str, body: dict[str, Any]) -> list[bool]:
    """Per tool result of the last message of ``body``: whether the wire flags it an error."""
    if api == "gemini":
        parts = body["contents"][-1]["parts"]
        return [isinstance(p["functionResponse"]["response"], dict)
                and "error" in p["functionResponse"]["response"]
                for p in parts if "functionResponse" in p]
    blocks = body["messages"][-1]["content"]
    if api == "anthropic":
        return [b.get("is_error") is True for b in blocks if b.get("type") == "tool_result"]
    return [b["toolResult"].get("status") == "error" for b in blocks if "toolResult" in b]


def _switch(emu: VendorEmulator) -> Any:
    from botocore.config import Config
    from langchain_aws import ChatBedrock

    return ChatBedrock(model_id="anthropic.claude-3-5-sonnet-20240620-v1:0", region_name="us-east-1",
                       endpoint_url=emu.base_url, aws_access_key_id="toolstream-test",
                       aws_secret_access_key="test", beta_use_converse_api=True, streaming=True,
                       config=Config(retries={"total_max_attempts": 1, "mode": "standard"}))


def _invoke_model(emu: VendorEmulator) -> Any:
    from botocore.config import Config
    from langchain_aws import ChatBedrock

    return ChatBedrock(model_id="anthropic.claude-3-5-sonnet-20240620-v1:0", region_name="us-east-1",
                       endpoint_url=emu.base_url, aws_access_key_id="toolstream-test",
                       aws_secret_access_key="test",
                       config=Config(retries={"total_max_attempts": 1, "mode": "standard"}))


MODELS = {"anthropic": ("anthropic", lambda emu: make_model("anthropic", emu)),
          "bedrock-invoke-model": ("anthropic", _invoke_model),
          "bedrock-converse": ("bedrock-converse", lambda emu: make_model("bedrock-converse", emu)),
          "bedrock-switch": ("bedrock-converse", _switch),
          "gemini": ("gemini", lambda emu: make_model("gemini", emu))}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_an_error_result_carries_the_vendors_flag(name: str, emu: VendorEmulator) -> None:
    api, build = MODELS[name]
    emu.queue(api, "truncated_length")
    gated = with_toolstream(build(emu)).bind_tools(recording_tools(Recorder()))
    message = gated.invoke([HumanMessage("go")])
    answers = error_tool_messages(message)
    assert len(answers) == 1
    gated.invoke([HumanMessage("go"), message, *answers])
    assert _flags(api, emu.requests[-1].body) == [True]
