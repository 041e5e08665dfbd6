"""Pipelined execution in ``create_agent``: a tool starts when its call commits (DESIGN 4.10).

With ``execute_before_stream_end`` and an allow-listed tool (``allow_pipelined_execute``,
``ToolSpec(pipelined=True)``), the core commits a call before the stream ends where the vendor
closes calls one by one. ``ToolstreamMiddleware`` hands the gated model the core's
``Pipeline`` for the model call (the registry of what started, ``RunPolicy.pipeline``); the
session calls it with each early commit, and ``ToolStarter`` (this module: how a tool starts
here) starts the tool at once (a task on the agent's event loop under ``ainvoke``, a worker
thread under ``invoke``). When the stream is over the middleware collects the results as
``ToolMessage`` objects and puts them in the same model turn, so ``create_agent``'s tools
edge finds those ids answered and does not run them again.

A pipelined tool runs with ``BaseTool.invoke`` / ``ainvoke`` on its tool call: other
middleware's ``wrap_tool_call`` and the agent's ``ToolRuntime`` injection do not apply to it
(docs/decisions/agents-pipelining.md), which is why the allow-list is the user's choice.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import Awaitable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from toolstream_core import ToolCall

__all__ = ["ToolStarter"]

_log = logging.getLogger(__name__)

#: The text of a pipelined tool that raised (the tool node's own words for it).
_FAILED = "Error: {error!r}\n Please fix your mistakes."


class ToolStarter:
    """How ``create_agent``'s tools start before the stream ends: the ``start`` of the core's
    ``Pipeline`` (which keeps the registry of what started). ``close`` once the results are in."""

    def __init__(self, tools: Sequence[Any], loop: asyncio.AbstractEventLoop | None = None) -> None:
        """``loop``: the agent's event loop (``awrap_model_call``); ``None``: a sync agent."""
        self._tools: Mapping[str, BaseTool] = {t.name: t for t in tools if isinstance(t, BaseTool)}
        self._loop = loop
        self._executor: ThreadPoolExecutor | None = None

    def __call__(self, call: ToolCall) -> Future[ToolMessage] | None:
        """Start ``call``'s tool now (a call whose tool is not an agent tool is left to the
        tools node: ``None``)."""
        tool = self._tools.get(call.name or "")
        if tool is None:
            return None
        payload = {"type": "tool_call", "name": call.name, "args": call.arguments, "id": call.id}
        if self._loop is not None:  # from the loop's thread or another one: the same way
            return asyncio.run_coroutine_threadsafe(_answer_async(tool, payload), self._loop)
        if self._executor is None:
            self._executor = ThreadPoolExecutor(thread_name_prefix="toolstream-pipeline")
        run = contextvars.copy_context().run
        return self._executor.submit(run, _answer, tool, payload)

    def release(self) -> None:
        """Let the worker threads go (the results are in)."""
        if self._executor is not None:
            self._executor.shutdown(wait=False)


def _message(result: Any, payload: Mapping[str, Any]) -> ToolMessage:
    if isinstance(result, ToolMessage):
        return result
    return ToolMessage(content=str(result), tool_call_id=payload["id"], name=payload["name"])


def _error_message(error: Exception, payload: Mapping[str, Any]) -> ToolMessage:
    _log.warning("toolstream: pipelined tool %s (%s) failed: %r", payload["name"], payload["id"],
                 error)
    return ToolMessage(content=_FAILED.format(error=error), tool_call_id=payload["id"],
                       name=payload["name"], status="error")


def _answer(tool: BaseTool, payload: dict[str, Any]) -> ToolMessage:
    try:
        return _message(tool.invoke(payload), payload)
    except Exception as error:
        return _error_message(error, payload)


async def _answer_async(tool: BaseTool, payload: dict[str, Any]) -> ToolMessage:
    try:
        result: Awaitable[Any] = tool.ainvoke(payload)
        return _message(await result, payload)
    except Exception as error:
        return _error_message(error, payload)
