"""The vendor emulator through the real SDKs: every scenario on every API it exists on.

The observations here are made with a deliberately naive per-vendor collector
(concatenate fragments by the vendor's key), independent of toolstream_core, so
the emulator's wire format is checked on its own.
"""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from streams_util import scenario_through_sdk
from toolstream_core.testing import SCENARIOS, TOOLS, VendorEmulator
from toolstream_core.testing._clients import stream_sdk
from toolstream_core.testing._drops import is_dropped_connection
from toolstream_core.testing._scenarios import split_text

#: The SSE APIs this file's collector reads (the other families: test_emulator_families.py).
SSE_APIS = ("openai-chat", "openai-responses", "anthropic", "gemini")
CASES = [(api, name) for name, sc in SCENARIOS.items() for api in SSE_APIS if api in sc.apis]
NORMAL_END = {"openai-chat": {"tool_calls", "stop"}, "openai-responses": {"response.completed"},
              "anthropic": {"tool_use", "end_turn"}, "gemini": {"STOP"}}
LENGTH_END = {"openai-chat": "length", "openai-responses": "response.incomplete",
              "anthropic": "max_tokens", "gemini": "MAX_TOKENS"}


@dataclass
class Seen:
    """Calls as (key, id, name, raw text), the last finish signal, and odd facts."""

    calls: dict[Any, list[Any]] = field(default_factory=dict)
    finish: str | None = None
    indexes: list[Any] = field(default_factory=list)
    text: str = ""


def _get(obj: Any, name: str) -> Any:
    return getattr(obj, name, None)


def _chat(seen: Seen, ev: Any) -> None:
    for choice in ev.choices:
        seen.text += choice.delta.content or ""
        for tc in choice.delta.tool_calls or []:
            seen.indexes.append(tc.index)
            key = tc.index if tc.index is not None else len(seen.calls) - (0 if tc.id else 1)
            entry = seen.calls.setdefault(key, [key, None, None, ""])
            entry[1] = entry[1] or tc.id or None
            entry[2] = entry[2] or (tc.function.name if tc.function else None) or None
            entry[3] += (tc.function.arguments if tc.function else None) or ""
        seen.finish = choice.finish_reason or seen.finish


def _responses(seen: Seen, ev: Any) -> None:
    if ev.type == "response.output_item.added" and ev.item.type == "function_call":
        seen.calls[ev.item.id] = [ev.output_index, ev.item.call_id, ev.item.name, ""]
    elif ev.type == "response.function_call_arguments.delta":
        seen.calls[ev.item_id][3] += ev.delta
    elif ev.type == "response.output_text.delta":
        seen.text += ev.delta
    elif ev.type in ("response.completed", "response.incomplete", "response.failed"):
        seen.finish = ev.type


def _anthropic(seen: Seen, ev: Any) -> None:
    if ev.type == "content_block_start" and ev.content_block.type in (
            "tool_use", "server_tool_use"):
        seen.calls[ev.index] = [ev.index, ev.content_block.id, ev.content_block.name, ""]
    elif ev.type == "content_block_delta" and ev.delta.type == "input_json_delta":
        seen.calls[ev.index][3] += ev.delta.partial_json
    elif ev.type == "content_block_delta" and ev.delta.type == "text_delta":
        seen.text += ev.delta.text
    elif ev.type == "message_delta":
        seen.finish = ev.delta.stop_reason


def _gemini(seen: Seen, ev: Any) -> None:
    for cand in ev.candidates or []:
        for part in (cand.content.parts if cand.content else None) or []:
            fc = part.function_call
            seen.text += part.text or ""
            if fc is None:
                continue
            if fc.name:
                args = json.dumps(fc.args, ensure_ascii=False, separators=(",", ":")) \
                    if fc.args is not None else ""
                seen.calls[len(seen.calls)] = [len(seen.calls), fc.id, fc.name, args, {}]
            for pa in fc.partial_args or []:
                last = seen.calls[len(seen.calls) - 1][4]
                last[pa.json_path] = last.get(pa.json_path, "") + (pa.string_value or "")
        if cand.finish_reason:
            seen.finish = cand.finish_reason.value


