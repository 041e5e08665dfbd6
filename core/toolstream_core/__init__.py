"""toolstream core: turn streamed LLM tool calls into calls that are safe to run.

Feed an :class:`Assembler` the vendor's stream events (SDK objects or wire dicts); at the end
it hands back a :class:`Turn` whose ``committed`` calls are complete, proven and strictly
parsed, and whose ``error_results()`` answer every call that is not. Sans-I/O: the drivers
:func:`assemble` / :func:`aassemble` are the only code here that waits on anything.
"""

from __future__ import annotations

from ._assembler import Assembler
from ._config import AssembleConfig
from ._drive import aassemble, assemble
from ._models import (
    ArgumentsDelta,
    AssemblerClosed,
    AssemblerEvent,
    CallCommitted,
    CallOpened,
    CallRejected,
    CallState,
    ErrorResult,
    Reason,
    ToolCall,
    ToolSpec,
    Turn,
)

__all__ = [
    "ArgumentsDelta",
    "AssembleConfig",
    "Assembler",
    "AssemblerClosed",
    "AssemblerEvent",
    "CallCommitted",
    "CallOpened",
    "CallRejected",
    "CallState",
    "ErrorResult",
    "Reason",
    "ToolCall",
    "ToolSpec",
    "Turn",
    "aassemble",
    "assemble",
]

__version__ = "0.1.0"
