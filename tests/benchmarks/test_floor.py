"""Targets 1 and 2's verdicts (``benchmarks.floor``): decided from the median of interleaved
pairs and its interquartile range, never from one side's best run. No timing assertions: the
rows here are made up, and the pairing itself runs on real contenders at a tiny size."""

from __future__ import annotations

import pytest

from benchmarks import floor
from benchmarks.peers import BY_KEY
from benchmarks.timing import Budget
from benchmarks.workloads import synthetic


@pytest.mark.parametrize(
    ("median", "q3", "expected"),
    [(1.2, 1.4, "HOLDS"), (1.4, 1.6, "NOT RESOLVED"), (1.6, 1.7, "DOES NOT HOLD"), (1.5, 1.5, "HOLDS")],
)
def test_verdict_reads_the_median_and_the_upper_quartile(median: float, q3: float, expected: str) -> None:
    assert floor.verdict({"median": median, "q1": median - 0.1, "q3": q3}, 1.5) == expected


def test_pairs_time_both_sides_and_check_what_they_reassembled() -> None:
    workload = synthetic("write_file", "openai-chat", 2048, 4)
    row = floor.pairs(BY_KEY["core_dict"], floor.MINIMAL, [workload], Budget(cap_s=30), 3)
    assert row["status"] == "ok" and row["pairs"] == 3
    assert row["q1"] <= row["median"] <= row["q3"]
    assert row["a_median_s"] > 0 and row["b_median_s"] > 0


def test_render_states_each_target_once() -> None:
    ok = {"status": "ok", "pairs": 15, "median": 1.3, "q1": 1.2, "q3": 1.4, "a_median_s": 0.3,
          "b_median_s": 0.2, "streams": 1, "chunks": 10}
    timed = {"seconds": 0.1, "status": "ok"}
    data = {
        "headline": {"workload": "write_file/openai-chat/4B/1 MiB", "chunks": 10, "target_1": ok,
                     **{k: timed for k in ("minimal", "core_dict", "floor", "lc_merge_only", "anthropic_sdk")}},
        "objects": [{"workload": "write_file/openai-chat/4B/4 KiB", "key": "core_openai_obj",
                     **ok, "median": 0.45, "q3": 0.55}],
        "gemini": {"streams": 19, "chunks": 71, "median": 3.1, "q1": 3.0, "q3": 3.2},
    }
    text = floor.render(data)
    assert text.count("**Target 1 (core within 1.5x of the minimal loop): HOLDS**") == 1
    assert text.count("**Target 2 (") == 1 and "DOES NOT HOLD** — worst SDK-object ratio 0.45x" in text
    assert "not resolved" in text and "3.10x (3.00-3.20)" in text


def _load_doc(*, concurrency: int = 1000, failed: int = 0, wrong: int = 0, core: int = 10_000) -> dict[str, object]:
    row = {"failed": failed, "cross_talk": wrong}
    baseline = {"failed": 0, "cross_talk": 2000}  # plain LlamaIndex merges interleaved calls
    return {"http": [{"concurrency": concurrency,
                      "contenders": {"gated": row, "langchain": row, "llamaindex-plain": baseline}}],
            "core": [{"streams": core, "wrong_turns": 0, "unique_ids": core * 2}]}


@pytest.mark.parametrize(
    ("doc", "expected"),
    [(_load_doc(), "HOLDS"), (_load_doc(failed=3), "DOES NOT HOLD"), (_load_doc(wrong=1), "DOES NOT HOLD"),
     (_load_doc(concurrency=100), "not decided"), (_load_doc(core=1000), "not decided")],
)
def test_target_5_verdict_counts_streams_failures_and_cross_talk(doc: dict[str, object], expected: str) -> None:
    from benchmarks import load

    text = load.verdict(doc)
    assert f"cross-talk): {expected}**" in text


def test_the_minimal_loop_and_the_core_loop_reassemble_the_same_call() -> None:
    """Issue 30's loop is one function over one list; the core loop feeds the same list."""
    workload = synthetic("write_file", "openai-chat", 2048, 4)
    chunks = list(workload.iter_events("dict"))
    assert floor.minimal_loop(chunks) == workload.calls[0].args
    assert [call.arguments for call in floor.core_loop(chunks).committed] == [workload.calls[0].args]
    row = floor.list_pairs(workload, 3)
    assert row["status"] == "ok" and row["pairs"] == 3 and row["chunks"] == len(chunks)
    assert row["q1"] <= row["median"] <= row["q3"]