_COLLECT = {"openai-chat": _chat, "openai-responses": _responses, "anthropic": _anthropic,
            "gemini": _gemini}


def collect(api: str, events: list[Any]) -> Seen:
    """What the SDK's events say, read by one short reader per API."""
    seen = Seen()
    read = _COLLECT[api]
    for ev in events:
        read(seen, ev)
    return seen


def _gemini_args(entry: list[Any]) -> dict[str, Any]:
    if entry[3]:
        return dict(json.loads(entry[3]))
    return {path.removeprefix("$."): value for path, value in entry[4].items()}


def _check_ending(api: str, script: Any, result: Any, seen: Seen) -> None:
    """How the stream ended: the SDK's error (or none) and the vendor's finish signal."""
    if script.ending == "drop":
        assert is_dropped_connection(result.error), repr(result.error)
    elif script.ending == "error":
        # the SDK raises its own API error class on the vendor's error event
        assert result.error is not None and type(result.error).__module__.split(".")[0] in {
            "openai", "anthropic", "google"}, result.error
    else:
        assert result.error is None, result.error

    if script.ending == "stop":
        assert seen.finish in NORMAL_END[api]
    elif script.ending == "length":
        assert seen.finish == LENGTH_END[api]
    elif script.ending == "pause":
        assert seen.finish == "pause_turn"
    else:
        assert seen.finish is None


@pytest.mark.parametrize(("api", "name"), CASES, ids=[f"{a}-{n}" for a, n in CASES])
def test_scenario_through_real_sdk(emu: VendorEmulator, api: str, name: str) -> None:
    result, seen, script = scenario_through_sdk(emu.base_url, api, name, collect)
    calls = list(seen.calls.values())
    _check_ending(api, script, result, seen)

    if name == "pause_turn":  # the vendor's own tool, paused mid-turn: no client call
        assert [(c[1][:11], c[2]) for c in calls] == [("srvtoolu_01", "web_search")]
        assert seen.text == script.text
        return
    if not script.calls:  # a text answer (plain, or a JSON text whole or cut)
        assert calls == [] and seen.text == script.text
        return
    if name == "resent_duplicate":
        want = script.calls[0]
        if api == "openai-chat":
            assert len(calls) == 1 and calls[0][3] == want.args_text * 2
        else:
            assert len(calls) == 2 and calls[0][1] == calls[1][1] and calls[0][1]
            for c in calls:
                got = _gemini_args(c) if api == "gemini" else json.loads(c[3])
                assert (c[2], got) == (want.name, want.arguments)
        return
    if script.ending in ("length", "error"):
        assert [c[2] for c in calls] == [script.calls[-1].name]
        cut = script.calls[-1].args_text[: script.cut_at]
        if api == "gemini":  # partialArgs: the string values sent so far are a prefix
            sent = _gemini_args(calls[0])
            full = script.calls[-1].arguments
            assert sent and all(full[k].startswith(v) for k, v in sent.items())
            assert sent != full
        else:
            assert calls[0][3] == cut
        if name == "truncated_length" and api != "gemini":
            assert calls[0][3] == '{"path":"/tmp/a'
        return
    assert [c[2] for c in calls] == [c.name for c in script.calls]
    for c, want in zip(calls, script.calls, strict=True):
        got = _gemini_args(c) if api == "gemini" else json.loads(c[3] or "{}")
        assert got == want.arguments
        if api != "gemini":
            assert c[3] == want.args_text  # the exact text, not just the value
        if name == "parallel_no_ids":
            assert c[1] is None, "Gemini's id-less parallel calls"
        elif api != "gemini" or name != "partial_args":
            assert c[1], "every call carries an id"
    if name == "missing_index":
        assert seen.indexes and all(i is None for i in seen.indexes)
    if name == "parallel_calls":
        assert calls[0][1] != calls[1][1]


