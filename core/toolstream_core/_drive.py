"""The I/O edge: drive a vendor stream through an ``Assembler`` and always return a Turn.

The state machine stays sans-I/O; waiting, timeouts and task cancellation live here.
``asyncio`` is imported by the async driver when it runs, not with the package (about 20 ms
that a sync caller never needs).
"""

from __future__ import annotations

import contextlib
import queue
import sys
import threading
from collections.abc import AsyncIterable, Callable, Iterable
from typing import TYPE_CHECKING, Any, TypedDict

from ._assembler import Assembler, fail_unfinished
from ._config import AssembleConfig
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

_END = object()


def _close_quietly(stream: Any) -> None:
    close = getattr(stream, "close", None)
    if callable(close):
        with contextlib.suppress(Exception):  # closing a stalled stream is best effort
            close()


def assemble(stream: Iterable[Any], **options: Unpack[AssemblerOptions]) -> Turn:
    """Consume a sync stream (SDK stream, iterator of dicts) and return its Turn.

    The keywords are the ``Assembler``'s (``max_output_tokens``: pass the request's limit
    to arm the max-token backstop).

    The stream is read on a helper thread so a stalled connection is noticed after
    ``assemble_idle_timeout_s`` even while the socket read blocks; the open calls then fail with
    ``idle_timeout`` and the stream is closed. An exception from the stream ends it as a dropped
    transport (kept in ``Turn.error``, not raised).
    """
    assembler = Assembler(**options)
    timeout = float(assembler.config.assemble_idle_timeout_s)
    inbox: queue.Queue[tuple[Any, BaseException | None]] = queue.Queue(maxsize=1024)

    def pump() -> None:
        try:
            for chunk in stream:
                inbox.put((chunk, None))
        except BaseException as exc:  # handed to the consumer, which decides
            inbox.put((_END, exc))
            return
        inbox.put((_END, None))

    threading.Thread(target=pump, name="toolstream-assemble", daemon=True).start()
    while True:
        try:
            chunk, error = inbox.get(timeout=timeout)
        except queue.Empty:
            fail_unfinished(assembler, Reason.idle_timeout, f"no data for {timeout:g} s")
            _close_quietly(stream)
            return assembler.finish(transport_complete=False, error=TimeoutError(f"idle for {timeout:g} s"))
        if chunk is _END:
            if error is None:
                return assembler.finish()
            if not isinstance(error, Exception):
                assembler.cancel(f"stream interrupted by {type(error).__name__}")
                raise error
            return assembler.finish(transport_complete=False, error=error)
        assembler.feed(chunk)


async def aassemble(stream: AsyncIterable[Any], **options: Unpack[AssemblerOptions]) -> Turn:
    """Consume an async stream and return its Turn (the keywords as for ``assemble``).

    Task cancellation cancels the calls and re-raises ``CancelledError`` (Python's contract):
    callers that must pair ids after a cancel should hold their own ``Assembler``.
    """
    import asyncio

    assembler = Assembler(**options)
    timeout = float(assembler.config.assemble_idle_timeout_s)
    iterator = stream.__aiter__()
    try:
        while True:
            try:
                chunk = await _next_within(iterator, timeout)
            except StopAsyncIteration:
                return assembler.finish()
            except TimeoutError:
                fail_unfinished(assembler, Reason.idle_timeout, f"no data for {timeout:g} s")
                await _aclose_quietly(stream)
                return assembler.finish(transport_complete=False, error=TimeoutError(f"idle for {timeout:g} s"))
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                return assembler.finish(transport_complete=False, error=exc)
            assembler.feed(chunk)
    except asyncio.CancelledError:
        assembler.cancel("the task was cancelled")
        assembler.finish(transport_complete=False)
        raise


async def _next_within(iterator: Any, timeout: float) -> Any:
    import asyncio

    if sys.version_info >= (3, 11):
        async with asyncio.timeout(timeout):
            return await iterator.__anext__()
    try:  # pragma: no cover - Python 3.10
        return await asyncio.wait_for(iterator.__anext__(), timeout)
    except asyncio.TimeoutError:  # pragma: no cover
        raise TimeoutError from None


async def _aclose_quietly(stream: Any) -> None:
    import asyncio

    for name in ("aclose", "close"):
        close = getattr(stream, name, None)
        if callable(close):
            try:
                result = close()
                if asyncio.iscoroutine(result):
                    await result
            except Exception:
                pass
            return
