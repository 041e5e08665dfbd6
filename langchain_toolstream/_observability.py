"""Where a gated LangChain run shows its decisions besides the message: LangGraph and traces.

- Inside a LangGraph graph (``create_agent`` or any graph whose node calls the gated model),
  every gate event goes to the graph's custom stream as a plain dict (``toolstream_core``'s
  progress schema, see ``docs/observability.md``), so ``stream_mode=["messages", "custom"]``
  shows a call's arguments growing and its verdict. Outside a graph: nothing, no error.
- With a tracer provider configured, the turn's span (``docs/observability.md``) is
  parented on the model run's own span when a callback handler knows it (OpenInference's
  LangChain tracer keeps its spans out of the OTel context on purpose and parents them by run
  id; it offers ``get_span(run_id)``); otherwise the current OTel context decides.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from toolstream_core import AssembleConfig, AssemblerEvent
from toolstream_core.integration import ProgressEncoder

__all__ = ["GraphProgress", "graph_progress", "run_span"]

_log = logging.getLogger(__name__)


class GraphProgress:
    """Writes one model call's gate events to LangGraph's custom stream, as JSON dicts."""

    __slots__ = ("_encoder", "_writer")

    def __init__(self, writer: Callable[[Any], None], config: AssembleConfig) -> None:
        self._writer = writer
        self._encoder = ProgressEncoder(forward_args=config.ui_forward_partial_args)

    def write(self, event: AssemblerEvent) -> None:
        try:
            self._writer(self._encoder.encode(event))
        except Exception:  # a stream consumer must never break the model call
            _log.debug("toolstream: writing to the LangGraph custom stream failed", exc_info=True)


def graph_progress(config: AssembleConfig) -> GraphProgress | None:
    """The custom-stream writer of the graph node running now, or ``None`` outside a graph.

    Inside a graph the writer is always taken: LangGraph hands a node a no-op writer when
    nobody streams ``"custom"``, and does not say which one it handed out.
    """
    try:
        from langgraph.config import get_stream_writer

        writer = get_stream_writer()
    except Exception:  # no runnable context, not a graph, or no langgraph: nothing to write to
        _log.debug("toolstream: no LangGraph stream writer here", exc_info=True)
        return None
    return GraphProgress(writer, config) if callable(writer) else None


def run_span(run_manager: Any) -> Any:
    """The OTel span a callback handler keeps for this LangChain run, if one does."""
    run_id = getattr(run_manager, "run_id", None)
    if run_id is None:
        return None
    handlers = [*getattr(run_manager, "handlers", ()), *getattr(run_manager, "inheritable_handlers", ())]
    for handler in handlers:
        get_span = getattr(handler, "get_span", None)
        if not callable(get_span):
            continue
        try:
            span = get_span(run_id)
        except Exception:  # a handler's own bookkeeping: its span is simply not ours to nest under
            _log.debug("toolstream: %s.get_span failed", type(handler).__name__, exc_info=True)
            continue
        if span is not None and callable(getattr(span, "get_span_context", None)):
            return span
    return None