def test_chat_variants_put_identity_where_the_scenario_says(emu: VendorEmulator) -> None:
    rep = stream_sdk("openai-chat", base_url=emu.base_url, model="scenario:id_name_repeated")
    deltas = [tc for ev in rep.events for ch in ev.choices for tc in ch.delta.tool_calls or []]
    assert len(deltas) > 2 and all(tc.id and tc.function.name == "write_file" for tc in deltas)
    empty = stream_sdk("openai-chat", base_url=emu.base_url, model="scenario:empty_id_later")
    deltas = [tc for ev in empty.events for ch in ev.choices for tc in ch.delta.tool_calls or []]
    assert deltas[0].id and all(tc.id == "" and tc.function.name == "" for tc in deltas[1:])
    par = stream_sdk("openai-chat", base_url=emu.base_url, model="scenario:parallel_calls")
    order = [tc.index for ev in par.events for ch in ev.choices for tc in ch.delta.tool_calls or []]
    fragments = order[2:]
    switches = sum(1 for a, b in itertools.pairwise(fragments) if a != b)
    assert switches >= 2, f"fragments are not interleaved: {order}"


def test_same_seed_same_bytes_other_seed_other_cuts() -> None:
    def raw(seed: int) -> list[str]:
        with VendorEmulator(seed=seed) as e:
            res = stream_sdk("anthropic", base_url=e.base_url, model="scenario:single_call")
        return [ev.delta.partial_json for ev in res.events
                if ev.type == "content_block_delta" and ev.delta.type == "input_json_delta"]

    a, b, c = raw(0), raw(0), raw(1)
    assert a == b
    assert "".join(a) == "".join(c) and a != c


def test_cutter_cuts_inside_escapes_strings_and_next_to_multibyte() -> None:
    text = json.dumps({"path": "/tmp/x", "content": "naïve \U0001f680 \"q\"\n 世"},
                      ensure_ascii=True, separators=(",", ":"))
    for seed in range(30):
        pieces = split_text(text, random.Random(seed))
        assert "".join(pieces) == text and all(pieces)
        bounds = {sum(len(p) for p in pieces[:i]) for i in range(1, len(pieces))}
        esc = text.index("\\u")
        assert any(esc < b < esc + 6 for b in bounds), "no cut inside a \\uXXXX escape"
        start = text.index('"/tmp/x"') + 1
        assert any(start < b < start + 6 for b in bounds), "no cut inside a string value"


def test_queue_then_default_text_and_model_override(emu: VendorEmulator) -> None:
    emu.clear()
    emu.queue("anthropic", "no_args", "single_call")
    first = collect("anthropic", stream_sdk("anthropic", base_url=emu.base_url,
                                            model="claude").events)
    override = collect("anthropic", stream_sdk("anthropic", base_url=emu.base_url,
                                               model="scenario:parallel_calls").events)
    second = collect("anthropic", stream_sdk("anthropic", base_url=emu.base_url,
                                             model="claude").events)
    third = collect("anthropic", stream_sdk("anthropic", base_url=emu.base_url,
                                            model="claude").events)
    assert [c[2] for c in first.calls.values()] == ["get_time"]
    assert [c[2] for c in override.calls.values()] == ["get_weather", "get_weather"]
    assert [c[2] for c in second.calls.values()] == ["write_file"]
    assert third.calls == {} and third.text
    reqs = emu.requests
    assert [r.api for r in reqs] == ["anthropic"] * 4
    _api, path, body = reqs[0]
    assert path == "/v1/messages" and body["model"] == "claude" and body["stream"] is True
    assert [t["name"] for t in body["tools"]] == list(TOOLS)


def test_queue_rejects_scenarios_an_api_does_not_have(emu: VendorEmulator) -> None:
    with pytest.raises(ValueError, match="openai-chat"):
        emu.queue("anthropic", "missing_index")
    with pytest.raises(ValueError, match="unknown scenario"):
        emu.queue("gemini", "nope")
    with pytest.raises(ValueError, match="unknown API"):
        emu.queue("mistral", "text")


def test_soft_drop_ends_cleanly_with_marker() -> None:
    with VendorEmulator(soft_drop=True) as e:
        r = httpx.post(e.base_url + "/v1/messages", json={
            "model": "scenario:dropped_connection", "stream": True, "max_tokens": 5,
            "messages": [{"role": "user", "content": "hi"}]})
    assert r.status_code == 200 and r.headers["x-toolstream-transport"] == "dropped"
    assert b"message_stop" not in r.content and b"input_json_delta" in r.content


