"""The gated agent that ``langgraph.json`` names: LangGraph's server loads ``agent`` from here.

The server brings the checkpointer and the store (its PostgreSQL); the graph brings the gate.
``write_file`` changes the world, so it runs at most once per call, even when a worker dies
while it runs; ``get_weather`` only reads, so it is declared safe to repeat. ``reviewed`` is
the same agent with a human approving, editing or rejecting each ``write_file`` call first.
"""

import os
from pathlib import Path

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from langchain_toolstream import ToolstreamMiddleware

NOTES = Path(os.environ.get("NOTES_DIR", "notes"))


@tool
def write_file(path: str, content: str = "") -> str:
    """Write a text file."""
    NOTES.mkdir(parents=True, exist_ok=True)
    with (NOTES / Path(path).name).open("a", encoding="utf-8") as out:
        out.write(content)
    return f"wrote {len(content)} characters to {Path(path).name}"


@tool
def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return f"sunny in {city}"


get_weather.metadata = {"toolstream_repeatable": True}

model = ChatOpenAI(model=os.environ.get("OPENAI_MODEL", "gpt-4.1"))
agent = create_agent(model, tools=[write_file, get_weather], middleware=[ToolstreamMiddleware()])
reviewed = create_agent(
    model,
    tools=[write_file, get_weather],
    middleware=[ToolstreamMiddleware(), HumanInTheLoopMiddleware(interrupt_on={"write_file": True})],
)
