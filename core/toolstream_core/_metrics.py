"""Rule 12: OpenTelemetry metrics when the ``otel`` extra is installed, nothing otherwise.

Recorded per call (open, commit, reject), never per fragment, so metrics cost nothing on the hot
path. The instruments are created lazily on first use: importing the core must stay free.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

__all__ = ["Instrument", "Metrics", "metrics"]

#: The instruments' short names: histograms ``bytes`` and ``to_commit``, the rest counters.
Instrument = Literal["bytes", "invalid_json", "overflow", "to_commit", "rejected", "duplicate"]

_log = logging.getLogger(__name__)


class Metrics:
    """The six instruments of DESIGN §4.12 behind one small, failure-proof facade."""

    def __init__(self) -> None:
        self._ready = False
        self._instruments: dict[str, Any] = {}

    def _setup(self) -> None:
        self._ready = True
        try:
            from opentelemetry import metrics as otel
        except ImportError:
            return
        meter = otel.get_meter("toolstream")
        self._instruments = {
            "bytes": meter.create_histogram(
                "tool_assemble_args_bytes", unit="By", description="Argument bytes per tool call"
            ),
            "invalid_json": meter.create_counter(
                "tool_assemble_invalid_json_total", description="Calls whose arguments failed the strict parse"
            ),
            "overflow": meter.create_counter(
                "tool_assemble_overflow_total", description="Calls over max_tool_argument_bytes"
            ),
            "to_commit": meter.create_histogram(
                "tool_assemble_to_commit_seconds", unit="s", description="Time from call open to commit"
            ),
            "rejected": meter.create_counter(
                "tool_execute_rejected_not_committed_total",
                description="Tool executions refused because the call was not committed",
            ),
            "duplicate": meter.create_counter(
                "tool_assemble_duplicate_total", description="Re-sent duplicate calls folded into one"
            ),
        }

    def record(self, name: Instrument, value: float, provider: str | None, tool_name: str | None) -> None:
        """Add ``value`` to a counter or record it in a histogram; never raises."""
        if not self._ready:
            self._setup()
        instrument = self._instruments.get(name)
        if instrument is None:
            return
        labels = {"provider": provider or "unknown", "tool_name": tool_name or "unknown"}
        try:
            if hasattr(instrument, "record"):
                instrument.record(value, labels)
            else:
                instrument.add(value, labels)
        except Exception:  # a metrics backend must never break a stream
            _log.debug("toolstream metric %s failed", name, exc_info=True)

    def count(self, name: Instrument, provider: str | None, tool_name: str | None) -> None:
        """One more of ``name`` (a counter) for this provider and tool."""
        self.record(name, 1, provider, tool_name)


metrics = Metrics()
