"""The two shims mirror each other (issue 11, docs/shims.md): same input, same names, same data.

The same emulated vendor stream goes through the real LangChain integration class (gated by
``with_toolstream``) and the real LlamaIndex class (gated by ``ToolstreamLLM``); both must leave
the same decision record, as plain JSON that survives a serialisation round trip, and answer
the same ids with the same error text. Lives here because only the LlamaIndex env has both
frameworks.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from li_helpers import THIRD_PARTY_WARNINGS, Recorder, make_llm
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, ToolCallBlock
from toolstream_core import AssembleConfig, Turn
from toolstream_core.testing import VendorEmulator

import langchain_toolstream as lc
import llamaindex_toolstream as li

pytestmark = THIRD_PARTY_WARNINGS

# The APIs whose LlamaIndex class is read through ``ChatResponse.raw`` (openai-chat) and
# through the SDK tap (anthropic): both paths must give LangChain's record.
MIRRORED_APIS = ["openai-chat", "openai-responses", "anthropic"]


def _lc_model(api: str, base_url: str) -> Any:
    if api == "anthropic":
        from langchain_anthropic import ChatAnthropic

        return ChatAnthropic(model="claude-sonnet-4-5", api_key="test", max_retries=0,
                             base_url=base_url, max_tokens=64_000)
    from langchain_openai import ChatOpenAI

    extra: dict[str, Any] = {"use_responses_api": True} if api == "openai-responses" else {}
    return ChatOpenAI(model="gpt-4o-mini", api_key="test", max_retries=0,
                      base_url=base_url + "/v1", **extra)


def _registry() -> dict[str, Any]:
    """One registry for both shims, so their verdicts can only differ by the shim."""
    registry = li._tools.registry_from_llama_tools(Recorder().tools())
    assert registry is not None
    return registry


def _tool_dicts() -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": name, "parameters": schema}}
            for name, schema in _registry().items()]


def _lc_run(api: str, emu: VendorEmulator, scenario: str) -> tuple[AIMessage, list[Turn]]:
    turns: list[Turn] = []
    emu.queue(api, scenario)
    gated = lc.with_toolstream(_lc_model(api, emu.base_url), tools=_registry(),
                               on_stream_error="pair", on_turn=turns.append)
    message = gated.bind_tools(_tool_dicts()).invoke("go")
    assert isinstance(message, AIMessage)
    return message, turns


async def _li_run(api: str, emu: VendorEmulator, scenario: str) -> tuple[ChatResponse, list[Turn]]:
    turns: list[Turn] = []
    emu.queue(api, scenario)
    llm = li.ToolstreamLLM(make_llm(api, emu.base_url), tools=_registry(), on_turn=turns.append)
    gen = await llm.astream_chat_with_tools(Recorder().tools(), user_msg="go",
                                            allow_parallel_tool_calls=True)
    responses = [response async for response in gen]
    assert responses
    return responses[-1], turns


def _comparable(record: Any) -> dict[str, Any]:
    """The record minus ``mode`` (how the shim read the stream, which may differ by design)."""
    assert record is not None
    return {k: v for k, v in record.items() if k != "mode"}


@pytest.mark.parametrize("scenario", ["single_call", "parallel_calls", "truncated_length"])
@pytest.mark.parametrize("api", MIRRORED_APIS)
async def test_same_stream_gives_the_same_record_in_both_shims(
    api: str, scenario: str, emu: VendorEmulator
) -> None:
    ai, lc_turns = _lc_run(api, emu, scenario)
    response, li_turns = await _li_run(api, emu, scenario)

    lc_record, li_record = lc.read_record(ai), li.read_record(response)
    assert _comparable(lc_record) == _comparable(li_record)
    assert li.read_record(response.message) == li_record  # on the message too
    # on_turn: one Turn per call in both, agreeing with the record.
    [lc_turn], [li_turn] = lc_turns, li_turns
    assert [c.id for c in lc_turn.committed] == [c["id"] for c in lc_record["committed"]]  # type: ignore[index]
    assert [c.id for c in li_turn.committed] == [c["id"] for c in li_record["committed"]]  # type: ignore[index]
    # The same ids are answered with the same error text.
    lc_errors = [(m.tool_call_id, m.content) for m in lc.error_tool_messages(ai)]
    li_errors = [(m.additional_kwargs["tool_call_id"], m.content)
                 for m in li.error_tool_messages(response)]
    assert lc_errors == li_errors
    assert bool(lc_errors) == (scenario == "truncated_length")
    assert bool(li_record["committed"]) == (scenario != "truncated_length")  # type: ignore[index]


@pytest.mark.parametrize("api", MIRRORED_APIS)
async def test_record_survives_a_json_round_trip_in_both_shims(
    api: str, emu: VendorEmulator
) -> None:
    ai, _ = _lc_run(api, emu, "truncated_length")
    response, _ = await _li_run(api, emu, "truncated_length")

    ai_back = AIMessage.model_validate_json(ai.model_dump_json())
    response_back = ChatResponse.model_validate_json(response.model_dump_json())
    # Plain JSON: equal after the trip, and equal to what json.dumps/loads gives.
    assert lc.read_record(ai_back) == lc.read_record(ai) == json.loads(json.dumps(lc.read_record(ai)))
    assert li.read_record(response_back) == li.read_record(response)
    assert li.read_record(response_back) is not None
    # The readers built on it answer the same from the reloaded objects (no live session).
    assert [(m.additional_kwargs, m.content) for m in li.error_tool_messages(response_back)] == [
        (m.additional_kwargs, m.content) for m in li.error_tool_messages(response)]
    assert [m.tool_call_id for m in lc.error_tool_messages(ai_back)] == [
        m.tool_call_id for m in lc.error_tool_messages(ai)]
    full = li.message_with_rejected_calls(response_back)
    rejected_ids = [e["tool_call_id"] for e in li.read_record(response)["rejected"]]  # type: ignore[index]
    assert rejected_ids and [b.tool_call_id for b in full.blocks
                             if isinstance(b, ToolCallBlock)] == rejected_ids


def test_wrapping_twice_raises_the_same_error_in_both_shims(emu: VendorEmulator) -> None:
    gated_lc = lc.with_toolstream(_lc_model("openai-chat", emu.base_url))
    gated_li = li.ToolstreamLLM(make_llm("openai-chat", emu.base_url))
    with pytest.raises(TypeError, match="already gated by toolstream") as lc_error:
        lc.with_toolstream(gated_lc)
    with pytest.raises(TypeError, match="already gated by toolstream"):
        lc.with_toolstream(gated_lc.bind_tools(_tool_dicts()))
    with pytest.raises(TypeError, match="already gated by toolstream") as li_error:
        li.ToolstreamLLM(gated_li)  # type: ignore[arg-type]
    assert "wrap the vendor" in str(lc_error.value) and "wrap the vendor" in str(li_error.value)


def _default(fn: Any, name: str) -> Any:
    return inspect.signature(fn).parameters[name].default


def test_one_fault_policy_and_one_history_default_at_every_entry_point() -> None:
    """``on_stream_error`` and ``history`` have one name and one default (DESIGN 6) in
    ``with_toolstream``, ``ToolstreamMiddleware``, ``ToolstreamLLM`` and
    ``ToolstreamFunctionAgent`` (the agents take ``None`` for "not given", see below)."""
    wrappers = (lc.with_toolstream, li.ToolstreamLLM.__init__)
    agents = (lc.ToolstreamMiddleware.__init__, li.ToolstreamFunctionAgent.__init__)
    for name, default in (("on_stream_error", "pair"), ("history", "check")):
        assert {_default(fn, name) for fn in wrappers} == {default}
        assert {_default(fn, name) for fn in agents} == {None}
    middleware = lc.ToolstreamMiddleware()
    assert (middleware._on_stream_error, middleware._history) == ("pair", "check")
    agent = li.ToolstreamFunctionAgent(tools=Recorder().tools(),
                                       llm=make_llm("openai-chat", "http://127.0.0.1:9"))
    assert (agent.llm.on_stream_error, agent.llm.history) == ("pair", "check")  # type: ignore[attr-defined]


@pytest.mark.parametrize("option", [{"config": {"mode": "lenient"}}, {"history": "repair"},
                                    {"on_stream_error": "raise"}, {"on_turn": print},
                                    {"on_event": print}])
def test_an_already_gated_model_refuses_the_agents_gate_options_in_both_shims(
        option: dict[str, Any], emu: VendorEmulator) -> None:
    """One rule: the model's own gate is used, and a gate option given to the agent as well
    (callbacks included) is a ValueError naming it, not silently ignored."""
    from langchain.agents import create_agent

    name = next(iter(option))
    agent = create_agent(lc.with_toolstream(_lc_model("openai-chat", emu.base_url)), tools=[],
                         middleware=[lc.ToolstreamMiddleware(**option)])
    with pytest.raises(ValueError, match=f"give {name}= to with_toolstream") as lc_error:
        agent.invoke({"messages": [HumanMessage("go")]})
    with pytest.raises(ValueError, match=f"give {name}= to ToolstreamLLM") as li_error:
        li.ToolstreamFunctionAgent(tools=Recorder().tools(), **option,
                                   llm=li.ToolstreamLLM(make_llm("openai-chat", emu.base_url)))
    for error in (lc_error.value, li_error.value):
        assert str(error).startswith("the agent's model is already gated by toolstream")
    assert emu.requests == []  # refused before anything was sent


def test_a_yaml_path_is_a_config_in_both_shims(tmp_path: Path,
                                               emu: VendorEmulator) -> None:
    path = tmp_path / "toolstream.yaml"
    path.write_text("agent_stream_assemble:\n  max_tool_argument_bytes: 1234\n  mode: lenient\n",
                    encoding="utf-8")
    expected = AssembleConfig(max_tool_argument_bytes=1234, mode="lenient")
    for given in (path, str(path)):
        gated_lc = lc.with_toolstream(_lc_model("openai-chat", emu.base_url),
                                      config=given)
        gated_li = li.ToolstreamLLM(make_llm("openai-chat", emu.base_url),
                                    config=given)
        assert gated_lc.toolstream_config == expected
        assert gated_li.config == expected


def test_pair_orphan_calls_answers_the_same_ids_with_the_same_text_in_both_shims() -> None:
    lc_history: list[BaseMessage] = [
        HumanMessage("go"),
        AIMessage("", tool_calls=[{"name": "get_time", "args": {}, "id": "c1"},
                                  {"name": "get_weather", "args": {"city": "Paris"}, "id": "c2"}]),
        ToolMessage("12:00", tool_call_id="c1"),
    ]
    li_history = [
        ChatMessage(role="user", content="go"),
        ChatMessage(role="assistant", blocks=[
            ToolCallBlock(tool_call_id="c1", tool_name="get_time", tool_kwargs={}),
            ToolCallBlock(tool_call_id="c2", tool_name="get_weather", tool_kwargs={"city": "Paris"}),
        ]),
        ChatMessage(role="tool", content="12:00", additional_kwargs={"tool_call_id": "c1"}),
    ]
    lc_paired = lc.pair_orphan_calls(lc_history)
    li_paired = li.pair_orphan_calls(li_history)
    assert len(lc_paired) == len(li_paired) == 4
    lc_added, li_added = lc_paired[-1], li_paired[-1]
    assert isinstance(lc_added, ToolMessage) and lc_added.tool_call_id == "c2"
    assert li_added.additional_kwargs["tool_call_id"] == "c2"
    assert lc_added.content == li_added.content and "[cancelled]" in str(li_added.content)
    # A complete history is left as it is.
    assert lc.pair_orphan_calls(lc_paired) == lc_paired
    assert li.pair_orphan_calls(li_paired) == li_paired


def _shape(messages: list[Any]) -> list[tuple[str, Any, str]]:
    """(role, the id a result answers or the calls a message makes, text) per message."""
    out = []
    for m in messages:
        if isinstance(m, BaseMessage):
            calls = [c["id"] for c in getattr(m, "tool_calls", [])]
            out.append((m.type.replace("ai", "assistant").replace("human", "user"),
                        getattr(m, "tool_call_id", None) or calls, str(m.content)))
        else:
            calls = [b.tool_call_id for b in m.blocks if isinstance(b, ToolCallBlock)]
            out.append((str(m.role.value), m.additional_kwargs.get("tool_call_id") or calls,
                        str(m.content or "")))
    return out


def test_one_history_plan_for_both_shims() -> None:
    """The plan lives once in the core: results moved into the calls' order, a second answer
    left out, a missing one added, a paused turn sent back without its client call."""
    lc_history: list[BaseMessage] = [
        HumanMessage("go"),
        AIMessage("", tool_calls=[{"name": "get_time", "args": {}, "id": "c1"},
                                  {"name": "get_weather", "args": {"city": "Paris"}, "id": "c2"},
                                  {"name": "get_time", "args": {}, "id": "c3"}]),
        ToolMessage("sunny", tool_call_id="c2"),
        ToolMessage("12:00", tool_call_id="c1"),
        ToolMessage("again", tool_call_id="c2"),
        HumanMessage("more"),
        AIMessage("searching", tool_calls=[{"name": "get_time", "args": {}, "id": "c4"}],
                  response_metadata={"stop_reason": "pause_turn"}),
    ]
    li_history = [
        ChatMessage(role="user", content="go"),
        ChatMessage(role="assistant", blocks=[
            ToolCallBlock(tool_call_id="c1", tool_name="get_time", tool_kwargs={}),
            ToolCallBlock(tool_call_id="c2", tool_name="get_weather", tool_kwargs={"city": "Paris"}),
            ToolCallBlock(tool_call_id="c3", tool_name="get_time", tool_kwargs={}),
        ]),
        ChatMessage(role="tool", content="sunny", additional_kwargs={"tool_call_id": "c2"}),
        ChatMessage(role="tool", content="12:00", additional_kwargs={"tool_call_id": "c1"}),
        ChatMessage(role="tool", content="again", additional_kwargs={"tool_call_id": "c2"}),
        ChatMessage(role="user", content="more"),
        ChatMessage(role="assistant", content="searching",
                    blocks=[ToolCallBlock(tool_call_id="c4", tool_name="get_time", tool_kwargs={})],
                    additional_kwargs={"stop_reason": "pause_turn"}),
    ]
    lc_shape = _shape(lc.pair_orphan_calls(lc_history))
    li_shape = _shape(li.pair_orphan_calls(li_history))
    assert lc_shape == li_shape
    assert [(role, ids) for role, ids, _ in lc_shape] == [
        ("user", []), ("assistant", ["c1", "c2", "c3"]), ("tool", "c1"), ("tool", "c2"),
        ("tool", "c3"), ("user", []), ("assistant", [])]
    assert lc_shape[3][2] == "sunny" and "[cancelled]" in lc_shape[4][2]


def test_error_tool_messages_on_an_ungated_message_pair_unparsable_calls_in_both_shims() -> None:
    lc_ai = AIMessage("", invalid_tool_calls=[
        {"name": "write_file", "args": '{"path": "/tm', "id": "c9", "error": "invalid JSON",
         "type": "invalid_tool_call"}])
    li_message = ChatMessage(role="assistant", blocks=[
        ToolCallBlock(tool_call_id="c9", tool_name="write_file", tool_kwargs='{"path": "/tm'),
        ToolCallBlock(tool_call_id="c10", tool_name="get_time", tool_kwargs={}),
    ])
    [lc_error] = lc.error_tool_messages(lc_ai)
    [li_error] = li.error_tool_messages(ChatResponse(message=li_message))
    assert lc_error.tool_call_id == li_error.additional_kwargs["tool_call_id"] == "c9"
    assert lc.read_record(lc_ai) is None and li.read_record(li_message) is None
    for text in (str(lc_error.content), str(li_error.content)):
        assert text.startswith("Tool call 'write_file' (id c9) was not run")


def test_history_check_raises_the_same_error_in_both_shims(emu: VendorEmulator) -> None:
    """The same history (a tool call whose thinking block was lost, thinking on) through the
    real ``ChatAnthropic`` and ``Anthropic`` classes: ``history="check"`` raises the same
    ``HistoryError`` in both shims before anything is sent."""
    from langchain_anthropic import ChatAnthropic

    thinking = {"type": "enabled", "budget_tokens": 2000}
    lc_model = lc.with_toolstream(ChatAnthropic(model="claude-sonnet-4-5", api_key="test",
                                                max_retries=0, base_url=emu.base_url,
                                                max_tokens=4000, thinking=thinking),
                                  history="check")
    li_llm = li.ToolstreamLLM(make_llm("anthropic", emu.base_url, thinking_dict=thinking),
                              history="check")
    call = {"name": "get_weather", "args": {"city": "Paris"}, "id": "toolu_1", "type": "tool_call"}
    lc_history = [HumanMessage("weather?"), AIMessage(content="checking", tool_calls=[call]),
                  ToolMessage("sunny", tool_call_id="toolu_1")]
    li_history = [ChatMessage(role="user", content="weather?"),
                  ChatMessage(role="assistant", blocks=[
                      ToolCallBlock(tool_call_id="toolu_1", tool_name="get_weather",
                                    tool_kwargs={"city": "Paris"})]),
                  ChatMessage(role="tool", content="sunny",
                              additional_kwargs={"tool_call_id": "toolu_1"})]
    with pytest.raises(li.HistoryError) as lc_caught:
        lc_model.invoke(lc_history)
    with pytest.raises(li.HistoryError) as li_caught:
        li_llm.chat(li_history)
    assert lc_caught.value.problems == li_caught.value.problems
    assert [p.kind for p in li_caught.value.problems] == ["missing_thinking"]
    assert str(lc_caught.value) == str(li_caught.value)
    assert emu.requests == []


def _id_less_record() -> dict[str, Any]:
    """A record whose rejected call arrived without an id (``id: None``; its error answers the
    core's synthesized ``tool_call_id``), written by hand or by another producer: only the
    fields that say what the model is told, no ``name``."""
    return {"version": 1, "mode": "tap", "provider": "openai-chat", "complete": True,
            "finish_reason": "tool_calls", "error": None, "committed": [], "dropped": [],
            "server_calls": [], "anomalies": 0,
            "rejected": [{"id": None, "tool_call_id": "call_ts1_0123456789abcdef",
                          "reason": "missing_id_or_name", "state": "rejected",
                          "content": "Tool call 'unknown' was not run: no id [missing_id_or_name]."}]}


def test_an_id_less_rejected_call_is_answered_the_same_in_both_shims() -> None:
    """One reading of the record for both shims: every field read leniently, the error keyed
    by ``tool_call_id``. The LlamaIndex shim used to index the entry (``entry["name"]``) and
    raised ``KeyError`` where LangChain answered."""
    record = _id_less_record()
    lc_ai = AIMessage("", response_metadata={"toolstream": record})
    li_message = ChatMessage(role="assistant", content="", additional_kwargs={"toolstream": record})
    [lc_error] = lc.error_tool_messages(lc_ai)
    [li_error] = li.error_tool_messages(ChatResponse(message=li_message))
    assert lc_error.tool_call_id == li_error.additional_kwargs["tool_call_id"] == "call_ts1_0123456789abcdef"
    assert lc_error.content == li_error.content == record["rejected"][0]["content"]
    [li_call] = [b for b in li.message_with_rejected_calls(li_message).blocks if isinstance(b, ToolCallBlock)]
    [lc_call] = lc.message_with_rejected_calls(lc_ai).invalid_tool_calls  # type: ignore[attr-defined]
    assert li_call.tool_call_id == lc_call["id"] == "call_ts1_0123456789abcdef"


def test_a_call_left_without_a_result_is_answered_as_an_error_in_both_shims() -> None:
    """The "no result" answer ``pair_orphan_calls`` adds is an error result in both shims (one
    constructor): LangChain's ``status="error"``, LlamaIndex's ``is_error`` mark, which its
    outgoing rules turn into the vendor's flag (Bedrock ``status: "error"``). The LlamaIndex
    shim used to add a bare tool message, sent as a success."""
    lc_history: list[BaseMessage] = [
        HumanMessage("go"), AIMessage("", tool_calls=[{"name": "get_time", "args": {}, "id": "c1"}])]
    li_history = [ChatMessage(role="user", content="go"), ChatMessage(role="assistant", blocks=[
        ToolCallBlock(tool_call_id="c1", tool_name="get_time", tool_kwargs={})])]
    lc_added = lc.pair_orphan_calls(lc_history)[-1]
    li_added = li.pair_orphan_calls(li_history)[-1]
    assert isinstance(lc_added, ToolMessage) and lc_added.status == "error"
    assert lc_added.name == li_added.additional_kwargs["name"] == "get_time"
    assert li_added.additional_kwargs["is_error"] is True
    assert lc_added.content == li_added.content


def test_pair_orphan_calls_takes_the_same_provider_in_both_shims() -> None:
    """One signature for the one repair path: given the wire (Gemini, where the model never
    saw the id), both shims leave the id out of the words alike. LangChain's used to take no
    provider, so its words always quoted the id."""
    assert list(inspect.signature(lc.pair_orphan_calls).parameters) == list(
        inspect.signature(li.pair_orphan_calls).parameters) == ["messages", "provider"]
    lc_history: list[BaseMessage] = [
        HumanMessage("go"), AIMessage("", tool_calls=[{"name": "get_time", "args": {}, "id": "c1"}])]
    li_history = [ChatMessage(role="user", content="go"), ChatMessage(role="assistant", blocks=[
        ToolCallBlock(tool_call_id="c1", tool_name="get_time", tool_kwargs={})])]
    lc_text = str(lc.pair_orphan_calls(lc_history, "gemini")[-1].content)
    li_text = str(li.pair_orphan_calls(li_history, "gemini")[-1].content)
    assert lc_text == li_text and "(id c1)" not in lc_text and "[cancelled]" in lc_text
