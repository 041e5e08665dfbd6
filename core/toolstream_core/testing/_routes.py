"""Where an emulator request goes, and the answers it gets when it cannot be played.

The routing half of :class:`~toolstream_core.testing.VendorEmulator` (``_server`` keeps the
queues and the playing): which API, mode and wire a request's method and path address
(:func:`route_for`), whether a scenario exists on that API (:func:`check_applies`), and the JSON
responses, a vendor's own error shape included (:func:`bad_request`), and Ollama's read-only
model routes (:func:`ollama_info`). Pure functions: no server state, no I/O.
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any, NamedTuple
from urllib.parse import unquote, urlsplit

from . import (
    _wire_anthropic,
    _wire_bedrock,
    _wire_bedrock_invoke,
    _wire_cohere,
    _wire_cohere_v1,
    _wire_gemini,
    _wire_ollama,
    _wire_openai_chat,
    _wire_openai_responses,
)
from ._http import Request, Response
from ._scenarios import API_NAMES, SCENARIOS
from ._wire_common import Reply, dumps

__all__ = ["OLLAMA_INFO", "REASONS", "WIRES", "Route", "bad_request", "check_applies", "json_response", "ollama_info",
           "reply_response", "route_for"]

WIRES: dict[str, ModuleType] = {
    "openai-chat": _wire_openai_chat,
    "openai-responses": _wire_openai_responses,
    "anthropic": _wire_anthropic,
    "gemini": _wire_gemini,
    "bedrock-converse": _wire_bedrock,
    "ollama": _wire_ollama,
    "cohere": _wire_cohere,
}

#: Ollama's read-only endpoints a framework class may call before it chats.
OLLAMA_INFO = frozenset({"/api/show", "/api/tags", "/api/version"})
#: Bedrock's Converse endpoints: ``/model/{modelId}/converse-stream`` and ``.../converse``.
_BEDROCK_ACTIONS = {"converse-stream": True, "converse": False}
#: Bedrock's InvokeModel endpoints (Anthropic models): the ``anthropic`` scenarios, its framing.
_BEDROCK_INVOKE = {"invoke-with-response-stream": True, "invoke": False}


class Route(NamedTuple):
    api: str
    stream: bool
    model: str
    wire: ModuleType | None = None  # another wire of ``api`` (Cohere v1, Bedrock InvokeModel)


def route_for(method: str, raw_path: str, body: dict[str, Any]) -> Route | None:
    """Which API and mode a request addresses (``None``: not an endpoint we speak)."""
    if method != "POST":
        return None
    parts = urlsplit(raw_path)
    path = unquote(parts.path).rstrip("/")
    model = str(body.get("model") or "")
    if path == "/v1/chat/completions" or _azure_chat(path):
        return Route("openai-chat", bool(body.get("stream")), model)
    if path == "/v1/responses":
        return Route("openai-responses", bool(body.get("stream")), model)
    if path == "/v1/messages":
        return Route("anthropic", bool(body.get("stream")), model)
    if path == "/api/chat":
        return Route("ollama", body.get("stream", True) is not False, model)
    if path == "/v2/chat":
        return Route("cohere", bool(body.get("stream")), model)
    if path == "/v1/chat":  # Cohere v1: plays the cohere scenarios in the v1 shape
        return Route("cohere", bool(body.get("stream")), model, _wire_cohere_v1)
    if path.startswith("/model/"):
        target, _, action = path[len("/model/"):].rpartition("/")
        if action in _BEDROCK_ACTIONS:
            return Route("bedrock-converse", _BEDROCK_ACTIONS[action], target)
        if action in _BEDROCK_INVOKE:
            return Route("anthropic", _BEDROCK_INVOKE[action], target, _wire_bedrock_invoke)
    return _gemini_route(path)


def _gemini_route(path: str) -> Route | None:
    for prefix in ("/v1beta/models/", "/v1/models/", "/v1beta/", "/v1/"):
        if path.startswith(prefix) and ":" in path:
            target, _, method_name = path[len(prefix):].rpartition(":")
            target = target.removeprefix("models/")
            if method_name == "streamGenerateContent":
                return Route("gemini", True, target)
            if method_name == "generateContent":
                return Route("gemini", False, target)
    return None


def check_applies(api: str, name: str) -> None:
    if api not in WIRES:
        raise ValueError(f"unknown API {api!r}; known: {list(API_NAMES)}")
    if name not in SCENARIOS:
        raise ValueError(f"unknown scenario {name!r}; known: {sorted(SCENARIOS)}")
    if api not in SCENARIOS[name].apis:
        raise ValueError(f"scenario {name!r} does not exist on {api}; it is for "
                         f"{sorted(SCENARIOS[name].apis)}")


REASONS = {200: "OK", 400: "Bad Request", 404: "Not Found", 500: "Internal Server Error",
            529: "Site Overloaded"}


def json_response(status: int, body: dict[str, Any] | None,
          headers: dict[str, str] | None = None) -> Response:
    return Response(status, REASONS.get(status, "Error"),
                    [("Content-Type", "application/json"), *(headers or {}).items()],
                    dumps(body).encode())


def reply_response(reply: Reply) -> Response:
    return json_response(reply.status, reply.body, reply.headers)


def bad_request(api: str, message: str) -> Reply:
    """A 400 for a request the emulator cannot play, in ``api``'s own error shape."""
    if api == "anthropic":
        return Reply(400, {"type": "error",
                           "error": {"type": "invalid_request_error", "message": message}})
    if api == "gemini":
        return Reply(400, {"error": {"code": 400, "message": message,
                                     "status": "INVALID_ARGUMENT"}})
    if api == "bedrock-converse":
        return Reply(400, {"message": message}, {"x-amzn-ErrorType": "ValidationException"})
    if api == "ollama":
        return Reply(400, {"error": message})
    if api == "cohere":
        return Reply(400, {"id": "toolstream-emulator", "message": message})
    return Reply(400, {"error": {"message": message, "type": "invalid_request_error",
                                 "param": "model", "code": None}})


def _azure_chat(path: str) -> bool:
    """Azure OpenAI's chat path, ``/openai/deployments/{deployment}/chat/completions`` (the
    SDK's ``AzureOpenAI`` client adds the deployment; the ``api-version`` query is ignored)."""
    head, _, deployment = path.removesuffix("/chat/completions").rpartition("/deployments/")
    return path.endswith("/chat/completions") and bool(deployment) and "/" not in deployment \
        and head in ("", "/openai")


def ollama_info(request: Request, path: str) -> Response:
    """``/api/show``, ``/api/tags``, ``/api/version``: details of the one emulated model."""
    try:
        body = json.loads(request.body or b"{}")
    except ValueError:
        body = {}
    model = str(body.get("model") or "emulated-model") if isinstance(body, dict) \
        else "emulated-model"
    return reply_response(_wire_ollama.model_info(path, model))
