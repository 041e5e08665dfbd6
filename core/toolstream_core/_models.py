"""The values the assembler hands out: immutable, so a caller can keep them after the stream.

Most of them are public from the package itself (``toolstream_core.__all__`` lists them, the
one list); the rest are the core's own (``CallKind``, ``BUILTIN_CLIENT_KINDS``)."""

from __future__ import annotations

import enum
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

Provider = Literal[
    "openai-chat", "openai-responses", "anthropic", "gemini", "bedrock-converse", "ollama", "cohere"
]
PROVIDERS: tuple[Provider, ...] = (
    "openai-chat", "openai-responses", "anthropic", "gemini", "bedrock-converse", "ollama", "cohere"
)
CallKind = Literal["function", "custom", "server", "computer", "local_shell", "shell", "apply_patch",
                   "tool_search", "mcp_approval"]
"""``function`` / ``custom``: the caller's own tools. ``server``: run by the vendor (DESIGN
§4.11). The rest: Responses built-in tools the *client* executes, each answered by its own
output item (``ErrorResult.output_type``)."""
BUILTIN_CLIENT_KINDS: frozenset[str] = frozenset(
    {"computer", "local_shell", "shell", "apply_patch", "tool_search", "mcp_approval"})


class _StrEnum(str, enum.Enum):
    """A str enum whose ``str()`` and ``format()`` are the bare value on every Python we support.

    The values are part of the public contract (logged, serialised, compared to plain strings),
    so ``f"{Reason.invalid_json}"`` must read ``invalid_json`` and not ``Reason.invalid_json``.
    """

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class CallState(_StrEnum):
    """Where a call is. ``committed``, ``failed`` and ``cancelled`` are terminal."""

    open = "open"
    args_complete = "args_complete"
    committed = "committed"
    failed = "failed"
    cancelled = "cancelled"

    @property
    def terminal(self) -> bool:
        return self in _TERMINAL


_TERMINAL = frozenset({CallState.committed, CallState.failed, CallState.cancelled})


class Reason(_StrEnum):
    """Why a call was not committed. The string values are stable API."""

    invalid_json = "invalid_json"
    arguments_not_object = "arguments_not_object"
    arguments_exceed_max_bytes = "arguments_exceed_max_bytes"
    too_many_tool_calls = "too_many_tool_calls"
    missing_id_or_name = "missing_id_or_name"
    unknown_tool = "unknown_tool"
    schema_violation = "schema_violation"
    stream_truncated = "stream_truncated"
    upstream_error = "upstream_error"
    duplicate_conflict = "duplicate_conflict"
    cancelled = "cancelled"
    idle_timeout = "idle_timeout"
    no_output = "no_output"
    """Structured output only (never a call's reason): the vendor ended the turn normally but
    sent no output of the kind asked for (no call to the schema's tool, no JSON text)."""
    run_budget_exceeded = "run_budget_exceeded"


class AssemblerClosed(RuntimeError):
    """Raised by ``feed`` after ``finish``: feeding a finished turn is a caller bug, not vendor data."""


S = TypeVar("S")


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A tool the caller is willing to run.

    ``strict`` overrides the config ``mode`` for this tool only; ``pipelined`` is the same as
    listing the tool in ``allow_pipelined_execute``; ``sensitive`` (``True``, or argument paths
    like ``("password", "headers.Authorization")``) keeps its arguments out of UI events and
    traces, the same as listing it in ``sensitive_tools``.
    """

    name: str
    schema: Mapping[str, Any] | None = None
    strict: bool | None = None
    pipelined: bool = False
    sensitive: bool | tuple[str, ...] = False

    @staticmethod
    def registry(tools: Mapping[str, S | ToolSpec] | Iterable[Any] | None,
                 read: Callable[[Any], tuple[str, S | ToolSpec] | None],
                 ) -> dict[str, S | ToolSpec] | None:
        """The ``tools=`` registry from what a framework binds, the same rule in every shim:
        ``None`` is no registry (no name or schema check); a mapping is one already (``name ->
        schema | ToolSpec``), taken as it is; in a sequence a ``ToolSpec`` stands for itself
        and each other entry is ``read`` (the framework's knowledge: where its tool object
        keeps its name and schema) into ``(name, schema | ToolSpec)``, or ``None`` for an entry
        that is no client tool of the caller's (a vendor built-in, an internal responder)."""
        if tools is None:
            return None
        if isinstance(tools, Mapping):
            return dict(tools)
        registry: dict[str, S | ToolSpec] = {}
        for tool in tools:
            found = (tool.name, tool) if isinstance(tool, ToolSpec) else read(tool)
            if found is not None:
                registry[found[0]] = found[1]
        return registry


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call as the vendor sent it, and what the assembler decided about it.

    ``raw_arguments`` is exactly what arrived (never trimmed); ``arguments`` is only set for a
    committed call, so code that runs tools cannot pick up a half-received value by mistake.
    """

    key: Hashable
    index: int | None
    id: str | None
    name: str | None
    kind: CallKind
    state: CallState
    raw_arguments: str | None
    arguments: Any = None
    reason: Reason | None = None
    detail: str | None = None
    provider: Provider | None = None
    sensitive: bool | tuple[str, ...] = False
    """The tool's marking (``ToolSpec.sensitive`` / ``sensitive_tools``), for whoever shows it."""

    @property
    def committed(self) -> bool:
        return self.state is CallState.committed


