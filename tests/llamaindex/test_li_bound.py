"""A committed call's arguments are bound to it in LlamaIndex (issue 38, item 4).

LlamaIndex's human in the loop is a tool that waits for a ``HumanResponseEvent``: the run is
paused inside the ``call_tool`` step, its ``Context`` is saved (``to_dict``, JSON) and resumed
elsewhere. Here the saved context lives in a real PostgreSQL (pgserver) and is changed there
while the person decides: the arguments of the committed call, under the same id. Restored,
the call is answered ``[arguments_changed]`` and never runs; the next request is legal.
(LlamaIndex has no reviewer decision that edits or rejects a call, so those cases of
tests/langchain/test_lc_bound.py have no counterpart here.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
from li_helpers import THIRD_PARTY_WARNINGS, approved_after_restore, make_llm, saved_while_waiting
from llama_index.core.tools import FunctionTool
from llama_index.core.workflow import Context, HumanResponseEvent, InputRequiredEvent
from toolstream_core.testing import VendorEmulator, history_pairing

from llamaindex_toolstream import ToolstreamFunctionAgent

pytestmark = THIRD_PARTY_WARNINGS


def approved_write(notes: Path) -> FunctionTool:
    """``write_file`` that asks a person first, then writes (each run appends)."""

    async def write_file(ctx: Context, path: str, content: str = "") -> str:
        """Write a text file."""
        await ctx.wait_for_event(HumanResponseEvent, waiter_event=InputRequiredEvent(prefix="allow?"))
        with (notes / Path(path).name).open("a", encoding="utf-8") as out:
            out.write(content)
        return f"wrote {len(content)} characters"

    write_file.__annotations__ = {"ctx": Context, "path": str, "content": str, "return": str}
    return FunctionTool.from_defaults(async_fn=write_file)


def agent(emu: VendorEmulator, notes: Path) -> ToolstreamFunctionAgent:
    return ToolstreamFunctionAgent(tools=[approved_write(notes)],
                                   llm=make_llm("openai-chat", emu.base_url))


async def test_arguments_changed_in_a_saved_context_never_run(
        pg_url: str, emu: VendorEmulator, tmp_path: Path) -> None:
    emu.queue("openai-chat", "single_call", "text")
    first = agent(emu, tmp_path)
    saved, memory = await saved_while_waiting(first.run(user_msg="write my notes"))
    assert list(tmp_path.iterdir()) == []
    [call] = _calls(saved)
    evil = json.dumps(saved).replace(json.dumps(call["path"])[1:-1], "/tmp/evil.txt")
    assert evil != json.dumps(saved)

    with psycopg.connect(pg_url, autocommit=True) as db:
        db.execute("CREATE TABLE contexts (thread text PRIMARY KEY, data jsonb)")
        db.execute("INSERT INTO contexts VALUES ('t1', %s)", (json.dumps(saved),))
        db.execute("UPDATE contexts SET data = %s WHERE thread = 't1'", (evil,))  # while paused
        [(stored,)] = db.execute("SELECT data FROM contexts WHERE thread = 't1'").fetchall()

    await approved_after_restore(agent(emu, tmp_path), stored, memory)
    assert list(tmp_path.iterdir()) == []  # neither the changed call nor any other ran
    assert emu.statuses == [200, 200]
    body = emu.requests[1].body
    assert history_pairing("openai-chat", body) == []
    [answer] = [m for m in body["messages"] if m.get("role") == "tool"]
    assert answer["content"].endswith("[arguments_changed]")


def _calls(saved: dict[str, Any]) -> list[dict[str, Any]]:
    """The arguments of the ``write_file`` calls the saved context is about to run."""
    found: list[dict[str, Any]] = []

    def walk(value: Any) -> None:
        if isinstance(value, str) and '"tool_kwargs"' in value:
            try:
                walk(json.loads(value))
            except ValueError:
                return
        elif isinstance(value, dict):
            if value.get("tool_name") == "write_file" and isinstance(value.get("tool_kwargs"), dict):
                found.append(value["tool_kwargs"])
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(saved)
    return found[:1]