def test_non_streaming_answers(emu: VendorEmulator) -> None:
    import anthropic
    import openai
    from google import genai
    from google.genai import types

    oc = openai.OpenAI(base_url=emu.base_url + "/v1", api_key="t", max_retries=0)
    chat = oc.chat.completions.create(model="scenario:resent_duplicate",
                                      messages=[{"role": "user", "content": "x"}])
    tc = chat.choices[0].message.tool_calls[0]  # type: ignore[index]
    assert tc.function.arguments == '{"city":"Paris"}' * 2  # type: ignore[union-attr]
    resp = oc.responses.create(model="scenario:truncated_length", input="x")
    assert resp.status == "incomplete" and resp.incomplete_details is not None
    assert resp.incomplete_details.reason == "max_output_tokens"
    ac = anthropic.Anthropic(base_url=emu.base_url, api_key="t", max_retries=0)
    msg = ac.messages.create(model="scenario:parallel_calls", max_tokens=5,
                             messages=[{"role": "user", "content": "x"}])
    assert [b.input for b in msg.content] == [{"city": "Paris"}, {"city": "Tokyo"}]  # type: ignore[union-attr]
    assert msg.stop_reason == "tool_use"
    gc = genai.Client(api_key="t", http_options=types.HttpOptions(base_url=emu.base_url))
    g = gc.models.generate_content(model="scenario:no_args", contents="x")
    assert g.function_calls and g.function_calls[0].name == "get_time"
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.post(emu.base_url + "/v1/chat/completions",
                   json={"model": "scenario:dropped_connection", "messages": []})
    with pytest.raises(openai.InternalServerError):
        oc.chat.completions.create(model="scenario:error_event",
                                   messages=[{"role": "user", "content": "x"}])


# -- unpaired tool calls get the vendor's 400 --------------------------------------------------

CHAT_CALL = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_a", "type": "function", "function": {"name": "get_time", "arguments": "{}"}},
    {"id": "call_b", "type": "function", "function": {"name": "get_time", "arguments": "{}"}}]}


def _post(emu: VendorEmulator, path: str, body: dict[str, Any]) -> httpx.Response:
    return httpx.post(emu.base_url + path, json=body, timeout=10)


def test_openai_chat_unpaired_tool_call_is_400(emu: VendorEmulator) -> None:
    user = {"role": "user", "content": "hi"}
    one = {"role": "tool", "tool_call_id": "call_a", "content": "ok"}
    two = {"role": "tool", "tool_call_id": "call_b", "content": "ok"}
    bad = _post(emu, "/v1/chat/completions", {"model": "m", "messages": [user, CHAT_CALL, one]})
    assert bad.status_code == 400
    err = bad.json()["error"]
    assert err["type"] == "invalid_request_error" and "call_b" in err["message"]
    assert err["message"].startswith("An assistant message with 'tool_calls' must be followed")
    stray = _post(emu, "/v1/chat/completions", {"model": "m", "messages": [user, one]})
    assert stray.status_code == 400 and "role 'tool'" in stray.json()["error"]["message"]
    good = _post(emu, "/v1/chat/completions",
                 {"model": "m", "messages": [user, CHAT_CALL, two, one, user]})
    assert good.status_code == 200


def test_openai_responses_unpaired_function_call_is_400(emu: VendorEmulator) -> None:
    call = {"type": "function_call", "call_id": "call_a", "name": "get_time", "arguments": "{}"}
    out = {"type": "function_call_output", "call_id": "call_a", "output": "ok"}
    bad = _post(emu, "/v1/responses", {"model": "m", "input": [call]})
    assert bad.status_code == 400 and "call_a" in bad.json()["error"]["message"]
    assert _post(emu, "/v1/responses", {"model": "m", "input": [call, out]}).status_code == 200
    orphan = {**out, "call_id": "call_z"}
    assert _post(emu, "/v1/responses", {"model": "m", "input": [orphan]}).status_code == 400


