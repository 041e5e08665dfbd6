"""The I/O edge: drive a vendor stream through an ``Assembler`` and always return a Turn.

The state machine stays sans-I/O; waiting and timeouts live in ``_idle`` (the guards the shims
use too), and what each way a stream can end does to the turn lives in ``_Drive``, the one
non-I/O base the twins share (httpx style): ``assemble`` and ``aassemble`` are the same short
loop, line for line, one with ``for`` and one with ``async for``.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Callable, Iterable
from typing import TYPE_CHECKING, Any, TypedDict

from ._assembler import Assembler, fail_unfinished
from ._config import AssembleConfig
from ._idle import AsyncIdleGuard, IdleGuard, StreamIdleTimeout
from ._models import AssemblerEvent, Provider, Reason, Turn
from ._registry import ToolsArg

if TYPE_CHECKING:  # typing.Unpack is 3.11+; annotations are never evaluated here
    from typing_extensions import Unpack

__all__ = ["AssemblerOptions", "aassemble", "assemble"]


class AssemblerOptions(TypedDict, total=False):
    """The ``Assembler``'s keywords, which ``assemble`` and ``aassemble`` hand on unchanged.

    One declaration, so the two drivers and the state machine cannot drift apart.
    """

    tools: ToolsArg
    config: AssembleConfig | None
    provider: Provider | None
    on_event: Callable[[AssemblerEvent], None] | None
    max_output_tokens: int | None
    run_budget: int | None


class _Drive:
    """One driven turn, without I/O: the assembler, and the turn each kind of end makes.

    Every end decides the turn (``finish``), so a ``Turn`` and its span exist whatever stopped
    the stream: its end, an exception from it, an idle gap, or an interrupt.
    """

    __slots__ = ("assembler", "timeout")

    def __init__(self, options: AssemblerOptions) -> None:
        self.assembler = Assembler(**options)
        self.timeout = float(self.assembler.config.assemble_idle_timeout_s)

    def feed(self, chunk: Any) -> None:
        self.assembler.feed(chunk)

    def ended(self) -> Turn:
        """The stream ended: the transport half of the proof (4.4)."""
        return self.assembler.finish()

    def stopped(self, stop: BaseException) -> Turn:
        """The loop was stopped by ``stop``; the turn it makes, or ``stop`` re-raised.

        - ``StreamIdleTimeout`` (the guard's): the open calls fail ``idle_timeout``;
        - any other ``Exception`` (from the stream): a dropped transport, kept in
          ``Turn.error``, not raised;
        - an interrupt (``KeyboardInterrupt``, ``SystemExit``, task cancellation,
          ``GeneratorExit``): the calls are cancelled and the turn decided (its span closed),
          then it is re-raised: Python's contract.
        """
        if isinstance(stop, StreamIdleTimeout):
            fail_unfinished(self.assembler, Reason.idle_timeout, str(stop))
            return self.assembler.finish(transport_complete=False, error=stop)
        if isinstance(stop, Exception):
            return self.assembler.finish(transport_complete=False, error=stop)
        self.assembler.cancel(f"stream interrupted by {type(stop).__name__}")
        self.assembler.finish(transport_complete=False, error=stop)
        raise stop


def assemble(stream: Iterable[Any], **options: Unpack[AssemblerOptions]) -> Turn:
    """Consume a sync stream (SDK stream, iterator of dicts) and return its Turn.

    The keywords are the ``Assembler``'s (``max_output_tokens``: pass the request's limit
    to arm the max-token backstop).

    The stream is read through an ``IdleGuard``, on a helper thread, so a stalled connection
    is noticed after ``assemble_idle_timeout_s`` even while the socket read blocks; the open
    calls then fail with ``idle_timeout``, the stream is closed and its reader stops. An
    exception from the stream ends it as a dropped transport (kept in ``Turn.error``, not
    raised). An interrupt (``KeyboardInterrupt``, ``SystemExit``, ...) cancels the calls,
    decides the turn, and is re-raised.
    """
    drive = _Drive(options)
    with IdleGuard(stream, drive.timeout) as chunks:
        try:
            for chunk in chunks:
                drive.feed(chunk)
        except BaseException as stop:
            return drive.stopped(stop)
    return drive.ended()


async def aassemble(stream: AsyncIterable[Any], **options: Unpack[AssemblerOptions]) -> Turn:
    """Consume an async stream and return its Turn (the keywords and ends as for ``assemble``).

    Task cancellation cancels the calls, decides the turn and re-raises ``CancelledError``
    (Python's contract): callers that must pair ids after a cancel hold their own
    ``Assembler``.
    """
    drive = _Drive(options)
    async with AsyncIdleGuard(stream, drive.timeout) as chunks:
        try:
            async for chunk in chunks:
                drive.feed(chunk)
        except BaseException as stop:
            return drive.stopped(stop)
    return drive.ended()
