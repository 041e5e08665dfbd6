"""End to end: the same framework call with and without the toolstream shim.

Both sides run the whole stack in-process: the real ``openai`` client parses SSE served by an
``httpx.MockTransport`` (an emulator of ``POST /v1/chat/completions``: no socket, so the
numbers are not drowned in network noise), then the framework does what its users run:

- LangChain: ``ChatOpenAI(streaming=True).bind_tools([write_file]).invoke(...)`` against
  ``with_toolstream(ChatOpenAI(...)).bind_tools([write_file]).invoke(...)``.
- LlamaIndex: ``llm.stream_chat_with_tools(...)`` with ``get_tool_calls_from_response`` on every
  response (the ``FunctionAgent`` loop), for ``OpenAI`` against ``ToolstreamLLM(OpenAI)``; and
  the same stream read to its end with one ``get_tool_calls_from_response``.

Runs alternate (base, shim, base, shim, ...), at least five rounds, with the garbage collector off
inside each call (as everywhere in this harness); the best of each side is kept, so slow drift on a
shared machine hits both alike. Overhead = (shim - base) / base.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from benchmarks.timing import Budget, BudgetExceeded, alarm
from benchmarks.workloads import Workload, synthetic

log = logging.getLogger("benchmarks")

#: Past this size the un-shimmed FunctionAgent loop takes tens of seconds (quadratic re-parse).
FUNCTION_AGENT_LOOP_MAX = 16 * 1024
#: Alternating rounds (base, shim) before the best of each is taken, however slow a call is.
MIN_ROUNDS = 5

WRITE_FILE_SCHEMA = {
    "type": "function",
    "function": {
        "name": "write_file",
        "description": "Write a text file, replacing it when overwrite is true.",
        "parameters": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "content": {"type": "string"},
                "overwrite": {"type": "boolean"},
            },
            "required": ["path", "content"],
        },
    },
}


def sse_body(workload: Workload) -> bytes:
    """The workload as the HTTP body OpenAI streams: ``data:`` lines, then ``[DONE]``."""
    lines = [f"data: {event}\n\n" for event in workload.iter_events("wire")]
    lines.append("data: [DONE]\n\n")
    return "".join(lines).encode("utf-8")


def _http_client(body: bytes) -> Any:
    import httpx

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    return httpx.Client(transport=httpx.MockTransport(handler))


def _expected(workload: Workload) -> list[tuple[str, Any]]:
    return [(c.name, c.args) for c in workload.calls]


# --- LangChain ------------------------------------------------------------------------------


def _langchain_pair(workload: Workload) -> tuple[Callable[[], Any], Callable[[], Any]] | str:
    try:
        from langchain_openai import ChatOpenAI

        from langchain_toolstream import with_toolstream
    except ImportError as exc:
        return f"langchain_toolstream not importable: {exc}"
    from langchain_core.messages import HumanMessage

    body = sse_body(workload)
    messages = [HumanMessage("Write src/orders/service.py")]

    def model() -> Any:
        return ChatOpenAI(
            model="gpt-4.1", api_key="sk-bench", streaming=True, max_retries=0, http_client=_http_client(body)
        )

    base = model().bind_tools([WRITE_FILE_SCHEMA])
    shim = with_toolstream(model()).bind_tools([WRITE_FILE_SCHEMA])

    def run(runnable: Any) -> Callable[[], Any]:
        def call() -> Any:
            message = runnable.invoke(messages)
            return [(tc["name"], tc["args"]) for tc in message.tool_calls]

        return call

    return run(base), run(shim)


# --- LlamaIndex -----------------------------------------------------------------------------


def _llamaindex_pair(workload: Workload, per_chunk: bool) -> tuple[Callable[[], Any], Callable[[], Any]] | str:
    try:
        from llama_index.llms.openai import OpenAI

        from llamaindex_toolstream import ToolstreamLLM
    except ImportError as exc:
        return f"llamaindex_toolstream not importable: {exc}"
    from llama_index.core.llms import ChatMessage
    from llama_index.core.tools import FunctionTool

    def write_file(path: str, content: str, overwrite: bool = False) -> str:
        """Write a text file, replacing it when overwrite is true."""
        return path

    tool = FunctionTool.from_defaults(fn=write_file)
    body = sse_body(workload)
    history = [ChatMessage(role="user", content="Write src/orders/service.py")]

    def llm() -> Any:
        return OpenAI(model="gpt-4.1", api_key="sk-bench", max_retries=0, http_client=_http_client(body))

    def run(model: Any) -> Callable[[], Any]:
        def call() -> Any:
            last = None
            for last in model.stream_chat_with_tools([tool], chat_history=history):
                if per_chunk:
                    model.get_tool_calls_from_response(last, error_on_no_tool_call=False)
            calls = model.get_tool_calls_from_response(last, error_on_no_tool_call=False)
            return [(c.tool_name, c.tool_kwargs) for c in calls]

        return call

    return run(llm()), run(ToolstreamLLM(llm()))


# --- the section ----------------------------------------------------------------------------


def _best_pair(base: Callable[[], Any], shim: Callable[[], Any], budget: Budget) -> tuple[float, float, Any, Any, int]:
    import gc
    import time

    best = [float("inf"), float("inf")]
    outcomes: list[Any] = [None, None]
    spent = 0.0
    rounds = 0
    while rounds < max(budget.max_repeats, 1):
        for i, fn in enumerate((base, shim)):
            gc.collect(0)
            gc.disable()  # a full collection here walks every imported module (~0.4 s): noise
            try:
                with alarm(budget.cap_s):
                    start = time.perf_counter()
                    outcomes[i] = fn()
                    took = time.perf_counter() - start
            finally:
                gc.enable()
            best[i] = min(best[i], took)
            spent += took
        rounds += 1
        if rounds >= MIN_ROUNDS and spent >= budget.min_total_s * 2:
            break
    return best[0], best[1], outcomes[0], outcomes[1], rounds


def run(profile: Any) -> list[dict[str, Any]]:
    """Overhead rows for every framework and size of the profile (a note where unavailable)."""
    out: list[dict[str, Any]] = []
    for nbytes in profile.e2e_sizes:
        workload = synthetic("write_file", "openai-chat", nbytes, 4)
        cases: list[tuple[str, Any]] = [
            ("LangChain ChatOpenAI.invoke", lambda w=workload: _langchain_pair(w)),
            ("LlamaIndex OpenAI, read to end", lambda w=workload: _llamaindex_pair(w, per_chunk=False)),
        ]
        if nbytes <= FUNCTION_AGENT_LOOP_MAX:
            # the per-chunk get_tool_calls_from_response is quadratic without the shim
            cases.append(
                ("LlamaIndex OpenAI, FunctionAgent loop", lambda w=workload: _llamaindex_pair(w, per_chunk=True))
            )
        for framework, build in cases:
            row: dict[str, Any] = {"framework": framework, "workload": workload.label}
            try:
                pair = build()
                if isinstance(pair, str):
                    row["note"] = pair
                else:
                    base_s, shim_s, got_base, got_shim, rounds = _best_pair(*pair, profile.e2e_budget)
                    row.update(
                        base_s=base_s, shim_s=shim_s, rounds=rounds, overhead_pct=(shim_s - base_s) / base_s * 100
                    )
                    want = _expected(workload)
                    notes = []
                    if got_base != want:
                        notes.append("framework alone did not reassemble the call")
                    if got_shim != want:
                        notes.append("shim did not reassemble the call")
                    row["note"] = "; ".join(notes)
            except BudgetExceeded:
                row["note"] = f"a run exceeded the {profile.e2e_budget.cap_s:g} s cap"
            except Exception as exc:  # a broken shim is a finding to report, not a crash
                row["note"] = f"{type(exc).__name__}: {exc}"[:300]
            log.info(
                "  e2e %-40s %-28s %s",
                framework,
                workload.label,
                f"{row['overhead_pct']:+.1f} %" if "overhead_pct" in row else row["note"],
            )
            out.append(row)
    return out
