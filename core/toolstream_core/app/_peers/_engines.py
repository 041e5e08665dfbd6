"""The demo's engines: each replays a target through the real vendor client and the real
framework class, and hands the chunks to that framework's reader (`_readers`)."""

from __future__ import annotations

import contextlib
import importlib
import logging
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from toolstream_core.app._peers._models import (
    _MAX_TOKENS,
    _client,
    _langchain_model,
    _llamaindex_llm,
    _omit,
    sdk_chunks,
)
from toolstream_core.app._peers._readers import (
    RUN,
    AnthropicAccumulate,
    CallView,
    EngineUnavailable,
    LangChainMerge,
    LlamaIndexRead,
    OpenAIChatState,
    Reader,
    ToolstreamAssemble,
    loaded,
    named_fields,
    turn_calls,
)
from toolstream_core.app._peers._targets import Target
from toolstream_core.vendors import open_stream

logger = logging.getLogger(__name__)

ENGINES: tuple[str, ...] = ("langchain", "llamaindex", "sdk", "toolstream")
"""Column order of the demo: the three ways people run tools today, then toolstream."""

ENGINE_TITLES: dict[str, str] = {
    "langchain": "LangChain",
    "llamaindex": "LlamaIndex",
    "sdk": "SDK helper",
    "toolstream": "toolstream",
}


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
            **named_fields(self, "engine", "label", "status", "error"),
            "calls": [c.as_dict() for c in self.calls],
            **self.extra,
        }


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


def _llamaindex(target: Target, label: str) -> Outcome:
    reader = LlamaIndexRead(_llamaindex_llm(target))
    reader.feed(reader.stream(target.prompt))
    return Outcome("llamaindex", label, "ok", calls=reader.calls())


# LlamaIndex refuses model names it has no context-window entry for (an emulator's
# "scenario:..." or a new vendor model). The replayed response does not depend on the
# requested name (OpenAI and Anthropic carry it in the body, which is not matched), so a
# known name stands in; stream parsing is the same for every model of these families.
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
            loaded(item.name, item.call_id, item.arguments, None)
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
                calls.append(loaded(entry[0], entry[1], entry[2], None))
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
            calls.append(loaded(name, call_id, text, None))
    return calls


_EVENT_LOOPS: dict[str, Callable[[list[Any]], list[CallView]]] = {
    "bedrock-converse": _bedrock_calls,
    "ollama": _ollama_calls,
    "cohere": _cohere_calls,
}


def _text(value: Any) -> Any:
    """An SDK enum (google-genai's ``FinishReason.STOP``) as its wire string."""
    return getattr(value, "value", value)


_RUNNERS: dict[str, Callable[[Target, str], Outcome]] = {
    "langchain": _langchain,
    "llamaindex": _llamaindex,
    "sdk": _sdk,
    "toolstream": _toolstream,
}


def new_workdir() -> tempfile.TemporaryDirectory[str]:
    """Scratch space for single-interaction cassettes (removed when closed)."""
    return tempfile.TemporaryDirectory(prefix="toolstream-demo-")
