"""``history_pairing``: one rule, every wire's layout of calls and results."""

from __future__ import annotations

from typing import Any

import pytest
from toolstream_core.testing import history_pairing


def _chat(calls: list[tuple[str, str]], results: list[str]) -> dict[str, Any]:
    return {"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": "get_weather", "arguments": a}}
            for i, a in calls]},
        *({"role": "tool", "tool_call_id": r, "content": "x"} for r in results)]}


def test_a_paired_chat_history_has_no_problem() -> None:
    assert history_pairing("openai-chat", _chat([("a", "{}"), ("b", '{"c":1}')], ["b", "a"])) == []


def test_both_ways_and_the_arguments_are_judged() -> None:
    problems = history_pairing("openai-chat", _chat([("a", '{"path":"/tmp'), ("b", "{}")], ["c", "b", "b"]))
    assert sorted((p.kind, p.key) for p in problems) == [
        ("answered_twice", "b"), ("arguments", "a"), ("orphan_result", "c"), ("unanswered", "a")]


def test_a_result_after_a_user_message_is_an_orphan() -> None:
    body = {"messages": [{"role": "user", "content": "go"},
                         {"role": "tool", "tool_call_id": "a", "content": "x"}]}
    assert [(p.kind, p.key) for p in history_pairing("cohere", body)] == [("orphan_result", "a")]


def test_anthropic_and_bedrock_blocks() -> None:
    anthropic = {"messages": [
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "n", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "x"}]}]}
    assert {(p.kind, p.key) for p in history_pairing("anthropic", anthropic)} == {
        ("orphan_result", "t2"), ("unanswered", "t1")}
    bedrock = {"messages": [
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t1", "name": "n", "input": {}}}]},
        {"role": "user", "content": [{"toolResult": {"toolUseId": "t1", "content": [], "status": "error"}}]}]}
    assert history_pairing("bedrock-converse", bedrock) == []


def test_gemini_pairs_by_name_without_ids_and_ollama_by_tool_name() -> None:
    gemini = {"contents": [
        {"role": "model", "parts": [{"functionCall": {"name": "a", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "b", "response": {}}}]}]}
    assert {(p.kind, p.key) for p in history_pairing("gemini", gemini)} == {
        ("orphan_result", "b"), ("unanswered", "a")}
    ollama = {"messages": [
        {"role": "assistant", "tool_calls": [{"function": {"name": "a", "arguments": {}}}]},
        {"role": "tool", "tool_name": "a", "content": "x"}]}
    assert history_pairing("ollama", ollama) == []


def test_responses_and_cohere_v1() -> None:
    responses = {"input": [
        {"type": "function_call", "call_id": "c1", "name": "n", "arguments": "{}"},
        {"type": "function_call", "call_id": "c2", "name": "n", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "x"}]}
    assert [(p.kind, p.key) for p in history_pairing("openai-responses", responses)] == [("unanswered", "c2")]
    v1 = {"chat_history": [{"role": "USER", "message": "go"},
                           {"role": "CHATBOT", "tool_calls": [{"name": "a", "parameters": {}}]}],
          "tool_results": [{"call": {"name": "a", "parameters": {}}, "outputs": [{}]}]}
    assert history_pairing("cohere", v1, path="/v1/chat") == []


def test_an_unknown_wire_is_an_error() -> None:
    with pytest.raises(ValueError, match="no pairing reader"):
        history_pairing("smoke-signals", {})
