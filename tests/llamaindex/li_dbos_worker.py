"""A worker process of ``test_li_dbos.py``: ``ToolstreamFunctionAgent`` runs on DBOS.

``python li_dbos_worker.py WORKDIR ROLE``. ``WORKDIR/plan.json`` lists the runs, each
``{"key", "api", "base_url"}``: one agent per run, its LLM the real LlamaIndex class of that
wire (``li_helpers.make_llm``; ``"mistral"``: ``MistralAI``) aimed at ``base_url``. DBOS keeps
its system database in SQLite under ``WORKDIR`` (or at ``WORKDIR/dbos_url`` when that file
names one); the agents are built inside ``DBOSRuntime().registering()`` (LlamaIndex drops
``FunctionAgent(..., runtime=...)`` silently, and the run is then not durable at all).

Role ``first`` starts the runs (those whose key ends ``-tool`` first, the others once their
tools have started) and is killed by the test; role ``recover`` launches
DBOS, which recovers the pending runs, and waits for them to end, then prints their statuses.
Each run's ``write_file`` appends ``KEY PID`` to ``WORKDIR/executions.log`` as it starts (the
count of executions across processes); in the ``first`` role it then waits to be killed.

The runs share one event loop, whose default executor DBOS uses for its database calls and
``BedrockConverse`` (without ``aioboto3``) for reading each stream: a stalled stream holds a
thread until its read timeout, so the executor is sized for the runs (Python's default, on two
cores, is six threads).

DBOS names a workflow by its class (``Workflow.workflow_name``: module and qualified name), so
each run's agent is an instance of a subclass named after the run's key: the same name in
both processes, a different one per run.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from dbos import DBOS
from li_helpers import make_llm
from llama_agents.dbos import DBOSRuntime
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.tools import FunctionTool

from llamaindex_toolstream import ToolstreamFunctionAgent

WORKDIR, ROLE = Path(sys.argv[1]), sys.argv[2]
DONE = ("SUCCESS", "ERROR", "CANCELLED", "MAX_RECOVERY_ATTEMPTS_EXCEEDED")


def llm(api: str, base_url: str) -> FunctionCallingLLM:
    """The real class of ``api``, with a bound against a hang where the class takes one."""
    if api == "mistral":
        from llama_index.llms.mistralai import MistralAI

        return MistralAI(model="mistral-large-latest", api_key="test", endpoint=base_url,
                         max_retries=0, max_tokens=700, timeout=60)
    bound: dict[str, Any] = {"timeout": 60} if api in ("openai-chat", "openai-responses",
                                                        "anthropic", "cohere") else {}
    return make_llm(api, base_url, **bound)


def write_file_for(key: str) -> FunctionTool:
    async def write_file(path: str, content: str = "") -> str:
        """Write a text file."""
        with (WORKDIR / "executions.log").open("a") as log:
            log.write(f"{key} {os.getpid()}\n")
        if ROLE == "first":
            await asyncio.sleep(120)  # the test kills this process here
        return f"wrote {len(content)} characters to {path}"

    return FunctionTool.from_defaults(async_fn=write_file)


def agent_for(run: dict[str, str]) -> ToolstreamFunctionAgent:
    name = f"Agent_{run['key'].replace('-', '_')}"
    cls = type(name, (ToolstreamFunctionAgent,), {"__qualname__": name, "__module__": __name__})
    agent: ToolstreamFunctionAgent = cls(tools=[write_file_for(run["key"])],
                                         llm=llm(run["api"], run["base_url"]))
    return agent


async def _first(plan: list[dict[str, str]], agents: list[ToolstreamFunctionAgent]) -> None:
    """Start the runs whose tool is to be killed, then, once each tool has started, the others
    (a stalled stream may hold the loop's threads: it goes last)."""
    log = WORKDIR / "executions.log"
    tools = {run["key"] for run in plan if run["key"].endswith("-tool")}
    handlers = [agent.run(user_msg="go") for run, agent in zip(plan, agents, strict=True)
                if run["key"] in tools]
    while tools - {line.split()[0] for line in (log.read_text().splitlines() if log.exists() else [])}:
        await asyncio.sleep(0.05)
    handlers += [agent.run(user_msg="go") for run, agent in zip(plan, agents, strict=True)
                 if run["key"] not in tools]
    await asyncio.gather(*handlers)


async def main() -> None:
    plan: list[dict[str, str]] = json.loads((WORKDIR / "plan.json").read_text())
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(8 * len(plan)))
    url_file = WORKDIR / "dbos_url"
    url = url_file.read_text().strip() if url_file.exists() else f"sqlite:///{WORKDIR / 'dbos.sqlite'}"
    DBOS(config={"name": "toolstream-dbos", "system_database_url": url})
    runtime = DBOSRuntime()
    with runtime.registering():
        agents = [agent_for(run) for run in plan]
    await runtime.launch()
    if ROLE == "first":
        await _first(plan, agents)
        return
    statuses: list[str] = []
    for _ in range(1200):
        statuses = [str(w.status) for w in await DBOS.list_workflows_async()]
        if len(statuses) >= len(plan) and all(s in DONE for s in statuses):
            break
        await asyncio.sleep(0.1)
    sys.stdout.write(" ".join(statuses) + "\n")
    sys.stdout.flush()
    DBOS.destroy()


asyncio.run(main())