def test_anthropic_unpaired_tool_use_is_400(emu: VendorEmulator) -> None:
    use = {"role": "assistant", "content": [
        {"type": "text", "text": "ok"},
        {"type": "tool_use", "id": "toolu_a", "name": "get_time", "input": {}},
        {"type": "tool_use", "id": "toolu_b", "name": "get_time", "input": {}}]}
    res_a = {"type": "tool_result", "tool_use_id": "toolu_a", "content": "ok"}
    res_b = {"type": "tool_result", "tool_use_id": "toolu_b", "content": "x", "is_error": True}
    user = {"role": "user", "content": "hi"}
    base = {"model": "m", "max_tokens": 5}
    bad = _post(emu, "/v1/messages", {**base, "messages": [
        user, use, {"role": "user", "content": [res_a]}]})
    assert bad.status_code == 400
    body = bad.json()
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert "`tool_use` ids were found without `tool_result` blocks immediately after: toolu_b" \
        in body["error"]["message"]
    late = _post(emu, "/v1/messages", {**base, "messages": [
        user, use, user, {"role": "user", "content": [res_a, res_b]}]})
    assert late.status_code == 400
    good = _post(emu, "/v1/messages", {**base, "messages": [
        user, use, {"role": "user", "content": [res_b, res_a, {"type": "text", "text": "go"}]}]})
    assert good.status_code == 200


def test_gemini_unpaired_function_call_is_400(emu: VendorEmulator) -> None:
    path = "/v1beta/models/gemini-x:generateContent"
    user = {"role": "user", "parts": [{"text": "hi"}]}
    calls = {"role": "model", "parts": [{"functionCall": {"name": "get_time", "args": {}}},
                                        {"functionCall": {"name": "get_time", "args": {}}}]}
    one = {"role": "user", "parts": [{"functionResponse": {"name": "get_time",
                                                            "response": {"ok": 1}}}]}
    two = {"role": "user", "parts": one["parts"] * 2}
    bad = _post(emu, path, {"contents": [user, calls, one]})
    assert bad.status_code == 400
    assert bad.json()["error"]["status"] == "INVALID_ARGUMENT"
    assert "number of function response parts" in bad.json()["error"]["message"]
    assert _post(emu, path, {"contents": [user, calls, two]}).status_code == 200
    assert _post(emu, path, {"contents": [user, one]}).status_code == 400


def test_unknown_path_and_scenario_on_wrong_api(emu: VendorEmulator) -> None:
    assert _post(emu, "/v2/nothing", {}).status_code == 404
    wrong = _post(emu, "/v1/messages", {"model": "scenario:missing_index", "max_tokens": 5,
                                        "messages": [{"role": "user", "content": "x"}]})
    assert wrong.status_code == 400 and wrong.json()["type"] == "error"


def test_queue_body_serves_the_bytes_then_scenarios_resume(emu: VendorEmulator) -> None:
    import openai

    emu.clear()
    chunk = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m",
             "choices": [{"index": 0, "delta": {"content": "raw body"}, "finish_reason": "stop"}]}
    raw = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
    emu.queue_body("openai-chat", raw)
    client = openai.OpenAI(base_url=emu.base_url + "/v1", api_key="t", max_retries=0)
    messages: Any = [{"role": "user", "content": "x"}]
    first = list(client.chat.completions.create(model="m", messages=messages, stream=True))
    assert [c.choices[0].delta.content for c in first] == ["raw body"]
    second = collect("openai-chat", stream_sdk("openai-chat", base_url=emu.base_url, model="m").events)
    assert second.text and second.text != "raw body"  # the default scenario again
    assert [r.api for r in emu.requests] == ["openai-chat", "openai-chat"]


def test_queue_body_status_headers_and_drop(emu: VendorEmulator) -> None:
    emu.clear()
    emu.queue_body("anthropic", b'{"type":"error"}', status=529,
                   headers={"Content-Type": "application/json", "x-extra": "1"})
    emu.queue_body("anthropic", b"event: ping\ndata: {}\n\n", drop=True)
    request = {"model": "claude", "stream": True, "max_tokens": 5,
               "messages": [{"role": "user", "content": "hi"}]}
    r = httpx.post(emu.base_url + "/v1/messages", json=request)
    assert (r.status_code, r.headers["x-extra"], r.content) == (529, "1", b'{"type":"error"}')
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.post(emu.base_url + "/v1/messages", json=request)
    assert emu.statuses == [529, 200]  # the dropped body's status line went out
    with pytest.raises(ValueError, match="unknown API"):
        emu.queue_body("nope", b"")


