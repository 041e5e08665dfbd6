"""Targets 1 and 2's verdicts (``benchmarks.floor``): decided from the median of interleaved
pairs and its interquartile range, never from one side's best run. No timing assertions: the
rows here are made up, and the pairing itself runs on real contenders at a tiny size."""

from __future__ import annotations

import json
from typing import Any

import pytest
from toolstream_core import Assembler

from benchmarks import floor
from benchmarks.peers import BY_KEY
from benchmarks.timing import Budget
from benchmarks.workloads import real_streams, synthetic


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
                     "safe_floors": {"one_call": {**ok, "median": 1.45}, "checks": {"status": "wrong"}},
                     **{k: timed for k in ("minimal", "core_dict", "floor", "lc_merge_only", "anthropic_sdk")}},
        "objects": [{"workload": "write_file/openai-chat/4B/4 KiB", "key": "core_openai_obj",
                     **ok, "median": 0.45, "q3": 0.55}],
        "gemini": {"streams": 19, "chunks": 71, "median": 3.1, "q1": 3.0, "q3": 3.2},
    }
    text = floor.render(data)
    assert text.count("**Target 1 (core within 1.5x of the minimal loop): HOLDS**") == 1
    assert text.count("**Target 2 (") == 1 and "DOES NOT HOLD** — worst SDK-object ratio 0.45x" in text
    assert "not resolved" in text and "3.10x (3.00-3.20)" in text
    assert "(`one_call_loop`) 1.45x (1.20-1.40)." in text and "`checks_loop`" not in text  # a wrong row is left out


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


def _one_field_off(chunk: dict[str, Any]) -> list[dict[str, Any]]:
    """A continuation chunk, and copies of it that differ by one field the full path reads."""
    def variant(edit: Any) -> dict[str, Any]:
        copy = json.loads(json.dumps(chunk))
        edit(copy, copy["choices"][0], copy["choices"][0]["delta"]["tool_calls"][0])
        return copy
    edits = [
        lambda c, ch, tc: c.update(error={"message": "boom"}),
        lambda c, ch, tc: ch.update(error={"message": "boom"}),
        lambda c, ch, tc: ch.update(finish_reason="tool_calls"),
        lambda c, ch, tc: ch.update(index=1),
        lambda c, ch, tc: ch["delta"].update(function_call={"arguments": "x"}),
        lambda c, ch, tc: tc.update(id="call_other"),
        lambda c, ch, tc: tc.update(index=1),
        lambda c, ch, tc: tc.update(index=True),
        lambda c, ch, tc: tc["function"].update(name="other"),
        lambda c, ch, tc: tc["function"].update(arguments={"x": 1}),
        lambda c, ch, tc: c["choices"].append(json.loads(json.dumps(ch))),
    ]
    return [chunk, *(variant(edit) for edit in edits)]


def _chat_chunk_dicts() -> list[list[Any]]:
    """Every chat stream of the corpus; the synthetic call; and, for each one-field change of
    a continuation chunk, the synthetic call with that chunk in its middle."""
    streams = [[json.loads(text) for text in w.wire or []] for w in real_streams() if w.api == "openai-chat"]
    chunks = list(synthetic("write_file", "openai-chat", 2048, 4).iter_events("dict"))
    middle = len(chunks) // 2
    odd = [[*chunks[:middle], variant, *chunks[middle:]] for variant in _one_field_off(chunks[middle])]
    return [chunks, *odd, *streams]


def test_safe_fragment_takes_exactly_what_the_core_fast_path_takes() -> None:
    """The safe floor checks what the core checks, no less: on every chat stream of the corpus
    (and the synthetic call), for each chunk, ``safe_fragment`` with the adapter's hot slot
    answers as the core's fast path does, and its fragment is the text the core counted."""
    taken = 0
    for chunks in _chat_chunk_dicts():
        assembler = Assembler(provider="openai-chat", deltas=True)  # each fragment counted as it comes
        adapter: Any = assembler._adapter
        for chunk in chunks:
            fragment = floor.safe_fragment(chunk, adapter._hot_choice, adapter._hot_index)
            call = assembler._table.calls.get(adapter._hot_key)
            received = call.nbytes if call is not None else 0
            took = adapter.fast(chunk)  # the adapter's (the Assembler leaves it once a call failed)
            assert took == (fragment is not None), chunk
            if took:
                assert call is not None and call.nbytes - received == len(fragment.encode("utf-8", "surrogatepass"))
                taken += 1
            else:
                assembler.feed(chunk)
    assert taken > 100  # the corpus and the synthetic call exercise the fast path


@pytest.mark.parametrize("key", sorted(floor.LIST_LOOPS))
def test_each_list_loop_reassembles_the_call_and_pairs_with_the_minimal_loop(key: str) -> None:
    workload = synthetic("write_file", "openai-chat", 2048, 4)
    chunks = list(workload.iter_events("dict"))
    assert floor._reassembled(floor.LIST_LOOPS[key](chunks)) == [workload.calls[0].args]
    row = floor.list_pairs(workload, 3, key)
    assert row["status"] == "ok" and row["a"] == key and row["q1"] <= row["median"] <= row["q3"]


def test_checks_loop_inlines_safe_fragment_word_for_word() -> None:
    """``checks_loop`` is ``safe_fragment`` without the call; if one changes, so must the other."""
    import inspect

    def checks(function: Any, refuse: str) -> list[str]:
        lines = [line.strip() for line in inspect.getsource(function).splitlines()]
        body = lines[lines.index('[choice] = chunk["choices"]'):lines.index('fragment = function["arguments"]') + 1]
        return [line.replace(refuse, "<refuse>") for line in body]

    assert checks(floor.safe_fragment, "return None") == checks(floor.checks_loop, "continue")
