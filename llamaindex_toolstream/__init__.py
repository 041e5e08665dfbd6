"""LlamaIndex shim for toolstream: run a streamed tool call only once it is proven complete.

- :class:`ToolstreamLLM` wraps a function-calling LLM (OpenAI chat and Responses, Anthropic,
  Google GenAI, Ollama, Bedrock Converse); ``get_tool_calls_from_response`` hands out committed
  calls only. A ``provider=`` that does not match the LLM raises ``ProviderMismatchError``;
  a class whose SDK stream the gate cannot reach raises ``TapUnavailableError``.
- :class:`ToolstreamFunctionAgent` is a drop-in ``FunctionAgent`` (standalone or inside
  ``AgentWorkflow``) that answers every rejected call with an error result carrying the reason.
- :class:`ToolstreamReActAgent` is a drop-in ``ReActAgent`` that never runs an action from a
  turn the vendor did not finish (the step is answered with the reason and asked again).
- :class:`ToolstreamStreamHandler` / :func:`stream_call_events` turn a workflow handler's
  event stream into call-progress events for a UI; they never execute anything.
- :func:`read_record` reads the decision record (plain JSON in ``additional_kwargs``);
  :func:`error_tool_messages`, :func:`message_with_rejected_calls` and
  :func:`pair_orphan_calls` build a legal history from it. ``docs/shims.md`` maps each name
  to the LangChain shim;
- :func:`declare_finish_signal` tells the gate where a class it reads through LlamaIndex's
  messages (one it does not know, given no ``provider=``) puts its end of turn: the same
  function as ``langchain_toolstream.declare_finish_signal``. :func:`declare_test_double`
  marks a project's own test double, whose clean end is its finish; LlamaIndex's own
  (``MockLLM``, ``MockFunctionCallingLLM``) need no line;
- :class:`StructuredOutputError` is what a structured output raises when no output was
  proven finished, parsed strictly and schema-valid (``structured_predict`` and its stream /
  async twins, ``as_structured_llm``, ``FunctionCallingProgram``);
- :func:`check_history` lists what the vendor would reject in a history before it is sent;
  the gated LLM repairs every outgoing history (``history="repair"``) and, with
  ``history="check"`` (the agent's default), raises :class:`HistoryError` for the rest.
"""

from __future__ import annotations

from toolstream_core.integration import (
    HistoryError,
    StructuredOutputError,
    TapUnavailableError,
)

from ._agent import ToolstreamFunctionAgent
from ._convert import declare_finish_signal, declare_test_double
from ._events import (
    CallCommittedEvent,
    CallOpenedEvent,
    CallProgressEvent,
    CallRejectedEvent,
    CallStreamEvent,
)
from ._handler import ToolstreamStreamHandler, stream_call_events
from ._llm import ToolstreamLLM
from ._messages import check_history, error_tool_messages, message_with_rejected_calls, pair_orphan_calls, read_record
from ._providers import ProviderMismatchError
from ._react import ToolstreamReActAgent

__all__ = [  # the record and history functions are the same five in both shims (docs/shims.md)
    "CallCommittedEvent", "CallOpenedEvent", "CallProgressEvent", "CallRejectedEvent", "CallStreamEvent",
    "HistoryError", "ProviderMismatchError", "StructuredOutputError", "TapUnavailableError",
    "ToolstreamFunctionAgent", "ToolstreamLLM", "ToolstreamReActAgent", "ToolstreamStreamHandler",
    "check_history", "declare_finish_signal", "declare_test_double", "error_tool_messages",
    "message_with_rejected_calls", "pair_orphan_calls", "read_record", "stream_call_events",
]
