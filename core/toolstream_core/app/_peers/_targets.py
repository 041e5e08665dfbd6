"""Targets: one recorded interaction, written alone to a cassette, and what it takes to
ask the same question again (base URL, model, prompt, declared tools)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from toolstream_core.testing import api_from_uri, request_model


@dataclass(frozen=True)
class Target:
    """One recorded stream and what it takes to ask the same question again."""

    cassette: Path
    interaction: int
    api: str
    model: str
    base_url: str
    api_version: str | None
    prompt: str
    tools: dict[str, dict[str, Any]]
    wire_tools: list[Any]


# --------------------------------------------------------------------------- targets


def make_target(cassette: Path, interaction: Mapping[str, Any], index: int, work: Path) -> Target:
    """A replayable target for one cassette interaction.

    The interaction is written alone to a cassette under ``work`` so every engine
    gets exactly this response, whatever else the original cassette holds.
    """
    request = interaction.get("request") or {}
    uri = str(request.get("uri") or "")
    api = api_from_uri(uri)
    if api is None:
        raise ValueError(f"{cassette}#{index}: {uri!r} is not a known vendor endpoint")
    base_url, api_version = _base_url(api, uri)
    body = _request_json(request)
    single = work / f"{cassette.parent.name}__{cassette.stem}__{index}.yaml"
    single.write_text(
        yaml.safe_dump({"interactions": [dict(interaction)], "version": 1}, allow_unicode=True),
        encoding="utf-8",
    )
    declared = _declared_tools(body)
    wire_tools: list[Any] = declared if isinstance(declared, list) else []
    return Target(
        cassette=single,
        interaction=index,
        api=api,
        model=request_model(request) or "model",
        base_url=base_url,
        api_version=api_version,
        prompt=_prompt(api, body) or "Use the tools.",
        tools=tools_from_request(api, wire_tools),
        wire_tools=wire_tools,
    )


def _declared_tools(body: Mapping[str, Any]) -> Any:
    """The request's tool list (Bedrock's sits under ``toolConfig``)."""
    config = body.get("toolConfig")
    return config.get("tools") if isinstance(config, Mapping) else body.get("tools")


def _base_url(api: str, uri: str) -> tuple[str, str | None]:
    """The client base URL that makes the SDK send its request to the recorded path."""
    parts = urlsplit(uri)
    root = f"{parts.scheme}://{parts.netloc}"
    path = parts.path
    if api in ("bedrock-converse", "ollama", "cohere"):  # their SDKs add the whole path
        return root, None
    if api == "openai-chat":
        return root + path[: path.rfind("/chat/completions")], None
    if api == "openai-responses":
        return root + path[: path.rfind("/responses")], None
    if api == "anthropic":
        return root + path[: path.rfind("/v1/messages")], None
    marker = path.find("/models/")
    prefix = path[:marker]  # "/v1beta" or "/<base path>/v1beta"
    version = prefix.rsplit("/", 1)[-1] or None
    return root + prefix[: len(prefix) - len(version or "")], version


def _request_json(request: Mapping[str, Any]) -> dict[str, Any]:
    body = request.get("body")
    if isinstance(body, Mapping):
        body = body.get("string")
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if not isinstance(body, str) or not body:
        return {}
    try:
        doc = json.loads(body)
    except json.JSONDecodeError:
        return {}
    return doc if isinstance(doc, dict) else {}


def _prompt(api: str, body: Mapping[str, Any]) -> str | None:
    """The user's text in the recorded request (only so the replayed request reads the same)."""
    if api == "openai-responses":
        value = body.get("input")
        if isinstance(value, str):
            return value
    messages = body.get("messages") or body.get("contents") or body.get("input") or []
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, Mapping):
            continue
        content = message.get("content", message.get("parts"))
        if isinstance(content, str):
            return content
        for part in content if isinstance(content, list) else []:
            if isinstance(part, Mapping) and isinstance(part.get("text"), str):
                return str(part["text"])
    return None


def tools_from_request(api: str, wire_tools: list[Any]) -> dict[str, dict[str, Any]]:
    """``name -> JSON Schema`` from the tools the recorded request declared.

    Gemini's own schema dialect (upper-case ``type`` names) is lower-cased so the
    registry is plain JSON Schema.
    """
    found: dict[str, dict[str, Any]] = {}
    for tool in wire_tools:
        if not isinstance(tool, Mapping):
            continue
        if api == "gemini":
            declarations = tool.get("functionDeclarations") or tool.get("function_declarations")
            for decl in declarations or []:
                if isinstance(decl, Mapping) and isinstance(decl.get("name"), str):
                    schema = (
                        decl.get("parametersJsonSchema")
                        or decl.get("parameters_json_schema")
                        or decl.get("parameters")
                        or {"type": "object"}
                    )
                    found[decl["name"]] = _json_schema_types(schema)
            continue
        inner = tool.get("function") or tool.get("toolSpec")
        function: Mapping[str, Any] = inner if isinstance(inner, Mapping) else tool
        name = function.get("name")
        schema = function.get("parameters") or function.get("input_schema")
        spec = function.get("inputSchema")
        if schema is None and isinstance(spec, Mapping):  # Bedrock: {"json": schema}
            schema = spec.get("json")
        if isinstance(name, str) and isinstance(schema, Mapping):
            found[name] = dict(schema)
    return found


def _json_schema_types(schema: Any) -> Any:
    if isinstance(schema, Mapping):
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key == "type" and isinstance(value, str):
                out[key] = value.lower()
            elif key in ("propertyOrdering", "property_ordering"):
                continue
            else:
                out[key] = _json_schema_types(value)
        return out
    if isinstance(schema, list):
        return [_json_schema_types(v) for v in schema]
    return schema
