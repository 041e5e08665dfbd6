"""What the tools people already use would hand to their tool runner, computed for real.

`toolstream demo` compares toolstream with plain LangChain, plain LlamaIndex and the
vendor SDKs' own stream helpers. A comparison is only worth showing if the other
side is the real code, so every engine here replays the same recorded HTTP exchange
(a vcrpy cassette, ``record_mode="none"``) through the real vendor client and the
real framework class, and reads the result the way an agent loop would:

* **LangChain**: ``model.stream(...)`` with the usual ``full = full + chunk`` merge;
  the runner gets ``full.tool_calls`` (``parse_partial_json`` under the hood), and
  ``full.invalid_tool_calls`` are not run.
* **LlamaIndex**: ``llm.stream_chat(...)`` to the last response, then
  ``llm.get_tool_calls_from_response(..., error_on_no_tool_call=False)``.
* **SDK helper**: OpenAI ``chat.completions.stream`` / ``responses.stream`` and
  their ``get_final_*``, Anthropic ``messages.stream`` and ``get_final_message``
  (for chat and messages, the state those helpers run on each chunk, over the same
  ``stream=True`` chunks); google-genai has no accumulating helper, so its
  ``chunk.function_calls`` are used. Where the helper returns argument *text*, the
  runner is assumed to do ``json.loads(arguments or "{}")``, the line every example
  writes.
* **toolstream**: the SDK's own chunk objects fed to `Assembler`.

What each framework does with the chunks is a *reader* (`LangChainMerge`,
`LlamaIndexRead`, `OpenAIChatState`, `AnthropicAccumulate`, `ToolstreamAssemble`, ...):
the demo feeds it a replayed stream, and the benchmarks (``benchmarks/peers.py``, not
shipped) feed the same reader pre-built chunks and time it, so the table and the
timings are of one piece of code.

Frameworks are optional extras: a missing one is reported as unavailable, never
faked. Nothing here prints; `_demo` turns outcomes into a table.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import json
import logging
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Protocol, cast
from urllib.parse import urlsplit

import yaml

from toolstream_core import Provider, Turn
from toolstream_core.testing import api_from_uri, request_model
from toolstream_core.vendors import SDK_EXTRA, make_client, open_stream

logger = logging.getLogger(__name__)

ENGINES: tuple[str, ...] = ("langchain", "llamaindex", "sdk", "toolstream")
"""Column order of the demo: the three ways people run tools today, then toolstream."""

ENGINE_TITLES: dict[str, str] = {
    "langchain": "LangChain",
    "llamaindex": "LlamaIndex",
    "sdk": "SDK helper",
    "toolstream": "toolstream",
}

_EXTRA_FOR: dict[str, str] = {
    "langchain": "langchain",
    "llamaindex": "llamaindex",
    "sdk": "all",
    "toolstream": "all",
}

# Keys that only have to look like keys: the cassette answers, nothing leaves the host.
_DEMO_KEY = "toolstream-demo-offline-key"
_MAX_TOKENS = 1024

# Verdicts: what happens to one call in each engine.
RUN = "run"  # handed to the tool runner with these arguments
INVALID = "invalid"  # kept aside by the engine; not run (and nothing answers its id)
COMMIT = "commit"  # toolstream: committed, safe to run
REJECT = "reject"  # toolstream: not run, one paired error result
DROP = "drop"  # toolstream: removed with protocol repair


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


@dataclass
class CallView:
    """One tool call as an engine would hand it on."""

    name: str | None
    id: str | None
    verdict: str
    arguments: Any = None
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return _attrs(self, "name", "id", "verdict", "arguments", "reason")


@dataclass
class Outcome:
    """What one engine did with one recorded stream."""

    engine: str
    label: str
    status: str  # "ok" | "raised" | "unavailable"
    calls: list[CallView] = field(default_factory=list)
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            **_attrs(self, "engine", "label", "status", "error"),
            "calls": [c.as_dict() for c in self.calls],
            **self.extra,
        }


def _attrs(obj: object, *names: str) -> dict[str, Any]:
    """The named attributes in that order: the JSON key order users and golden files see."""
    return {name: getattr(obj, name) for name in names}


class EngineUnavailable(Exception):
    """An optional package the engine needs is not installed."""


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


# --------------------------------------------------------------------------- running


@contextmanager
def replaying(target: Target) -> Iterator[None]:
    """Serve the target's recorded response to whatever client asks, offline.

    Uses the project's replay configuration (`toolstream_core.testing.replay_vcr`):
    ``record_mode="none"``, matching on method, host and path (the engines ask the
    recorded URL, since the base URL is derived from it), and a response recorded
    as a dropped connection replayed as one: its body, then the transport error
    httpx raises when the peer closes mid-body.
    """
    try:
        from toolstream_core.testing import replay_vcr, replaying_drops
    except ImportError as exc:  # vcrpy missing
        raise EngineUnavailable("record") from exc
    try:
        player = replay_vcr()
    except ImportError as exc:
        raise EngineUnavailable("record") from exc
    with replaying_drops(), player.use_cassette(str(target.cassette)):
        yield


#: The vendor SDK (module, distribution) toolstream's own column streams each API through.
_SDK_FOR: dict[str, tuple[str, str]] = {
    "openai-chat": ("openai", "openai"),
    "openai-responses": ("openai", "openai"),
    "anthropic": ("anthropic", "anthropic"),
    "gemini": ("google.genai", "google-genai"),
    "bedrock-converse": ("boto3", "boto3"),
    "ollama": ("ollama", "ollama"),
    "cohere": ("cohere", "cohere"),
}


def missing_pieces(apis: Iterable[str]) -> list[str]:
    """Distributions toolstream's own column needs for ``apis`` and cannot import.

    Without them the demo has nothing to compare against (every row would be
    "n/a"), so the caller refuses to run instead of printing an empty table.
    Imports for real rather than looking for a spec: an installed package that
    fails to import is as missing as an absent one.
    """
    missing: list[str] = []
    try:
        from toolstream_core.testing import replay_vcr

        replay_vcr()
    except ImportError:
        missing.append("vcrpy")
    for module, distribution in sorted({_SDK_FOR[api] for api in apis}):
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(distribution)
    return missing


def run_engine(engine: str, target: Target, *, live: bool = False) -> Outcome:
    """One engine on one target; never raises (an engine's exception is its outcome).

    ``live`` talks to the target's server as it is (the gateway's running emulator) instead
    of replaying the target's cassette.
    """
    runner = _RUNNERS[engine]
    label = _label(engine, target.api)
    try:
        with (contextlib.nullcontext() if live else replaying(target),
              warnings.catch_warnings(record=True) as caught):
            warnings.simplefilter("always")
            outcome = runner(target, label)
        if caught:
            # Framework warnings (e.g. "unexpected tool content block") are part of what
            # the user would see; keep them in the document instead of on stderr.
            outcome.extra["warnings"] = sorted({str(w.message)[:200] for w in caught})
        return outcome
    except EngineUnavailable as exc:
        extra = exc.args[0] if exc.args else "all"
        return Outcome(
            engine,
            label,
            "unavailable",
            error=f"n/a (install toolstream-gate[{extra}])",
            extra={"install_extra": extra},
        )
    except Exception as exc:
        # A framework that blows up is a real (and common) outcome: the agent never gets
        # to run tools, and nothing pairs the ids it already saw.
        logger.debug("%s on %s raised", engine, target.cassette, exc_info=True)
        return Outcome(engine, label, "raised", error=_exc_text(exc))


def _exc_text(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}"[:160] if text else type(exc).__name__


def _label(engine: str, api: str) -> str:
    labels = {
        "langchain": {
            "openai-chat": "ChatOpenAI",
            "openai-responses": "ChatOpenAI(use_responses_api)",
            "anthropic": "ChatAnthropic",
            "gemini": "ChatGoogleGenerativeAI",
            "bedrock-converse": "ChatBedrockConverse",
            "ollama": "ChatOllama",
            "cohere": "ChatCohere",
        },
        "llamaindex": {
            "openai-chat": "OpenAI",
            "openai-responses": "OpenAIResponses",
            "anthropic": "Anthropic",
            "gemini": "GoogleGenAI",
            "bedrock-converse": "BedrockConverse",
            "ollama": "Ollama",
            "cohere": "Cohere",
        },
        "sdk": {
            "openai-chat": "chat.completions.stream",
            "openai-responses": "responses.stream",
            "anthropic": "messages.stream",
            "gemini": "chunk.function_calls",
            "bedrock-converse": "converse_stream events",
            "ollama": "chunk.message.tool_calls",
            "cohere": "chat_stream events",
        },
        "toolstream": {api: "Assembler" for api in _SDK_FOR},
    }
    return labels[engine][api]


def _need(extra: str, importer: Callable[[], Any]) -> Any:
    try:
        return importer()
    except ImportError as exc:
        raise EngineUnavailable(extra) from exc


# ----------------------------------------------------------------- vendor clients


def _client(target: Target) -> Any:
    """The vendor's own client, pointed at the replayed cassette (`toolstream_core.vendors`)."""
    return _need(SDK_EXTRA[target.api], lambda: make_client(
        target.api, api_key=_DEMO_KEY, base_url=target.base_url,
        api_version=(target.api_version or "v1beta") if target.api == "gemini" else None))


