"""Every private name of another library that toolstream touches, in one table.

Why this exists: the gate reads the vendor's own events, and some framework classes keep
their SDK client where no public argument reaches it (``ChatAnthropic`` builds its
``anthropic.Client`` in a cached property; LlamaIndex's ``Anthropic`` in a pydantic private
attribute). Wherever a public way exists (a constructor argument that takes the client or
its HTTP client, a public field) the shims use it; what is left is listed here, with why and
where, so that a reader sees every such contact in one place and a test
(``tests/core/test_private_contacts.py``) fails the day an upgrade moves one. The same test
scans the sources for private names of other libraries and fails on one that is missing
here. ``docs/shims.md`` shows this table as rendered by `contacts_markdown`.

What a shim does when a contact has moved is decided here too (DESIGN §6): a model class the
gate claims to tap that cannot be tapped raises `TapUnavailableError` before any request is
sent; the gate never falls back quietly to evidence that has lost the proof.

Data and helpers only: this module imports no framework or SDK.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "PRIVATE_CONTACTS",
    "ContactKind",
    "PrivateContact",
    "TapUnavailableError",
    "contacts_markdown",
    "contacts_of",
    "private_copy",
    "rebuilt",
    "tap_unavailable",
]

ContactKind = Literal["method", "property", "cached_property", "private_attr", "function", "module"]
"""What the name must be on the installed version: a method (``params``: its leading
parameters), a property, a ``functools.cached_property``, a pydantic private attribute, a
module-level function, or a module (its name)."""


@dataclass(frozen=True)
class PrivateContact:
    """One private name of another library, and what toolstream does with it."""

    distribution: str
    """The PyPI distribution that owns it (for the installed version in error messages)."""
    owner: str
    """``module:Class`` for a class member, ``module`` for a module or a module's function."""
    name: str
    """The private name (for ``kind="module"``, the module's last dotted part)."""
    kind: ContactKind
    use: str
    """What toolstream does with it: read, call, override, assign on its private copy, patch."""
    where: tuple[str, ...]
    """The files of this repository that touch it."""
    why: str
    params: tuple[str, ...] = ()
    """For a method or function: its leading parameter names, ``self`` first for a method."""

    @property
    def label(self) -> str:
        """``Class._name`` or ``module._name``: how messages and the docs name it."""
        module, _, cls = self.owner.partition(":")
        return f"{cls or module}.{self.name}" if self.kind != "module" else module

    @property
    def module(self) -> str:
        return self.owner.partition(":")[0]

    @property
    def class_name(self) -> str | None:
        return self.owner.partition(":")[2] or None


_LC_TAP = ("langchain_toolstream/_tap.py",)
_LC_MODEL = ("langchain_toolstream/_chat_model.py",)
_LI_TAP = ("llamaindex_toolstream/_tap.py",)
_LI_LIMITS = ("llamaindex_toolstream/_limits.py",)
_LI_LLM = ("llamaindex_toolstream/_llm.py",)
_LI_AGENT = ("llamaindex_toolstream/_agent.py",)

_CHAT_MODEL = "langchain_core.language_models.chat_models:BaseChatModel"
_EXTENSION = ("LangChain's documented extension point for a custom chat model: the wrapper "
              "implements it and calls the wrapped model's, so the gate sits inside one model "
              "run (no second run in the callbacks, no second rate-limiter or cache pass)")
_STREAM_LIKE = ("where BaseChatModel decides whether a call streams (callbacks, stream "
                "events), from whether the class implements _stream: the wrapper always does, "
                "so it answers as the wrapped class would; one that cannot stream is answered "
                "whole, the same one message as in the stock agent")
_ANTHROPIC_LC = ("ChatAnthropic takes no client or HTTP-client argument: it builds its SDK "
                 "client here over a shared cached httpx client. Read to tap it; the tapped one "
                 "is assigned on the per-call copy (a cached_property takes writes, routed by "
                 "pydantic), never on the user's model")
_LI_PRIVATE_CLIENT = ("{cls} takes no client argument and keeps its SDK client in this pydantic "
                      "private attribute. Read to tap it; the tapped one is assigned on the "
                      "per-call model_copy(), never on the user's LLM")
_LI_LIMIT = ("the class merges its settings with the call's in its own order; its request "
             "builder is the one place that knows the output-token limit it will send "
             "(DESIGN §5.5), for the answers the tap does not see")

