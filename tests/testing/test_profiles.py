"""OpenAI-compatible server profiles: each quirk on the wire, every scenario through the core.

The wire checks read the raw SSE bytes (httpx, no SDK) so each documented quirk is
seen as the server sends it; the scenario checks go through the real OpenAI SDK
into the core ``Assembler``, the way a user's stack would meet that server.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest
from profile_util import profile_emulators
from toolstream_core import Assembler, Turn
from toolstream_core.testing import PROFILES, SCENARIOS, TOOLS, VendorEmulator
from toolstream_core.testing._clients import DEFAULT_PROMPT, openai_chat_tools
from toolstream_core.testing._scenarios import build_script, scenario_rng

CHAT = [n for n, s in SCENARIOS.items() if "openai-chat" in s.apis]
CASES = [(p, n) for p in PROFILES for n in CHAT]
LIMIT = 777  # the request's max_tokens; a cut reports exactly this many output tokens


@pytest.fixture(scope="module")
def emus() -> Iterator[dict[str, VendorEmulator]]:
    with profile_emulators() as started:
        yield started


def raw_chunks(emu: VendorEmulator, scenario: str, **extra: Any) -> tuple[list[Any], bytes]:
    """The SSE ``data:`` payloads (parsed JSON, or the raw string) and the whole body."""
    body = {"model": f"scenario:{scenario}", "stream": True, "messages": [
        {"role": "user", "content": "x"}], **extra}
    r = httpx.post(emu.base_url + "/v1/chat/completions", json=body, timeout=30)
    assert r.status_code == 200
    out: list[Any] = []
    for block in r.content.split(b"\n\n"):
        for line in block.split(b"\n"):
            if line.startswith(b"data: "):
                payload = line[6:].decode()
                out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out, r.content


def tool_deltas(chunks: list[Any]) -> list[dict[str, Any]]:
    return [tc for c in chunks if isinstance(c, dict) for ch in c.get("choices") or []
            for tc in (ch.get("delta") or {}).get("tool_calls") or []]


def finishes(chunks: list[Any]) -> list[str]:
    return [ch["finish_reason"] for c in chunks if isinstance(c, dict)
            for ch in c.get("choices") or [] if ch.get("finish_reason")]


def usages(chunks: list[Any]) -> list[dict[str, Any]]:
    return [c["usage"] for c in chunks if isinstance(c, dict) and c.get("usage")]


# -- the quirks, as each server sends them ------------------------------------------------------


def test_vllm_reports_a_cut_call_as_finished_with_the_limit_in_usage(emus: dict[str, Any]) -> None:
    chunks, _ = raw_chunks(emus["vllm"], "truncated_length", max_tokens=LIMIT,
                           stream_options={"include_usage": True})
    assert finishes(chunks) == ["tool_calls"]  # the lie (vllm#53269)
    assert usages(chunks)[-1]["completion_tokens"] == LIMIT
    deltas = tool_deltas(chunks)
    assert deltas[0]["id"].startswith("chatcmpl-tool-")
    assert "".join(d["function"]["arguments"] for d in deltas) == '{"path":"/tmp/a'
    plain, _ = raw_chunks(emus["vllm"], "single_call")
    assert usages(plain) == []  # usage only when asked


def test_ollama_omits_index_and_finishes_tool_calls_with_stop(emus: dict[str, Any]) -> None:
    chunks, _ = raw_chunks(emus["ollama"], "parallel_calls")
    deltas = tool_deltas(chunks)
    assert [d["function"]["name"] for d in deltas] == ["get_weather", "get_weather"]
    assert all("index" not in d and d["id"].startswith("call_") for d in deltas)
    assert [json.loads(d["function"]["arguments"]) for d in deltas] == [
        {"city": "Paris"}, {"city": "Tokyo"}]
    carrying = [c for c in chunks if isinstance(c, dict) and tool_deltas([c])]
    assert len(carrying) == 1  # every call whole, in one delta
    assert finishes(chunks) == ["stop"]


def test_deepseek_always_reports_usage_on_the_finish_chunk(emus: dict[str, Any]) -> None:
    chunks, _ = raw_chunks(emus["deepseek"], "single_call")
    dicts = [c for c in chunks if isinstance(c, dict)]
    assert all("usage" in c for c in dicts)
    assert [c["usage"] is None for c in dicts].count(False) == 1
    last = dicts[-1]
    assert last["choices"][0]["finish_reason"] == "tool_calls" and last["usage"]
    assert any((c["choices"][0]["delta"].get("reasoning_content")) for c in dicts)


def test_groq_sends_whole_calls_and_usage_in_x_groq(emus: dict[str, Any]) -> None:
    chunks, _ = raw_chunks(emus["groq"], "parallel_calls",
                           stream_options={"include_usage": True})
    deltas = tool_deltas(chunks)
    assert [d["index"] for d in deltas] == [0, 1]
    assert all(json.loads(d["function"]["arguments"]) for d in deltas)
    fin = next(c for c in chunks if isinstance(c, dict) and finishes([c]))
    assert fin["x_groq"]["usage"] == fin["usage"]
    assert chunks[-2]["choices"] == [] and chunks[-2]["usage"]
    _, body = raw_chunks(emus["groq"], "error_event")
    assert b"event: error" in body and b"tool_use_failed" in body and b"[DONE]" not in body


def test_mistral_puts_the_finish_and_usage_on_the_call_chunk(emus: dict[str, Any]) -> None:
    chunks, _ = raw_chunks(emus["mistral"], "single_call")
    deltas = tool_deltas(chunks)
    assert len(deltas) == 1 and "index" not in deltas[0] and "type" not in deltas[0]
    call_chunk = next(c for c in chunks if isinstance(c, dict) and tool_deltas([c]))
    assert call_chunk["choices"][0]["finish_reason"] == "tool_calls" and call_chunk["usage"]
    assert finishes(chunks) == ["tool_calls"]


def test_openrouter_comments_empty_fragments_and_two_finish_chunks(emus: dict[str, Any]) -> None:
    chunks, body = raw_chunks(emus["openrouter"], "single_call")
    assert b": OPENROUTER PROCESSING" in body.split(b"data: ")[0]
    deltas = tool_deltas(chunks)
    assert deltas[0]["id"].startswith("functions.write_file:0")
    assert [d["function"]["arguments"] for d in deltas[1:3]] == ["", ""]
    assert finishes(chunks) == ["tool_calls", "tool_calls"]
    assert usages(chunks)[-1]["completion_tokens"] > 0


def test_litellm_repeats_each_call_after_the_finish_double_encoded(
        emus: dict[str, Any]) -> None:
    chunks, _ = raw_chunks(emus["litellm"], "parallel_calls")
    finish_at = next(i for i, c in enumerate(chunks) if isinstance(c, dict) and finishes([c]))
    before, summary = tool_deltas(chunks[:finish_at]), tool_deltas(chunks[finish_at:])
    firsts = [d for d in before if d.get("id")]
    text = {d["index"]: "" for d in firsts}
    for d in before:
        text[d["index"]] += d["function"]["arguments"]
    assert [(d["id"], d["index"], d["function"]["name"]) for d in summary] == [
        (d["id"], d["index"], d["function"]["name"]) for d in firsts]
    for again in summary:  # one decode gives back exactly the first copy's text
        assert json.loads(again["function"]["arguments"]) == text[again["index"]]
    assert finishes(chunks) == ["tool_calls"]


def test_litellm_ollama_object_arguments_at_index_zero(emus: dict[str, Any]) -> None:
    chunks, _ = raw_chunks(emus["litellm-ollama"], "parallel_calls")
    deltas = tool_deltas(chunks)
    assert [d["index"] for d in deltas] == [0, 0]
    assert [d["function"]["arguments"] for d in deltas] == [{"city": "Paris"}, {"city": "Tokyo"}]
    assert deltas[0]["id"] != deltas[1]["id"]
    assert finishes(chunks) == ["stop"]
    assert len({c["id"] for c in chunks if isinstance(c, dict)}) > 2
    cut, _ = raw_chunks(emus["litellm-ollama"], "truncated_length")
    assert [d["function"]["arguments"] for d in tool_deltas(cut)] == ['{"path":"/tmp/a']


# -- every scenario on every profile, through the real SDK and the core ----------------------


def stream_turn(emu: VendorEmulator, scenario: str, **assembler: Any) -> tuple[Turn, list[Any]]:
    client = openai.OpenAI(base_url=emu.base_url + "/v1", api_key="test", max_retries=0)
    events: list[Any] = []
    error: BaseException | None = None
    try:
        for ev in client.chat.completions.create(
                model=f"scenario:{scenario}", messages=[{"role": "user", "content": DEFAULT_PROMPT}],
                tools=openai_chat_tools(), stream=True, max_tokens=LIMIT,
                stream_options={"include_usage": True}):
            events.append(ev)
    except Exception as exc:  # the stream's end, as assemble() treats it
        error = exc
    a = Assembler(tools=TOOLS, provider="openai-chat", **assembler)
    for ev in events:
        a.feed(ev)
    return a.finish(transport_complete=error is None, error=error), events


def check(turn: Turn, scenario: str) -> None:
    expect = SCENARIOS[scenario].expect
    assert tuple(c.name for c in turn.committed) == expect.committed, \
        [(c.name, str(c.reason), c.detail) for c in turn.rejected]
    assert tuple(c.name for c in turn.rejected) == expect.rejected
    assert all(str(c.reason) in expect.reasons for c in turn.rejected), \
        [(c.reason, c.detail) for c in turn.rejected]
    assert turn.complete is expect.complete
    want = build_script(scenario, scenario_rng(0, "openai-chat", scenario)).calls
    if expect.committed:  # the values the model meant, whatever shape the server gave them
        assert [c.arguments for c in turn.committed] == [w.arguments for w in want]


@pytest.mark.parametrize(("profile", "scenario"), CASES, ids=[f"{p}-{n}" for p, n in CASES])
def test_every_scenario_on_every_profile(emus: dict[str, Any], profile: str,
                                         scenario: str) -> None:
    turn, _ = stream_turn(emus[profile], scenario)
    if profile == "vllm" and scenario in ("truncated_length", "structured_call_truncated"):
        # Without the limit the core believes the finish: the cut call is still never
        # committed (its text does not parse), but the turn looks complete.
        assert not turn.committed
        assert tuple(c.name for c in turn.rejected) == SCENARIOS[scenario].expect.rejected
        return
    check(turn, scenario)


@pytest.mark.parametrize("profile", list(PROFILES))
def test_the_output_limit_turns_a_lying_finish_into_truncation(emus: dict[str, Any],
                                                               profile: str) -> None:
    """Issue 13's backstop: usage at the request's limit means cut, whatever the finish says."""
    turn, events = stream_turn(emus[profile], "truncated_length", max_output_tokens=LIMIT)
    check(turn, "truncated_length")
    if profile == "vllm":
        assert [ch.finish_reason for ev in events for ch in ev.choices
                if ch.finish_reason] == ["tool_calls"]


# -- a load target ---------------------------------------------------------------------------


def test_hundreds_of_concurrent_streams_each_get_their_own_calls() -> None:
    """The old backlog of 5 failed 40-70 % of 100 concurrent clients; none may fail now."""
    n = 300

    async def main(base: str) -> list[tuple[str, list[str]]]:
        limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
        async with httpx.AsyncClient(limits=limits, timeout=60) as http:
            async def one(i: int) -> tuple[str, list[str]]:
                r = await http.post(base + "/v1/chat/completions", json={
                    "model": f"scenario:parallel_calls@s{i}", "stream": True,
                    "messages": [{"role": "user", "content": "x"}]})
                ids = [tc["id"] for line in r.text.splitlines() if line.startswith("data: {")
                       for ch in json.loads(line[6:])["choices"]
                       for tc in ch["delta"].get("tool_calls") or [] if tc.get("id")]
                return f"s{i}", ids

            return await asyncio.gather(*(one(i) for i in range(n)))

    with VendorEmulator() as emu:
        results = asyncio.run(main(emu.base_url))
    assert len(results) == n and all(len(ids) == 2 for _, ids in results)
    every = [i for _, ids in results for i in ids]
    assert len(set(every)) == 2 * n  # no two streams share a call id


def test_tags_and_the_scenario_header_pick_per_request_ids(emus: dict[str, Any]) -> None:
    with VendorEmulator() as emu:
        def ids(model: str, headers: dict[str, str] | None = None) -> list[str]:
            r = httpx.post(emu.base_url + "/v1/chat/completions", headers=headers, json={
                "model": model, "stream": True, "messages": [{"role": "user", "content": "x"}]})
            return [tc["id"] for line in r.text.splitlines() if line.startswith("data: {")
                    for ch in json.loads(line[6:])["choices"]
                    for tc in ch["delta"].get("tool_calls") or [] if tc.get("id")]

        a, a2, b = ids("scenario:single_call@a"), ids("scenario:single_call@a"), \
            ids("scenario:single_call@b")
        assert a == a2 and a != b and len(a) == 1
        assert ids("gpt-4o", {"x-toolstream-scenario": "single_call@a"}) == a
        assert ids("scenario:single_call") != a


def test_unknown_profile_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown profile"):
        VendorEmulator(profile="nope")
    assert set(PROFILES) == {"vllm", "ollama", "deepseek", "groq", "mistral", "openrouter",
                             "litellm", "litellm-ollama", "nvidia"}
    for p in PROFILES.values():  # every quirk is cited: an issue, the docs or a recording
        doc = type(p).__doc__ or ""
        assert p.quirks and ("issue" in doc or "recorded" in doc or "docs" in doc)


def test_gateway_view_streams_one_scenario_through_every_engine_per_profile() -> None:
    from toolstream_core.app.demo import Style
    from toolstream_core.app.gateway import render_gateway, run_gateway

    doc = run_gateway("truncated_length", profiles=["vllm", "mistral"])
    rows = {r["profile"]: r for r in doc["rows"]}
    assert rows["vllm"]["finish_reason"] == "tool_calls"  # the lie, as the server sent it
    assert rows["mistral"]["finish_reason"] == "length"
    for row in rows.values():
        ours = row["outcomes"]["toolstream"]
        assert [(c["name"], c["verdict"]) for c in ours["calls"]] == [("write_file", "reject")]
        plain = row["outcomes"]["langchain"]
        if plain["status"] == "ok":  # plain LangChain repairs the cut call and runs it
            assert [(c["name"], c["verdict"]) for c in plain["calls"]] == [("write_file", "run")]
    text = render_gateway(doc, Style(False), total_width=90)
    assert "vllm" in text and "finish_reason tool_calls" in text and "reject write_file" in text
    with pytest.raises(ValueError, match="openai-chat"):
        run_gateway("partial_args")