def _gemini_http_options(target: Target) -> Any:
    types = _need("gemini", lambda: __import__("google.genai.types", fromlist=["types"]))
    return types.HttpOptions(
        base_url=target.base_url, api_version=target.api_version or "v1beta"
    )


def sdk_chunks(target: Target, *, max_tokens: int | None = _MAX_TOKENS,
               ) -> tuple[list[Any], BaseException | None]:
    """The raw SDK stream objects for the target, and the exception that ended it (if any).

    This is the plain ``stream=True`` call a toolstream user wraps; it is also what
    the SDK itself hands the frameworks. ``max_tokens=None`` leaves the limit out, as
    OpenAI's ``chat.completions.stream`` call below does (a live server reports it back).
    """
    chunks: list[Any] = []
    try:
        # Gemini's recorded declarations are REST JSON, not the SDK's shape; the cassette
        # answers whatever is asked, so that request declares none.
        client = _client(target)  # referenced while reading: see open_stream
        stream = open_stream(target.api, client, model=target.model,
                             contents=target.prompt,
                             tools=None if target.api == "gemini" else target.wire_tools,
                             max_tokens=max_tokens)
        for chunk in stream:
            chunks.append(chunk)
    except EngineUnavailable:
        raise
    except Exception as exc:
        return chunks, exc
    return chunks, None


