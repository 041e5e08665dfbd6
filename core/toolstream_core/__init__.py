"""toolstream core: turn streamed LLM tool calls into calls that are safe to run.

Feed an :class:`Assembler` the vendor's stream events (SDK objects or wire dicts); at the end
it hands back a :class:`Turn` whose ``committed`` calls are complete, proven and strictly
parsed, and whose ``error_results()`` answer every call that is not. Sans-I/O: the drivers
:func:`assemble` / :func:`aassemble` are the only code here that waits on anything.

The names below load on first use (PEP 562): ``import toolstream_core.testing.pytest_plugin``,
which pytest does in every run of a project that installed the package, costs nothing, and
``from toolstream_core import Assembler`` loads the core once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._assembler import Assembler
    from ._completion import is_vendor_error
    from ._config import AssembleConfig
    from ._decision import (
        RECORD_KEY,
        RECORD_VERSION,
        CallEntry,
        DecisionRecord,
        DroppedEntry,
        RecordMode,
        RejectedEntry,
        history_args,
        turn_record,
    )
    from ._drive import aassemble, assemble
    from ._history import (
        HistoryCall,
        HistoryEntry,
        HistoryError,
        HistoryProblem,
        ProblemKind,
        check_entries,
    )
    from ._models import (
        PROVIDERS,
        ArgumentsDelta,
        AssemblerClosed,
        AssemblerEvent,
        CallCommitted,
        CallKind,
        CallOpened,
        CallRejected,
        CallState,
        ErrorResult,
        Provider,
        Reason,
        ToolCall,
        ToolSpec,
        Turn,
    )
    from ._structured import StructuredOutputError

__all__ = [
    "PROVIDERS",
    "RECORD_KEY",
    "RECORD_VERSION",
    "ArgumentsDelta",
    "AssembleConfig",
    "Assembler",
    "AssemblerClosed",
    "AssemblerEvent",
    "CallCommitted",
    "CallEntry",
    "CallKind",
    "CallOpened",
    "CallRejected",
    "CallState",
    "DecisionRecord",
    "DroppedEntry",
    "ErrorResult",
    "HistoryCall",
    "HistoryEntry",
    "HistoryError",
    "HistoryProblem",
    "ProblemKind",
    "Provider",
    "Reason",
    "RecordMode",
    "RejectedEntry",
    "StructuredOutputError",
    "ToolCall",
    "ToolSpec",
    "Turn",
    "aassemble",
    "assemble",
    "check_entries",
    "history_args",
    "is_vendor_error",
    "turn_record",
]

__version__ = "0.1.0"

#: The module each public name lives in (the ``TYPE_CHECKING`` imports above, for readers and
#: type checkers; ``tests/test_layers.py`` keeps the three lists equal).
_HOME = {
    "Assembler": "_assembler",
    "is_vendor_error": "_completion",
    "AssembleConfig": "_config",
    **dict.fromkeys(("RECORD_KEY", "RECORD_VERSION", "CallEntry", "DecisionRecord", "DroppedEntry",
                     "RecordMode", "RejectedEntry", "history_args", "turn_record"), "_decision"),
    "aassemble": "_drive",
    "assemble": "_drive",
    **dict.fromkeys(("HistoryCall", "HistoryEntry", "HistoryError", "HistoryProblem", "ProblemKind",
                     "check_entries"), "_history"),
    **dict.fromkeys(("PROVIDERS", "ArgumentsDelta", "AssemblerClosed", "AssemblerEvent",
                     "CallCommitted", "CallKind", "CallOpened", "CallRejected", "CallState",
                     "ErrorResult", "Provider", "Reason", "ToolCall", "ToolSpec", "Turn"), "_models"),
    "StructuredOutputError": "_structured",
}


def __getattr__(name: str) -> Any:
    """Load a public name's module on first use and keep the name here (PEP 562)."""
    from ._lazy import load

    return load(globals(), _HOME, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
