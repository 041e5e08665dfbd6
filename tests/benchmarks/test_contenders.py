"""The benchmarks time the demo's readers (``toolstream_core.app._peers``), not copies of them.

Each peer and core contender's session wraps the reader ``toolstream demo`` runs for that
framework; fed a tiny synthetic stream, it hands the runner exactly the call that was sent.
No timing assertions.
"""

from __future__ import annotations

import pytest
from toolstream_core.app import _peers as peers

from benchmarks.peers import BY_KEY
from benchmarks.timing import Budget, check, run_once
from benchmarks.workloads import synthetic

READER_OF = {
    "core_dict": peers.ToolstreamAssemble,
    "core_openai_obj": peers.ToolstreamAssemble,
    "core_anthropic_obj": peers.ToolstreamAssemble,
    "lc_loop": peers.LangChainMerge,
    "lc_generate": peers.LangChainGenerate,
    "lc_merge_only": peers.LangChainGenerate,
    "llamaindex": peers.LlamaIndexRead,
    "llamaindex_noparse": peers.LlamaIndexRead,
    "openai_sdk": peers.OpenAIChatState,
    "anthropic_sdk": peers.AnthropicAccumulate,
}


def test_every_contender_but_the_floor_has_a_reader() -> None:
    assert {key for key, c in BY_KEY.items() if c.role != "floor"} == set(READER_OF)


@pytest.mark.parametrize("key", sorted(READER_OF))
def test_session_runs_the_demo_reader_and_reassembles_the_call(key: str) -> None:
    if key.startswith("llamaindex"):
        pytest.importorskip("llama_index.llms.openai")
    if key.startswith("lc_"):
        pytest.importorskip("langchain_openai")
    contender = BY_KEY[key]
    workload = synthetic("write_file", contender.apis[0], 2048, 4)
    assert isinstance(contender.start(workload).reader, READER_OF[key])
    _, outcome = run_once(contender, workload, Budget(cap_s=60, batch=7))  # several batches
    assert check(outcome, workload) == ""
    assert outcome and outcome[0][0] == "write_file"
