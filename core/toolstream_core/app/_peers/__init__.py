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

from toolstream_core.app._peers._engines import (
    ENGINE_TITLES,
    ENGINES,
    Outcome,
    missing_pieces,
    new_workdir,
    replaying,
    run_engine,
)
from toolstream_core.app._peers._models import sdk_chunks
from toolstream_core.app._peers._readers import (
    COMMIT,
    DROP,
    INVALID,
    REJECT,
    RUN,
    AnthropicAccumulate,
    CallView,
    EngineUnavailable,
    LangChainGenerate,
    LangChainMerge,
    LlamaIndexRead,
    OpenAIChatState,
    Reader,
    ToolstreamAssemble,
    langchain_calls,
    runnable,
    turn_calls,
)
from toolstream_core.app._peers._targets import Target, make_target, tools_from_request

__all__ = [
    "COMMIT",
    "DROP",
    "ENGINES",
    "ENGINE_TITLES",
    "INVALID",
    "REJECT",
    "RUN",
    "AnthropicAccumulate",
    "CallView",
    "EngineUnavailable",
    "LangChainGenerate",
    "LangChainMerge",
    "LlamaIndexRead",
    "OpenAIChatState",
    "Outcome",
    "Reader",
    "Target",
    "ToolstreamAssemble",
    "langchain_calls",
    "make_target",
    "missing_pieces",
    "new_workdir",
    "replaying",
    "run_engine",
    "runnable",
    "sdk_chunks",
    "tools_from_request",
    "turn_calls",
]
