"""toolstream for LangChain: only tool calls proven complete ever run.

- ``ToolstreamMiddleware`` for ``langchain.agents.create_agent``;
- ``with_toolstream(model)``, a chat-model wrapper for LCEL and LangGraph;
- ``error_tool_messages(ai_message)``, the paired error ``ToolMessage`` for each rejected call;
- ``read_record(ai_message)``, the gate's decision record (plain JSON, survives serialisation);
- ``message_with_rejected_calls`` / ``pair_orphan_calls``, to build a legal history by hand;
- ``check_history(messages, provider)``, what the vendor would reject before it is sent
  (``HistoryError`` is what the gate raises for it);
- ``ToolstreamCallbackHandler``, tool-call progress for a UI (and a stop button);
- ``StructuredOutputError``, what ``with_structured_output`` raises (or gives as
  ``parsing_error``) when no output was proven finished, parsed strictly and schema-valid;
- ``declare_finish_signal(model_class, key)``, for a chat model whose end of turn the gate
  cannot read on its own; ``declare_test_double(model_class)``, for a fake chat model of a
  project's own tests (LangChain's own fakes need nothing).

Works with ``ChatOpenAI`` (Chat Completions and ``use_responses_api=True``, and the classes
built on it: ``AzureChatOpenAI``, ``ChatDeepSeek``, ``ChatXAI``...), ``ChatAnthropic``,
``ChatGoogleGenerativeAI``, ``ChatBedrockConverse``, ``ChatOllama`` and ``ChatCohere``, whose
vendor streams the gate reads directly (``TapUnavailableError`` when a release of theirs moved
what the gate reads); other chat models are gated on LangChain's own chunks.
``docs/shims.md`` maps each name to the LlamaIndex shim.
"""

from __future__ import annotations

from toolstream_core.integration import HistoryError, StructuredOutputError, TapUnavailableError

from ._callbacks import ToolstreamCallbackHandler
from ._chat_model import ToolstreamChatModel, with_toolstream
from ._convert import declare_finish_signal, declare_test_double
from ._messages import check_history, error_tool_messages, message_with_rejected_calls, pair_orphan_calls, read_record
from ._middleware import ToolstreamMiddleware

__all__ = [  # the record and history functions are the same five in both shims (docs/shims.md)
    "HistoryError", "StructuredOutputError", "TapUnavailableError",
    "ToolstreamCallbackHandler", "ToolstreamChatModel", "ToolstreamMiddleware",
    "check_history", "declare_finish_signal", "declare_test_double", "error_tool_messages",
    "message_with_rejected_calls", "pair_orphan_calls", "read_record", "with_toolstream",
]
