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
    from ._config import AssembleConfig
    from ._drive import aassemble, assemble
    from ._models import (
        PROVIDERS,
        ArgumentsDelta,
        AssemblerClosed,
        AssemblerEvent,
        CallCommitted,
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

# What someone feeding a stream needs: the assembler and its drivers, what it is given (the
# config, tool specs, a provider) and what it hands back (the turn, its calls and error results,
# the UI events). What a framework integration needs lives in ``toolstream_core.integration``
# (``tests/test_public_surface.py`` pins both lists).
__all__ = [
    "PROVIDERS",
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
    "Provider",
    "Reason",
    "ToolCall",
    "ToolSpec",
    "Turn",
    "aassemble",
    "assemble",
]

__version__ = "0.1.0"

#: The module each public name lives in (the ``TYPE_CHECKING`` imports above, for readers and
#: type checkers; ``tests/test_layers.py`` keeps the three lists equal).
_HOME = {
    "Assembler": "_assembler",
    "AssembleConfig": "_config",
    "aassemble": "_drive",
    "assemble": "_drive",
    **dict.fromkeys(("PROVIDERS", "ArgumentsDelta", "AssemblerClosed", "AssemblerEvent",
                     "CallCommitted", "CallOpened", "CallRejected", "CallState", "ErrorResult",
                     "Provider", "Reason", "ToolCall", "ToolSpec", "Turn"), "_models"),
}


def __getattr__(name: str) -> Any:
    """Load a public name's module on first use and keep the name here (PEP 562)."""
    from ._lazy import load

    return load(globals(), _HOME, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
