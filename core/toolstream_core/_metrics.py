"""Rule 12: OpenTelemetry metrics when the ``otel`` extra is installed, nothing otherwise.

Recorded per call (a call's end, its commit, a rejection) and once per executor refusal, never
per fragment, so metrics cost nothing on the hot path. The instruments are created lazily on
first use: importing the core must stay free.

Each seed-004 name keeps the seed's meaning (DESIGN §4.12); what the gate measures beyond them
has a name of its own, so no dashboard reads one quantity under another's name.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ._config import AssembleConfig

__all__ = ["Instrument", "Metrics", "metrics", "record_refused_execution"]

#: The instruments' short names (``INSTRUMENTS`` below has what each one is).
Instrument = Literal["bytes", "invalid_json", "overflow", "to_commit", "open_to_commit", "rejected",
                     "not_committed", "duplicate"]

#: short name -> (OTel name, histogram unit or None for a counter, description).
INSTRUMENTS: dict[str, tuple[str, str | None, str]] = {
    "bytes": ("tool_assemble_args_bytes", "By",
              "Argument bytes received per client tool call, whatever its end"),
    "invalid_json": ("tool_assemble_invalid_json_total", None,
                     "Calls whose arguments failed the strict parse"),
    "overflow": ("tool_assemble_overflow_total", None, "Calls over max_tool_argument_bytes"),
    "to_commit": ("tool_assemble_to_commit_seconds", "s",
                  "From the end of the stream (a pipelined call: its block stop) to the commit"),
    "open_to_commit": ("tool_assemble_open_to_commit_seconds", "s",
                       "From a call's first event to its commit"),
    "rejected": ("tool_assemble_rejected_total", None, "Calls the gate rejected, by reason"),
    "not_committed": ("tool_execute_rejected_not_committed_total", None,
                      "Executor attempts to run a call the gate did not commit, refused"),
    "duplicate": ("tool_assemble_duplicate_total", None, "Re-sent duplicate calls folded into one"),
}

_log = logging.getLogger(__name__)


class Metrics:
    """The instruments of DESIGN §4.12 behind one small, failure-proof facade."""

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
        for short, (name, unit, description) in INSTRUMENTS.items():
            if unit is None:
                self._instruments[short] = meter.create_counter(name, description=description)
            else:
                self._instruments[short] = meter.create_histogram(name, unit=unit, description=description)

    def record(self, name: Instrument, value: float, provider: str | None, tool_name: str | None,
               tenant: str | None = None, extra: Mapping[str, str] | None = None) -> None:
        """Add ``value`` to a counter or record it in a histogram; never raises.

        Labels: ``provider`` and ``tool_name`` (``unknown`` when missing), ``tenant`` only when
        the config names one, and ``extra`` (a few fixed-vocabulary labels: ``state``,
        ``reason``), so every label stays low-cardinality.
        """
        if not self._ready:
            self._setup()
        instrument = self._instruments.get(name)
        if instrument is None:
            return
        labels = {"provider": provider or "unknown", "tool_name": tool_name or "unknown"}
        if tenant is not None:
            labels["tenant"] = tenant
        if extra:
            labels.update(extra)
        try:
            if hasattr(instrument, "record"):
                instrument.record(value, labels)
            else:
                instrument.add(value, labels)
        except Exception:  # a metrics backend must never break a stream
            _log.debug("toolstream metric %s failed", name, exc_info=True)

    def count(self, name: Instrument, provider: str | None, tool_name: str | None,
              tenant: str | None = None, extra: Mapping[str, str] | None = None) -> None:
        """One more of ``name`` (a counter) for this provider and tool."""
        self.record(name, 1, provider, tool_name, tenant, extra)


metrics = Metrics()


def record_refused_execution(tool_name: str | None, *, provider: str | None = None,
                             config: AssembleConfig | None = None) -> None:
    """Count ``tool_execute_rejected_not_committed_total``: an executor was about to run a
    call the gate did not commit, and refused. Call it where an agent refuses (the LangChain
    middleware's ``wrap_tool_call`` guard, the LlamaIndex agent's equivalent), once per
    refused call: the seed's anti-regression counter, which stays at zero while every path
    to a tool goes through the gate. ``config`` gives the ``tenant`` label. Never raises."""
    metrics.count("not_committed", provider, tool_name, config.tenant if config is not None else None)
