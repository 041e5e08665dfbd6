"""The emulator's Bedrock Converse, Ollama and Cohere wires through their real SDKs.

boto3 (whose botocore parser reads the AWS event-stream frames, CRCs included),
the ``ollama`` client and ``cohere.ClientV2`` play every scenario; what they yield
is read by a deliberately naive per-vendor collector, independent of
toolstream_core, so the wire formats are checked on their own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from streams_util import scenario_through_sdk
from toolstream_core.testing import SCENARIOS, VendorEmulator
from toolstream_core.testing._drops import is_dropped_connection

pytest.importorskip("boto3")
pytest.importorskip("ollama")
pytest.importorskip("cohere")

FAMILIES = ("bedrock-converse", "ollama", "cohere")
CASES = [(api, name) for name, sc in SCENARIOS.items() for api in FAMILIES if api in sc.apis]
NORMAL_END = {"bedrock-converse": {"tool_use", "end_turn"}, "ollama": {"stop"},
              "cohere": {"TOOL_CALL", "COMPLETE"}}
LENGTH_END = {"bedrock-converse": "max_tokens", "ollama": "length", "cohere": "MAX_TOKENS"}
#: The error each SDK raises on its vendor's in-stream error (Cohere's is a finish reason).
ERROR_MODULE = {"bedrock-converse": "botocore", "ollama": "ollama"}


@dataclass
class Seen:
    """Calls as [key, id, name, argument text], the last finish signal, the text."""

    calls: dict[Any, list[Any]] = field(default_factory=dict)
    finish: str | None = None
    text: str = ""


def _bedrock(seen: Seen, ev: dict[str, Any]) -> None:
    if "contentBlockStart" in ev:
        block = ev["contentBlockStart"]
        use = block["start"]["toolUse"]
        seen.calls[block["contentBlockIndex"]] = [block["contentBlockIndex"], use["toolUseId"],
                                                  use["name"], ""]
    elif "contentBlockDelta" in ev:
        block = ev["contentBlockDelta"]
        if "toolUse" in block["delta"]:
            seen.calls[block["contentBlockIndex"]][3] += block["delta"]["toolUse"]["input"]
        else:
            seen.text += block["delta"].get("text", "")
    elif "messageStop" in ev:
        seen.finish = ev["messageStop"]["stopReason"]


def _ollama(seen: Seen, ev: Any) -> None:
    seen.text += ev.message.content or ""
    for call in ev.message.tool_calls or []:
        args = json.dumps(dict(call.function.arguments), ensure_ascii=False,
                          separators=(",", ":"))
        seen.calls[len(seen.calls)] = [len(seen.calls), None, call.function.name, args]
    if ev.done:
        seen.finish = ev.done_reason


def _cohere(seen: Seen, ev: Any) -> None:
    if ev.type == "tool-call-start":
        tc = ev.delta.message.tool_calls
        seen.calls[ev.index] = [ev.index, tc.id, tc.function.name, tc.function.arguments]
    elif ev.type == "tool-call-delta":
        seen.calls[ev.index][3] += ev.delta.message.tool_calls.function.arguments
    elif ev.type == "content-delta":
        seen.text += ev.delta.message.content.text
    elif ev.type == "message-end":
        seen.finish = ev.delta.finish_reason


COLLECT = {"bedrock-converse": _bedrock, "ollama": _ollama, "cohere": _cohere}


def collect(api: str, events: list[Any]) -> Seen:
    seen = Seen()
    for ev in events:
        COLLECT[api](seen, ev)
    return seen


def _ending_ok(api: str, ending: str, error: BaseException | None, finish: str | None) -> None:
    if ending == "drop":
        assert is_dropped_connection(error), repr(error)
    elif ending == "error" and api in ERROR_MODULE:
        assert error is not None and type(error).__module__.split(".")[0] == ERROR_MODULE[api]
    else:
        assert error is None, repr(error)
    if ending == "stop":
        assert finish in NORMAL_END[api]
    elif ending == "length":
        assert finish == LENGTH_END[api]
    elif ending == "error" and api == "cohere":
        assert finish == "ERROR"
    else:
        assert finish is None


@pytest.mark.parametrize(("api", "name"), CASES, ids=[f"{a}-{n}" for a, n in CASES])
def test_scenario_through_real_sdk(emu: VendorEmulator, api: str, name: str) -> None:
    result, seen, script = scenario_through_sdk(emu.base_url, api, name, collect)
    calls = list(seen.calls.values())
    _ending_ok(api, script.ending, result.error, seen.finish)
    if not script.calls:  # a text answer (plain, or a JSON text whole or cut)
        assert calls == [] and seen.text == script.text
        return
    if name == "resent_duplicate":
        want = script.calls[0]
        assert len(calls) == 2 and calls[0][1:] == calls[1][1:]
        assert (calls[0][2], json.loads(calls[0][3])) == (want.name, want.arguments)
        return
    if script.ending == "length" or (script.ending == "error" and api != "ollama"):
        assert [c[2] for c in calls] == [script.calls[-1].name]
        cut = script.calls[-1].args_text[: script.cut_at]
        if api == "ollama":  # whole calls only: the object read up to the cut
            assert calls[0][3] == cut + '"}'  # '{"path":"/tmp/a' -> '{"path":"/tmp/a"}'
        else:
            assert calls[0][3] == cut
        return
    assert [c[2] for c in calls] == [c.name for c in script.calls]
    for c, want in zip(calls, script.calls, strict=True):
        assert json.loads(c[3] or "{}") == want.arguments
        if api != "ollama":
            assert c[3] == want.args_text and c[1]  # the exact text, and an id
    if name == "parallel_calls" and api != "ollama":
        assert calls[0][1] != calls[1][1]


def _post(emu: VendorEmulator, path: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(emu.base_url + path, json=body, timeout=10)


def test_ollama_lines_carry_id_and_index_and_stream_by_default(emu: VendorEmulator) -> None:
    """Recent servers put ``id`` and ``function.index`` on each call (the SDK drops them); the
    server is Go, whose encoder drops a zero index (``omitempty``): call 0 has none."""
    res = _post(emu, "/api/chat", {"model": "scenario:parallel_calls", "messages": []})
    assert res.headers["content-type"] == "application/x-ndjson"
    lines = [json.loads(line) for line in res.text.splitlines()]
    calls = [tc for line in lines for tc in line["message"].get("tool_calls", [])]
    assert [c["function"].get("index") for c in calls] == [None, 1]
    assert all(c["id"].startswith("call_") for c in calls) and calls[0]["id"] != calls[1]["id"]
    assert [c["function"]["arguments"] for c in calls] == [{"city": "Paris"}, {"city": "Tokyo"}]
    assert lines[-1]["done"] is True and lines[-1]["done_reason"] == "stop"
    assert not any(line["done"] for line in lines[:-1])


def test_ollama_model_endpoints(emu: VendorEmulator) -> None:
    show = _post(emu, "/api/show", {"model": "qwen3:8b"}).json()
    assert "tools" in show["capabilities"] and show["details"]["family"]
    tags = httpx.get(emu.base_url + "/api/tags").json()
    assert "qwen3:8b" in [m["model"] for m in tags["models"]]
    assert httpx.get(emu.base_url + "/api/version").json()["version"]


def test_bedrock_stream_is_aws_event_stream(emu: VendorEmulator) -> None:
    res = _post(emu, "/model/scenario%3Asingle_call/converse-stream", {"messages": []})
    assert res.headers["content-type"] == "application/vnd.amazon.eventstream"
    assert b":event-type" in res.content and b"contentBlockDelta" in res.content


def test_non_streaming_answers(emu: VendorEmulator) -> None:
    import boto3
    import cohere
    import ollama
    from botocore.exceptions import ClientError

    br = boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=emu.base_url,
                      aws_access_key_id="a", aws_secret_access_key="b")
    user = [{"role": "user", "content": [{"text": "x"}]}]
    out = br.converse(modelId="scenario:parallel_calls", messages=user)
    uses = [b["toolUse"] for b in out["output"]["message"]["content"]]
    assert [u["input"] for u in uses] == [{"city": "Paris"}, {"city": "Tokyo"}]
    assert out["stopReason"] == "tool_use"
    cut = br.converse(modelId="scenario:truncated_length", messages=user)
    assert cut["stopReason"] == "max_tokens" and cut["output"]["message"]["content"] == []
    with pytest.raises(ClientError, match="InternalServerException"):
        br.converse(modelId="scenario:error_event", messages=user)
    oc = ollama.Client(host=emu.base_url)
    chat = oc.chat(model="scenario:no_args", messages=[{"role": "user", "content": "x"}],
                   stream=False)
    assert chat.done_reason == "stop" and chat.message.tool_calls
    assert chat.message.tool_calls[0].function.name == "get_time"
    cc = cohere.ClientV2(api_key="t", base_url=emu.base_url)
    answer = cc.chat(model="scenario:single_call", messages=[{"role": "user", "content": "x"}],
                     request_options={"max_retries": 0})
    assert answer.finish_reason == "TOOL_CALL" and answer.message.tool_calls
    assert json.loads(answer.message.tool_calls[0].function.arguments)["path"] == "/tmp/notes.txt"


# -- unpaired tool calls get the vendor's 400 -----------------------------------------------

def test_bedrock_unpaired_tool_use_is_validation_exception(emu: VendorEmulator) -> None:
    import boto3
    from botocore.exceptions import ClientError

    br = boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url=emu.base_url,
                      aws_access_key_id="a", aws_secret_access_key="b")
    user = {"role": "user", "content": [{"text": "x"}]}
    uses = {"role": "assistant", "content": [
        {"toolUse": {"toolUseId": "tooluse_a", "name": "get_time", "input": {}}},
        {"toolUse": {"toolUseId": "tooluse_b", "name": "get_time", "input": {}}}]}
    result_a = {"toolResult": {"toolUseId": "tooluse_a", "content": [{"text": "ok"}]}}
    result_b = {"toolResult": {"toolUseId": "tooluse_b", "content": [{"text": "no"}],
                               "status": "error"}}
    with pytest.raises(ClientError) as info:
        br.converse_stream(modelId="m", messages=[user, uses, {"role": "user",
                                                               "content": [result_a]}])
    assert info.value.response["Error"]["Code"] == "ValidationException"
    assert "messages.2.content" in str(info.value) and "tooluse_b" in str(info.value)
    good = br.converse(modelId="m", messages=[user, uses, {"role": "user",
                                                            "content": [result_b, result_a]}])
    assert good["stopReason"] == "end_turn"


CHAT_CALLS = {"role": "assistant", "content": "", "tool_calls": [
    {"id": "c_a", "type": "function", "function": {"name": "get_time", "arguments": "{}"}},
    {"id": "c_b", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}]}


def test_ollama_unpaired_tool_call_is_400(emu: VendorEmulator) -> None:
    import ollama

    oc = ollama.Client(host=emu.base_url)
    user = {"role": "user", "content": "x"}
    calls = {"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "get_time", "arguments": {}}},
        {"function": {"name": "get_weather", "arguments": {"city": "Rome"}}}]}
    one = {"role": "tool", "content": "ok", "tool_name": "get_time"}
    with pytest.raises(ollama.ResponseError) as info:
        oc.chat(model="m", messages=[user, calls, one], stream=False)
    assert info.value.status_code == 400 and "get_weather" in info.value.error
    good = oc.chat(model="m", messages=[user, calls, one, one], stream=False)
    assert good.done


def test_cohere_unpaired_tool_call_is_400(emu: VendorEmulator) -> None:
    import cohere

    cc = cohere.ClientV2(api_key="t", base_url=emu.base_url)
    user = {"role": "user", "content": "x"}
    one = {"role": "tool", "tool_call_id": "c_b", "content": "ok"}
    two = {"role": "tool", "tool_call_id": "c_a", "content": "ok"}
    with pytest.raises(cohere.BadRequestError) as info:
        cc.chat(model="m", messages=[user, CHAT_CALLS, one],  # type: ignore[list-item]
                request_options={"max_retries": 0})
    assert "c_a" in str(info.value.body)
    good = cc.chat(model="m", messages=[user, CHAT_CALLS, one, two],  # type: ignore[list-item]
                   request_options={"max_retries": 0})
    assert good.finish_reason == "COMPLETE"


@pytest.mark.parametrize("api", FAMILIES)
async def test_async_streams_reach_the_gate(emu: VendorEmulator, api: str) -> None:
    """`aopen_stream` on each family's async path (boto3's on a worker thread) into aassemble."""
    from toolstream_core import aassemble
    from toolstream_core.testing import TOOLS
    from toolstream_core.vendors import aopen_stream, declare_tools, make_client

    client = make_client(api, api_key="t", base_url=emu.base_url, asynchronous=True)
    for name, committed, rejected in (("parallel_calls", ["get_weather"] * 2, []),
                                      ("truncated_length", [], ["write_file"])):
        stream = await aopen_stream(api, client, model=f"scenario:{name}", contents="x",
                                    tools=declare_tools(api, TOOLS))
        turn = await aassemble(stream, tools=TOOLS, provider=api)  # type: ignore[arg-type]
        assert [c.name for c in turn.committed] == committed, (api, name)
        assert [c.name for c in turn.rejected] == rejected, (api, name)
        if name == "parallel_calls":
            assert [c.arguments for c in turn.committed] == [{"city": "Paris"},
                                                             {"city": "Tokyo"}]


def test_chat_ollama_that_checks_its_model_can_be_built(emu: VendorEmulator) -> None:
    """``validate_model_on_init`` asks ``/api/tags`` whether the model is pulled."""
    chat_ollama = pytest.importorskip("langchain_ollama").ChatOllama
    chat_ollama(model="qwen3:8b", base_url=emu.base_url, validate_model_on_init=True)
    with pytest.raises(ValueError, match="not found in Ollama"):
        chat_ollama(model="nope:1b", base_url=emu.base_url, validate_model_on_init=True)