def _omit() -> Any:
    import openai

    return openai.omit


# --------------------------------------------------------------------------- readers
#
# How each framework turns a stream of chunks into the calls it hands the tool runner.
# The demo feeds a reader what a replayed exchange produced; the benchmarks
# (``benchmarks/peers.py``) feed the same reader pre-built chunks, batch by batch, and
# time it. ``feed`` takes an iterable so a timed batch costs one call, not one a chunk.


class Reader(Protocol):
    """One framework's stream-to-calls code, fed chunks and asked for the calls at the end."""

    def feed(self, chunks: Iterable[Any]) -> None: ...

    def calls(self) -> list[CallView]: ...


class LangChainMerge:
    """``full = chunk if full is None else full + chunk`` over ``AIMessageChunk``s.

    The loop LangChain's streaming docs teach; the runner gets ``full.tool_calls``
    (``parse_partial_json`` under the hood) and ``full.invalid_tool_calls`` are not run.
    """

    def __init__(self) -> None:
        self.full: Any = None

    def feed(self, chunks: Iterable[Any]) -> None:
        full = self.full
        for chunk in chunks:
            full = chunk if full is None else full + chunk
        self.full = full

    def calls(self) -> list[CallView]:
        return [] if self.full is None else langchain_calls(self.full)


class LangChainGenerate:
    """``generate_from_stream`` over the ``ChatGenerationChunk``s: what ``invoke`` runs on a
    streaming model (the demo shows the docs' loop, `LangChainMerge`; the benchmarks time both)."""

    def __init__(self) -> None:
        self.chunks: list[Any] = []

    def feed(self, chunks: Iterable[Any]) -> None:
        self.chunks.extend(chunks)

    def calls(self) -> list[CallView]:
        from langchain_core.language_models.chat_models import generate_from_stream

        result = generate_from_stream(iter(self.chunks))
        return langchain_calls(result.generations[0].message)


