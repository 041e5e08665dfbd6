"""Pipelined execution in ``create_agent``: a tool starts when its call commits (DESIGN 4.10).

With ``execute_before_stream_end`` and an allow-listed tool (``allow_pipelined_execute``,
``ToolSpec(pipelined=True)``), the core commits a call before the stream ends where the vendor
closes calls one by one. ``ToolstreamMiddleware`` hands the gated model a ``Pipeline`` for the
model call; the session calls ``start`` with each early commit, which starts the tool at once
(a task on the agent's event loop under ``ainvoke``, a worker thread under ``invoke``). When the stream is over the
middleware collects the results as ``ToolMessage`` objects and puts them in the same model
turn, so ``create_agent``'s tools edge finds those ids answered and does not run them again.

A pipelined tool runs with ``BaseTool.invoke`` / ``ainvoke`` on its tool call: other
middleware's ``wrap_tool_call`` and the agent's ``ToolRuntime`` injection do not apply to it
(docs/decisions/0079-pipelining.md), which is why the allow-list is the user's choice.
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

__all__ = ["Pipeline"]

_log = logging.getLogger(__name__)

#: The text of a pipelined tool that raised (the tool node's own words for it).
_FAILED = "Error: {error!r}\n Please fix your mistakes."


class Pipeline:
    """The tools of one model call started as their calls commit. Not thread-safe: ``start``
    is called from the stream's reader, ``results`` / ``aresults`` once after it."""

    def __init__(self, tools: Sequence[Any], loop: asyncio.AbstractEventLoop | None = None) -> None:
        """``loop``: the agent's event loop (``awrap_model_call``); ``None``: a sync agent."""
        self._tools: Mapping[str, BaseTool] = {t.name: t for t in tools if isinstance(t, BaseTool)}
        self._loop = loop
        self._started: dict[str, Future[ToolMessage]] = {}
        self._executor: ThreadPoolExecutor | None = None
        #: The ids started, in the order their calls committed.
        self.started: list[str] = []

    def start(self, call: ToolCall) -> None:
        """Start ``call``'s tool now (a call whose tool is not an agent tool is left to the
        tools node)."""
        tool = self._tools.get(call.name or "")
        if tool is None or call.id is None or call.id in self.started:
            return
        payload = {"type": "tool_call", "name": call.name, "args": call.arguments, "id": call.id}
        if self._loop is not None:  # from the loop's thread or another one: the same way
            started = asyncio.run_coroutine_threadsafe(_answer_async(tool, payload), self._loop)
        else:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(thread_name_prefix="toolstream-pipeline")
            run = contextvars.copy_context().run
            started = self._executor.submit(run, _answer, tool, payload)
        self._started[call.id] = started
        self.started.append(call.id)
        _log.debug("toolstream: started %s (%s) before the stream ended", call.name, call.id)

    def results(self) -> dict[str, ToolMessage]:
        """Every started tool's ``ToolMessage`` by call id, waiting for those still running."""
        try:
            return {call_id: future.result() for call_id, future in self._started.items()}
        finally:
            if self._executor is not None:
                self._executor.shutdown(wait=False)

    async def aresults(self) -> dict[str, ToolMessage]:
        """``results`` for the async agent, awaited on its loop."""
        return {call_id: await asyncio.wrap_future(future)
                for call_id, future in self._started.items()}


def _message(result: Any, payload: Mapping[str, Any]) -> ToolMessage:
    if isinstance(result, ToolMessage):
        return result
    return ToolMessage(content=str(result), tool_call_id=payload["id"], name=payload["name"])


def _failed(error: Exception, payload: Mapping[str, Any]) -> ToolMessage:
    _log.warning("toolstream: pipelined tool %s (%s) failed: %r", payload["name"], payload["id"],
                 error)
    return ToolMessage(content=_FAILED.format(error=error), tool_call_id=payload["id"],
                       name=payload["name"], status="error")


def _answer(tool: BaseTool, payload: dict[str, Any]) -> ToolMessage:
    try:
        return _message(tool.invoke(payload), payload)
    except Exception as error:
        return _failed(error, payload)


async def _answer_async(tool: BaseTool, payload: dict[str, Any]) -> ToolMessage:
    try:
        result: Awaitable[Any] = tool.ainvoke(payload)
        return _message(await result, payload)
    except Exception as error:
        return _failed(error, payload)
