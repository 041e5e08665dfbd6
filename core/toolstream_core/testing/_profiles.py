"""OpenAI-compatible server profiles: each scenario in another server's dialect.

Many backends speak "the OpenAI chat API" and each one serialises streamed tool
calls a little differently. A profile renders the same neutral scenario script
(the calls, their argument text, how the turn ends) the way that server puts it
on the wire, so a stack can be tested against vLLM, Ollama, DeepSeek, Groq,
Mistral, OpenRouter, NVIDIA NIM or a LiteLLM proxy (in front of an OpenAI-style backend, or of
Ollama) without running one.

Every profile's class docstring lists the quirks it reproduces and where each
one is documented: an issue, the vendor's documentation, or a recorded stream
in the project's corpus (``streams/openai-chat/``, see its MANIFEST.md). Only
streamed answers change; a non-streamed request gets the OpenAI shape on every
profile (Mistral's ``"content": ""`` beside tool calls aside).

Where a profile sends each call whole in one chunk, the per-fragment shapes of
the chat-only scenarios (``missing_index``, ``id_name_repeated``,
``empty_id_later``) give way to the server's own shape: the fault a scenario
names (which calls, how the turn ends) is always kept.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from typing import Any, ClassVar, Literal

from ._wire_common import rand_id

__all__ = ["ID_STYLES", "PROFILES", "Profile", "output_limit"]

IdStyle = Callable[[random.Random, int, str], str]
UsageMode = Literal["requested", "final_chunk", "groq"]


def _openai_ids(rng: random.Random, i: int, name: str) -> str:
    return rand_id(rng, "call_", 24)


def _vllm_ids(rng: random.Random, i: int, name: str) -> str:
    return "chatcmpl-tool-" + "".join(rng.choice("0123456789abcdef") for _ in range(16))


def _short_ids(rng: random.Random, i: int, name: str) -> str:
    return rand_id(rng, "", 9)


def _ollama_ids(rng: random.Random, i: int, name: str) -> str:
    return "call_" + "".join(rng.choice(string.ascii_lowercase + string.digits)
                             for _ in range(8))


def _kimi_ids(rng: random.Random, i: int, name: str) -> str:
    # Kimi-style ids are positional (functions.add:0): add a seeded tail so two
    # requests never share one, which keeps the cross-talk proofs meaningful.
    return f"functions.{name}:{i}-{rand_id(rng, '', 6)}"


ID_STYLES: dict[str, IdStyle] = {"openai": _openai_ids, "vllm": _vllm_ids, "short": _short_ids,
                                  "ollama": _ollama_ids, "kimi": _kimi_ids}


def output_limit(body: dict[str, Any]) -> int | None:
    """The output-token limit the request set (``max_completion_tokens`` or ``max_tokens``)."""
    for key in ("max_completion_tokens", "max_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


class Profile:
    """How one OpenAI-compatible server streams tool calls (knobs, read by the renderer).

    The defaults are OpenAI's own behaviour; a subclass sets only what its server
    does differently and says in its docstring where that is documented.
    """

    name: ClassVar[str] = "openai"
    server: ClassVar[str] = "OpenAI"
    quirks: ClassVar[tuple[str, ...]] = ()
    id_style: ClassVar[str] = "openai"  # a key of ID_STYLES
    index: ClassVar[Literal["keep", "omit", "zero"]] = "keep"
    whole_calls: ClassVar[bool] = False          # each call's arguments in one chunk
    calls_in_one_delta: ClassVar[bool] = False   # every call of the turn in one delta
    finish_on_last_call: ClassVar[bool] = False  # finish_reason rides the last call chunk
    omit_type: ClassVar[bool] = False
    repeat_role: ClassVar[bool] = False          # role/content on every chunk
    empty_fragments: ClassVar[int] = 0           # "" argument fragments after the opening
    finish_for_calls: ClassVar[str] = "tool_calls"
    finish_on_cut: ClassVar[str] = "length"
    repeat_finish: ClassVar[bool] = False        # the finish chunk is sent twice
    usage: ClassVar[UsageMode] = "requested"
    usage_null: ClassVar[bool] = False           # "usage": null on every other chunk
    comments: ClassVar[tuple[bytes, ...]] = ()   # SSE comment lines before the first chunk
    reasoning: ClassVar[str | None] = None       # reasoning_content deltas before the answer
    object_arguments: ClassVar[bool] = False     # arguments as a JSON object when they parse
    summary_chunk: ClassVar[bool] = False        # repeat each call after the finish, re-encoded
    new_chunk_ids: ClassVar[bool] = False        # a different completion id on every chunk
    extra: ClassVar[dict[str, Any]] = {}         # fields added to every chunk
    fingerprint: ClassVar[str | None] = "fp_toolstream"
    error_event: ClassVar[str | None] = None     # SSE event name for the in-stream error
    whole_content: ClassVar[str | None] = None   # a non-streamed message's content without text
    error_body: ClassVar[dict[str, Any]] = {
        "error": {"message": "The server had an error while processing your request.",
                  "type": "server_error", "param": None, "code": None}}

    def __repr__(self) -> str:
        return f"<Profile {self.name}: {self.server}>"


class Vllm(Profile):
    """vLLM's OpenAI-compatible server (``vllm serve --enable-auto-tool-choice``).

    - **A cut call is reported as finished**: once any tool-call delta went out the
      streaming handler rewrites the finish reason to ``"tool_calls"``, so a call cut
      by ``max_tokens`` ends with ``finish_reason: "tool_calls"`` (vllm-project/vllm
      issues 53269 and 58228: 25 of 3,600 generations hit the limit, every one
      reported ``tool_calls``; issue 9053, PR 46303). The usage chunk (when asked
      for with ``stream_options.include_usage``) reports ``completion_tokens`` equal
      to the limit, the only trace of the cut.
    - Tool-call ids ``chatcmpl-tool-<16 hex>``; id, type and name on the opening delta
      only, arguments streamed incrementally by index (recorded
      ``mistral__mistral-incremental-tool-call__0``, a vLLM-served model).
    """

    name = "vllm"
    server = "vLLM"
    quirks = ("finish_reason tool_calls on a max_tokens cut (vllm#53269, #58228)",
              "usage only on request; completion_tokens == max_tokens on a cut",
              "ids chatcmpl-tool-<hex>")
    id_style = "vllm"
    finish_on_cut = "tool_calls"
    fingerprint = None


class Ollama(Profile):
    """Ollama's ``/v1/chat/completions`` compatibility endpoint.

    - **No ``index``** on tool-call deltas (ollama/ollama issue 7881) and every call
      **whole in one chunk**, all calls of a turn in one delta, ids ``call_<8>``
      (recorded ``ollama__openai_chat_model_complete_ollama-…``).
    - **``finish_reason: "stop"``** after tool calls (same recording; ollama PR 7963
      discusses switching to ``tool_calls``).
    - ``role``/``content: ""`` repeated on the finish chunk; ``system_fingerprint``
      ``fp_ollama``; usage only on request.
    """

    name = "ollama"
    server = "Ollama"
    quirks = ("no index (ollama#7881)", "all calls whole in one chunk",
              'finish_reason "stop" after tool calls', "ids call_<8>")
    id_style = "ollama"
    index = "omit"
    whole_calls = True
    calls_in_one_delta = True
    finish_for_calls = "stop"
    repeat_role = True
    fingerprint = "fp_ollama"


class DeepSeek(Profile):
    """DeepSeek's API (``api.deepseek.com``, ``deepseek-reasoner``/``deepseek-chat``).

    - ``reasoning_content`` deltas before the answer and ``"usage": null`` on every
      chunk (recorded ``deepseek__deepseek-tool-call__0``).
    - **Usage always reported, on the finish chunk itself** (no separate usage-only
      chunk), whether or not the client asked (DeepSeek API docs, Chat Completions,
      ``stream_options``; same recording).
    - Arguments streamed incrementally by index; id and name on the opening delta.
    """

    name = "deepseek"
    server = "DeepSeek"
    quirks = ("reasoning_content deltas", "usage: null on every chunk",
              "usage always, on the finish chunk")
    usage = "final_chunk"
    usage_null = True
    reasoning = "The user wants a tool call; I will call it."
    fingerprint = "fp_deepseek_prod0820_fp8_kvcache"


class Groq(Profile):
    """Groq's OpenAI-compatible API.

    - **Each call whole in one chunk** (arguments in a single delta, with index, id,
      type and name), ids of 9 alphanumerics (recorded ``groq__groq-tool-call__0``,
      ``groq__groq-kimi-k2_multi_tool_streaming__0``).
    - **Usage twice**: in ``x_groq.usage`` and ``usage`` on the finish chunk, always,
      plus a trailing ``choices: []`` usage chunk when asked (kimi-k2 recording).
    - A failed tool generation arrives as an ``event: error`` SSE frame with
      ``code: "tool_use_failed"`` and no ``[DONE]`` (recorded
      ``groq__tool_use_failed_error_streaming__0``).
    """

    name = "groq"
    server = "Groq"
    quirks = ("each call whole in one chunk", "usage in x_groq and on the finish chunk",
              "event: error tool_use_failed")
    id_style = "short"
    whole_calls = True
    usage = "groq"
    fingerprint = "fp_f8b414701e"
    error_event = "error"
    error_body = {"error": {
        "message": "Tool call validation failed: parameters for tool write_file did not "
                   "match schema", "type": "invalid_request_error", "code": "tool_use_failed",
        "failed_generation": "", "status_code": 400}}


class Mistral(Profile):
    """Mistral's chat completions API (``api.mistral.ai``).

    - **No ``index`` and no ``type``** on tool calls, every call **whole in one
      chunk**, all calls in one delta, ids of 9 alphanumerics (recorded
      ``mistral__mistral-tool-call__0`` and
      ``mistral__synchronous_streaming_chat_completions_with_tool-b1e02a__0``).
    - **The finish reason and the usage ride the chunk that carries the calls**
      (same recordings): there is no separate finish chunk.
    - A non-streamed answer with tool calls has ``"content": ""``, not ``null`` (Mistral's
      function calling docs, ``AssistantMessage(content="", tool_calls=[...])``); the
      ``mistralai`` SDK's LlamaIndex class builds a text block from it and fails on ``null``.
    """

    name = "mistral"
    server = "Mistral"
    quirks = ("no index, no type", "all calls whole in one chunk",
              "finish_reason and usage on the call chunk")
    id_style = "short"
    index = "omit"
    omit_type = True
    whole_calls = True
    calls_in_one_delta = True
    finish_on_last_call = True
    usage = "final_chunk"
    fingerprint = None
    whole_content = ""


class OpenRouter(Profile):
    """OpenRouter (here routing to a Kimi/Anthropic upstream).

    - ``: OPENROUTER PROCESSING`` SSE comment lines before the first chunk (dropped
      by the corpus converter, noted in the MANIFEST); ``provider`` and
      ``native_finish_reason`` on every chunk; ``role``/``content`` repeated on every
      chunk; **empty ``""`` argument fragments** after a call opens (recorded
      ``openrouter__anthropic_multi_tool_streaming__0``).
    - Kimi-style positional ids ``functions.<name>:<n>`` (recorded
      ``openrouter__kimi_multi_tool_streaming__0``; a seeded tail is added here so
      ids stay unique across requests).
    - **The finish chunk is sent twice** (recorded
      ``openrouter__openrouter_stream_error__0``: two ``finish_reason: "length"``
      chunks) and usage with ``cost`` rides the last one, always.
    """

    name = "openrouter"
    server = "OpenRouter"
    quirks = (": OPENROUTER PROCESSING comments", 'empty "" argument fragments',
              "ids functions.<name>:<n>", "finish chunk sent twice", "usage always")
    id_style = "kimi"
    repeat_role = True
    empty_fragments = 2
    repeat_finish = True
    usage = "final_chunk"
    comments = (b": OPENROUTER PROCESSING\n\n", b": OPENROUTER PROCESSING\n\n")
    extra = {"provider": "Chutes"}
    fingerprint = None


class LiteLLM(Profile):
    """A LiteLLM proxy in front of an OpenAI-style backend.

    - **A summary chunk after the finish** repeats every call with the same id, index
      and name, its arguments the first copy's text **encoded again as a JSON
      string** (BerriAI/litellm issue 20480): read as a re-send with different
      arguments, every call through such a proxy would be lost.
    - Otherwise the backend's incremental fragments pass through unchanged.
    """

    name = "litellm"
    server = "LiteLLM proxy"
    quirks = ("summary chunk after the finish, arguments double-encoded (litellm#20480)",)
    summary_chunk = True
    fingerprint = None


class LiteLLMOllama(Profile):
    """A LiteLLM proxy in front of Ollama (``ollama_chat/`` models).

    - **Arguments as a JSON object**, each call whole in one chunk, **every call at
      ``index: 0``** with its own id, and **a new completion id on every chunk**
      (BerriAI/litellm PR 37792, describing the ``ollama_chat`` streaming path). A
      call whose text does not parse (a cut) is sent as the string it is.
    - ``finish_reason: "stop"`` after tool calls (BerriAI/litellm issue 35663).
    """

    name = "litellm-ollama"
    server = "LiteLLM proxy -> Ollama"
    quirks = ("arguments as a JSON object (litellm#37792)", "every call at index 0",
              "new chunk id per chunk", 'finish_reason "stop" (litellm#35663)')
    index = "zero"
    whole_calls = True
    object_arguments = True
    finish_for_calls = "stop"
    new_chunk_ids = True
    fingerprint = None


class Nvidia(Profile):
    """NVIDIA NIM for LLMs (``integrate.api.nvidia.com``, self-hosted NIM containers).

    - **No ``index``** on streamed tool calls, and **each call whole in one chunk** (no
      argument deltas): NVIDIA's own docs for it, in its LangChain integration,
      ``langchain-nvidia-ai-endpoints`` 1.5, ``ChatNVIDIA._custom_postprocess``: "the nim api
      does not return the function index for tool calls in stream responses [...] the nim
      endpoint returns only full tool calls, no deltas". Parallel calls come one per chunk.
    - Otherwise OpenAI's shape: ``finish_reason: "tool_calls"``, usage only on request.
    """

    name = "nvidia"
    server = "NVIDIA NIM"
    quirks = ("no index on tool calls (langchain-nvidia-ai-endpoints _custom_postprocess)",
              "each call whole in its own chunk")
    index = "omit"
    whole_calls = True
    fingerprint = None


#: The compatible-server profiles, by name (``VendorEmulator(profile=name)``).
PROFILES: dict[str, Profile] = {
    p.name: p for p in (Vllm(), Ollama(), DeepSeek(), Groq(), Mistral(), OpenRouter(),
                        LiteLLM(), LiteLLMOllama(), Nvidia())
}