def langchain_calls(message: Any) -> list[CallView]:
    """An ``AIMessage``'s calls: ``tool_calls`` run, ``invalid_tool_calls`` kept aside."""
    calls = [CallView(tc.get("name"), tc.get("id"), RUN, tc.get("args")) for tc in message.tool_calls]
    for bad in message.invalid_tool_calls:
        calls.append(CallView(bad.get("name"), bad.get("id"), INVALID, None,
                              bad.get("error") or "invalid_tool_calls"))
    return calls


class LlamaIndexRead:
    """``llm.stream_chat(...)`` to the last response, then ``get_tool_calls_from_response``.

    ``parse_each`` also parses every streamed response, as ``FunctionAgent`` does to show
    calls as they grow (the benchmarks time it both ways; the demo reads the last only).
    """

    def __init__(self, llm: Any, *, parse_each: bool = False) -> None:
        self.llm = llm
        self.parse_each = parse_each
        self.last: Any = None

    def stream(self, prompt: str) -> Iterator[Any]:
        """The framework's own stream of ``ChatResponse``s for one user message."""
        chat_message = _need(
            "llamaindex", lambda: __import__("llama_index.core.llms", fromlist=["x"]).ChatMessage
        )
        return cast(Iterator[Any], self.llm.stream_chat([chat_message(role="user", content=prompt)]))

    def feed(self, chunks: Iterable[Any]) -> None:
        parse = self.llm.get_tool_calls_from_response if self.parse_each else None
        for response in chunks:
            self.last = response
            if parse is not None:
                parse(response, error_on_no_tool_call=False)

    def calls(self) -> list[CallView]:
        if self.last is None:
            return []
        found = self.llm.get_tool_calls_from_response(self.last, error_on_no_tool_call=False)
        return [CallView(sel.tool_name, sel.tool_id or None, RUN, sel.tool_kwargs) for sel in found]


class OpenAIChatState:
    """``ChatCompletionStreamState``: what ``chat.completions.stream`` runs on each chunk.

    The helper passes over chunks that are not ``chat.completion.chunk`` (Azure's content
    filter events) and so does this. ``get_final_completion`` parses the arguments of
    ``strict`` input tools; the rest get the ``json.loads`` every example writes.
    """

    def __init__(self, input_tools: list[Any] | None = None) -> None:
        from openai.lib.streaming.chat import ChatCompletionStreamState

        self.state: Any = (ChatCompletionStreamState(input_tools=input_tools) if input_tools
                           else ChatCompletionStreamState())

    def feed(self, chunks: Iterable[Any]) -> None:
        handle = self.state.handle_chunk
        for chunk in chunks:
            if chunk.object == "chat.completion.chunk":
                handle(chunk)

    def calls(self) -> list[CallView]:
        calls: list[CallView] = []
        for choice in self.state.get_final_completion().choices:
            for tc in choice.message.tool_calls or []:
                function = getattr(tc, "function", None)
                if function is None:
                    continue
                parsed = getattr(function, "parsed_arguments", None)
                calls.append(_loaded(function.name, tc.id, function.arguments, parsed))
        return calls


