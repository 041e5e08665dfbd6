"""The LlamaIndex examples of docs/llamaindex.md and docs/deploy.md, run as written (CI's
llamaindex env runs this folder; the latest env has no LlamaIndex)."""

from __future__ import annotations

from docs_examples import run_example


def test_agent_example_rejects_the_cut_call_and_runs_the_good_one() -> None:
    assert run_example("llamaindex-agent") == [
        "not run: write_file stream_truncated", "['/tmp/notes.txt']", "All done:"]


def test_llm_wrapper_example_returns_no_call_for_a_rejected_one() -> None:
    assert run_example("llamaindex-llm") == [
        "[]", "[('write_file', 'stream_truncated')]", "['assistant', 'tool']"]


def test_structured_output_example_raises_on_the_cut_json_and_asks_as_openai_does() -> None:
    assert run_example("llamaindex-structured") == [
        "stream_truncated '{\"city\":\"Paris\",\"unit\":\"cel'", "city='Paris' unit='celsius'",
        "json_schema"]


def test_deploy_example_hands_a_rejected_call_to_another_worker() -> None:
    printed = run_example("deploy-llamaindex")
    assert printed[0].startswith("Nothing ran: 1 tool result(s) came back, every one an error")
    assert printed[2:] == ["['user', 'assistant', 'tool', 'assistant', 'user']", "True True"]
