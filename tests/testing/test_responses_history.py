"""The emulator's Responses history check knows every item that waits for the client.

A ``computer_call`` (or shell, apply-patch, client tool search, MCP approval request) in the
next request's ``input`` without its answer is OpenAI's 400; with the answer the core builds
for a rejected call (``integration.responses_answer``) the request is legal.
"""

from __future__ import annotations

from typing import Any

import pytest
from toolstream_core import Assembler
from toolstream_core._results import responses_answer
from toolstream_core.testing._wire_openai_responses import check_history

ITEMS: list[dict[str, Any]] = [
    {"type": "function_call", "id": "fc_1", "call_id": "call_f", "name": "add", "arguments": "{}"},
    {"type": "computer_call", "id": "cu_1", "call_id": "call_c", "action": {"type": "screenshot"},
     "pending_safety_checks": []},
    {"type": "local_shell_call", "id": "lsh_1", "call_id": "call_l",
     "action": {"type": "exec", "command": ["ls"], "env": {}}},
    {"type": "shell_call", "id": "sh_1", "call_id": "call_s", "action": {"commands": ["ls"]}},
    {"type": "apply_patch_call", "id": "apc_1", "call_id": "call_a",
     "operation": {"type": "delete_file", "path": "a.py"}},
    {"type": "tool_search_call", "id": "tsc_1", "call_id": "call_t", "arguments": {}, "execution": "client"},
    {"type": "mcp_approval_request", "id": "mcpr_1", "name": "x", "arguments": "{}", "server_label": "s"},
]


def cut_answer(item: dict[str, Any]) -> dict[str, Any]:
    """The core's answer for ``item`` when the stream is cut right after it was added."""
    assembler = Assembler(provider="openai-responses")
    assembler.feed({"type": "response.output_item.added", "output_index": 0,
                    "item": {**item, "status": "in_progress"}})
    [result] = assembler.finish(transport_complete=False).error_results()
    return responses_answer(result)


@pytest.mark.parametrize("item", ITEMS, ids=[i["type"] for i in ITEMS])
def test_a_client_item_without_its_answer_is_a_400_and_the_core_answer_pairs_it(item: dict[str, Any]) -> None:
    unanswered = check_history({"input": [item]})
    assert unanswered is not None and unanswered.status == 400
    assert check_history({"input": [item, cut_answer(item)]}) is None


def test_a_tool_search_the_server_ran_waits_for_nothing() -> None:
    item = {**ITEMS[5], "execution": "server"}
    assert check_history({"input": [item]}) is None