class AnthropicAccumulate:
    """``accumulate_event``: what ``messages.stream`` runs on each event, then its snapshot's
    ``tool_use`` blocks (``build_events``, the helper's per-event UI events, is not run)."""

    def __init__(self) -> None:
        self.accumulate, takes_bufs = _accumulator()
        self.extra: dict[str, Any] = {"json_bufs": {}} if takes_bufs else {}
        self.snapshot: Any = None

    def feed(self, chunks: Iterable[Any]) -> None:
        accumulate, extra = self.accumulate, self.extra
        snapshot = self.snapshot
        for event in chunks:
            snapshot = accumulate(event=event, current_snapshot=snapshot, **extra)
        self.snapshot = snapshot

    def calls(self) -> list[CallView]:
        if self.snapshot is None:  # get_final_message asserts the same
            raise AssertionError
        return [CallView(block.name, block.id, RUN, block.input)
                for block in self.snapshot.content if getattr(block, "type", None) == "tool_use"]


@cache
def _accumulator() -> tuple[Callable[..., Any], bool]:
    """The SDK's ``accumulate_event``, and whether this release threads ``json_bufs`` through it."""
    from anthropic.lib.streaming._messages import accumulate_event

    return accumulate_event, "json_bufs" in inspect.signature(accumulate_event).parameters


class ToolstreamAssemble:
    """toolstream's `Assembler` fed every chunk; its turn's calls committed, rejected or dropped."""

    def __init__(self, provider: str, *, tools: Mapping[str, Any] | None = None,
                 config: Any = None) -> None:
        from toolstream_core import Assembler

        self.assembler = Assembler(tools=tools, config=config, provider=cast(Provider, provider))

    def feed(self, chunks: Iterable[Any]) -> None:
        feed = self.assembler.feed
        for chunk in chunks:
            feed(chunk)

    def finish(self, error: BaseException | None = None) -> Turn:
        """The turn, with the transport marked incomplete when ``error`` ended the stream."""
        return self.assembler.finish(transport_complete=error is None, error=error)

    def calls(self) -> list[CallView]:
        return turn_calls(self.finish())


def turn_calls(turn: Turn) -> list[CallView]:
    """Each call of a turn as the runner sees it: committed, rejected with a reason, dropped."""
    calls: list[CallView] = []
    for call in turn.calls:
        committed = str(getattr(call.state, "value", call.state)) == "committed"
        reason = None if call.reason is None else str(getattr(call.reason, "value", call.reason))
        calls.append(CallView(call.name, call.id, COMMIT if committed else REJECT,
                              call.arguments if committed else None, reason))
    for call in turn.dropped:
        calls.append(CallView(call.name, call.id, DROP, None, "invalid_json"))
    return calls


def runnable(calls: Iterable[CallView]) -> list[tuple[str | None, Any]]:
    """``(name, arguments)`` of the calls a tool runner would run: run or committed."""
    return [(call.name, call.arguments) for call in calls if call.verdict in (RUN, COMMIT)]


# --------------------------------------------------------------------------- engines


def _toolstream(target: Target, label: str) -> Outcome:
    chunks, error = sdk_chunks(target)
    reader = ToolstreamAssemble(target.api, tools=target.tools or None)
    reader.feed(chunks)
    turn = reader.finish(error)
    raw = [c.raw_arguments for c in [*turn.calls, *turn.dropped]]
    return Outcome(
        "toolstream",
        label,
        "ok",
        calls=turn_calls(turn),
        error=None if error is None else _exc_text(error),
        extra={
            "finish_reason": _text(turn.finish_reason),
            "complete": bool(turn.complete),
            "raw_arguments": raw,
            "error_results": [
                {
                    "tool_call_id": r.tool_call_id,
                    "name": r.name,
                    "reason": str(getattr(r.reason, "value", r.reason)),
                    "content": r.content,
                }
                for r in turn.error_results()
            ],
        },
    )


def _langchain(target: Target, label: str) -> Outcome:
    reader = LangChainMerge()
    reader.feed(_langchain_model(target).stream(target.prompt))
    return Outcome("langchain", label, "ok", calls=reader.calls())


