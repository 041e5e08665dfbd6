"""toolstream core: turn streamed LLM tool calls into calls that are safe to run.

Feed an :class:`Assembler` the vendor's stream events (SDK objects or wire dicts); at the end
it hands back a :class:`Turn` whose ``committed`` calls are complete, proven and strictly
parsed, and whose ``error_results()`` answer every call that is not. Sans-I/O: the drivers
:func:`assemble` / :func:`aassemble` are the only code here that waits on anything.
"""

from __future__ import annotations

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
