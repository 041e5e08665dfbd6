"""The ``toolstream_cassette`` marker serves a client that does not stream.

The bundled cassettes hold streamed answers; a non-streaming request gets the vendor's
complete JSON answer built from them, through the real SDK clients.
"""

from __future__ import annotations

import pytest


@pytest.mark.toolstream_cassette("openai-chat/truncated_length")
def test_plain_chat_openai_without_streaming_gets_the_cut_call() -> None:
    langchain_openai = pytest.importorskip("langchain_openai")
    ai = langchain_openai.ChatOpenAI(model="gpt-4.1-mini", api_key="test").invoke("hi")
    assert ai.tool_calls == []
    [bad] = ai.invalid_tool_calls
    assert bad["name"] == "write_file" and bad["args"] == '{"path":"/tmp/a'
    assert ai.response_metadata["finish_reason"] == "length"


@pytest.mark.toolstream_cassette("openai-chat/parallel_calls")
def test_openai_chat_complete_answer_keeps_every_call_in_order() -> None:
    openai = pytest.importorskip("openai")
    reply = openai.OpenAI(api_key="test", max_retries=0).chat.completions.create(
        model="gpt-4.1-mini", messages=[{"role": "user", "content": "weather"}])
    calls = reply.choices[0].message.tool_calls or []
    assert [c.function.arguments for c in calls] == ['{"city":"Paris"}', '{"city":"Tokyo"}']  # type: ignore[union-attr]
    assert reply.choices[0].finish_reason == "tool_calls"


@pytest.mark.toolstream_cassette("anthropic/single_call")
def test_anthropic_complete_answer() -> None:
    anthropic = pytest.importorskip("anthropic")
    message = anthropic.Anthropic(api_key="test", max_retries=0).messages.create(
        model="claude-sonnet-4-5", max_tokens=64, messages=[{"role": "user", "content": "go"}])
    [use] = [b for b in message.content if b.type == "tool_use"]
    assert use.name == "write_file" and use.input["path"] == "/tmp/notes.txt"  # type: ignore[index]
    assert message.stop_reason == "tool_use"


@pytest.mark.toolstream_cassette("openai-responses/no_args")
def test_responses_complete_answer() -> None:
    openai = pytest.importorskip("openai")
    reply = openai.OpenAI(api_key="test", max_retries=0).responses.create(
        model="gpt-4.1-mini", input="time?")
    [call] = [item for item in reply.output if item.type == "function_call"]
    assert call.name == "get_time" and call.arguments == "{}"
