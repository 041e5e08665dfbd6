"""Detection of the newer families and the SDK exceptions that mean a vendor error (§3, §4.4)."""

from __future__ import annotations

from typing import Any

import pytest
from toolstream_core import PROVIDERS, Assembler
from toolstream_core._adapters import detect_provider, unwrap
from toolstream_core._completion import is_vendor_error


def test_the_provider_names() -> None:
    assert {"bedrock-converse", "ollama", "cohere"} <= set(PROVIDERS)
    for name in ("bedrock-converse", "ollama", "cohere"):
        assert Assembler(provider=name).provider == name  # type: ignore[arg-type]


@pytest.mark.parametrize(("event", "provider"), [
    ({"messageStart": {"role": "assistant"}}, "bedrock-converse"),
    ({"contentBlockDelta": {"contentBlockIndex": 0, "delta": {"text": "x"}}}, "bedrock-converse"),
    ({"throttlingException": {"message": "slow"}}, "bedrock-converse"),
    ({"model": "llama3", "created_at": "t", "message": {"role": "assistant", "content": ""}, "done": False},
     "ollama"),
    ({"type": "message-start", "id": "m", "delta": {"message": {"role": "assistant"}}}, "cohere"),
    ({"type": "tool-call-delta", "index": 0}, "cohere"),
    ({"type": "message_start", "message": {"id": "m", "content": []}}, "anthropic"),
    ({"error": {"message": "x"}}, None),
    ({"metadata": {"usage": {}}, "other": 1}, None),
    ({"done": "yes", "message": {}}, None),
])
def test_detect_provider_from_the_first_event(event: dict[str, Any], provider: str | None) -> None:
    assert detect_provider(event) == provider


def test_detect_provider_from_sdk_objects() -> None:
    ollama_types = pytest.importorskip("ollama._types")
    chunk = ollama_types.ChatResponse(model="m", message=ollama_types.Message(role="assistant"), done=False)
    assert detect_provider(chunk) == "ollama"
    v2 = pytest.importorskip("cohere.v2.types.v2chat_stream_response")
    assert detect_provider(v2.ToolCallEndV2ChatStreamResponse(index=0)) == "cohere"


@pytest.mark.parametrize(("envelope", "event"), [
    ({"event": "contentBlockStop", "data": {"contentBlockIndex": 1}}, {"contentBlockStop": {"contentBlockIndex": 1}}),
    ({"event": "internalServerException", "data": {"message": "x"}}, {"internalServerException": {"message": "x"}}),
    ({"event": "tool-call-end", "data": {"type": "tool-call-end", "index": 0}}, {"type": "tool-call-end", "index": 0}),
    ({"event": "error", "data": {"error": {"message": "x"}}}, {"error": {"message": "x"}}),
])
def test_unwrap_keeps_the_bedrock_event_name_only(envelope: dict[str, Any], event: dict[str, Any]) -> None:
    assert unwrap(envelope) == event


def test_botocore_errors() -> None:
    exceptions = pytest.importorskip("botocore.exceptions")
    client_error = exceptions.ClientError({"Error": {"Code": "ThrottlingException", "Message": "x"}}, "ConverseStream")
    stream_error = exceptions.EventStreamError(
        {"Error": {"Code": "modelStreamErrorException", "Message": "x"}}, "ConverseStream")
    assert is_vendor_error(client_error) and is_vendor_error(stream_error)
    assert not is_vendor_error(exceptions.ReadTimeoutError(endpoint_url="http://x"))
    assert not is_vendor_error(exceptions.EndpointConnectionError(endpoint_url="http://x"))


def test_ollama_and_cohere_errors() -> None:
    ollama_types = pytest.importorskip("ollama._types")
    assert is_vendor_error(ollama_types.ResponseError("model not found", 404))
    assert not is_vendor_error(ollama_types.RequestError("must provide a model"))
    errors = pytest.importorskip("cohere.errors")
    assert is_vendor_error(errors.TooManyRequestsError(body={"message": "slow"}))


def test_a_same_named_class_outside_the_sdks_is_not_a_vendor_error() -> None:
    class ResponseError(Exception):
        pass

    assert not is_vendor_error(ResponseError("mine"))
