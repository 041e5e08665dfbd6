"""DESIGN §4.11: Responses built-in tools the *client* executes are client calls of their own kinds.

``computer_call``, ``local_shell_call``, ``shell_call``, ``apply_patch_call``,
``tool_search_call`` with ``execution: "client"`` and ``mcp_approval_request`` wait for an
answer from the client. Each is gated like a function call (committed only when its item is
done with status ``completed`` in a completed response) and a rejected one is answered with the
output item of its kind. Every stream runs as wire dicts and through the real openai SDK.
"""

from __future__ import annotations

from typing import Any

import pytest
from responses_http import through_sdk
from toolstream_core import Assembler, CallState, Reason, Turn
from toolstream_core._results import OUTPUT_TYPES as RESPONSES_OUTPUT_TYPES
from toolstream_core._results import responses_answer
from toolstream_core.integration import turn_record

# One done item per kind, shaped from the openai SDK's output item types.
ITEMS: dict[str, dict[str, Any]] = {
    "computer": {"type": "computer_call", "id": "cu_1", "call_id": "call_cu",
                 "action": {"type": "click", "button": "left", "x": 10, "y": 20},
                 "pending_safety_checks": [], "status": "completed"},
    "local_shell": {"type": "local_shell_call", "id": "lsh_1", "call_id": "call_ls",
                    "action": {"type": "exec", "command": ["ls", "-l"], "env": {}}, "status": "completed"},
    "shell": {"type": "shell_call", "id": "sh_1", "call_id": "call_sh",
              "action": {"commands": ["rm -rf /tmp/a"], "timeout_ms": 1000}, "status": "completed"},
    "apply_patch": {"type": "apply_patch_call", "id": "apc_1", "call_id": "call_ap",
                    "operation": {"type": "delete_file", "path": "a.py"}, "status": "completed"},
    "tool_search": {"type": "tool_search_call", "id": "tsc_1", "call_id": "call_ts",
                    "arguments": {"query": "weather"}, "execution": "client", "status": "completed"},
    "mcp_approval": {"type": "mcp_approval_request", "id": "mcpr_1", "name": "delete_repo",
                     "arguments": '{"repo":"x"}', "server_label": "github"},
}
ANSWER_ID = {kind: item.get("call_id", item["id"]) for kind, item in ITEMS.items()}
NAMES = {kind: "delete_repo" if kind == "mcp_approval" else kind for kind in ITEMS}
IDENTITY = {"type", "id", "call_id", "status"}


def stream(item: dict[str, Any], *, ending: str = "completed", done: bool = True,
           final: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    added = {**item, "status": "in_progress"} if "status" in item else dict(item)
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": {"id": "resp_1", "status": "in_progress", "output": []}},
        {"type": "response.output_item.added", "output_index": 0, "item": added},
    ]
    if done:
        events.append({"type": "response.output_item.done", "output_index": 0, "item": item})
    if ending:
        events.append({"type": f"response.{ending}", "response": {
            "id": "resp_1", "status": ending, "output": [final or item] if done else [],
            "incomplete_details": {"reason": "max_output_tokens"} if ending == "incomplete" else None}})
    return [{**event, "sequence_number": n} for n, event in enumerate(events)]


def run(events: list[Any], *, sdk: bool, transport_complete: bool = True, **kw: Any) -> Turn:
    assembler = Assembler(provider="openai-responses", **kw)
    for event in through_sdk(events) if sdk else events:
        assembler.feed(event)
    return assembler.finish(transport_complete=transport_complete)


@pytest.mark.parametrize("sdk", [False, True], ids=["dicts", "sdk"])
@pytest.mark.parametrize("kind", sorted(ITEMS))
def test_rule11_a_complete_client_item_is_a_committed_call_of_its_kind(kind: str, sdk: bool) -> None:
    item = ITEMS[kind]
    turn = run(stream(item), sdk=sdk, tools={"unrelated": None})  # the registry names functions only
    [call] = turn.calls
    assert (call.kind, call.id, call.name, call.state) == (kind, ANSWER_ID[kind], NAMES[kind], CallState.committed)
    assert call.arguments == {k: v for k, v in item.items() if k not in IDENTITY}
    assert turn.server_calls == () and turn.error_results() == []


