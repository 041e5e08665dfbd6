"""A worker process of ``test_li_scale_out.py``: one ``ToolstreamFunctionAgent`` run.

``python tests/llamaindex/li_worker.py`` with a JSON job on stdin. The workflow ``Context``
comes from the job's JSON file when it exists (``Context.from_dict`` with LlamaIndex's
``JsonSerializer``) and goes back to it when the run ends, as a deployment keeps it between
requests; the conversation is LlamaIndex's ``Memory`` on the job's SQL database (its own
store, which the context does not serialise). Tools append a line to the job's runs file
before they return. Prints one JSON line: how the run ended.
"""

from __future__ import annotations

import asyncio
import json
import sys
import warnings
from pathlib import Path
from typing import Any

from llama_index.core.memory import Memory
from llama_index.core.tools import FunctionTool
from llama_index.core.workflow import Context
from llama_index.llms.openai import OpenAI
from workflows.context.serializers import JsonSerializer
from workflows.errors import WorkflowRuntimeError

from llamaindex_toolstream import ToolstreamFunctionAgent


def logging_tools(runs: Path) -> list[FunctionTool]:
    def ran(name: str, **args: Any) -> None:
        with runs.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"name": name, "args": args}) + "\n")

    def write_file(path: str, content: str = "") -> str:
        """Write a text file."""
        ran("write_file", path=path, content=content)
        return f"wrote {len(content)} characters to {path}"

    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        ran("get_weather", city=city)
        return f"sunny in {city}"

    return [FunctionTool.from_defaults(fn=fn) for fn in (write_file, get_weather)]


async def run(job: dict[str, Any]) -> dict[str, Any]:
    llm = OpenAI(model="gpt-4o-mini", api_key="test", api_base=job["emulator"] + "/v1",
                 max_retries=0)
    agent = ToolstreamFunctionAgent(tools=logging_tools(Path(job["runs"])), llm=llm)
    saved = Path(job["context"])
    serializer = JsonSerializer()
    ctx = (Context.from_dict(agent, json.loads(saved.read_text()), serializer=serializer)
           if saved.exists() else Context(agent))
    memory = Memory.from_defaults(session_id=job["session"], async_database_uri=job["memory"])
    # The limit is kept in the context from the run that set it; each run here sets its own.
    await ctx.store.set("max_iterations", job.get("max_iterations", 20))
    try:
        output = await agent.run(job["message"], ctx=ctx, memory=memory)
        outcome = str(output)
    except WorkflowRuntimeError as exc:  # the run's iteration limit
        outcome = f"stopped: {exc}"
    with warnings.catch_warnings():  # the memory is not serialisable, and is not needed
        warnings.simplefilter("ignore")
        saved.write_text(json.dumps(ctx.to_dict(serializer=serializer)))
    return {"outcome": outcome}


if __name__ == "__main__":
    sys.stdout.write(json.dumps(asyncio.run(run(json.loads(sys.stdin.read())))) + "\n")
