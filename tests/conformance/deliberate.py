"""Where a stock LangChain agent and one with the gate added differ, on LangChain's own tests.

``DELIBERATE``: the differences the contract asks for. Each entry: the upstream tests it covers
(``distribution:path::name``, ``fnmatch`` patterns), what differs, why it must, the rule of
docs/DESIGN.md it follows, and this project's test of the difference. At most 15 entries
(issue 36). docs/langchain.md's "Differences from the stock agent" table is this list
(``tests/langchain/test_lc_differences.py`` checks that they are equal).

``OPEN``: differences that are not deliberate and are not fixed yet, each with the issue that
tracks it. They are listed so the session stays a gate for everything else; an entry whose
tests pass leaves the list (``run.py`` fails on a stale entry of either list).
"""

from __future__ import annotations

from typing import NamedTuple

_AGENTS = "langchain:tests/unit_tests/agents/"
_CORE = "langchain-core:tests/unit_tests/fake/test_fake_chat_model.py::"


class Difference(NamedTuple):
    tests: tuple[str, ...]
    differs: str
    why: str
    rule: str
    test: str


class Open(NamedTuple):
    tests: tuple[str, ...]
    differs: str
    issue: int


DELIBERATE: tuple[Difference, ...] = (
    Difference(
        tests=(_CORE + "test_generic_fake_chat_model_*", _CORE + "test_callback_handlers",
               _CORE + "test_fake_list_chat_model_batch", _CORE + "test_chat_model_inputs",
               _AGENTS + "middleware/core/test_framework.py::test_create_agent_invoke*"),
        differs="a gated message carries the gate's decision record "
                "(`response_metadata[\"toolstream\"]`), and a stream ends with one more chunk "
                "that holds it and the committed calls",
        why="the verdict on a turn travels with its message, as plain JSON that survives a "
            "checkpoint; calls are released only once the turn has ended",
        rule="§6 Framework shims",
        test="tests/langchain/test_lc_differences.py::test_a_gated_message_carries_its_record",
    ),
    Difference(
        tests=(_AGENTS + "middleware/core/test_decorators.py::test_async_middleware_with_can_jump_to_*",
               _AGENTS + "middleware/core/test_diagram.py::test_create_agent_diagram",
               _AGENTS + "middleware/core/test_framework.py::test_jump_to_is_ephemeral",
               _AGENTS + "test_injected_runtime_create_agent.py::test_tool_runtime_config_access"),
        differs="the agent's graph has the gate's nodes, and a tool node even with no tools: "
                "its snapshot and diagram change, a run takes more steps (a tight "
                "`recursion_limit` is reached sooner), and a hook's `jump_to` is routed as in "
                "an agent with tools",
        why="the gate is a middleware that wraps tool calls (it refuses a call it did not "
            "commit), and LangChain gives such an agent a tool node; a snapshot taken "
            "without it cannot match",
        rule="§6 Framework shims",
        test="tests/langchain/test_lc_differences.py::test_the_graph_has_the_gates_node",
    ),
    Difference(
        tests=(_AGENTS + "test_create_agent_tool_validation.py::test_create_agent_error*",
               _AGENTS + "test_create_agent_tool_validation.py::test_tool_invocation_error_excludes_injected_state"),
        differs="a call whose arguments fail the tool's schema is answered by the gate, in its "
                "words, before the tool node sees it (not by the tool's pydantic error)",
        why="a call runs only once it is complete and valid for its tool; the answer names the "
            "reason in the one text both shims give",
        rule="§4.5 Finalize once, §4.9 Pairing",
        test="tests/langchain/test_lc_injected.py::test_the_models_own_parameters_are_still_checked",
    ),
    Difference(
        tests=(_AGENTS + "middleware/core/test_wrap_tool_call.py::test_wrap_tool_call_modify_args",
               *(_AGENTS + "middleware/implementations/test_human_in_the_loop.py::" + name for name in (
                   "test_per_call_edit_leaves_validation_and_injected_args_to_the_tool",
                   "test_per_call_pauses_once_per_gated_call_and_applies_answers_by_id",
                   "test_per_call_rejects_a_bad_answer_without_saving_it*",
                   "test_per_call_works_with_ainvoke?edit?",
                   "test_resume_with_each_decision?per_call-edit*"))),
        differs="a middleware listed before the gate that changes a committed call in "
                "`wrap_tool_call` (a developer's, or `HumanInTheLoopMiddleware`'s per-call "
                "edit) is refused `[arguments_changed]`; listed after the gate, its change runs",
        why="a call runs only with the arguments the vendor finished or a recorded human "
            "decision; a change made before the gate's check is neither",
        rule="§6 Framework shims",
        test="tests/langchain/test_lc_differences.py::test_a_call_is_changed_after_the_gate_not_before",
    ),
    Difference(
        tests=(_AGENTS + "middleware/core/test_dynamic_tools.py::test_dynamic_tool_without_handler_raises_error*",
               _AGENTS + "middleware/core/test_tools.py::test_unknown_tool_raises_error"),
        differs="a tool a middleware adds to the model request, unregistered and unhandled, is "
                "not refused with LangChain's `ValueError` at the model call: its calls are "
                "answered \"not a valid tool\", as in a stock agent with any middleware that "
                "wraps tool calls",
        why="the gate wraps tool calls (it refuses a call it did not commit), and LangChain "
            "skips the check for every such agent; whether another middleware handles the "
            "tool is not visible to the gate",
        rule="§6 Framework shims",
        test="tests/langchain/test_lc_differences.py::test_an_unregistered_tool_is_answered_not_raised",
    ),
    Difference(
        tests=(_AGENTS + "test_response_format_integration.py::test_*",),
        differs="`invoke` of a real model streams (`stream: true`): cassettes recorded whole "
                "do not match",
        why="the gate proves a call finished on the vendor's streamed events; "
            "`disable_streaming=True` on the model sends the whole request again",
        rule="§4.4 Completion needs proof",
        test="tests/langchain/test_lc_differences.py::test_invoke_streams_and_disable_streaming_does_not",
    ),
    Difference(
        tests=(_AGENTS + "middleware/implementations/test_human_in_the_loop.py::test_per_call_needs_a_tool_call_id",
               _AGENTS + "middleware/implementations/test_human_in_the_loop.py::"
                         "test_per_call_same_tool_twice_routes_each_answer_to_its_own_call"),
        differs="a call with no id (`None`, or `\"\"` for the same tool called twice) on a wire "
                "whose protocol has ids is refused `missing_id_or_name` and becomes LangChain's "
                "invalid tool call under the gate's id: per-call `HumanInTheLoopMiddleware` "
                "never sees it (no 'has no ID' error, no pause)",
        why="an answer names its call by id: a call the vendor sent without one cannot be "
            "answered unambiguously, so it never runs and is answered once under a stable "
            "synthesized id",
        rule="§4.5 Finalize once",
        test="tests/langchain/test_lc_differences.py::test_an_id_less_call_is_refused_before_the_reviewer",
    ),
)

OPEN: tuple[Open, ...] = ()
