"""Assembly is linear in the argument bytes (docs/DESIGN.md §1, §4.3 and §4.8).

No timing assertion: only a deadline a quadratic design would miss by orders of magnitude
(1-byte fragments, and 16 MiB of arguments committed within the byte cap).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import builders as b
from builders import run
from toolstream_core import AssembleConfig, Assembler


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail (not hang) if the block runs longer than ``seconds``: SIGALRM where available."""
    if hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread():
        def expire(signum: int, frame: Any) -> None:
            raise TimeoutError(f"took longer than {seconds} s: assembly is not linear")

        previous = signal.signal(signal.SIGALRM, expire)
        signal.alarm(seconds)
        try:
            yield
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
    else:  # pragma: no cover - non-POSIX
        yield


# 1-byte fragments cost one feed() each (a few microseconds of constant per-event work), so
# the byte count here is sized for the time budget; a quadratic buffer at 2 MiB would need
# ~10^12 byte copies and miss the deadline by orders of magnitude. Raise it with the env var.
_ONE_BYTE_MIB = float(os.environ.get("TOOLSTREAM_LINEAR_MIB", "2"))


def test_linear_one_byte_fragments() -> None:
    size = int(_ONE_BYTE_MIB * (1 << 20))
    config = AssembleConfig(max_tool_argument_bytes=size + 64)
    assembler = Assembler(provider="anthropic", config=config)
    head = b.anthropic([b.Call(id="t1", name="write", arguments="")], ending="none")[:2]
    tail = b.anthropic([], )[-2:]
    delta = {ch: {"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta",
                                                                       "partial_json": ch}} for ch in '{}":dx'}
    with deadline(120):
        for event in head:
            assembler.feed(event)
        feed = assembler.feed
        for ch in '{"d":"':
            feed(delta[ch])
        filler = delta["x"]
        for _ in range(size - 8):
            feed(filler)
        for ch in '"}':
            feed(delta[ch])
        feed({"type": "content_block_stop", "index": 0})
        for event in tail:
            feed(event)
        turn = assembler.finish()
    [call] = turn.committed
    assert len(call.raw_arguments) == size
    assert len(call.arguments["d"]) == size - 8


def test_linear_16_mib_of_arguments_commit() -> None:
    size = 16 << 20
    body = '{"d":"' + "x" * (size - 8) + '"}'
    cuts = range(65536, size, 65536)
    config = AssembleConfig(max_tool_argument_bytes=size)
    with deadline(120):
        turn = run(b.openai_chat([b.Call(id="c1", name="write", arguments=body, cuts=cuts)]), provider="openai-chat",
                   config=config)
    [call] = turn.committed
    assert len(call.arguments["d"]) == size - 8
