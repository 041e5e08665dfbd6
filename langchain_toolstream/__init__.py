"""toolstream for LangChain: only tool calls proven complete ever run.

- ``ToolstreamMiddleware`` for ``langchain.agents.create_agent``;
- ``with_toolstream(model)``, a chat-model wrapper for LCEL and LangGraph;
- ``error_tool_messages(ai_message)``, the paired error ``ToolMessage`` for each rejected call;
- ``ToolstreamCallbackHandler``, tool-call progress for a UI (and a stop button).

Works with ``ChatOpenAI`` (Chat Completions and ``use_responses_api=True``), ``ChatAnthropic``
and ``ChatGoogleGenerativeAI``, whose vendor streams the gate reads directly; other chat models
are gated on LangChain's own chunks.
"""

from __future__ import annotations

from ._callbacks import RunStats, ToolstreamCallbackHandler
from ._chat_model import ToolstreamChatModel, with_toolstream
from ._messages import error_tool_messages, finalize_message
from ._middleware import ToolstreamMiddleware

__all__ = [
    "RunStats",
    "ToolstreamCallbackHandler",
    "ToolstreamChatModel",
    "ToolstreamMiddleware",
    "error_tool_messages",
    "finalize_message",
    "with_toolstream",
]