PRIVATE_CONTACTS: tuple[PrivateContact, ...] = (
    # -- LangChain --------------------------------------------------------------------------
    PrivateContact("langchain-anthropic", "langchain_anthropic.chat_models:ChatAnthropic",
                   "_client", "cached_property", "read; assign on the copy", _LC_TAP, _ANTHROPIC_LC),
    PrivateContact("langchain-anthropic", "langchain_anthropic.chat_models:ChatAnthropic",
                   "_async_client", "cached_property", "read; assign on the copy", _LC_TAP,
                   _ANTHROPIC_LC),
    PrivateContact("langchain-core", _CHAT_MODEL, "_generate_with_cache", "method", "override",
                   _LC_MODEL,
                   "the one step every invoke path (plain, streaming callbacks, v2 protocol "
                   "events) passes after LangChain aggregates the chunks (which re-derives "
                   "invalid_tool_calls by partial-JSON repair) and before on_llm_end and the "
                   "cache: where rejected calls are put back in invalid_tool_calls",
                   ("self", "messages", "stop", "run_manager")),
    PrivateContact("langchain-core", _CHAT_MODEL, "_agenerate_with_cache", "method", "override",
                   _LC_MODEL, "the async twin of _generate_with_cache",
                   ("self", "messages", "stop", "run_manager")),
    *(PrivateContact("langchain-core", _CHAT_MODEL, name, "method",
                     "override; call on the wrapped model", _LC_MODEL, _EXTENSION,
                     ("self", "messages", "stop", "run_manager"))
      for name in ("_generate", "_agenerate", "_stream", "_astream")),
    PrivateContact("langchain-core", _CHAT_MODEL, "_llm_type", "property",
                   "override; read on the wrapped model", _LC_MODEL, _EXTENSION),
    PrivateContact("langchain-core", "langchain_core.language_models.base:BaseLanguageModel",
                   "_identifying_params", "property", "override; read on the wrapped model",
                   _LC_MODEL, _EXTENSION),
    PrivateContact("langchain-core", _CHAT_MODEL, "_get_ls_params", "method",
                   "override; call on the wrapped model", _LC_MODEL,
                   "LangChain's documented override for tracing parameters: the wrapper reports "
                   "the wrapped model's provider and model name to LangSmith",
                   ("self", "stop")),
    PrivateContact("langchain-core", _CHAT_MODEL, "_resolve_model_profile", "method", "override",
                   _LC_MODEL,
                   "LangChain's documented override for a model's default profile: the wrapper "
                   "has the wrapped model's capabilities", ("self",)),
    PrivateContact("langchain-core", _CHAT_MODEL, "_should_stream", "method",
                   "override; calls BaseChatModel's", _LC_MODEL, _STREAM_LIKE, ("self",)),
    PrivateContact("langchain-core", _CHAT_MODEL, "_should_use_protocol_streaming", "method",
                   "override; calls BaseChatModel's", _LC_MODEL, _STREAM_LIKE, ("self",)),
    # -- LlamaIndex -------------------------------------------------------------------------
    PrivateContact("llama-index-llms-openai", "llama_index.llms.openai.base:OpenAI", "_get_client",
                   "method", "call", _LI_TAP,
                   "the user's SDK client (theirs if given, else the one built from the "
                   "settings and HTTP client given), which is kept only privately; the tapped "
                   "copy is built by the public constructor (openai_client=)", ("self",)),
    PrivateContact("llama-index-llms-openai", "llama_index.llms.openai.base:OpenAI", "_get_aclient",
                   "method", "call", _LI_TAP,
                   "the async twin of _get_client (async_openai_client=)", ("self",)),
    PrivateContact("llama-index-llms-openai", "llama_index.llms.openai.base:OpenAI", "_client",
                   "private_attr", "assign on the copy", _LI_TAP,
                   "only for a subclass with a constructor of its own (DeepSeek, Groq, a user's "
                   "class), which the shim cannot call knowing what it does: the tapped client "
                   "is set on its model_copy(); OpenAI, OpenAILike and AzureOpenAI themselves "
                   "are rebuilt by their constructor"),
    PrivateContact("llama-index-llms-openai", "llama_index.llms.openai.base:OpenAI", "_aclient",
                   "private_attr", "assign on the copy", _LI_TAP, "the async twin of _client"),
    # the LLM classes that take no client argument: their clients, read and set on the copy
    *(PrivateContact(f"llama-index-llms-{package}", f"llama_index.llms.{package}.base:{cls}",
                     name, "private_attr", "read; assign on the copy", _LI_TAP,
                     _LI_PRIVATE_CLIENT.format(cls=cls))
      for package, cls, names in (("anthropic", "Anthropic", ("_client", "_aclient")),
                                  ("cohere", "Cohere", ("_client", "_aclient")),
                                  ("mistralai", "MistralAI", ("_client",)))
      for name in names),
    PrivateContact("llama-index-llms-bedrock-converse",
                   "llama_index.llms.bedrock_converse.base:BedrockConverse", "_client",
                   "private_attr", "read", _LI_TAP,
                   "the user's boto3 client, kept only privately; the tapped copy is built by "
                   "the public constructor (client=)"),
    PrivateContact("llama-index-core", "llama_index.core.llms.function_calling:FunctionCallingLLM",
                   "_prepare_chat_with_tools", "method", "override", _LI_LLM,
                   "the abstract method every FunctionCallingLLM implements; ToolstreamLLM is "
                   "one", ("self", "tools", "user_msg", "chat_history")),
    PrivateContact("llama-index-core", "llama_index.core.llms.function_calling:FunctionCallingLLM",
                   "_prepare_chat_with_tools_compat", "method", "call on the wrapped LLM", _LI_LLM,
                   "the wrapped LLM's request arguments for a tool call, with LlamaIndex's own "
                   "rule for classes that predate tool_required (what its chat_with_tools "
                   "calls)", ("self", "tools", "user_msg", "chat_history")),
    PrivateContact("llama-index-llms-google-genai", "llama_index.llms.google_genai.base:GoogleGenAI",
                   "_generation_config", "private_attr", "read", _LI_LIMITS,
                   "the generation config GoogleGenAI sends (the generation_config it was given "
                   "is kept only here); its max_output_tokens is the request's limit"),
    PrivateContact("llama-index-llms-openai", "llama_index.llms.openai.base:OpenAI",
                   "_get_model_kwargs", "method", "call", _LI_LIMITS, _LI_LIMIT, ("self",)),
    PrivateContact("llama-index-llms-openai", "llama_index.llms.openai.responses:OpenAIResponses",
                   "_get_model_kwargs", "method", "call", _LI_LIMITS, _LI_LIMIT, ("self",)),
    PrivateContact("llama-index-llms-anthropic", "llama_index.llms.anthropic.base:Anthropic",
                   "_get_all_kwargs", "method", "call", _LI_LIMITS, _LI_LIMIT, ("self",)),
    PrivateContact("llama-index-llms-bedrock-converse",
                   "llama_index.llms.bedrock_converse.base:BedrockConverse", "_get_all_kwargs",
                   "method", "call", _LI_LIMITS, _LI_LIMIT, ("self",)),
    PrivateContact("llama-index-llms-cohere", "llama_index.llms.cohere.base:Cohere",
                   "_get_all_kwargs", "method", "call", _LI_LIMITS, _LI_LIMIT, ("self",)),
    PrivateContact("llama-index-core", "llama_index.core.agent.workflow.base_agent:BaseWorkflowAgent",
                   "_init_context", "method", "override; call", _LI_AGENT,
                   "where the agent's run state starts: the gate's per-run state is set there",
                   ("self", "ctx", "ev")),
    PrivateContact("llama-index-core", "llama_index.core.agent.workflow.base_agent:BaseWorkflowAgent",
                   "_call_tool", "method", "override; call", _LI_AGENT,
                   "how the tool step runs one tool (the Context injected, a waiting-for-event "
                   "raised on, an exception made an error output): a pipelined tool started "
                   "while the stream is read runs the same way, and both run behind the "
                   "started-ledger", ("self", "ctx", "tool", "tool_input")),
    PrivateContact("llama-index-core", "llama_index.core.agent.workflow.react_agent:ReActAgent",
                   "_get_response", "method", "override; call", ("llamaindex_toolstream/_react.py",),
                   "the ReAct step's model call: the gated response's record says whether the "
                   "turn ended normally before the output parser reads an action from it",
                   ("self", "current_llm_input")),
    PrivateContact("llama-index-core", "llama_index.core.agent.workflow.react_agent:ReActAgent",
                   "_get_streaming_response", "method", "override; call",
                   ("llamaindex_toolstream/_react.py",),
                   "the streamed twin of _get_response, read the same way",
                   ("self", "ctx", "current_llm_input")),
    PrivateContact("langchain-core", "langchain_core.runnables.base:Runnable",
                   "_call_with_config", "method", "call", ("langchain_toolstream/_structured.py",),
                   "how every Runnable of langchain-core opens its run (callbacks, tracing, "
                   "config): the judged structured-output runnable opens its run the same way",
                   ("self", "func", "input_", "config")),
    PrivateContact("langchain-core", "langchain_core.runnables.base:Runnable",
                   "_acall_with_config", "method", "call", ("langchain_toolstream/_structured.py",),
                   "the async twin of _call_with_config", ("self", "func", "input_", "config")),
    PrivateContact("llama-index-core", "llama_index.core.llms.llm:LLM", "_extend_messages",
                   "method", "call", ("llamaindex_toolstream/_structured.py",),
                   "how LlamaIndex's own structured programs add the LLM's system prompt; the "
                   "gated structured call sends the same messages", ("self", "messages")),
    PrivateContact("llama-index-llms-openai", "llama_index.llms.openai.base:OpenAI",
                   "_should_use_structure_outputs", "method", "call",
                   ("llamaindex_toolstream/_structured.py",),
                   "the class's own choice between a JSON-schema response_format and a forced "
                   "call: wrapping must not change the method", ("self",)),
    PrivateContact("llama-index-llms-openai", "llama_index.llms.openai.base:OpenAI",
                   "_prepare_schema", "method", "call", ("llamaindex_toolstream/_structured.py",),
                   "the response_format the plain class sends, sent as is through the gate",
                   ("self", "llm_kwargs", "output_cls")),
    PrivateContact("openai", "openai.lib._parsing._responses", "type_to_text_format_param",
                   "function", "call", ("llamaindex_toolstream/_structured.py",),
                   "what OpenAIResponses sends through responses.parse for a schema, not "
                   "exported by the SDK", ("type_",)),
    # -- the SDKs (core vendors layer), the command, the test kit, the benchmarks --------
    PrivateContact("openai", "openai._client", "_client", "module", "module name",
                   ("core/toolstream_core/vendors/_tap.py",),
                   "where the SDK's root clients are defined: a client that a resource returns "
                   "(with_options) is recognised by its module, so the tap wraps it too, "
                   "without importing the SDK"),
    PrivateContact("anthropic", "anthropic._client", "_client", "module", "module name",
                   ("core/toolstream_core/vendors/_tap.py",),
                   "the same, for the anthropic SDK"),
    PrivateContact("anthropic", "anthropic.lib.streaming._messages", "accumulate_event", "function",
                   "call", ("core/toolstream_core/app/_peers/_readers.py",),
                   "the function the SDK's MessageStream runs per event, not exported: `toolstream "
                   "demo` and the benchmarks show what the SDK itself makes of a stream",
                   ("event",)),
    PrivateContact("vcrpy", "vcr.stubs.httpx_stubs", "_play_responses", "function",
                   "patch while active", ("core/toolstream_core/testing/_complete.py",),
                   "the test kit replays a streamed cassette as JSON to a non-streaming request; "
                   "vcrpy has no public hook that sees the request", ("cassette", "vcr_request")),
    PrivateContact("vcrpy", "vcr.stubs.httpx_stubs", "_deserialize_response", "function",
                   "call; patch while active",
                   ("core/toolstream_core/testing/_complete.py", "core/toolstream_core/testing/_drops.py"),
                   "the test kit replays a cassette's dropped connection as a body that fails "
                   "mid-stream; vcrpy builds the httpx response only here", ("vcr_response",)),
    PrivateContact("langchain-openai", "langchain_openai.chat_models.base:BaseChatOpenAI",
                   "_convert_chunk_to_generation_chunk", "method", "call", ("benchmarks/peers.py",),
                   "the benchmark's LangChain peer measures the conversion ChatOpenAI._stream "
                   "runs per chunk, apart from HTTP", ("self", "chunk")),
)
"""The table (``docs/shims.md`` shows it): one row per private name and owner."""