def _langchain_model(target: Target) -> Any:
    extra = "langchain"
    if target.api in ("openai-chat", "openai-responses"):
        chat_openai = _need(extra, lambda: __import__("langchain_openai").ChatOpenAI)
        return chat_openai(**_keyed(target), use_responses_api=target.api == "openai-responses")
    if target.api == "anthropic":
        chat_anthropic = _need(extra, lambda: __import__("langchain_anthropic").ChatAnthropic)
        return chat_anthropic(**_keyed(target), max_tokens=_MAX_TOKENS)
    if target.api in _LANGCHAIN_FAMILIES:
        return _LANGCHAIN_FAMILIES[target.api](target)
    chat_google = _need(
        extra, lambda: __import__("langchain_google_genai").ChatGoogleGenerativeAI
    )
    return chat_google(
        model=target.model,
        google_api_key=_DEMO_KEY,
        base_url=target.base_url,
        max_retries=0,
        client_args={"http_options": _gemini_http_options(target)},
    )


def _keyed(target: Target) -> dict[str, Any]:
    """What ChatOpenAI and ChatAnthropic both take: the emulator's URL, a demo key, no retries."""
    return {"model": target.model, "base_url": target.base_url, "api_key": _DEMO_KEY,
            "max_retries": 0}


def _chat_bedrock(target: Target) -> Any:
    chat = _need("langchain", lambda: __import__("langchain_aws").ChatBedrockConverse)
    # keys given so the control-plane client it also builds does not look for an AWS
    # profile (an instance-metadata request the recorded exchange does not hold)
    return chat(model=target.model, client=_client(target), region_name="us-east-1",
                aws_access_key_id=_DEMO_KEY, aws_secret_access_key=_DEMO_KEY,
                max_tokens=_MAX_TOKENS)


def _chat_ollama(target: Target) -> Any:
    chat = _need("langchain", lambda: __import__("langchain_ollama").ChatOllama)
    return chat(model=target.model, base_url=target.base_url, num_predict=_MAX_TOKENS)


def _chat_cohere(target: Target) -> Any:
    chat = _need("langchain", lambda: __import__("langchain_cohere").ChatCohere)
    return chat(model=target.model, cohere_api_key=_DEMO_KEY, base_url=target.base_url,
                max_retries=0, max_tokens=_MAX_TOKENS)


_LANGCHAIN_FAMILIES: dict[str, Callable[[Target], Any]] = {
    "bedrock-converse": _chat_bedrock,
    "ollama": _chat_ollama,
    "cohere": _chat_cohere,
}


def _llamaindex(target: Target, label: str) -> Outcome:
    reader = LlamaIndexRead(_llamaindex_llm(target))
    reader.feed(reader.stream(target.prompt))
    return Outcome("llamaindex", label, "ok", calls=reader.calls())


# LlamaIndex refuses model names it has no context-window entry for (an emulator's
# "scenario:..." or a new vendor model). The replayed response does not depend on the
# requested name (OpenAI and Anthropic carry it in the body, which is not matched), so a
# known name stands in; stream parsing is the same for every model of these families.
_LLAMAINDEX_STAND_IN = {
    "openai-chat": "gpt-4o-mini",
    "openai-responses": "gpt-4o-mini",
    "anthropic": "claude-sonnet-4-5",
}


def _llamaindex_model(api: str, model: str) -> str:
    # Imported by name: the "latest" env type-checks this module without LlamaIndex installed.
    family = "anthropic" if api == "anthropic" else "openai"
    utils = importlib.import_module(f"llama_index.llms.{family}.utils")
    try:
        getattr(utils, f"{family}_modelname_to_contextsize")(model)
    except ValueError:
        return _LLAMAINDEX_STAND_IN[api]
    return model


