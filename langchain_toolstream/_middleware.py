"""``ToolstreamMiddleware``: the gate inside ``langchain.agents.create_agent``.

One line (``middleware=[ToolstreamMiddleware()]``) changes three things in the agent loop:

1. ``wrap_model_call``: the model runs through ``with_toolstream`` (always streamed, so the gate
   judges the vendor's own events even when the agent calls ``invoke``); the AIMessage carries
   only committed calls in ``tool_calls``.
2. In the same model turn, every rejected call is answered by one ``ToolMessage(status="error")``
   with its real id and the reason, so the next request to the vendor is legal. If nothing was
   committed the agent goes back to the model (bounded by ``max_retries``) instead of ending,
   so the model can retry; a cancelled turn ends the loop. An agent that asks for a
   structured response (``ToolStrategy``, ``ProviderStrategy``) gets one only from an output
   the core accepts; a cut one is answered and asked again the same way, and after the
   bounded retries the run raises ``StructuredOutputError`` (``_structured.agent_verdict``).
3. ``wrap_tool_call``: a last check that a call about to run was committed by the gate (a call
   slipped in by other code or another middleware is refused, not run, and counted in
   ``tool_execute_rejected_not_committed_total``), runs with the arguments the vendor finished
   or a reviewer's recorded edit (``_review``), and still fits the run's budget; with a
   store, a call that began in an earlier attempt is answered instead of run again
   (``_ledger``).
4. ``max_tool_calls_per_run``: the calls the run committed are counted in the agent state
   (``toolstream_run_calls``, so a checkpoint keeps the count and a resumed run goes on from
   it); each model call may commit what is left, and a call past it is answered
   ``run_budget_exceeded`` and never runs. ``before_agent`` starts the count of each
   invocation at zero (docs/decisions/agents-run-budget.md).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Annotated, Any

from langchain.agents.middleware.types import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    PrivateStateAttr,
    ToolCallRequest,
    hook_config,
)
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import Command
from toolstream_core import AssembleConfig, AssemblerEvent, Turn
from toolstream_core.integration import (
    DEFAULT_HISTORY,
    DEFAULT_ON_STREAM_ERROR,
    RUN_CALLS_KEY,
    Unbound,
    budget_refusal,
    not_committed_text,
    over_budget,
    record_refused_execution,
    refuse_gate_options,
    run_budget_left,
)
from typing_extensions import NotRequired

from ._chat_model import ToolstreamChatModel, with_toolstream
from ._gate import OnStreamError
from ._history import HistoryPolicy
from ._ledger import CallLedger
from ._messages import error_tool_messages, is_paused, paused_message, read_record
from ._pipeline import Pipeline
from ._review import reviews_update, unbound
from ._structured import acall_structured, agent_verdict, call_structured
from ._tools import ConfigArg, ToolsArg, registry_from_tools

__all__ = ["ToolstreamMiddleware"]

_log = logging.getLogger(__name__)

#: What a model-call hook may return (``AgentMiddleware.wrap_model_call``'s own type).
ModelCallResult = ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]

#: The agent-state key that counts the gate's consecutive model turns that committed nothing.
FAILED_TURNS = "toolstream_failed_turns"


class ToolstreamState(AgentState[Any]):
    """The agent state plus the gate's own count of consecutive all-rejected turns.

    Counted in the state, not read back from the messages: a server that re-uses one response
    id (a caching proxy, a replay) gives every retry the same AIMessage id, and LangGraph's
    ``add_messages`` then replaces the earlier message instead of adding one, so a count of
    messages never grows and the retries never stop.
    """

    toolstream_failed_turns: NotRequired[Annotated[int, PrivateStateAttr]]
    toolstream_run_calls: NotRequired[Annotated[int, PrivateStateAttr]]
    """The calls this run (one ``invoke``) committed so far: ``max_tool_calls_per_run``."""


class ToolstreamMiddleware(AgentMiddleware[Any, Any, Any]):
    """Run only committed tool calls; pair every rejected call in the same turn."""

    state_schema = ToolstreamState

    def __init__(
        self,
        *,
        tools: ToolsArg | None = None,
        config: ConfigArg | None = None,
        max_retries: int = 2,
        on_stream_error: OnStreamError | None = None,
        guard_tool_calls: bool = True,
        history: HistoryPolicy | None = None,
        on_turn: Callable[[Turn], None] | None = None,
        on_event: Callable[[AssemblerEvent], None] | None = None,
    ) -> None:
        """Configure the gate for an agent.

        ``tools``: the registry to validate against (default: the agent's tools, as bound).
        ``config``: ``AssembleConfig`` or its mapping / YAML. ``max_retries``: how many
        consecutive model turns with no committed call send the agent back to the model
        before it stops. ``on_stream_error``: a stream that fails (a dropped connection, a
        vendor error, an idle timeout) after a tool call started ends the turn with every
        call paired and the agent goes on (``"pair"``, the default), or raises (``"raise"``);
        a failure before any call always raises, for retry middleware to handle.
        ``guard_tool_calls``: refuse to run a call the gate did not commit. ``history``:
        before every model call, answer each unanswered call id of the outgoing history with
        an error result (a tool that raised, a denied approval, an interrupt, a resumed
        checkpoint), then raise ``HistoryError`` for what the vendor would reject and only the
        model could fix (``"check"``, the default; ``"repair"`` only answers; ``"off"``: as
        given). ``on_turn`` / ``on_event``: as for ``with_toolstream``. The options and
        defaults are ``ToolstreamFunctionAgent``'s too. An agent model that is already gated
        keeps its own gate; giving any of these gate options here as well is then a
        ``ValueError``.
        """
        super().__init__()
        if max_retries < 0:
            raise ValueError("max_retries must be >= 0")
        self._registry = registry_from_tools(tools)
        self._config = AssembleConfig.coerce(config)
        self.max_retries = max_retries
        self._guard = guard_tool_calls
        # What was given, for an agent model that is already gated (None: not given).
        self._given: dict[str, Any] = {
            "tools": tools, "config": config, "on_stream_error": on_stream_error,
            "history": history, "on_turn": on_turn, "on_event": on_event}
        self._on_stream_error: OnStreamError = on_stream_error or DEFAULT_ON_STREAM_ERROR
        self._history: HistoryPolicy = history or DEFAULT_HISTORY
        self._on_turn = on_turn
        self._on_event = on_event

    # -- the run -------------------------------------------------------------------------------

    def before_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """A new invocation is a new run: its budget count starts at zero. A resume from a
        checkpoint (``invoke(None)``, ``Command(resume=...)``) does not pass here again."""
        return {RUN_CALLS_KEY: 0} if _run_calls(state) else None

    async def abefore_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return self.before_agent(state, runtime)

    @hook_config(can_jump_to=["model"])
    def after_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Record a reviewer's decisions on the turn's committed calls (``_review``): listed
        before ``HumanInTheLoopMiddleware``, this node runs after the reviewer's.

        The model node's ``jump_to`` (a retry, a paused turn's continuation) lives for one
        step only, and this node is that step: it is handed on, so the edge after this node
        still goes back to the model."""
        update = reviews_update(state) or {}
        if isinstance(state, Mapping) and state.get("jump_to") == "model":
            update["jump_to"] = "model"
        return update or None

    @hook_config(can_jump_to=["model"])
    async def aafter_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return self.after_model(state, runtime)

    def _per_call(self, model: ToolstreamChatModel, request: ModelRequest[Any],
                  pipeline: Pipeline | None) -> ToolstreamChatModel:
        """``model`` told what the run may still commit (``None``: no budget in force) and
        where to start a pipelined call (``None``: nothing is pipelined)."""
        left = run_budget_left(model.toolstream_config, _run_calls(request.state))
        start = pipeline.start if pipeline is not None else None
        if left == model.run_budget and start is None and model.on_early_commit is None:
            return model
        return model.model_copy(update={"run_budget": left, "on_early_commit": start})

    def _pipeline(self, request: ModelRequest[Any],
                  loop: asyncio.AbstractEventLoop | None = None) -> Pipeline | None:
        """The pipeline of this model call, where the config lets a call commit early
        (``loop``: the async agent's, where its tools start)."""
        model = request.model
        config = model.toolstream_config if isinstance(model, ToolstreamChatModel) else self._config
        return Pipeline(request.tools, loop) if config.execute_before_stream_end else None

    # -- model calls ---------------------------------------------------------------------------

    def _gate(self, request: ModelRequest[Any], pipeline: Pipeline | None) -> ModelRequest[Any]:
        model = request.model
        if isinstance(model, ToolstreamChatModel):
            refuse_gate_options("with_toolstream", **self._given)
            per_call = self._per_call(model, request, pipeline)
            return request if per_call is model else request.override(model=per_call)
        gated = with_toolstream(
            model,
            tools=self._registry,
            config=self._config,
            on_stream_error=self._on_stream_error,
            on_turn=self._on_turn,
            on_event=self._on_event,
            history=self._history,
        )
        return request.override(model=self._per_call(gated, request, pipeline))

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelCallResult:
        pipeline = self._pipeline(request)
        response = call_structured(self._gate(request, pipeline), handler)
        return self._pair(request, response, pipeline.results() if pipeline is not None else {})

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult:
        pipeline = self._pipeline(request, asyncio.get_running_loop())
        response = await acall_structured(self._gate(request, pipeline), handler)
        ran = await pipeline.aresults() if pipeline is not None else {}
        return self._pair(request, response, ran)

    def _pair(self, request: ModelRequest[Any], response: ModelCallResult,
              ran: Mapping[str, ToolMessage]) -> ModelCallResult:
        """The model's messages, each AIMessage followed by the answers the gate has for it:
        the results of its pipelined calls (``ran``) and the errors of its rejected ones."""
        result = _messages_of(response)
        if any(isinstance(m, AIMessage) and is_paused(m) for m in result):
            return _continue_paused(request, response, result)
        out: list[BaseMessage] = []
        failed = False
        cancelled = False
        for message in result:
            out.append(message)
            if not isinstance(message, AIMessage):
                continue
            errors = error_tool_messages(message)
            out.extend(_new_answers(request, message, _in_call_order(message, errors, ran)))
            if errors and not message.tool_calls:
                failed = True
                cancelled = cancelled or _cancelled(message)
        verdict = agent_verdict(request.response_format, out, _structured(response))
        failed = failed or verdict.failure is not None
        out = verdict.messages if verdict.messages is not None else out
        before = _failed_turns(request)
        count = before + 1 if failed else 0
        retry = failed and not cancelled and self._may_retry(before)
        if verdict.failure is not None and not retry and not cancelled:
            raise verdict.failure  # no structured response after the bounded retries
        committed = _committed_count(result)
        if len(out) == len(result) and count == before and not committed:
            return response
        structured = None if verdict.failure is not None else _structured(response)
        paired = ModelResponse(result=out, structured_response=structured)
        update: dict[str, Any] = {FAILED_TURNS: count if retry else 0}
        if committed:
            update[RUN_CALLS_KEY] = _run_calls(request.state) + committed
        if retry:
            update["jump_to"] = "model"
        return ExtendedModelResponse(model_response=paired, command=Command(update=update))

    def _may_retry(self, used: int) -> bool:
        """Whether one more model turn is allowed after ``used + 1`` failed ones in a row."""
        if used >= self.max_retries:
            _log.info("toolstream: %d model turns without a committed call; not retrying", used + 1)
            return False
        return True

    # -- tool calls ----------------------------------------------------------------------------

    def _refusal(self, request: ToolCallRequest) -> ToolMessage | None:
        if not self._guard:
            return None
        call = request.tool_call
        call_id = call.get("id")
        owner = _owner_of(request.state, call_id)
        if owner is None:
            return None
        record = read_record(owner)
        if record is None:
            return None  # not produced through the gate (e.g. history passed in by the caller)
        entries = record.get("committed") or []
        committed = [entry.get("id") for entry in entries]
        if call_id in committed:
            position = committed.index(call_id)
            refused = unbound(request, entries[position])
            if refused is not None:
                return self._unbound(request, record, refused)
            return self._over_budget(request, position, len(committed))
        _log.warning("toolstream: refusing to run %s (%s): not committed", call.get("name"), call_id)
        record_refused_execution(call.get("name"), provider=record.get("provider"),
                                 config=self._config)
        return ToolMessage(
            content=not_committed_text(call.get("name"), call_id),
            tool_call_id=call_id or "",
            name=call.get("name"),
            status="error",
            artifact={"toolstream": {"reason": "not_committed", "state": "refused"}},
        )

    def _unbound(self, request: ToolCallRequest, record: Mapping[str, Any],
                 refused: Unbound) -> ToolMessage:
        """The answer to a committed call that may not run as it stands (``_review``)."""
        call = request.tool_call
        _log.warning("toolstream: refusing to run %s (%s): %s", call.get("name"), call.get("id"),
                     refused.reason)
        record_refused_execution(call.get("name"), provider=record.get("provider"),
                                 config=self._config)
        return ToolMessage(content=refused.content, tool_call_id=call.get("id") or "",
                           name=call.get("name"), status="error",
                           artifact={"toolstream": {"reason": refused.reason, "state": "refused"}})

    def _over_budget(self, request: ToolCallRequest, position: int, turn_calls: int) -> ToolMessage | None:
        """The budget checked again right before the call is queued (seed 004 gate step 5):
        the run's count in the state already holds this turn's ``turn_calls`` commits, so this
        call is the run's ``count - turn_calls + position + 1``-th."""
        ordinal = _run_calls(request.state) - turn_calls + position + 1
        if not over_budget(self._config, ordinal):
            return None
        call = request.tool_call
        result = budget_refusal(call.get("name"), call.get("id") or "")
        _log.warning("toolstream: refusing to run %s (%s): over the run's budget",
                     call.get("name"), call.get("id"))
        return ToolMessage(content=result.content, tool_call_id=result.tool_call_id,
                           name=call.get("name"), status="error",
                           artifact={"toolstream": {"reason": result.reason.value,
                                                    "state": "refused"}})

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        refusal = self._refusal(request)
        if refusal is not None:
            return refusal
        ledger = _ledger_of(request)
        return handler(request) if ledger is None else ledger.run(request, handler)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        refusal = self._refusal(request)
        if refusal is not None:
            return refusal
        ledger = _ledger_of(request)
        return await handler(request) if ledger is None else await ledger.arun(request, handler)


def _messages_of(response: ModelCallResult) -> list[BaseMessage]:
    if isinstance(response, AIMessage):
        return [response]
    if isinstance(response, ExtendedModelResponse):
        return list(response.model_response.result)
    return list(getattr(response, "result", None) or [])


def _structured(response: ModelCallResult) -> Any:
    if isinstance(response, ExtendedModelResponse):
        return response.model_response.structured_response
    return getattr(response, "structured_response", None)


def _continue_paused(request: ModelRequest[Any], response: ModelCallResult,
                     result: list[BaseMessage]) -> ModelCallResult:
    """A paused turn goes into the state without client calls and the agent goes back to the
    model, which continues the turn from it; the failed-turn count is left as it was."""
    out: list[BaseMessage] = []
    for message in result:
        if isinstance(message, AIMessage) and is_paused(message):
            held = [c.get("name") for c in [*message.tool_calls, *message.invalid_tool_calls]]
            if held:
                _log.warning("toolstream: the turn was paused; not running %s until it ends",
                             held)
            message = paused_message(message)
        out.append(message)
    paired = ModelResponse(result=out, structured_response=_structured(response))
    update = {"jump_to": "model", FAILED_TURNS: _failed_turns(request)}
    return ExtendedModelResponse(model_response=paired, command=Command(update=update))


def _failed_turns(request: ModelRequest[Any]) -> int:
    """The gate's consecutive all-rejected turns so far in this run (from the agent state)."""
    state = request.state
    value = state.get(FAILED_TURNS) if isinstance(state, Mapping) else None
    return value if isinstance(value, int) and value >= 0 else 0


def _in_call_order(message: AIMessage, errors: list[ToolMessage],
                   ran: Mapping[str, ToolMessage]) -> list[ToolMessage]:
    """``message``'s answers (pipelined results and errors) in the order of its calls."""
    if not ran:
        return errors
    answers = {m.tool_call_id: m for m in errors}
    answers.update((c["id"], ran[c["id"]]) for c in message.tool_calls
                   if c["id"] is not None and c["id"] in ran)
    order = [c.get("id") for c in [*message.tool_calls, *message.invalid_tool_calls]]
    return [answers[i] for i in order if i in answers]


def _run_calls(state: Any) -> int:
    """The calls this run committed so far (``toolstream_run_calls`` in the agent state)."""
    value = state.get(RUN_CALLS_KEY) if isinstance(state, Mapping) else None
    return value if isinstance(value, int) and value >= 0 else 0


def _committed_count(result: list[BaseMessage]) -> int:
    """How many calls the gate committed in this model call's messages."""
    count = 0
    for message in result:
        record = read_record(message) if isinstance(message, AIMessage) else None
        count += len(record.get("committed") or []) if record is not None else 0
    return count


def _new_answers(request: ModelRequest[Any], message: AIMessage,
                 errors: list[ToolMessage]) -> list[ToolMessage]:
    """``errors`` minus the ids the state already answers for a message with this same id.

    A server that re-uses a response id gives the retry's AIMessage the id of the failed one,
    and LangGraph replaces that message in place: its earlier error results still answer it,
    and a second set would answer the same ids twice.
    """
    if message.id is None or not any(m.id == message.id for m in request.messages):
        return errors
    answered = {m.tool_call_id for m in request.messages if isinstance(m, ToolMessage)}
    return [e for e in errors if e.tool_call_id not in answered]


def _cancelled(message: AIMessage) -> bool:
    """The user stopped this turn (every rejection is a cancellation): do not start another."""
    record = read_record(message)
    reasons = {entry.get("reason") for entry in (record["rejected"] if record else [])}
    return reasons == {"cancelled"}


def _ledger_of(request: ToolCallRequest) -> CallLedger | None:
    """The started-ledger entry of the call about to run (``None``: no store, or repeatable)."""
    owner = _owner_of(request.state, request.tool_call.get("id"))
    return CallLedger.of(request, owner.id if owner is not None else None)


def _owner_of(state: Any, call_id: str | None) -> AIMessage | None:
    """The AIMessage in ``state`` that holds ``call_id`` among its ``tool_calls``."""
    if call_id is None:
        return None
    messages = state.get("messages") if isinstance(state, Mapping) else getattr(state, "messages", None)
    if not messages:
        return None
    for message in reversed(messages):
        if isinstance(message, AIMessage) and any(c.get("id") == call_id for c in message.tool_calls):
            return message
    return None
