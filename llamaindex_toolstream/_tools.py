"""Tool registries built from LlamaIndex tools, and the tool that answers rejected calls.

The registry is what lets the core fail a call as ``unknown_tool`` or ``schema_violation``
before anything runs, so it is built from the very tools the agent offers the model on that
step (a tool retriever can change them from step to step).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from llama_index.core.tools import BaseTool, FunctionTool, ToolMetadata, ToolOutput
from llama_index.core.tools.types import AsyncBaseTool
from toolstream_core import AssembleConfig, ToolSpec

__all__ = [
    "REJECTED_TOOL_NAME",
    "ConfigArg",
    "RejectedCallTool",
    "ToolsArg",
    "registry_from_llama_tools",
]

logger = logging.getLogger(__name__)

#: The name under which a rejected call travels through the workflow's tool step. It is never
#: offered to the model; its only job is to hand back the core's error result as a tool output,
#: so the workflow pairs the rejected id exactly like a tool that failed.
REJECTED_TOOL_NAME = "toolstream_rejected_call"

ToolsArg = Sequence[BaseTool | Callable[..., Any]] | Mapping[str, Mapping[str, Any] | ToolSpec]

ConfigArg = AssembleConfig | Mapping[str, Any] | str | Path
"""What ``config=`` accepts (the same in the LangChain shim): the config, its mapping, or a
YAML file path holding the ``agent_stream_assemble:`` section."""



def _schema_of(tool: BaseTool) -> Mapping[str, Any] | None:
    try:
        schema = tool.metadata.get_parameters_dict()
    except Exception:  # a tool with an exotic fn_schema: check the name only
        logger.warning("toolstream: no JSON Schema for tool %r; checking its name only",
                       tool.metadata.name, exc_info=True)
        return None
    return dict(schema) if isinstance(schema, Mapping) else None


def registry_from_llama_tools(
    tools: ToolsArg | None,
) -> dict[str, Mapping[str, Any] | ToolSpec] | None:
    """``name -> schema`` for the core, from LlamaIndex tools, callables or a ready mapping
    (the core's rule, ``ToolSpec.registry``, with LlamaIndex's way of reading a tool).

    ``None`` means "no registry": the core then checks neither names nor schemas.
    """
    return ToolSpec.registry(tools, _llama_tool_entry)


def _llama_tool_entry(item: BaseTool | Callable[..., Any]) -> tuple[str, Mapping[str, Any] | ToolSpec] | None:
    """A LlamaIndex tool's (or a callable's, as ``FunctionTool``) name and parameter schema;
    ``None`` for the responder of rejected calls, which is never offered to the model."""
    tool = item if isinstance(item, BaseTool) else FunctionTool.from_defaults(item)
    name = tool.metadata.name
    if not name or name == REJECTED_TOOL_NAME:
        return None
    schema = _schema_of(tool)
    return name, schema if schema is not None else ToolSpec(name)


class RejectedCallTool(AsyncBaseTool):
    """Answers a rejected call with the core's error text; runs nothing else.

    The workflow's ``call_tool`` step looks tools up by name, so this stands in for every
    rejected call of a turn: the selection's kwargs carry the error content and reason.
    """

    def __init__(self) -> None:
        self._metadata = ToolMetadata(
            name=REJECTED_TOOL_NAME,
            description="Internal: answers tool calls toolstream refused to run.",
        )

    @property
    def metadata(self) -> ToolMetadata:
        return self._metadata

    def _output(self, **kwargs: Any) -> ToolOutput:
        content = str(kwargs.get("content") or "The tool call was not run.")
        return ToolOutput(
            content=content,
            tool_name=str(kwargs.get("tool_name") or REJECTED_TOOL_NAME),
            raw_input=dict(kwargs),
            raw_output=content,
            is_error=True,
        )

    def call(self, *args: Any, **kwargs: Any) -> ToolOutput:
        return self._output(**kwargs)

    async def acall(self, *args: Any, **kwargs: Any) -> ToolOutput:
        return self._output(**kwargs)