class TapUnavailableError(RuntimeError):
    """The gate cannot reach the SDK stream of a model class it reads from its SDK.

    Raised before any request is sent: the framework's own output for these classes has lost
    what proves a call complete (DESIGN §6), so the gate refuses rather than judge on it. The
    usual cause is a framework release that moved a private name the tap relies on
    (`PRIVATE_CONTACTS`); the message names them and the installed versions.
    """


def contacts_of(cls: type) -> tuple[PrivateContact, ...]:
    """The table's rows whose owner is ``cls`` or one of its bases."""
    owners = {f"{c.__module__}:{c.__qualname__}" for c in cls.__mro__}
    return tuple(c for c in PRIVATE_CONTACTS if c.owner in owners)


def _version(distribution: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"


def tap_unavailable(cls: type, cause: BaseException | str, *,
                    files: Iterable[str] = ()) -> TapUnavailableError:
    """The error for ``cls`` whose tap could not attach, naming the private names its tap
    (in ``files``) relies on and the installed versions of their owners."""
    wanted = set(files)
    rows = [c for c in contacts_of(cls) if not wanted or wanted & set(c.where)]
    names = ", ".join(f"{c.label} ({c.distribution} {_version(c.distribution)})" for c in rows)
    reason = f"{type(cause).__name__}: {cause}" if isinstance(cause, BaseException) else cause
    relies = f"; its tap relies on {names}" if names else ""
    return TapUnavailableError(
        f"toolstream cannot read {cls.__name__}'s SDK stream ({reason}){relies}. The gate reads "
        f"this class from its SDK's own events because the framework's output loses what proves "
        f"a call complete, so it refuses rather than judge on that output: install a release of "
        f"the framework package that toolstream supports (docs/shims.md, private contact points)")


_CONSTRUCTOR_NAMES: dict[type, frozenset[str] | None] = {}


def _constructor_names(cls: type) -> frozenset[str] | None:
    """The keyword names ``cls(...)`` takes; ``None`` when it takes any (``**kwargs``)."""
    if cls not in _CONSTRUCTOR_NAMES:
        params = inspect.signature(cls).parameters.values()
        _CONSTRUCTOR_NAMES[cls] = (
            None if any(p.kind is p.VAR_KEYWORD for p in params)
            else frozenset(p.name for p in params if p.kind is not p.VAR_POSITIONAL))
    return _CONSTRUCTOR_NAMES[cls]


def rebuilt(model: Any, arguments: Mapping[str, Any], *, restore: Iterable[str] = ()) -> Any:
    """A new ``type(model)`` made by its public constructor: the fields ``model`` has set,
    then ``arguments`` (a client, an HTTP-client option). Set fields the constructor does not
    take, and the fields named in ``restore`` (an argument needed only while constructing),
    get ``model``'s values through ``model_copy(update=...)``. The user's model is untouched.
    """
    cls = type(model)
    takes = _constructor_names(cls)
    fields = {name: getattr(model, name) for name in model.model_fields_set
              if name in cls.model_fields}
    given = {k: v for k, v in fields.items() if takes is None or k in takes}
    later = {k: v for k, v in fields.items() if k not in given}
    later.update({name: getattr(model, name) for name in restore})
    copy = cls(**{**given, **arguments})
    return copy.model_copy(update=later) if later else copy


_ASSIGNABLE: dict[type, frozenset[str]] = {}


def _assignable(cls: type) -> frozenset[str]:
    if cls not in _ASSIGNABLE:
        _ASSIGNABLE[cls] = frozenset(c.name for c in contacts_of(cls) if "assign" in c.use)
    return _ASSIGNABLE[cls]


def private_copy(model: Any, values: Mapping[str, Any], *,
                 update: Mapping[str, Any] | None = None) -> Any:
    """``model.model_copy(update=update)`` (public fields) with private attributes set on the
    copy, through the attribute protocol (pydantic routes a private attribute and a
    ``cached_property`` itself).

    Only for a name the table lists for the class with an ``assign`` use: the one way the
    shims write another library's private name, and only on their own copy. Raises
    ``LookupError`` for any other name.
    """
    unlisted = set(values) - _assignable(type(model))
    if unlisted:
        raise LookupError(f"toolstream: {type(model).__name__}.{', '.join(sorted(unlisted))} is "
                          f"not in the table of private contact points")
    copy = model.model_copy(update=update)
    for name, value in values.items():
        setattr(copy, name, value)
    return copy


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def contacts_markdown() -> str:
    """The table as ``docs/shims.md`` shows it (a test keeps the two equal)."""
    lines = ["| private name | owner | kind | use | where | why |", "|---|---|---|---|---|---|"]
    for c in PRIVATE_CONTACTS:
        where = ", ".join(f"`{w}`" for w in c.where)
        lines.append(f"| `{c.label}` | {c.distribution} (`{c.owner}`) | {c.kind} | {c.use} | "
                     f"{where} | {_cell(c.why)} |")
    return "\n".join(lines)