@pytest.mark.parametrize("sdk", [False, True], ids=["dicts", "sdk"])
@pytest.mark.parametrize("kind", sorted(ITEMS))
def test_rule11_a_client_item_cut_before_done_is_answered_once_with_its_output_item(kind: str, sdk: bool) -> None:
    turn = run(stream(ITEMS[kind], ending="", done=False), sdk=sdk, transport_complete=False)
    [call] = turn.calls
    assert (call.state, call.reason) == (CallState.failed, Reason.stream_truncated)
    [result] = turn.error_results()
    assert (result.tool_call_id, result.key, result.kind) == (ANSWER_ID[kind], call.key, kind)
    assert result.output_type == RESPONSES_OUTPUT_TYPES[kind] == responses_answer(result)["type"]
    assert turn.result_for(call) is result
    [entry] = turn_record(turn, mode="tap")["rejected"]
    assert (entry["tool_call_id"], entry["kind"], entry["output_type"]) == (ANSWER_ID[kind], kind, result.output_type)


def test_rule11_the_answer_items_have_the_fields_their_sdk_types_require() -> None:
    from openai.types.responses import ResponseInputItemParam
    from pydantic import TypeAdapter

    adapter: Any = TypeAdapter(ResponseInputItemParam)
    for kind in ITEMS:
        turn = run(stream(ITEMS[kind], ending="", done=False), sdk=False, transport_complete=False)
        answer = responses_answer(turn.error_results()[0])
        adapter.validate_python(answer)  # raises on a missing or misnamed field
        answered = answer.get("call_id", answer.get("id", answer.get("approval_request_id")))
        assert answered == ANSWER_ID[kind]


def test_rule11_a_function_call_is_answered_by_function_call_output() -> None:
    item = {"type": "function_call", "id": "fc_1", "call_id": "call_f", "name": "add", "arguments": "{",
            "status": "completed"}
    [result] = run(stream(item), sdk=False).error_results()
    assert responses_answer(result) == {"type": "function_call_output", "call_id": "call_f",
                                        "output": result.content}


@pytest.mark.parametrize("kind", sorted(ITEMS))
def test_rule11_a_client_item_never_done_in_a_completed_response_fails(kind: str) -> None:
    turn = run(stream(ITEMS[kind], done=False), sdk=False)
    assert [(c.state, c.reason) for c in turn.calls] == [(CallState.failed, Reason.stream_truncated)]


@pytest.mark.parametrize("status", ["incomplete", "in_progress", None])
def test_rule11_a_client_item_done_with_another_status_fails(status: str | None) -> None:
    item = {**ITEMS["shell"], "status": status}
    [call] = run(stream(item), sdk=False).calls
    want = Reason.stream_truncated if status == "incomplete" else Reason.upstream_error
    assert (call.state, call.reason) == (CallState.failed, want)


def test_rule11_a_client_item_in_an_incomplete_response_fails() -> None:
    [call] = run(stream(ITEMS["computer"], ending="incomplete"), sdk=False).calls
    assert (call.state, call.reason) == (CallState.failed, Reason.stream_truncated)


def test_rule11_a_final_copy_that_contradicts_the_done_item_fails_the_call() -> None:
    other = {**ITEMS["shell"], "action": {"commands": ["rm -rf /"], "timeout_ms": 1000}}
    [call] = run(stream(ITEMS["shell"], final=other), sdk=False).calls
    assert (call.state, call.reason) == (CallState.failed, Reason.upstream_error)


def test_rule11_a_second_different_done_item_fails_the_call() -> None:
    events = stream(ITEMS["apply_patch"])
    other = {**ITEMS["apply_patch"], "operation": {"type": "delete_file", "path": "b.py"}}
    events.insert(3, {"type": "response.output_item.done", "output_index": 0, "item": other})
    events = [{**e, "sequence_number": n} for n, e in enumerate(events)]
    [call] = run(events, sdk=False).calls
    assert (call.state, call.reason) == (CallState.failed, Reason.upstream_error)


def test_rule11_tool_search_the_vendor_runs_stays_a_server_call() -> None:
    item = {**ITEMS["tool_search"], "execution": "server", "call_id": None}
    turn = run(stream(item), sdk=False)
    assert turn.calls == () and [c.kind for c in turn.server_calls] == ["server"]