# -- a stalled stream --------------------------------------------------------------------------

#: The longest a stall test waits for anything: a bound against a hang, never a speed claim.
GUARD_S = 20.0


_STALL_REQUESTS = {
    "openai-chat": ("/v1/chat/completions", {"model": "m", "stream": True, "messages": []}),
    "anthropic": ("/v1/messages", {"model": "m", "stream": True, "max_tokens": 100, "messages": []}),
}


@pytest.mark.parametrize("api", sorted(_STALL_REQUESTS))
def test_a_stalled_stream_sends_a_call_start_then_waits_for_the_client_to_close(api: str) -> None:
    """``queue_stall``: the call's first frames arrive, then nothing (a read gives up), and
    only the client's own close sets the stall's ``closed``."""
    path, payload = _STALL_REQUESTS[api]
    with VendorEmulator() as emu:
        stall = emu.queue_stall(api)
        timeout = httpx.Timeout(GUARD_S, read=0.3)
        with httpx.Client(base_url=emu.base_url, timeout=timeout) as client, \
                client.stream("POST", path, json=payload) as response:
            chunks = response.iter_raw()
            received = next(chunks)
            assert not stall.closed.is_set()  # the client holds the connection
            with pytest.raises(httpx.ReadTimeout):  # the frames come, then nothing, ever
                for chunk in chunks:  # (the timeout closes the connection)
                    received += chunk
            assert b"write_file" in received  # the call had started
        assert stall.closed.wait(GUARD_S)
        assert emu.stalls == [stall]
        assert [r.api for r in emu.requests] == [api]
        # the stall was played once: the next request gets a scenario again
        assert b"data" in httpx.post(emu.base_url + path, json=payload, timeout=GUARD_S).content


def test_a_stall_not_closed_by_the_client_is_not_reported_closed() -> None:
    with VendorEmulator() as emu:
        stall = emu.queue_stall("openai-chat")
        path, payload = _STALL_REQUESTS["openai-chat"]
        with httpx.Client(base_url=emu.base_url, timeout=GUARD_S) as client, \
                client.stream("POST", path, json=payload) as response:
            chunks = response.iter_raw()  # held: a dropped generator would close the response
            next(chunks)
            emu.stop()  # the server ends the connection, not the client
        assert not stall.closed.is_set()


@pytest.mark.parametrize(("frames", "events"), [(0, 0), (3, 3), (-1, None)])
def test_a_stall_can_stop_a_scenario_after_any_frame(frames: int, events: int | None) -> None:
    """``queue_stall(scenario=, frames=)``: the first ``frames`` frames of a scenario, then
    nothing (``0``: not even the first chunk; ``-1``: all but the stream's last frame, here
    single_call's ``[DONE]``, so the finish chunk has gone out)."""
    path, payload = _STALL_REQUESTS["openai-chat"]
    with VendorEmulator() as emu:
        emu.queue_stall("openai-chat", scenario="single_call", frames=frames)
        received = b""
        timeout = httpx.Timeout(GUARD_S, read=0.3)
        with httpx.Client(base_url=emu.base_url, timeout=timeout) as client, \
                client.stream("POST", path, json=payload) as response:
            assert response.status_code == 200
            with pytest.raises(httpx.ReadTimeout):
                for chunk in response.iter_raw():
                    received += chunk
    sent = [line for line in received.split(b"\n") if line.startswith(b"data: ")]
    if events is not None:
        assert len(sent) == events
    else:
        assert b'"finish_reason":"tool_calls"' in sent[-1] and b"[DONE]" not in received


def test_a_stall_refuses_a_scenario_its_wire_does_not_have() -> None:
    with VendorEmulator() as emu, pytest.raises(ValueError, match="partial_args"):
        emu.queue_stall("openai-chat", scenario="partial_args")
