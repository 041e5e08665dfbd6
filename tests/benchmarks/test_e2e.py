"""The target-3 arithmetic of ``benchmarks/e2e.py``: pairing, spread, verdicts. No timing assertions.

The numbers fed in are made up on purpose (exact ratios), so each check knows its answer from
the input; the real measurement runs in ``test_smoke.py`` and in ``python -m benchmarks.run``.
"""

from __future__ import annotations

import random
import statistics
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
KiB = 1024


@pytest.fixture
def e2e(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.syspath_prepend(str(ROOT))
    import benchmarks.e2e

    return benchmarks.e2e


def _samples(e2e: Any, base: list[float], factor: list[float]) -> Any:
    shim = [b * f for b, f in zip(base, factor, strict=True)]
    return e2e.Samples(base, shim, list(base), list(shim), (None, None))


def _row(e2e: Any, nbytes: int, ci: tuple[float, float], framework: str = "LangChain ChatOpenAI.invoke") -> dict:
    return {"framework": framework, "kind": "overhead", "workload": f"w/{nbytes}", "nbytes": nbytes,
            "chunks": nbytes // 4, "pairs": 30, "base_s": 0.1, "shim_s": 0.102, "overhead_pct": sum(ci) / 2,
            "iqr_pct": list(ci), "ci_pct": list(ci), "wall_overhead_pct": 2.0, "verdict": e2e.verdict(ci),
            "note": ""}


@pytest.mark.parametrize(("ci", "want"), [
    ((-1.0, 2.9), "holds"),
    ((-1.0, 3.0), "holds"),
    ((2.0, 4.0), "not resolved"),
    ((3.1, 9.0), "does not hold"),
])
def test_verdict_reads_the_whole_interval(e2e: Any, ci: tuple[float, float], want: str) -> None:
    assert e2e.verdict(ci) == want
    assert e2e.verdict(ci, pairs=e2e.MIN_PAIRS_FOR_VERDICT - 1) == "not resolved"


def test_exact_ratios_give_exact_overhead_and_a_point_interval(e2e: Any) -> None:
    base = [0.1 + 0.01 * i for i in range(30)]  # drift between pairs must not matter
    stats = e2e.overhead_stats(_samples(e2e, base, [1.10] * 30), seed=0)
    assert stats["pairs"] == 30
    assert stats["overhead_pct"] == pytest.approx(10.0)
    assert stats["ci_pct"] == pytest.approx([10.0, 10.0]) and stats["verdict"] == "does not hold"
    assert stats["base_s"] == pytest.approx(statistics.median(base))
    small = e2e.overhead_stats(_samples(e2e, base, [1.01] * 30), seed=0)
    assert small["verdict"] == "holds" and small["overhead_pct"] == pytest.approx(1.0)


def test_noisy_ratios_are_not_resolved_near_the_target_and_resolve_with_more_pairs(e2e: Any) -> None:
    rng = random.Random(7)
    few = [1.03 + rng.gauss(0, 0.08) for _ in range(10)]
    lo, hi = e2e.bootstrap_ci(few, seed=1)
    assert lo <= statistics.median(few) <= hi
    assert e2e.verdict(((lo - 1) * 100, (hi - 1) * 100)) == "not resolved"
    many = [1.10 + rng.gauss(0, 0.08) for _ in range(400)]
    lo2, hi2 = e2e.bootstrap_ci(many, seed=1)
    assert hi2 - lo2 < hi - lo
    assert e2e.verdict(((lo2 - 1) * 100, (hi2 - 1) * 100)) == "does not hold"


def test_speedup_is_base_over_gated(e2e: Any) -> None:
    base = [1.0, 2.0, 3.0, 4.0]
    stats = e2e.speedup_stats(_samples(e2e, base, [0.25] * 4), seed=0)
    assert stats["speedup"] == pytest.approx(4.0) and stats["speedup_iqr"] == pytest.approx([4.0, 4.0])


def test_pairs_alternate_in_a_random_order_and_stop_at_min_pairs(e2e: Any) -> None:
    calls: list[str] = []

    def side(name: str) -> Any:
        def call() -> str:
            calls.append(name)
            return name

        return call

    s = e2e.run_pairs((side("base"), side("shim")), min_pairs=40, max_pairs=100, budget_s=0.0,
                      cap_s=10.0, seed=3)
    assert len(s.base_cpu) == len(s.shim_cpu) == 40 and s.outcomes == ("base", "shim")
    timed = calls[2:]  # the first two are the untimed warm-up
    pairs = [tuple(timed[i:i + 2]) for i in range(0, len(timed), 2)]
    assert all(sorted(p) == ["base", "shim"] for p in pairs)
    assert {p[0] for p in pairs} == {"base", "shim"}  # neither side always goes first


def test_overall_verdict(e2e: Any) -> None:
    fine = [_row(e2e, n, (0.5, 2.5), f) for n in (4 * KiB, 64 * KiB)
            for f in ("LangChain ChatOpenAI.invoke", "LlamaIndex OpenAI, read to end")]
    assert e2e.overall(fine)[0] == "HOLDS"
    assert e2e.overall([*fine[:-1], _row(e2e, 64 * KiB, (1.0, 4.0))])[0] == "NOT RESOLVED"
    word, why = e2e.overall([*fine[:-1], _row(e2e, 64 * KiB, (5.0, 9.0), "LlamaIndex OpenAI, read to end")])
    assert word == "DOES NOT HOLD" and "LlamaIndex OpenAI, read to end at 64 KiB" in why
    assert e2e.overall([_row(e2e, KiB, (0.0, 1.0))])[0] == "NOT DECIDED"
    word, why = e2e.overall(fine[:2])  # 4 KiB only
    assert word == "NOT DECIDED" and "64 KiB" in why
    failed_to_run = {**fine[-1], "note": "ImportError: x"}
    del failed_to_run["verdict"]
    assert e2e.overall([*fine[:-1], failed_to_run])[0] == "NOT DECIDED"
    speedup = {"framework": "x", "kind": "speedup", "workload": "w", "nbytes": 4 * KiB, "note": ""}
    assert e2e.overall([*fine, speedup])[0] == "HOLDS"  # speed-up rows are not overhead cases


def test_render_has_the_table_and_one_plain_sentence(e2e: Any) -> None:
    rows = [_row(e2e, 4 * KiB, (5.0, 9.0)), _row(e2e, 64 * KiB, (-1.0, 1.0))]
    rows.append({"framework": "LlamaIndex OpenAI, FunctionAgent loop", "kind": "speedup", "workload": "w",
                 "nbytes": 4 * KiB, "chunks": 1010, "pairs": 8, "base_s": 0.4, "shim_s": 0.16,
                 "speedup": 2.5, "speedup_iqr": [2.4, 2.6], "speedup_ci": [2.4, 2.6], "note": ""})
    text = e2e.render(rows)
    assert "| LangChain ChatOpenAI.invoke | 4 KiB | 1,024 | 30 |" in text
    assert text.count("Target 3 (shims <= 3 % end to end): DOES NOT HOLD") == 1
    assert "**2.50x**" in text
