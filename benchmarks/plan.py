"""What each profile (``--smoke``, ``--quick``, default, ``--full``) runs.

The default profile is sized to finish in about six minutes on an idle 2-core machine: the
core goes to 4 MiB in 4-byte fragments and to 16 MiB in 16-byte fragments (the decoding floor
and the SDK-object inputs to 1 MiB), the peers run until one run passes a 10 s cap, and the
two 1 MiB ratio targets get a probe whose cap is just long enough to decide them. ``--full``
runs every fragment size and payload to 16 MiB, with a 20 s cap (roughly an hour).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from benchmarks.timing import Budget
from benchmarks.workloads import KiB, MiB, doubling

OPENAI_PEERS = (
    "lc_loop",
    "lc_generate",
    "lc_merge_only",
    "llamaindex",
    "llamaindex_noparse",
    "openai_sdk",
)
OPENAI_ALL = ("floor", "core_dict", "core_openai_obj", *OPENAI_PEERS)
ANTHROPIC_ALL = ("floor", "core_dict", "core_anthropic_obj", "anthropic_sdk")
OPENAI_CORE = ("floor", "core_dict", "core_openai_obj")


@dataclass(frozen=True)
class Series:
    """One payload / vendor / fragment size over a doubling size scale."""

    payload: str
    api: str
    fragment: int
    sizes: tuple[int, ...]
    contenders: tuple[str, ...]
    max_size: Mapping[str, int] = field(default_factory=dict)
    cap_s: float | None = None  # None: the profile's cap
    chart: bool = False

    @property
    def title(self) -> str:
        return f"{self.payload} / {self.api} / {self.fragment}-char fragments"


@dataclass(frozen=True)
class Probe:
    """One peer at one point, run with a cap long enough to decide a ratio target."""

    payload: str
    api: str
    fragment: int
    nbytes: int
    peer: str
    baseline: str
    ratio: float


@dataclass(frozen=True)
class Profile:
    name: str
    series: tuple[Series, ...]
    budget: Budget
    probes: tuple[Probe, ...] = ()
    streams_limit: int | None = None  # per API; None: every stream; 0: none
    stream_budget: Budget = field(default_factory=lambda: Budget(cap_s=10, min_total_s=0.05, max_repeats=10))
    parallel_n: int = 32
    memory_points: tuple[tuple[int, int], ...] = ()


TARGET_PROBES = (
    Probe("write_file", "openai-chat", 4, MiB, "lc_generate", "core_dict", 10.0),
    Probe("write_file", "openai-chat", 4, MiB, "lc_merge_only", "core_dict", 10.0),
    Probe("write_file", "anthropic", 4, MiB, "anthropic_sdk", "core_anthropic_obj", 20.0),
)


def _sizes(hi: int) -> tuple[int, ...]:
    return tuple(doubling(KiB, hi))


def smoke() -> Profile:
    """Tiny: every contender once, so the code cannot rot (used by the test suite)."""
    return Profile(
        "smoke",
        series=(
            Series("write_file", "openai-chat", 16, (KiB,), OPENAI_ALL, cap_s=30, chart=True),
            Series("nested", "openai-chat", 16, (KiB,), OPENAI_ALL, cap_s=30),
            Series("write_file", "anthropic", 16, (KiB,), ANTHROPIC_ALL, cap_s=30, chart=True),
        ),
        budget=Budget(cap_s=30, min_total_s=0.0, max_repeats=1),
        streams_limit=2,
        stream_budget=Budget(cap_s=10, min_total_s=0.0, max_repeats=1),
        parallel_n=4,
        memory_points=((4 * KiB, 16),),
    )


def quick() -> Profile:
    """About a minute: sizes to 64 KiB, 4-byte fragments, short cap."""
    return Profile(
        "quick",
        series=(
            Series("write_file", "openai-chat", 4, _sizes(64 * KiB), OPENAI_ALL, cap_s=3, chart=True),
            Series("write_file", "anthropic", 4, _sizes(64 * KiB), ANTHROPIC_ALL, cap_s=3, chart=True),
        ),
        budget=Budget(cap_s=3, min_total_s=0.2, max_repeats=10),
        stream_budget=Budget(cap_s=5, min_total_s=0.02, max_repeats=3),
        memory_points=((256 * KiB, 4),),
    )


def default() -> Profile:
    """About six minutes on this 2-core machine when it is otherwise idle.

    Peers are stopped at 10 s here (20 s in ``--full``): each capped series costs about twice
    its cap, and there are six of them.
    """
    # lc_merge_only (its input costs 60 µs a chunk to prepare) runs as the 1 MiB probe only
    peers = ("lc_loop", "lc_generate", "llamaindex", "openai_sdk", "anthropic_sdk")
    limits = {"floor": MiB, "core_openai_obj": MiB, "core_anthropic_obj": MiB} | dict.fromkeys(peers, MiB)
    openai = ("floor", "core_dict", "core_openai_obj", *peers[:-1])
    nested = ("floor", "core_dict", "core_openai_obj", "lc_generate", "llamaindex", "openai_sdk")
    return Profile(
        "default",
        series=(
            Series("write_file", "openai-chat", 4, _sizes(4 * MiB), openai, max_size=limits, chart=True),
            Series("write_file", "anthropic", 4, _sizes(4 * MiB), ANTHROPIC_ALL, max_size=limits, chart=True),
            Series("write_file", "openai-chat", 16, _sizes(16 * MiB), ("floor", "core_dict"), max_size=limits),
            Series("write_file", "openai-chat", 1, _sizes(256 * KiB), ("floor", "core_dict")),
            Series("nested", "openai-chat", 4, _sizes(32 * KiB), nested, cap_s=5),
        ),
        budget=Budget(cap_s=10, min_total_s=0.5, max_repeats=20),
        probes=TARGET_PROBES,
        memory_points=((MiB, 4), (4 * MiB, 16)),
    )


def full() -> Profile:
    """Every payload and fragment size to 16 MiB, peers capped at 20 s (roughly an hour).

    The decoding floor and the SDK-object inputs stop at 4 MiB (1 MiB in 1-char fragments):
    preparing sixteen million SDK objects alone would take longer than everything else.
    """
    every = _sizes(16 * MiB)
    series = []
    for fragment in (4, 1, 16):
        cut_at = MiB if fragment == 1 else 4 * MiB
        limits = {"floor": cut_at, "core_openai_obj": cut_at, "core_anthropic_obj": cut_at}
        chart = fragment == 4
        series.append(Series("write_file", "openai-chat", fragment, every, OPENAI_ALL, limits, chart=chart))
        series.append(Series("write_file", "anthropic", fragment, every, ANTHROPIC_ALL, limits, chart=chart))
    limits = {"floor": 4 * MiB, "core_openai_obj": 4 * MiB, "core_anthropic_obj": 4 * MiB}
    series.append(Series("nested", "openai-chat", 4, every, OPENAI_ALL, limits))
    series.append(Series("nested", "anthropic", 4, every, ANTHROPIC_ALL, limits))
    return Profile(
        "full",
        series=tuple(series),
        budget=Budget(cap_s=20, min_total_s=1.0, max_repeats=30),
        probes=TARGET_PROBES,
        memory_points=((MiB, 1), (MiB, 4), (16 * MiB, 4), (16 * MiB, 16)),
    )


PROFILES = {"smoke": smoke, "quick": quick, "default": default, "full": full}
