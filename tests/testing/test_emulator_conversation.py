"""The emulator as an agent sees it: tool results get the final answer, metadata GETs answer.

Every request goes through the real vendor SDK client over HTTP.
"""

from __future__ import annotations

import pytest
from toolstream_core.testing import VendorEmulator
from toolstream_core.testing._conversation import ToolResult, final_text


def test_final_text_names_every_result_and_its_outcome() -> None:
    assert final_text([]).startswith("Hello from the toolstream emulator: no tool ran")
    ok = final_text([ToolResult("write_file", "wrote 3 bytes", False)])
    assert ok == "All done: 1 tool result(s) came back: write_file returned 'wrote 3 bytes'."
    bad = final_text([ToolResult("write_file", "was not run: cut off", True)])
    assert bad.startswith("Nothing ran: 1 tool result(s) came back, every one an error")
    assert "write_file failed 'was not run: cut off'" in bad


def test_openai_chat_results_end_the_scenario(emu: VendorEmulator) -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=emu.base_url + "/v1", api_key="x",
                           max_retries=0)
    first = client.chat.completions.create(
        model="scenario:single_call", messages=[{"role": "user", "content": "go"}])
    call = first.choices[0].message.tool_calls[0]  # type: ignore[index]
    second = client.chat.completions.create(model="scenario:single_call", messages=[
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
        {"role": "tool", "tool_call_id": call.id, "content": "wrote it"}])
    assert second.choices[0].message.tool_calls is None
    assert second.choices[0].message.content == \
        "All done: 1 tool result(s) came back: write_file returned 'wrote it'."


def test_anthropic_error_results_are_reported_as_errors(
        emu: VendorEmulator) -> None:
    anthropic = pytest.importorskip("anthropic")
    client = anthropic.Anthropic(base_url=emu.base_url, api_key="x",
                                 max_retries=0)
    with client.messages.stream(model="scenario:truncated_length", max_tokens=64, messages=[
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [
            {"type": "tool_use", "id": "toolu_1", "name": "write_file", "input": {}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": True,
             "content": "write_file was not run: the response was cut off"}]},
    ]) as stream:
        message = stream.get_final_message()
    text = "".join(b.text for b in message.content if b.type == "text")
    assert text.startswith("Nothing ran: 1 tool result(s) came back, every one an error")
    assert message.stop_reason == "end_turn"


def test_gemini_function_responses_get_the_final_answer(
        emu: VendorEmulator) -> None:
    genai = pytest.importorskip("google.genai")
    types = pytest.importorskip("google.genai.types")
    client = genai.Client(api_key="x", http_options=types.HttpOptions(
        base_url=emu.base_url))
    contents = [
        types.Content(role="user", parts=[types.Part(text="weather?")]),
        types.Content(role="model", parts=[types.Part(function_call=types.FunctionCall(
            name="get_weather", args={"city": "Paris"}))]),
        types.Content(role="user", parts=[types.Part(function_response=types.FunctionResponse(
            name="get_weather", response={"result": "sunny"}))]),
    ]
    text = "".join(chunk.text or "" for chunk in client.models.generate_content_stream(
        model="scenario:parallel_calls", contents=contents))
    assert text.startswith("All done: 1 tool result(s) came back: get_weather returned")
    assert "sunny" in text


def test_responses_function_call_outputs_get_the_final_answer(
        emu: VendorEmulator) -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=emu.base_url + "/v1", api_key="x",
                           max_retries=0)
    reply = client.responses.create(model="scenario:no_args", input=[
        {"role": "user", "content": "time?"},
        {"type": "function_call", "call_id": "c1", "name": "get_time", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "12:00"}])
    assert reply.output_text == "All done: 1 tool result(s) came back: get_time returned '12:00'."


def test_model_metadata_routes_answer_every_sdk(emu: VendorEmulator) -> None:
    openai = pytest.importorskip("openai")
    anthropic = pytest.importorskip("anthropic")
    genai = pytest.importorskip("google.genai")
    types = pytest.importorskip("google.genai.types")
    base = emu.base_url
    oa = openai.OpenAI(base_url=base + "/v1", api_key="x", max_retries=0)
    assert oa.models.retrieve("gpt-4o-mini").id == "gpt-4o-mini"
    assert [m.id for m in oa.models.list()] == ["emulated-model"]
    an = anthropic.Anthropic(base_url=base, api_key="x", max_retries=0)
    assert an.models.retrieve("claude-sonnet-4-5").id == "claude-sonnet-4-5"
    gm = genai.Client(api_key="x", http_options=types.HttpOptions(base_url=base))
    model = gm.models.get(model="gemini-2.5-flash")
    assert model.output_token_limit == 8192 and model.name == "models/gemini-2.5-flash"


def test_google_genai_llm_builds_without_token_limits(emu: VendorEmulator) -> None:
    """LlamaIndex's GoogleGenAI asks the server for the model's limits when it is built."""
    google_genai = pytest.importorskip("llama_index.llms.google_genai")
    types = pytest.importorskip("google.genai.types")
    llm = google_genai.GoogleGenAI(model="gemini-2.5-flash", api_key="x", http_options=
                                   types.HttpOptions(base_url=emu.base_url))
    assert llm.metadata.num_output == 8192


def test_function_agent_with_the_scenario_header_runs_once(
        emu: VendorEmulator) -> None:
    """The banner's LlamaIndex recipe: a fixed model name, the scenario in a header."""
    import asyncio

    llama_openai = pytest.importorskip("llama_index.llms.openai")
    shim = pytest.importorskip("llamaindex_toolstream")
    runs: list[str] = []

    def write_file(path: str, content: str) -> str:
        """Write a text file."""
        runs.append(path)
        return "ok"

    llm = llama_openai.OpenAI(model="gpt-4o-mini", api_key="x",
                              api_base=emu.base_url + "/v1",
                              default_headers={"x-toolstream-scenario": "single_call"})
    agent = shim.ToolstreamFunctionAgent(tools=[write_file], llm=llm)

    async def run() -> object:
        return await agent.run(user_msg="write my notes")

    result = asyncio.run(run())
    assert runs == ["/tmp/notes.txt"]
    assert len(emu.requests) == 2
    assert str(result) == "All done: 1 tool result(s) came back: write_file returned 'ok'."
