"""A worker process of ``test_li_dbos.py``: a ``ToolstreamFunctionAgent`` on DBOS.

``python li_dbos_worker.py BASE_URL WORKDIR ROLE``. DBOS keeps its system database in SQLite
under ``WORKDIR``; the agent is built inside ``DBOSRuntime().registering()`` (LlamaIndex drops
``FunctionAgent(..., runtime=...)`` silently, and the run is then not durable at all). Role
``first`` starts a run and is killed by the test; role ``recover`` launches DBOS, which
recovers the pending run, and waits for it to end. ``write_file`` appends a line to
``WORKDIR/executions.log`` as it starts (the count of executions across processes); in the
``first`` role it then waits to be killed.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from dbos import DBOS
from llama_agents.dbos import DBOSRuntime
from llama_index.llms.openai import OpenAI

from llamaindex_toolstream import ToolstreamFunctionAgent

BASE_URL, WORKDIR, ROLE = sys.argv[1], Path(sys.argv[2]), sys.argv[3]


async def write_file(path: str, content: str = "") -> str:
    """Write a text file."""
    with (WORKDIR / "executions.log").open("a") as log:
        log.write(f"{os.getpid()} {path}\n")
    if ROLE == "first":
        await asyncio.sleep(120)  # the test kills this process here
    return f"wrote {len(content)} characters to {path}"


async def main() -> None:
    DBOS(config={"name": "toolstream-dbos",
                 "system_database_url": f"sqlite:///{WORKDIR / 'dbos.sqlite'}"})
    runtime = DBOSRuntime()
    with runtime.registering():
        agent = ToolstreamFunctionAgent(
            tools=[write_file],
            llm=OpenAI(model="gpt-4o-mini", api_key="test", api_base=BASE_URL + "/v1",
                       max_retries=0, timeout=30))
    await runtime.launch()
    if ROLE == "first":
        sys.stdout.write("started\n")
        sys.stdout.flush()
        await agent.run(user_msg="go")
        return
    statuses: list[str] = []
    for _ in range(600):
        statuses = [str(w.status) for w in await DBOS.list_workflows_async()]
        if statuses and all(s in ("SUCCESS", "ERROR", "CANCELLED") for s in statuses):
            break
        await asyncio.sleep(0.1)
    sys.stdout.write(" ".join(statuses) + "\n")
    sys.stdout.flush()
    DBOS.destroy()


asyncio.run(main())
