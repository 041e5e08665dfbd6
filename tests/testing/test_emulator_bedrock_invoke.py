"""The emulator's Bedrock InvokeModel route (Anthropic models) through boto3 over HTTP.

boto3's own parser reads the AWS event-stream frames (CRCs included) and decodes each
``chunk``'s base64 ``bytes``; what it yields is compared with what the Anthropic SDK reads from
the emulator's ``/v1/messages`` for the same scenario: the same Messages events, in Bedrock's
framing (``msg_bdrk_`` ids, no ``ping``, invocation metrics on ``message_stop``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from toolstream_core.testing import SCENARIOS, VendorEmulator, history_pairing

boto3 = pytest.importorskip("boto3")
anthropic = pytest.importorskip("anthropic")

MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0"
USER = {"role": "user", "content": "go"}
CASES = sorted(name for name, sc in SCENARIOS.items() if "anthropic" in sc.apis)


def _bedrock(emu: VendorEmulator) -> Any:
    from botocore.config import Config

    return boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=emu.base_url,
                        aws_access_key_id="a", aws_secret_access_key="b",
                        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}))


def _body(*messages: dict[str, Any]) -> str:
    return json.dumps({"anthropic_version": "bedrock-2023-05-31", "max_tokens": 700,
                       "messages": list(messages or (USER,))})


def _invoke_events(emu: VendorEmulator, scenario: str) -> tuple[list[dict[str, Any]], str | None]:
    """The decoded events boto3 yields, and the error class that ended the stream, if any."""
    emu.queue("anthropic", scenario)
    events: list[dict[str, Any]] = []
    try:
        answer = _bedrock(emu).invoke_model_with_response_stream(modelId=MODEL, body=_body())
        for event in answer["body"]:
            events.append(json.loads(event["chunk"]["bytes"]))
    except Exception as exc:  # what the SDK raised is compared, not swallowed
        return events, type(exc).__name__
    return events, None


def _messages_events(emu: VendorEmulator, scenario: str) -> tuple[list[dict[str, Any]], str | None]:
    """The same scenario on ``/v1/messages``, as the Anthropic SDK parses it."""
    emu.queue("anthropic", scenario)
    client = anthropic.Anthropic(api_key="t", base_url=emu.base_url, max_retries=0)
    events: list[dict[str, Any]] = []
    try:
        with client.messages.create(model=MODEL, max_tokens=700, messages=[USER],  # type: ignore[list-item]
                                    stream=True) as stream:
            for event in stream:
                events.append(event.model_dump(exclude_none=True))
    except Exception as exc:
        return events, type(exc).__name__
    return events, None


def _normal(event: dict[str, Any]) -> dict[str, Any]:
    """What the two framings may differ in, taken out: the message id, Bedrock's metrics."""
    event = {k: v for k, v in event.items() if k != "amazon-bedrock-invocationMetrics"}
    if event["type"] == "message_start":
        event["message"] = {k: v for k, v in event["message"].items() if k != "id"}
    return json.loads(json.dumps(event), object_hook=lambda d: {k: v for k, v in d.items()
                                                                 if v is not None})


@pytest.mark.parametrize("scenario", CASES)
def test_invoke_stream_carries_the_messages_events(emu: VendorEmulator, scenario: str) -> None:
    events, raised = _invoke_events(emu, scenario)
    reference, reference_raised = _messages_events(emu, scenario)
    reference = [e for e in reference if e["type"] != "ping"]
    assert [_normal(e) for e in events] == [_normal(e) for e in reference]
    assert (raised is None) == (reference_raised is None), (raised, reference_raised)
    if raised is not None:  # botocore's errors, not Anthropic's
        assert raised in ("EventStreamError", "ResponseStreamingError", "ProtocolError"), raised
    if events:
        assert events[0]["message"]["id"].startswith("msg_bdrk_")
    if events and events[-1]["type"] == "message_stop":
        metrics = events[-1]["amazon-bedrock-invocationMetrics"]
        [delta] = [e for e in events if e["type"] == "message_delta"]
        assert metrics["outputTokenCount"] == delta["usage"]["output_tokens"]
    assert [r.api for r in emu.requests] == ["anthropic", "anthropic"]
    assert emu.requests[0].path.endswith("/invoke-with-response-stream")


def test_a_mid_stream_error_is_bedrocks_exception(emu: VendorEmulator) -> None:
    from botocore.exceptions import EventStreamError

    emu.queue("anthropic", "error_event")
    answer = _bedrock(emu).invoke_model_with_response_stream(modelId=MODEL, body=_body())
    with pytest.raises(EventStreamError, match="modelStreamErrorException"):
        for _ in answer["body"]:
            pass


def test_whole_invoke_answers_the_message(emu: VendorEmulator) -> None:
    from botocore.exceptions import ClientError

    client = _bedrock(emu)
    emu.queue("anthropic", "parallel_calls", "error_event")
    out = json.loads(client.invoke_model(modelId=MODEL, body=_body())["body"].read())
    assert out["id"].startswith("msg_bdrk_") and out["stop_reason"] == "tool_use"
    assert [b["input"] for b in out["content"]] == [{"city": "Paris"}, {"city": "Tokyo"}]
    with pytest.raises(ClientError) as info:
        client.invoke_model(modelId=MODEL, body=_body())
    assert info.value.response["Error"]["Code"] == "InternalServerException"
    assert emu.requests[0].path.endswith("/invoke")


def test_an_unpaired_tool_use_is_a_validation_exception(emu: VendorEmulator) -> None:
    from botocore.exceptions import ClientError

    uses = {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_a", "name": "get_time", "input": {}},
        {"type": "tool_use", "id": "toolu_b", "name": "get_time", "input": {}}]}
    result_a = {"type": "tool_result", "tool_use_id": "toolu_a", "content": "ok"}
    result_b = {"type": "tool_result", "tool_use_id": "toolu_b", "content": "no",
                "is_error": True}
    client = _bedrock(emu)
    with pytest.raises(ClientError) as info:
        client.invoke_model_with_response_stream(
            modelId=MODEL, body=_body(USER, uses, {"role": "user", "content": [result_a]}))
    assert info.value.response["Error"]["Code"] == "ValidationException"
    assert "toolu_b" in str(info.value) and "tool_result" in str(info.value)
    answer = client.invoke_model_with_response_stream(
        modelId=MODEL, body=_body(USER, uses, {"role": "user", "content": [result_a, result_b]}))
    events = [json.loads(e["chunk"]["bytes"]) for e in answer["body"]]
    assert events[-1]["type"] == "message_stop"
    last = emu.requests[-1]
    assert history_pairing(last.api, last.body, path=last.path) == []
