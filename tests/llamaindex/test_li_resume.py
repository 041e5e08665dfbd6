"""A cancelled ``ToolstreamFunctionAgent`` run, continued on the same context (issue 37).

The run is cancelled (``handler.cancel_run()``) at four points: before the first chunk,
mid-arguments, after the call committed (the stream's last frame still held), during the
tool. The context is then continued two ways: a new run (``run(user_msg=..., ctx=ctx)``) and a
resume (``run(ctx=ctx)``). Each time the tools' executions are counted across the cancel and
the continue, and the request the continue sent is read from the emulator: the first user
message is there, every call id is answered, and the emulator (which refuses an unanswered
call with the vendor's 400) accepted it. The stock ``FunctionAgent`` is run on the first case
for reference: it runs the cancelled tool a second time.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from li_helpers import THIRD_PARTY_WARNINGS, Recorder, make_llm, unpaired
from llama_index.core.agent.workflow import AgentInput, FunctionAgent, ToolCall
from llama_index.core.workflow import Context
from test_parity import assert_legal, conversation, gate_texts
from toolstream_core.testing import VendorEmulator
from workflows.context.serializers import JsonSerializer
from workflows.errors import WorkflowCancelledByUser

from llamaindex_toolstream import CallCommittedEvent, CallProgressEvent, ToolstreamFunctionAgent

pytestmark = THIRD_PARTY_WARNINGS

POINTS = ("before_first_chunk", "mid_arguments", "after_commit", "during_tool")
APIS = ("openai-chat", "anthropic")


def _reached(point: str, event: Any) -> bool:
    wanted = {"before_first_chunk": AgentInput, "mid_arguments": CallProgressEvent,
              "after_commit": CallCommittedEvent, "during_tool": ToolCall}[point]
    return isinstance(event, wanted)


async def cancelled_run(agent: Any, api: str, point: str, emu: VendorEmulator,
                        recorder: Recorder) -> Context:
    """Run ``agent`` on "go" and cancel it at ``point``; its context."""
    hold = None
    if point == "mid_arguments":
        emu.queue(api, "large_args")
    elif point == "after_commit":
        hold = emu.queue_held(api, "single_call")
    else:
        emu.queue(api, "single_call")
    handler = agent.run(user_msg="go")
    async for event in handler.stream_events():
        if _reached(point, event):
            while point == "during_tool" and not recorder.runs:
                await asyncio.sleep(0.01)  # the tool has begun: its entry is written
            await handler.cancel_run()
            break
    # the run ends cancelled (the handler's result task itself, when the cancel lands in the
    # model call's stream)
    with pytest.raises((WorkflowCancelledByUser, asyncio.CancelledError)):
        await asyncio.wait_for(handler, 10)
    if hold is not None:
        hold.release.set()
    ctx: Context = handler.ctx
    return ctx


async def continue_run(agent: Any, ctx: Context, user_msg: str | None) -> tuple[Any, list[Any]]:
    """Run ``agent`` again on ``ctx`` (a resume when ``user_msg`` is None); (its result or the
    error, the memory's messages after it)."""
    handler = agent.run(user_msg=user_msg, ctx=ctx) if user_msg else agent.run(ctx=ctx)
    try:
        result: Any = await asyncio.wait_for(handler, 20)
    except Exception as exc:  # asserted by the caller, never hidden
        result = exc
    memory = await handler.ctx.store.get("memory", default=None)
    return result, (await memory.aget_all() if memory is not None else [])


def user_texts(api: str, body: dict[str, Any]) -> list[str]:
    """The user's own texts in a request, in order."""
    texts: list[str] = []
    for message in body.get("messages") or []:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        parts = [content] if isinstance(content, str) else \
            [b.get("text") for b in content or [] if isinstance(b, dict) and b.get("type") == "text"]
        texts += [p for p in parts if isinstance(p, str)]
    return texts


@pytest.mark.parametrize("mode", ["new", "resume"])
@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize("api", APIS)
async def test_a_cancelled_run_continues_and_runs_nothing_twice(api: str, point: str, mode: str,
                                                               emu: VendorEmulator) -> None:
    recorder = Recorder(delay=5.0 if point == "during_tool" else 0.0)
    agent = ToolstreamFunctionAgent(tools=recorder.tools(), llm=make_llm(api, emu.base_url))
    ctx = await cancelled_run(agent, api, point, emu, recorder)
    ran_before = list(recorder.runs)
    emu.clear()
    emu.queue(api, "text")

    result, memory = await continue_run(agent, ctx, "again" if mode == "new" else None)

    assert not isinstance(result, BaseException), result
    # at most once: the cancelled call's tool ran only if it had begun, and never again
    assert ran_before == ([("write_file", recorder.runs[0][1])] if point == "during_tool" else [])
    assert recorder.runs == ran_before
    # the continue's one request: legal, accepted, the conversation whole
    [request] = emu.requests
    assert emu.statuses == [200]
    assert_legal(api, request.body)
    assert user_texts(api, request.body) == (["go", "again"] if mode == "new" else ["go"])
    assert unpaired(memory) == []
    texts = gate_texts(api, request.body)
    if point == "during_tool":
        [text] = texts
        # a resume answers the call that began "not repeated"; a new run says it was cancelled
        assert text.endswith("[not_repeated]") if mode == "resume" else "has no result" in text
        assert "'write_file'" in text


async def test_a_restored_context_does_not_run_a_started_call_again(emu: VendorEmulator) -> None:
    """The context saved as JSON while the tool ran (another worker, the in-memory runtime):
    the restored run replays the tool step, the ledger in the context answers it."""
    recorder = Recorder(delay=5.0)
    first = ToolstreamFunctionAgent(tools=recorder.tools(), llm=make_llm("openai-chat", emu.base_url))
    ctx = await cancelled_run(first, "openai-chat", "during_tool", emu, recorder)
    saved = json.dumps(ctx.to_dict(serializer=JsonSerializer()))
    emu.clear()
    emu.queue("openai-chat", "text")

    second = ToolstreamFunctionAgent(tools=recorder.tools(),
                                     llm=make_llm("openai-chat", emu.base_url))
    restored = Context.from_dict(second, json.loads(saved), serializer=JsonSerializer())
    result, memory = await continue_run(second, restored, None)

    assert not isinstance(result, BaseException), result
    assert [name for name, _ in recorder.runs] == ["write_file"]
    [request] = emu.requests
    assert_legal("openai-chat", request.body)
    assert user_texts("openai-chat", request.body) == ["go"]
    [text] = gate_texts("openai-chat", request.body)
    assert text.endswith("[not_repeated]") and "started" in text
    assert unpaired(memory) == []


async def test_a_repeatable_tool_runs_again_on_resume(emu: VendorEmulator) -> None:
    recorder = Recorder(delay=5.0)
    tools = recorder.tools()
    for tool in tools:
        tool.toolstream_repeatable = True  # type: ignore[attr-defined]
    agent = ToolstreamFunctionAgent(tools=tools, llm=make_llm("openai-chat", emu.base_url))
    ctx = await cancelled_run(agent, "openai-chat", "during_tool", emu, recorder)
    recorder.delay = 0.0
    emu.clear()
    emu.queue("openai-chat", "text")
    result, _ = await continue_run(agent, ctx, None)
    assert not isinstance(result, BaseException), result
    assert [name for name, _ in recorder.runs] == ["write_file", "write_file"]
    steps = conversation("openai-chat", emu.requests[0].body)
    assert [kind for kind, _ in steps] == ["other", "calls", "results"]
    assert gate_texts("openai-chat", emu.requests[0].body) == []


async def test_stock_runs_the_cancelled_tool_again(emu: VendorEmulator) -> None:
    """For reference: the stock agent replays the cancelled tool step into the new run."""
    recorder = Recorder(delay=1.0)
    agent = FunctionAgent(tools=recorder.tools(), llm=make_llm("openai-chat", emu.base_url))
    ctx = await cancelled_run(agent, "openai-chat", "during_tool", emu, recorder)
    emu.clear()
    emu.queue("openai-chat", "text", "text")
    await continue_run(agent, ctx, "again")
    assert [name for name, _ in recorder.runs] == ["write_file", "write_file"]


@pytest.mark.parametrize("reader", ["await", "stream"])
async def test_cancelling_the_consuming_task(reader: str, emu: VendorEmulator) -> None:
    """The task that awaits the handler, cancelled while the tool runs, cancels the run as
    ``cancel_run()`` does (the tool is not waited for; a new run goes on without running it
    again). A task that only reads the event stream stops nothing: the run ends on its own."""
    recorder = Recorder(delay=1.0)
    agent = ToolstreamFunctionAgent(tools=recorder.tools(), llm=make_llm("openai-chat", emu.base_url))
    emu.queue("openai-chat", "single_call", "text")
    handler = agent.run(user_msg="go")

    async def consume() -> Any:
        if reader == "stream":
            async for _ in handler.stream_events():
                pass
        return await handler

    task = asyncio.ensure_future(consume())
    while not recorder.runs:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    if reader == "stream":
        assert not handler.done()  # still running, in the background
        await asyncio.wait_for(handler, 20)
        assert len(emu.requests) == 2  # the tool returned and the model was asked again
    else:
        assert handler.done() and len(emu.requests) == 1
    emu.clear()
    emu.queue("openai-chat", "text")
    result, memory = await continue_run(agent, handler.ctx, "again")
    assert not isinstance(result, BaseException), result
    assert [name for name, _ in recorder.runs] == ["write_file"]
    [request] = emu.requests
    assert_legal("openai-chat", request.body)
    assert user_texts("openai-chat", request.body) == ["go", "again"]
    texts = gate_texts("openai-chat", request.body)
    assert len(texts) == (1 if reader == "await" else 0)
    assert unpaired(memory) == []


# -- the conversation's copy: an append log ----------------------------------------------------

RUNS = 5  # runs on one context, each a tool turn and an answer: the conversation grows


async def test_a_long_conversation_writes_each_message_of_the_copy_once(
        emu: VendorEmulator, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every model step is given the whole memory; the store is handed only the messages added
    since the last write (O(added) per step, not the conversation): a chunk for the run's user
    message, one for its turn. The copy is the whole conversation at the end, and a context
    restored from it goes on legally."""
    from workflows.context.state_store import InMemoryStateStore

    from llamaindex_toolstream._resume import CONVERSATION_KEY, saved_conversation

    written: list[tuple[int, int]] = []  # (messages, bytes) of each write of the copy
    real_set = InMemoryStateStore.set

    async def counting_set(self: Any, path: str, value: Any) -> None:
        if path.split(".")[0] == CONVERSATION_KEY:
            chunks = value.values() if isinstance(value, dict) else [value]
            messages = [m for chunk in chunks for m in chunk]
            written.append((len(messages), sum(len(m.model_dump_json()) for m in messages)))
        await real_set(self, path, value)

    monkeypatch.setattr(InMemoryStateStore, "set", counting_set)
    recorder = Recorder()
    agent = ToolstreamFunctionAgent(tools=recorder.tools(), llm=make_llm("openai-chat", emu.base_url))
    ctx: Context | None = None
    for n in range(RUNS):
        emu.queue("openai-chat", "single_call", "text")
        handler = agent.run(user_msg=f"go {n}", ctx=ctx)
        await handler
        ctx = handler.ctx
    assert ctx is not None
    memory = await (await ctx.store.get("memory")).aget_all()
    saved = await saved_conversation(ctx)

    assert len(recorder.runs) == RUNS and len(emu.requests) == 2 * RUNS
    assert [m.model_dump(mode="json") for m in saved] == [m.model_dump(mode="json") for m in memory]
    assert sum(n for n, _ in written) == len(saved)  # no message written twice
    assert len(written) == 2 * RUNS  # the user's message, the run's turn
    turns = [size for n, size in written if n > 1]
    assert len(turns) == RUNS and max(turns) < 2 * min(turns)  # flat as the conversation grows

    # the copy is what a restored context puts back
    restored = Context.from_dict(agent, ctx.to_dict(serializer=JsonSerializer()),
                                 serializer=JsonSerializer())
    emu.queue("openai-chat", "text")
    result, after = await continue_run(agent, restored, "again")
    assert not isinstance(result, BaseException), result
    body = emu.requests[-1].body
    assert_legal("openai-chat", body)
    users = [m["content"] for m in body["messages"] if m["role"] == "user"]
    assert users == [*(f"go {n}" for n in range(RUNS)), "again"]
    assert unpaired(after) == []