def _llamaindex_family(target: Target) -> Any:
    """LlamaIndex's Bedrock Converse, Ollama and Cohere classes, on the replayed exchange."""
    extra = "llamaindex"
    if target.api == "bedrock-converse":
        llm = _need(extra, lambda: __import__("llama_index.llms.bedrock_converse",
                                              fromlist=["x"]).BedrockConverse)
        return llm(model=target.model, client=_client(target), region_name="us-east-1",
                   max_tokens=_MAX_TOKENS, max_retries=1)
    if target.api == "ollama":
        llm = _need(extra, lambda: __import__("llama_index.llms.ollama",
                                              fromlist=["x"]).Ollama)
        return llm(model=target.model, base_url=target.base_url, context_window=32_768)
    llm = _need(extra, lambda: __import__("llama_index.llms.cohere", fromlist=["x"]).Cohere)
    return llm(model=target.model, api_key=_DEMO_KEY, base_url=target.base_url,
               max_retries=0, max_tokens=_MAX_TOKENS)


def _llamaindex_llm(target: Target) -> Any:
    extra = "llamaindex"
    if target.api in _LANGCHAIN_FAMILIES:
        return _llamaindex_family(target)
    if target.api == "gemini":
        google_llm = _need(extra, lambda: __import__("llama_index.llms.google_genai",
                                                     fromlist=["x"]).GoogleGenAI)
        # Both limits given so the constructor does not fetch model metadata (a GET the
        # recorded exchange does not hold); the model is in the URL path, so it is kept.
        return google_llm(
            model=target.model, api_key=_DEMO_KEY, http_options=_gemini_http_options(target),
            max_tokens=_MAX_TOKENS, context_window=1_000_000,
        )
    if target.api == "anthropic":
        anthropic_llm = _need(extra, lambda: __import__("llama_index.llms.anthropic",
                                                        fromlist=["x"]).Anthropic)
        return anthropic_llm(
            model=_llamaindex_model(target.api, target.model), base_url=target.base_url,
            api_key=_DEMO_KEY, max_retries=0, max_tokens=_MAX_TOKENS,
        )
    name = "OpenAI" if target.api == "openai-chat" else "OpenAIResponses"
    openai_llm = _need(extra, lambda: getattr(__import__("llama_index.llms.openai",
                                                         fromlist=["x"]), name))
    return openai_llm(
        model=_llamaindex_model(target.api, target.model), api_base=target.base_url,
        api_key=_DEMO_KEY, max_retries=0,
    )


def _sdk(target: Target, label: str) -> Outcome:
    loop = _EVENT_LOOPS.get(target.api)
    if loop is not None:  # no accumulating helper: the loop their docs show
        events, error = sdk_chunks(target)
        return Outcome("sdk", label, "ok", calls=loop(events),
                       error=None if error is None else _exc_text(error))
    if target.api in _SDK_STATES:  # the helper's own per-chunk state, on the chunks that arrived
        state, max_tokens = _SDK_STATES[target.api]
        chunks, error = sdk_chunks(target, max_tokens=max_tokens)
        reader = state(target)
        reader.feed(chunks)
        if error is not None:  # the helper raises it out of its iteration
            raise error
        return Outcome("sdk", label, "ok", calls=reader.calls())
    if target.api == "openai-responses":
        client = _client(target)
        with client.responses.stream(
            model=target.model, input=target.prompt, tools=target.wire_tools or _omit()
        ) as stream:
            for _event in stream:
                pass
            response = stream.get_final_response()
        calls = [
            _loaded(item.name, item.call_id, item.arguments, None)
            for item in response.output
            if getattr(item, "type", None) == "function_call"
        ]
        return Outcome("sdk", label, "ok", calls=calls)
    client = _client(target)
    calls = []
    # google-genai has no accumulating helper: the plain stream, as in sdk_chunks.
    for chunk in open_stream("gemini", client, model=target.model, contents=target.prompt):
        for fc in chunk.function_calls or []:
            calls.append(CallView(fc.name, fc.id, RUN, fc.args or {}))
    return Outcome("sdk", label, "ok", calls=calls)


