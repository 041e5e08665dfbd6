"""Where the core spends its time: ``python -m benchmarks.profile_core [--input dict|object]``.

cProfile over one ``write_file`` call fed to ``Assembler`` (chunks prepared before profiling
starts), top functions by own time. Used to explain a missed target, not to tune by guesswork.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys

from benchmarks.peers import PREPARERS
from benchmarks.workloads import KiB, synthetic


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.profile_core", description=__doc__)
    parser.add_argument("--api", default="openai-chat", choices=["openai-chat", "anthropic"])
    parser.add_argument("--input", default="dict", choices=["dict", "object"])
    parser.add_argument("--kib", type=int, default=1024, help="argument size in KiB")
    parser.add_argument("--fragment", type=int, default=4)
    parser.add_argument("--top", type=int, default=18)
    args = parser.parse_args(argv)

    from toolstream_core import Assembler

    from benchmarks.peers import core_config

    workload = synthetic("write_file", args.api, args.kib * KiB, args.fragment)
    kind = args.input if args.input == "dict" else f"{args.api.split('-')[0]}-object"
    source, prepare = PREPARERS[kind]
    chunks = prepare(list(workload.iter_events(source)))
    assembler = Assembler(config=core_config(), provider=args.api)
    profiler = cProfile.Profile()
    profiler.enable()
    for chunk in chunks:
        assembler.feed(chunk)
    turn = assembler.finish()
    profiler.disable()
    assert len(turn.committed) == 1, turn
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).sort_stats("tottime")
    stats.print_stats(args.top)
    sys.stdout.write(f"{workload.label}, {len(chunks):,} chunks, input {kind}\n{out.getvalue()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
