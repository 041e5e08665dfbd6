"""What DESIGN.md §4 says each real stream must produce, written down before any code ran.

The ``*.expected.json`` files beside the streams are *facts* (what the vendor sent); they do
not say which calls a strict assembler may commit. This table is the policy half: for every
stream of the families toolstream reads, the outcome the contract implies in the default config
(``mode: strict``, no tool registry), with a one-line reason naming the deciding event and
rule. ``lenient`` is filled only where ``mode: lenient`` changes the outcome (rule 4: a clean
end of stream without a finish reason counts as complete in lenient mode).

Every entry was derived from the stream's finish signal, error events and call shapes (and
the corpus MANIFEST quirks column), never from the implementation's output. Counts are of
*client* calls; server-side blocks (Anthropic ``server_tool_use`` / ``mcp_tool_use``,
Responses built-in items) are checked separately against ``Turn.server_calls`` (rule 11).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

__all__ = ["BONUS_NEAREST_FAMILY", "EXPECTATIONS", "Outcome"]


@dataclass(frozen=True)
class Outcome:
    """The decided shape of one stream's Turn.

    ``rejected`` counts FAILED/CANCELLED client calls; ``reasons`` is the set of their
    ``Reason`` values; ``complete`` is ``Turn.complete``.
    """

    committed: int
    rejected: int
    why: str
    reasons: Collection[str] = field(default_factory=frozenset)
    complete: bool = True
    lenient: Outcome | None = None

    def __post_init__(self) -> None:
        # Accept a plain set literal in the table but keep the value hashable and immutable.
        object.__setattr__(self, "reasons", frozenset(self.reasons))
        if self.rejected and not self.reasons:
            raise ValueError(f"a rejecting outcome needs its reasons: {self.why}")


_CHAT_OK = "finish_reason tool_calls (rule 4)"
_CHAT_STOP_TEXT = "finish_reason stop, text only: nothing to commit (rule 4)"
_RESP_OK = "response.completed (rule 4)"
_RESP_TEXT = "response.completed, text only: nothing to commit (rule 4)"
_ANT_OK = "message_stop + stop_reason tool_use (rule 4)"
_ANT_TEXT = "message_stop + stop_reason end_turn, text only: nothing to commit (rule 4)"
_GEM_OK = "finishReason STOP (rule 4)"
_GEM_TEXT = "finishReason STOP, text only: nothing to commit (rule 4)"
_COHERE_OK = "message-end finish_reason TOOL_CALL (rule 4)"

# Each key is "<api folder>/<file stem>".
EXPECTATIONS: dict[str, Outcome] = {
    # ---------------------------------------------------------------- OpenAI Chat Completions
    "openai-chat/alibaba-dashscope__alibaba-tool-call__0": Outcome(
        1, 0, f"{_CHAT_OK}; id '' on later deltas never overwrites (rule 2); no [DONE] needed"),
    "openai-chat/anthropic__anthropic-fallback-tool-call__0": Outcome(
        1, 0, f"{_CHAT_OK}; the only call sits at tool_call index 1 (key is the index, rule 1)"),
    "openai-chat/azure-openai__azure-gpt-5-mini_tool_streaming__0": Outcome(1, 0, _CHAT_OK),
    "openai-chat/azure-openai__azure-gpt-5-mini_tool_streaming__1": Outcome(0, 0, _CHAT_STOP_TEXT),
    "openai-chat/azure-openai__testazuretoolcallstreaming.test_azure_streaming_e-93bd2f__0":
        Outcome(1, 0, _CHAT_OK),
    "openai-chat/deepseek__deepseek-tool-call__0": Outcome(
        1, 0, f"{_CHAT_OK}; 11 fragments after reasoning_content; no [DONE] needed"),
    "openai-chat/groq__groq-kimi-k2_multi_tool_streaming__0": Outcome(
        2, 0, f"{_CHAT_OK}; two whole calls, one per chunk, indices 0 and 1"),
    "openai-chat/groq__groq-kimi-k2_multi_tool_streaming__1": Outcome(0, 0, _CHAT_STOP_TEXT),
    "openai-chat/groq__groq-tool-call__0": Outcome(
        1, 0, f"{_CHAT_OK}; whole '{{}}' args in one chunk; no [DONE] needed"),
    "openai-chat/groq__tool_use_failed_error_streaming__0": Outcome(
        0, 0, "error event mid-stream and no finish_reason: not complete; no call was opened",
        complete=False),
    "openai-chat/groq__tool_use_failed_error_streaming__1": Outcome(
        1, 0, f"{_CHAT_OK}; whole args in one chunk after reasoning"),
    "openai-chat/groq__tool_use_failed_error_streaming__2": Outcome(0, 0, _CHAT_STOP_TEXT),
    "openai-chat/llama.cpp-server__llama-cpp-gpt-oss_tool_streaming__0": Outcome(1, 0, _CHAT_OK),
    "openai-chat/llama.cpp-server__llama-cpp-gpt-oss_tool_streaming__1": Outcome(
        0, 0, _CHAT_STOP_TEXT),
    "openai-chat/mistral__mistral-incremental-tool-call__0": Outcome(
        1, 0, f"{_CHAT_OK}; name '' on the continuation never overwrites (rule 2)"),
    "openai-chat/mistral__mistral-tool-call__0": Outcome(
        1, 0, f"{_CHAT_OK} in the same chunk as the whole call; no index: the id keys it (rule 1)"),
    "openai-chat/mistral__synchronous_streaming_chat_completions_with_tool-b1e02a__0": Outcome(
        1, 0, f"{_CHAT_OK}; no tool_call index: the id keys it (rule 1)"),
    "openai-chat/ollama__openai_chat_model_complete_ollama-return-1-2-3-4-3a5e86__0": Outcome(
        1, 0, "finish_reason stop is a normal end (rule 4); no index: the id keys it (rule 1)"),
    "openai-chat/openai__chat_completion_multiple_tools_streaming_with_content__0": Outcome(
        2, 0, f"{_CHAT_OK}; two parallel calls to the same tool stay two calls (rule 1)"),
    "openai-chat/openai__complex_agent_run__0": Outcome(
        2, 0, f"{_CHAT_OK}; no-arg calls: '' then '{{}}' concatenates to '{{}}' (rule 3)"),
    "openai-chat/openai__complex_agent_run__1": Outcome(1, 0, _CHAT_OK),
    "openai-chat/openai__complex_agent_run__2": Outcome(
        1, 0, f"{_CHAT_OK}; 54 fragments concatenated in order (rule 3)"),
    "openai-chat/openai__decorator_return_pydantic_model__0": Outcome(
        1, 0, "forced tool_choice ends with finish_reason stop: a normal end (rule 4)"),
    "openai-chat/openai__fixtures_streaming__0": Outcome(
        1, 0, "forced tool_choice ends with finish_reason stop: a normal end (rule 4)"),
    "openai-chat/openai__openai-gpt-4o_multi_tool_streaming__0": Outcome(2, 0, _CHAT_OK),
    "openai-chat/openai__openai-gpt-4o_multi_tool_streaming__1": Outcome(0, 0, _CHAT_STOP_TEXT),
    "openai-chat/openrouter__anthropic_multi_tool_streaming__0": Outcome(2, 0, _CHAT_OK),
    "openai-chat/openrouter__anthropic_multi_tool_streaming__1": Outcome(0, 0, _CHAT_STOP_TEXT),
    "openai-chat/openrouter__kimi_multi_tool_streaming__0": Outcome(
        2, 0, f"{_CHAT_OK}; 13 fragments per call after reasoning"),
    "openai-chat/openrouter__kimi_multi_tool_streaming__1": Outcome(0, 0, _CHAT_STOP_TEXT),
    "openai-chat/openrouter__openrouter_chat_model_complete_streamed_response__0": Outcome(
        1, 0, f"{_CHAT_OK}; text before the call"),
    "openai-chat/openrouter__openrouter_stream_error__0": Outcome(
        0, 0, "finish_reason length then an error object: not complete; no call opened",
        complete=False),
    "openai-chat/openrouter__tools_streaming_variant_a__0": Outcome(
        0, 1, "no finish_reason at all, only [DONE]: no completion proof (rule 4)",
        reasons={"stream_truncated"}, complete=False,
        lenient=Outcome(
            1, 0, "lenient: a clean end without a finish reason counts as complete (rule 4); "
            "repeated id '0' and name are not concatenated (rule 2)")),
    "openai-chat/openrouter__tools_streaming_variant_a__1": Outcome(0, 0, _CHAT_STOP_TEXT),
    "openai-chat/openrouter__tools_streaming_variant_c__0": Outcome(
        1, 0, f"{_CHAT_OK}; first chunk has a name and no arguments key (rule 3)"),
    "openai-chat/openrouter__tools_streaming_variant_c__1": Outcome(0, 0, _CHAT_STOP_TEXT),
    "openai-chat/openrouter__tools_streaming_variant_d__0": Outcome(
        1, 0, f"{_CHAT_OK}; arguments null = no text: absent arguments are {{}} (rule 5)"),
    "openai-chat/openrouter__tools_streaming_variant_d__1": Outcome(0, 0, _CHAT_STOP_TEXT),
    "openai-chat/vercel-ai-gateway__claude-sonnet-4_multi_tool_streaming__0": Outcome(
        2, 0, _CHAT_OK),
    "openai-chat/vercel-ai-gateway__claude-sonnet-4_multi_tool_streaming__1": Outcome(
        0, 0, _CHAT_STOP_TEXT),
    "openai-chat/vercel-ai-gateway__gemini-2.5-flash_multi_tool_streaming__0": Outcome(
        2, 0, _CHAT_OK),
    "openai-chat/vercel-ai-gateway__gemini-2.5-flash_multi_tool_streaming__1": Outcome(
        0, 0, _CHAT_STOP_TEXT),
    "openai-chat/xai__xai-grok-4-fast_multi_tool_streaming__0": Outcome(
        2, 0, f"{_CHAT_OK}; whole calls per chunk"),
    "openai-chat/xai__xai-grok-4-fast_multi_tool_streaming__1": Outcome(0, 0, _CHAT_STOP_TEXT),
    "openai-chat/xai__xai-tool-call__0": Outcome(1, 0, f"{_CHAT_OK}; no [DONE] needed"),
    # ---------------------------------------------------------------------- OpenAI Responses
    "openai-responses/azure-openai__azure-gpt-5-mini_tool_streaming__0": Outcome(
        1, 0, f"{_RESP_OK}; done event restates the deltas exactly"),
    "openai-responses/azure-openai__azure-gpt-5-mini_tool_streaming__1": Outcome(
        0, 0, _RESP_TEXT),
    "openai-responses/azure-openai__azure-tool-call.1__0": Outcome(1, 0, _RESP_OK),
    "openai-responses/lmstudio__lmstudio-tool-call.1__0": Outcome(
        1, 0, f"{_RESP_OK}; no argument deltas: the done event's arguments are taken (rule 3)"),
    "openai-responses/openai__openai-custom-tool.1__0": Outcome(
        1, 0, f"{_RESP_OK}; custom_tool_call commits as {{'input': text}} (rule 11)"),
    "openai-responses/openai__openai-error.1__0": Outcome(
        0, 0, "error event then response.failed: not complete; no call opened (rule 4)",
        complete=False),
    "openai-responses/openai__openai-gpt-5_multi_tool_streaming__0": Outcome(
        2, 0, f"{_RESP_OK}; two function_call items keyed by output item (rule 1)"),
    "openai-responses/openai__openai-gpt-5_multi_tool_streaming__1": Outcome(0, 0, _RESP_TEXT),
    "openai-responses/openai__openai-reasoning-encrypted-content.1__0": Outcome(
        1, 0, f"{_RESP_OK}; reasoning item before the call"),
    "openai-responses/openai__openai-reasoning-encrypted-content.1__1": Outcome(1, 0, _RESP_OK),
    "openai-responses/openai__openai-reasoning-encrypted-content.1__2": Outcome(1, 0, _RESP_OK),
    "openai-responses/openai__openai-reasoning-encrypted-content.1__3": Outcome(
        0, 0, _RESP_TEXT),
    "openai-responses/openai__openai_native_tool_search_streaming__0": Outcome(
        1, 0, f"{_RESP_OK}; tool_search_call is a server item, not a client call (rule 11)"),
    "openai-responses/openai__openai_native_tool_search_streaming__1": Outcome(0, 0, _RESP_TEXT),
    "openai-responses/openai__openai_responses_phase_streamed_on_part_start__0": Outcome(
        1, 0, f"{_RESP_OK}; reasoning + message items before the call"),
    "openai-responses/openai__openai_responses_phase_streamed_on_part_start__1": Outcome(
        0, 0, _RESP_TEXT),
    "openai-responses/openai__openai_responses_stream__0": Outcome(1, 0, _RESP_OK),
    "openai-responses/openai__openai_responses_stream__1": Outcome(0, 0, _RESP_TEXT),
    "openai-responses/openai__programmatic-tool-calling.1__0": Outcome(
        1, 0, f"{_RESP_OK}; the program item runs server-side (rule 11), its function_call "
        "is a client call"),
    # ------------------------------------------------------------------------------ Anthropic
    "anthropic/anthropic__anthropic-code-execution-20250825.2__0": Outcome(
        0, 0, f"{_ANT_TEXT}; 3 server_tool_use blocks go to server_calls (rule 11)"),
    "anthropic/anthropic__anthropic-code-execution-20250825.pptx-skill__0": Outcome(
        0, 0, f"{_ANT_TEXT}; 16 server_tool_use blocks go to server_calls (rule 11)"),
    "anthropic/anthropic__anthropic-json-tool.1__0": Outcome(1, 0, _ANT_OK),
    "anthropic/anthropic__anthropic-mcp.1__0": Outcome(
        0, 0, f"{_ANT_TEXT}; the mcp_tool_use block goes to server_calls (rule 11)"),
    "anthropic/anthropic__anthropic-programmatic-tool-calling.1__0": Outcome(
        1, 0, f"{_ANT_OK}; tool_use complete in content_block_start.input (rule 3); "
        "code_execution is a server call (rule 11)"),
    **{
        f"anthropic/anthropic__anthropic-programmatic-tool-calling.1__{n}": Outcome(
            1, 0, "complete tool_use inside message_start.content (rule 3); stop_reason "
            "tool_use carried by message_start, then message_stop (rule 4)")
        for n in range(1, 14)
    },
    "anthropic/anthropic__anthropic-programmatic-tool-calling.1__14": Outcome(0, 0, _ANT_TEXT),
    "anthropic/anthropic__anthropic-tool-no-args__0": Outcome(
        1, 0, f"{_ANT_OK}; only partial_json '': empty arguments are {{}} (rule 5)"),
    "anthropic/anthropic__anthropic-web-fetch-tool-20260209.1__0": Outcome(
        0, 0, f"{_ANT_TEXT}; both blocks are server_tool_use (rule 11)"),
    "anthropic/anthropic__anthropic_mcp_servers_stream__0": Outcome(
        0, 0, f"{_ANT_TEXT}; mcp_tool_use goes to server_calls (rule 11)"),
    "anthropic/anthropic__anthropic_native_tool_search_streaming__0": Outcome(
        1, 0, f"{_ANT_OK}; tool_search server block first (rule 11), then one client tool_use"),
    "anthropic/anthropic__anthropic_native_tool_search_streaming__1": Outcome(0, 0, _ANT_TEXT),
    "anthropic/anthropic__anthropic_text_editor_code_execution_tool_stream__0": Outcome(
        0, 0, f"{_ANT_TEXT}; 3 server_tool_use blocks (rule 11)"),
    "anthropic/anthropic__anthropic_tools__0": Outcome(
        2, 0, f"{_ANT_OK}; two no-arg calls ('' only): {{}} each (rule 5)"),
    "anthropic/anthropic__anthropic_tools__1": Outcome(0, 0, _ANT_TEXT),
    "anthropic/anthropic__anthropic_tools_streaming_legacy__0": Outcome(
        2, 0, f"{_ANT_OK}; text block then two tool_use blocks"),
    "anthropic/anthropic__claude-sonnet-4_complex_object_streaming__0": Outcome(
        1, 0, f"{_ANT_OK}; nested object in 26 fragments"),
    "anthropic/anthropic__claude-sonnet-4_multi_tool_streaming__0": Outcome(2, 0, _ANT_OK),
    "anthropic/anthropic__claude-sonnet-4_multi_tool_streaming__1": Outcome(0, 0, _ANT_TEXT),
    "anthropic/google-vertex__vertex-claude-3-7-sonnet_tool_streaming__0": Outcome(
        1, 0, f"{_ANT_OK}; via Vertex streamRawPredict"),
    "anthropic/google-vertex__vertex-claude-3-7-sonnet_tool_streaming__1": Outcome(
        0, 0, _ANT_TEXT),
    # --------------------------------------------------------------------------------- Gemini
    "gemini/google__gemini-2.5-flash_multi_tool_streaming__0": Outcome(
        2, 0, f"{_GEM_OK} in the same chunk as two whole functionCall parts; ids synthesized "
        "(rule 5)"),
    "gemini/google__gemini-2.5-flash_multi_tool_streaming__1": Outcome(0, 0, _GEM_TEXT),
    "gemini/google__gemini-3-pro-preview_multi_tool_streaming__0": Outcome(
        2, 0, f"{_GEM_OK}; functionCall.id sent, kept as the call id"),
    "gemini/google__gemini-3-pro-preview_multi_tool_streaming__1": Outcome(0, 0, _GEM_TEXT),
    "gemini/google__gemini_tools__0": Outcome(
        1, 0, f"{_GEM_OK}; structured args {{}} after a thought part"),
    "gemini/google__gemini_tools__1": Outcome(1, 0, f"{_GEM_OK}; structured args {{}}"),
    "gemini/google__gemini_tools__2": Outcome(0, 0, _GEM_TEXT),
    "gemini/google__google-stream-no-args-tool-call__0": Outcome(
        4, 0, f"{_GEM_OK}; functionCall{{name}} without args is a whole no-arg call ({{}}); "
        "three partialArgs calls each end with an empty functionCall (rule 1)"),
    "gemini/google__google-stream-tool-call-arguments__0": Outcome(
        2, 0, f"{_GEM_OK}; two partialArgs calls, each ended by an empty functionCall (rule 1)"),
    "gemini/google__google-stream-tool-call-array-arguments-missing-t-0f0756__0": Outcome(
        1, 0, f"{_GEM_OK}; no empty functionCall, but the last part drops willContinue, which "
        "ends the call (rule 1)"),
    "gemini/google__google-tool-call-gemini3__0": Outcome(1, 0, _GEM_OK),
    "gemini/google__google_model_iter_stream__0": Outcome(
        1, 0, f"{_GEM_OK} in the same chunk as the whole functionCall"),
    "gemini/google__google_model_iter_stream__1": Outcome(
        1, 0, f"{_GEM_OK} in the same chunk as the whole functionCall"),
    "gemini/google__google_model_iter_stream__2": Outcome(0, 0, _GEM_TEXT),
    "gemini/google__google_streaming_tool_call_thought_signature__0": Outcome(
        1, 0, f"{_GEM_OK}; no-arg call args {{}}"),
    "gemini/google__google_streaming_tool_call_thought_signature__1": Outcome(0, 0, _GEM_TEXT),
    "gemini/google__native_output_with_function_tools_stream__0": Outcome(
        1, 0, f"{_GEM_OK}; functionCall.id sent; args {{}}"),
    "gemini/google__native_output_with_function_tools_stream__1": Outcome(0, 0, _GEM_TEXT),
    "gemini/google__response_with_multiple_tool_calls-true__0": Outcome(
        2, 0, f"{_GEM_OK}; two whole calls to the same tool in one chunk stay two calls (rule 1)"),
    # ------------------------------------------------------------------------- Bedrock Converse
    "bedrock-converse/aws-bedrock__bedrock_model_iter_stream__0": Outcome(
        1, 0, "messageStop stopReason tool_use (rule 4); toolUse block at contentBlockIndex 1 after a "
        "text block, input in one fragment; metadata.usage after messageStop"),
    "bedrock-converse/aws-bedrock__bedrock_model_iter_stream__1": Outcome(
        0, 0, "messageStop stopReason end_turn, text only: nothing to commit (rule 4)"),
    # ----------------------------------------------------------------------------------- Cohere
    "cohere/cohere__cohere-empty-tool-call__0": Outcome(
        1, 0, f"{_COHERE_OK}; a no-arg call: tool-call-start with arguments \"\" and no delta is {{}}"),
    "cohere/cohere__cohere-tool-call__0": Outcome(
        2, 0, f"{_COHERE_OK}; two calls by index, each closed by tool-call-end (rule 1)"),
    "cohere/cohere__cohere_v2_chat_legacy_with_tool_calls_and_streaming__0": Outcome(
        2, 0, f"{_COHERE_OK}; two calls by index; arguments with newlines kept as sent (rule 3)"),
}

# Bonus folders are not target families: the test only forces the nearest family on them
# and checks that feeding never raises and nothing commits.
BONUS_NEAREST_FAMILY: dict[str, str] = {
    # The Interactions API is Google's; its events are not generateContent chunks.
    "gemini-interactions": "gemini",
}
