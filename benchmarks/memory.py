"""Peak memory of the core per argument byte, with ``tracemalloc``.

The stream is generated lazily, one chunk at a time, so what tracemalloc sees on top of the
baseline is the assembler's own state (buffers, the finished ``raw_arguments`` and the parsed
``arguments``) plus one chunk in flight. The argument text the workload was cut from exists
before tracing starts and is not counted.
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from dataclasses import dataclass
from typing import Any

from benchmarks.peers import core_config
from benchmarks.workloads import ToolCallSpec, Workload, size_label, synthetic, write_file_call


@dataclass
class MemoryResult:
    workload: str
    nbytes: int
    n_chunks: int
    peak_bytes: int
    retained_bytes: int
    note: str = ""
    minimal_peak_bytes: int = 0  # the minimal unsafe loop (benchmarks.floor) on the same input

    @property
    def per_byte(self) -> float:
        return self.peak_bytes / self.nbytes

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "peak_per_arg_byte": round(self.per_byte, 3),
                "minimal_per_arg_byte": round(self.minimal_peak_bytes / self.nbytes, 3)}


def ascii_write_file(nbytes: int, fragment: int, api: str = "openai-chat") -> Workload:
    """The ``write_file`` workload with the non-ASCII characters of its content replaced.

    Python keeps a string with any character above U+00FF at 2 (or 4) bytes per character, so
    the realistic content (it has ``→`` and ``今``) costs 2 bytes per character in every copy;
    this variant shows the floor for ASCII-only arguments.
    """
    call = write_file_call(nbytes)
    content = call.args["content"].encode("ascii", "replace").decode("ascii")
    args = {**call.args, "content": content}
    text = json.dumps(args, ensure_ascii=False)
    pad = nbytes - len(text.encode("utf-8"))
    if pad > 0:
        args["content"] = content + "#" * pad
        text = json.dumps(args, ensure_ascii=False)
    spec = ToolCallSpec(call.id, call.name, text, args)
    label = f"write_file-ascii/{api}/{fragment}B/{size_label(nbytes)}"
    return Workload(label, api, [spec], fragment)


def _traced_peak(run: Any) -> tuple[int, int, Any]:
    """(peak, still held, result) of ``run()`` above the traced baseline."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = run()
        current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - base, current - base, result


def core_peak(workload: Workload) -> MemoryResult:
    """Feed the workload's dict chunks to a fresh ``Assembler`` under tracemalloc; the minimal
    loop of ``benchmarks.floor`` on the same chunks is measured the same way beside it."""
    from toolstream_core import Assembler

    from benchmarks.floor import MINIMAL

    def assemble() -> Any:
        assembler = Assembler(config=core_config(), provider=workload.api)
        for chunk in workload.iter_events("dict"):
            assembler.feed(chunk)
        return assembler.finish()

    def minimal() -> Any:
        session = MINIMAL.start(workload)
        for chunk in workload.iter_events("dict"):
            session.feed([chunk])
        return session.finish()

    assemble()  # once untraced: the adapter's lazy import is not the assembler's memory
    peak, retained, turn = _traced_peak(assemble)
    minimal_peak = _traced_peak(minimal)[0]
    committed = len(turn.committed)
    note = "" if committed == len(workload.calls) else f"only {committed} calls committed"
    return MemoryResult(workload.label, workload.nbytes, workload.n_chunks, peak, retained, note, minimal_peak)


def memory_workloads(points: list[tuple[int, int]]) -> list[Workload]:
    """Both variants (realistic and ASCII) at each (size, fragment) point."""
    out: list[Workload] = []
    for nbytes, fragment in points:
        out.append(synthetic("write_file", "openai-chat", nbytes, fragment))
        out.append(ascii_write_file(nbytes, fragment))
    return out
