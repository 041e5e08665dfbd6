"""Turn what LangChain binds (tools, schemas, vendor tool dicts) into the core's registry.

Why: the gate validates committed arguments against the same JSON Schema the vendor was shown,
and rejects calls to tools that were never offered. Deriving the registry from the bound tools
keeps the two in step without the user writing the schemas twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from toolstream_core import AssembleConfig, ToolSpec

__all__ = ["SENSITIVE_KEY", "ConfigArg", "Registry", "ToolsArg", "merge_registries", "registry_from_bound_tools",
           "registry_from_tools"]

_log = logging.getLogger(__name__)

#: ``BaseTool(metadata={SENSITIVE_KEY: True | [paths]})`` marks a tool sensitive (DESIGN §3).
SENSITIVE_KEY = "toolstream_sensitive"

Registry = dict[str, Any]
"""``name -> JSON Schema dict | ToolSpec``, what ``toolstream_core.Assembler(tools=...)`` takes."""

ToolsArg = (
    Mapping[str, Mapping[str, Any] | ToolSpec | None]
    | Sequence[BaseTool | ToolSpec | Mapping[str, Any] | type | Callable[..., Any]]
)
"""What ``tools=`` accepts: a ready registry, or anything LangChain's ``bind_tools`` takes."""

ConfigArg = AssembleConfig | Mapping[str, Any] | str | Path
"""What ``config=`` accepts (the same in the LlamaIndex shim): the config, its mapping, or a
YAML file path holding the ``agent_stream_assemble:`` section."""


def _schema_of_dict(tool: Mapping[str, Any]) -> tuple[str, Any] | None:
    """Name and parameter schema of an already formatted tool dict, or ``None`` (built-ins)."""
    function = tool.get("function")
    if tool.get("type") == "function" and isinstance(function, Mapping) and function.get("name"):
        return str(function["name"]), dict(function.get("parameters") or {"type": "object"})
    if tool.get("type") == "function" and tool.get("name"):  # Responses-style flat function tool
        return str(tool["name"]), dict(tool.get("parameters") or {"type": "object"})
    if tool.get("name") and isinstance(tool.get("input_schema"), Mapping):  # Anthropic
        return str(tool["name"]), dict(tool["input_schema"])
    if tool.get("type") == "custom" and tool.get("name"):  # free-form input tools
        return str(tool["name"]), None
    return None


def registry_from_tools(tools: ToolsArg | None) -> Registry | None:
    """Registry from a user's ``tools=``: a mapping, or a sequence of anything LangChain binds
    (the core's rule, ``ToolSpec.registry``, with LangChain's way of reading a tool)."""
    return ToolSpec.registry(tools, _langchain_tool_entry)


def _langchain_tool_entry(tool: Any) -> tuple[str, Any] | None:
    """A tool's name and schema as LangChain binds it: a formatted tool dict is read, tools /
    pydantic classes / callables go through ``convert_to_openai_tool``. Vendor built-ins (web
    search, ...) are not client tools and are skipped (``None``): their calls are server calls
    the gate never runs."""
    if isinstance(tool, Mapping):
        found = _schema_of_dict(tool)
        if found is not None:
            return found
    try:
        formatted = convert_to_openai_tool(tool)
    except Exception:  # a vendor built-in or a format LangChain itself cannot convert
        _log.debug("toolstream: %r is not a client tool; not in the registry", tool)
        return None
    found = _schema_of_dict(formatted)
    if found is None:
        return None
    schema = _without_injected(found[1]) if isinstance(tool, BaseTool) else found[1]
    return found[0], _marked(tool, found[0], schema)


# Parameters the agent's ``ToolNode`` fills in by name, whatever their annotation (LangGraph's
# tool node: a parameter named ``runtime`` gets the ``ToolRuntime``). Those injected by
# annotation (``InjectedToolArg`` and its subclasses) are already out of ``tool_call_schema``.
_INJECTED_BY_NAME = ("runtime",)


def _without_injected(schema: Any) -> Any:
    """The schema a tool's arguments are checked against: the one the model is shown, minus the
    parameters the agent injects, so a call that leaves them out is valid (issue 36)."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), Mapping):
        return schema
    injected = [name for name in _INJECTED_BY_NAME if name in schema["properties"]]
    if not injected:
        return schema
    out = dict(schema)
    out["properties"] = {k: v for k, v in schema["properties"].items() if k not in injected}
    if isinstance(schema.get("required"), list):
        out["required"] = [name for name in schema["required"] if name not in injected]
    return out


def _marked(tool: Any, name: str, schema: Any) -> Any:
    """A tool whose ``metadata`` says ``toolstream_sensitive`` (``True`` or argument paths)
    becomes a ``ToolSpec`` carrying it, so the marking travels with the tool."""
    metadata = getattr(tool, "metadata", None)
    marked = metadata.get(SENSITIVE_KEY, False) if isinstance(metadata, Mapping) else False
    if marked is False:
        return schema
    return ToolSpec(name, schema, sensitive=marked if isinstance(marked, bool) else tuple(marked))


def registry_from_bound_tools(tools: Sequence[Any] | None) -> Registry | None:
    """Registry from the ``tools`` kwarg an integration's ``bind_tools`` produced."""
    if not tools:
        return None
    return registry_from_tools(list(tools))


def merge_registries(explicit: Registry | None, bound: Registry | None) -> Registry | None:
    """The user's explicit registry wins; otherwise the bound tools; ``None`` means no check."""
    if explicit is not None:
        return explicit
    return bound

