"""A LlamaIndex run stopped after a rejected turn, resumed in another process.

Process A runs ``ToolstreamFunctionAgent`` until its iteration limit stops it right after a
turn the gate rejected (cut by the token limit), before the workflow answered the call. Its
``Context`` is serialised to JSON (``to_dict`` with LlamaIndex's ``JsonSerializer``) and the
conversation stays in LlamaIndex's ``Memory`` on a real PostgreSQL. Process B restores the
context (``from_dict``) and follows up: the rejected id is answered, with the gate's own
reason, in B's first request, and nothing runs from the cut call.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from toolstream_core.testing import VendorEmulator

from benchmarks.scale_out import pairing_problems

WORKER = Path(__file__).with_name("li_worker.py")


def worker(job: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run([sys.executable, str(WORKER)], input=json.dumps(job), text=True,
                          capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return dict(json.loads(done.stdout.splitlines()[-1]))


def test_a_rejected_turn_is_answered_after_a_resume_in_another_process(
        pg_url: str, emu: VendorEmulator, tmp_path: Path) -> None:
    job = {"emulator": emu.base_url, "session": "s1", "runs": str(tmp_path / "runs.jsonl"),
           "context": str(tmp_path / "context.json"),
           "memory": pg_url.replace("postgresql://", "postgresql+psycopg://", 1)}
    emu.queue("openai-chat", "truncated_length", "text")

    first = worker({**job, "message": "write my notes", "max_iterations": 1})
    assert first["outcome"].startswith("stopped: Max iterations")
    assert len(emu.requests) == 1
    saved = json.loads(Path(job["context"]).read_text())
    assert "stream_truncated" in json.dumps(saved)  # the decision record rides in the context

    second = worker({**job, "message": "and now?"})
    assert not second["outcome"].startswith("stopped")  # the follow-up ran to its end
    assert emu.statuses == [200, 200]
    body = emu.requests[1].body
    assert pairing_problems(body) == []
    roles = [m["role"] for m in body["messages"]]
    assert roles == ["user", "assistant", "tool", "user"]
    [call] = body["messages"][1]["tool_calls"]
    answer = body["messages"][2]
    assert answer["tool_call_id"] == call["id"] and "[stream_truncated]" in answer["content"]
    assert not Path(job["runs"]).exists()  # nothing ran, in either process