@dataclass(frozen=True, slots=True)
class ErrorResult:
    """The tool result that answers a call that was not run, so the conversation stays legal.

    ``key`` is the ``ToolCall.key`` of the call it answers (``Turn.result_for``), so no caller
    pairs results with calls by position. ``kind`` is that call's kind and ``output_type`` the
    vendor's word for what answers it: a Responses input item type (``function_call_output``,
    ``computer_call_output``, ``mcp_approval_response``, ...), ``tool`` (an OpenAI chat tool
    message), ``tool_result`` (an Anthropic block) or ``functionResponse`` (a Gemini part).
    """

    tool_call_id: str
    name: str | None
    reason: Reason
    content: str
    is_error: bool = True
    key: Hashable = None
    kind: CallKind = "function"
    output_type: str | None = None


@dataclass(frozen=True, slots=True)
class Turn:
    """Everything one streamed response produced, decided.

    ``calls`` holds client calls only, in ``finalize_order``; ``committed`` and ``rejected`` are
    views of it. Server-side tool blocks are reported but never run or paired.
    """

    calls: tuple[ToolCall, ...]
    server_calls: tuple[ToolCall, ...] = ()
    dropped: tuple[ToolCall, ...] = ()
    complete: bool = False
    finish_reason: str | None = None
    error: BaseException | None = None
    provider: Provider | None = None
    anomalies: tuple[str, ...] = ()
    end_reason: Reason | None = None
    """Why the turn did not end normally (``stream_truncated``, ``upstream_error``,
    ``cancelled``, ``idle_timeout``): the reason every call still open at the end got, and
    the verdict on any output that is not a call (a JSON text). ``None`` when ``complete``."""
    end_detail: str | None = None
    run_budget_left: int | None = None
    """How many more calls the run may commit after this turn (its ``run_budget`` minus the
    calls committed here): the next turn's ``run_budget``. ``None``: no budget in force."""
    _results: tuple[ErrorResult, ...] = field(default=(), repr=False)

    @property
    def committed(self) -> tuple[ToolCall, ...]:
        return tuple(c for c in self.calls if c.state is CallState.committed)

    @property
    def rejected(self) -> tuple[ToolCall, ...]:
        return tuple(c for c in self.calls if c.state in (CallState.failed, CallState.cancelled))

    def error_results(self) -> list[ErrorResult]:
        """Exactly one result per rejected call, in the order of ``rejected``."""
        return list(self._results)

    def result_for(self, call: ToolCall) -> ErrorResult | None:
        """The error result that answers ``call`` (by its key), ``None`` for a call not rejected."""
        for result in self._results:
            if result.key == call.key:
                return result
        return None


# -- UI events (``on_event``). Never a reason to execute anything. ---------------------------


@dataclass(frozen=True, slots=True)
class CallOpened:
    key: Hashable
    id: str | None
    name: str | None


@dataclass(frozen=True, slots=True, init=False)
class ArgumentsDelta:
    """One non-empty fragment of a call's arguments, with the call's byte count so far.

    One is made per streamed fragment, so its ``__init__`` is written here rather than
    generated: a frozen dataclass's generated one sets each field through
    ``object.__setattr__``, which made this event most of the core's per-chunk cost. Writing
    the slots through their descriptors costs a third less and keeps everything the frozen
    dataclass gives (equality, hash, repr, ``dataclasses`` functions, no assignment).
    """

    key: Hashable
    fragment: str | None
    total_bytes: int

    def __init__(self, key: Hashable, fragment: str | None, total_bytes: int) -> None:
        _set_key(self, key)
        _set_fragment(self, fragment)
        _set_total_bytes(self, total_bytes)


# The slot descriptors of the class ``dataclass(slots=True)`` built (it replaces the class).
_set_key = vars(ArgumentsDelta)["key"].__set__
_set_fragment = vars(ArgumentsDelta)["fragment"].__set__
_set_total_bytes = vars(ArgumentsDelta)["total_bytes"].__set__


@dataclass(frozen=True, slots=True)
class CallCommitted:
    call: ToolCall


@dataclass(frozen=True, slots=True)
class CallRejected:
    call: ToolCall


AssemblerEvent = CallOpened | ArgumentsDelta | CallCommitted | CallRejected