#: The SDK helpers whose per-chunk state a reader runs, and the output limit the helper's
#: request sends: ``chat.completions.stream`` and ``messages.stream`` are these states
#: over the ``stream=True`` chunks (the benchmarks time the same readers).
_SDK_STATES: dict[str, tuple[Callable[[Target], Reader], int | None]] = {
    "openai-chat": (lambda target: OpenAIChatState(target.wire_tools), None),
    "anthropic": (lambda target: AnthropicAccumulate(), _MAX_TOKENS),
}


def _bedrock_calls(events: list[Any]) -> list[CallView]:
    """``toolUse`` input text gathered per block, ``json.loads`` at ``contentBlockStop``."""
    open_calls: dict[Any, list[Any]] = {}
    calls: list[CallView] = []
    for event in events:
        if "contentBlockStart" in event:
            block = event["contentBlockStart"]
            use = block.get("start", {}).get("toolUse")
            if use:
                open_calls[block.get("contentBlockIndex")] = [use.get("name"),
                                                              use.get("toolUseId"), ""]
        elif "contentBlockDelta" in event:
            block = event["contentBlockDelta"]
            entry = open_calls.get(block.get("contentBlockIndex"))
            if entry is not None:
                entry[2] += block.get("delta", {}).get("toolUse", {}).get("input", "")
        elif "contentBlockStop" in event:
            entry = open_calls.pop(event["contentBlockStop"].get("contentBlockIndex"), None)
            if entry is not None:
                calls.append(_loaded(entry[0], entry[1], entry[2], None))
    return calls


def _ollama_calls(events: list[Any]) -> list[CallView]:
    """Ollama's calls arrive whole: each chunk's ``message.tool_calls``."""
    return [CallView(tc.function.name, None, RUN, dict(tc.function.arguments))
            for chunk in events for tc in chunk.message.tool_calls or []]


def _cohere_calls(events: list[Any]) -> list[CallView]:
    """``tool-call-delta`` text gathered by index, ``json.loads`` at ``tool-call-end``."""
    open_calls: dict[Any, list[Any]] = {}
    calls: list[CallView] = []
    for event in events:
        kind = getattr(event, "type", None)
        if kind == "tool-call-start":
            tc = event.delta.message.tool_calls
            open_calls[event.index] = [tc.function.name, tc.id, tc.function.arguments or ""]
        elif kind == "tool-call-delta" and event.index in open_calls:
            open_calls[event.index][2] += event.delta.message.tool_calls.function.arguments
        elif kind == "tool-call-end" and event.index in open_calls:
            name, call_id, text = open_calls.pop(event.index)
            calls.append(_loaded(name, call_id, text, None))
    return calls


_EVENT_LOOPS: dict[str, Callable[[list[Any]], list[CallView]]] = {
    "bedrock-converse": _bedrock_calls,
    "ollama": _ollama_calls,
    "cohere": _cohere_calls,
}


def _text(value: Any) -> Any:
    """An SDK enum (google-genai's ``FinishReason.STOP``) as its wire string."""
    return getattr(value, "value", value)


def _loaded(name: str | None, call_id: str | None, text: str | None, parsed: Any) -> CallView:
    """An OpenAI call as the runner gets it: parsed by the SDK, else ``json.loads``."""
    if parsed is not None:
        return CallView(name, call_id, RUN, parsed)
    try:
        return CallView(name, call_id, RUN, json.loads(text or "{}"))
    except json.JSONDecodeError as exc:
        return CallView(name, call_id, INVALID, None, f"json.loads: {exc.msg}")


_RUNNERS: dict[str, Callable[[Target, str], Outcome]] = {
    "langchain": _langchain,
    "llamaindex": _llamaindex,
    "sdk": _sdk,
    "toolstream": _toolstream,
}


def new_workdir() -> tempfile.TemporaryDirectory[str]:
    """Scratch space for single-interaction cassettes (removed when closed)."""
    return tempfile.TemporaryDirectory(prefix="toolstream-demo-")
