"""Rule 11, server-side tools are not client calls (docs/DESIGN.md §4.11).

Anthropic server/MCP tool blocks and Responses built-in items go to ``Turn.server_calls``:
never committed, never paired, untouched by ``cancel``; ``custom_tool_call`` is a client call.
"""

from __future__ import annotations

import builders as b
from builders import ADD, run
from toolstream_core import Assembler, CallState, Reason


def test_rule11_anthropic_server_and_mcp_tool_blocks_are_server_calls() -> None:
    calls = [b.Call(id="srvtoolu_1", name="web_search", arguments='{"query":"x"}', cuts=(4,)),
             b.Call(id="mcptoolu_1", name="echo", arguments='{"m":"hi"}'),
             b.Call(id="toolu_1", name="add", arguments=ADD)]
    events = b.anthropic(calls, block_types=["server_tool_use", "mcp_tool_use", "tool_use"])
    turn = run(events, provider="anthropic", tools={"add": None})
    assert [c.id for c in turn.calls] == ["toolu_1"]
    assert [(c.id, c.kind, c.state is CallState.committed) for c in turn.server_calls] == [
        ("srvtoolu_1", "server", False), ("mcptoolu_1", "server", False)]
    assert turn.server_calls[0].raw_arguments == '{"query":"x"}'
    assert [r.tool_call_id for r in turn.error_results()] == []
    for sdk_turn in [run(b.to_sdk("anthropic", events), tools={"add": None})]:
        assert [c.id for c in sdk_turn.server_calls] == ["srvtoolu_1", "mcptoolu_1"]


def test_rule11_server_calls_are_untouched_by_cancel_and_never_paired() -> None:
    events = b.anthropic([
        b.Call(id="srvtoolu_1", name="web_search", arguments='{"query":"x"}'),
        b.Call(id="toolu_1", name="add", arguments=ADD, cuts=(3,)),
    ], block_types=["server_tool_use", "tool_use"])
    assembler = Assembler(provider="anthropic")
    for event in events[:6]:
        assembler.feed(event)
    assembler.cancel()
    turn = assembler.finish()
    assert [(c.id, c.state) for c in turn.calls] == [("toolu_1", CallState.cancelled)]
    [server] = turn.server_calls
    assert server.state is not CallState.cancelled and server.reason is None
    assert [r.tool_call_id for r in turn.error_results()] == ["toolu_1"]


def test_rule11_responses_builtin_items_are_server_calls() -> None:
    events = b.openai_responses([b.Call(id="call_1", name="add", arguments=ADD)], first_output_index=1, ending="none")
    events[2:2] = b.responses_server_item(
        {"id": "ws_1", "type": "web_search_call", "action": {"type": "search", "query": "x"}}, 0)
    events += b.openai_responses([])[-1:]
    turn = run(b.renumber(events), provider="openai-responses")
    assert [(c.id, c.state) for c in turn.calls] == [("call_1", CallState.committed)]
    assert [(c.id, c.kind) for c in turn.server_calls] == [("ws_1", "server")]
    assert turn.error_results() == []


def test_rule11_responses_custom_tool_call_is_a_client_call_with_input_text() -> None:
    sql = "SELECT * FROM users WHERE age > 25"
    events = b.openai_responses([b.Call(id="call_1", name="sql", arguments=sql, cuts=(9, 20))], kinds=["custom"])
    turn = run(events, provider="openai-responses", tools={"sql": None})
    [call] = turn.calls
    assert (call.kind, call.state, call.arguments, call.raw_arguments) == (
        "custom", CallState.committed, {"input": sql}, sql)
    sdk_turn = run(b.to_sdk("openai-responses", events), tools={"sql": None})
    assert sdk_turn.calls[0].arguments == {"input": sql}


def test_rule11_custom_tool_call_follows_completion_and_registry_rules() -> None:
    events = b.openai_responses([b.Call(id="call_1", name="sql", arguments="SELECT 1")], kinds=["custom"],
                                ending="truncated")
    assert run(events, provider="openai-responses").calls[0].reason is Reason.stream_truncated
    events = b.openai_responses([b.Call(id="call_1", name="sql", arguments="SELECT 1")], kinds=["custom"])
    assert run(events, provider="openai-responses", tools={"add": None}).calls[0].reason is Reason.unknown_tool
