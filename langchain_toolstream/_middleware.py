"""``ToolstreamMiddleware``: the gate inside ``langchain.agents.create_agent``.

One line (``middleware=[ToolstreamMiddleware()]``) changes three things in the agent loop:

1. ``wrap_model_call``: the model runs through ``with_toolstream`` (always streamed, so the gate
   judges the vendor's own events even when the agent calls ``invoke``); the AIMessage carries
   only committed calls in ``tool_calls``.
2. In the same model turn, every rejected call is answered by one ``ToolMessage(status="error")``
   with its real id and the reason, so the next request to the vendor is legal. If nothing was
   committed the agent goes back to the model (bounded by ``max_retries``) instead of ending,
   so the model can retry; a cancelled turn ends the loop. A call the model malformed in a
   finished turn is the exception: LangChain holds it as an invalid tool call and answers it
   itself, as without the gate (decision 0112). An agent that asks for a structured response
   (``ToolStrategy``, ``ProviderStrategy``) gets none from an output cut short; a cut one is
   answered and asked again the same way, and after the bounded retries the run raises
   ``StructuredOutputError`` (``_structured.agent_verdict``). A finished output is the
   strategy's own to parse, reject and retry (decision 0113).
3. ``wrap_tool_call``: the run policy's last check (``RunPolicy.admit``) that a call about to
   run was committed by the gate (a call slipped in by other code or another middleware is
   refused, not run, and counted in ``tool_execute_rejected_not_committed_total``), runs with
   the arguments the vendor finished or a reviewer's recorded edit (``_review``), and still
   fits the run's budget; then, with a store, a call that began in an earlier attempt is
   answered instead of run again (``_ledger``). A paused turn is sent back to be continued at
   most ``MAX_PAUSED_CONTINUATIONS`` times in a row.

The decisions are the core's ``RunPolicy``; this module reads the run's state from the agent
state, asks, and writes the answer back (a ``Command``).
4. ``max_tool_calls_per_run``: the calls the run committed are counted in the agent state
   (``toolstream_run_calls``, so a checkpoint keeps the count and a resumed run goes on from
   it); each model call may commit what is left, and a call past it is answered
   ``run_budget_exceeded`` and never runs. ``before_agent`` starts the count of each
   invocation at zero (docs/decisions/0078-run-budget.md).
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
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.runtime import Runtime
from langgraph.types import Command
from toolstream_core import AssembleConfig, AssemblerEvent, Turn
from toolstream_core.integration import (
    DEFAULT_HISTORY,
    GateSession,
    HistoryPolicy,
    Pipeline,
    RecordView,
    RunPolicy,
    RunState,
)
from typing_extensions import NotRequired

from ._chat_model import ToolstreamChatModel, with_toolstream
from ._gate import OnStreamError
from ._ledger import CallLedger
from ._messages import MESSAGES
from ._pipeline import ToolStarter
from ._review import admission_view, edit_tools, pending_edit, reviews_update
from ._structured import acall_structured, agent_verdict, call_structured, output_tool_names
from ._tools import ConfigArg, ToolsArg, registry_from_tools

__all__ = ["ToolstreamMiddleware"]

_log = logging.getLogger(__name__)

#: What a model-call hook may return (``AgentMiddleware.wrap_model_call``'s own type).
ModelCallResult = ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]

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
    toolstream_paused_turns: NotRequired[Annotated[int, PrivateStateAttr]]
    """Consecutive paused turns sent back to be continued (``RunPolicy.continue_paused``)."""
    toolstream_back_to_model: NotRequired[Annotated[bool, PrivateStateAttr]]
    """The last model turn goes back to the model (a retry, a paused turn's continuation):
    set by the model node, acted on by the gate's ``after_agent`` node (``BACK_TO_MODEL``)."""


#: The state key of a model turn that goes back to the model. Not ``jump_to`` from the model
#: node: that value lives one step, and the ``after_model`` hooks after it would either lose it
#: or, if the gate jumped from its own, be skipped (``ModelCallLimitMiddleware`` counts the
#: call there). Read at the agent's exit, the turn has passed every ``after_model`` hook, and
#: the jump goes where a tool round goes: to the first ``before_model`` hook.
BACK_TO_MODEL = "toolstream_back_to_model"


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
        self._registry = registry_from_tools(tools)
        self._config = AssembleConfig.coerce(config)
        self._policy = RunPolicy(self._config, max_retries=max_retries, guard=guard_tool_calls)
        self.max_retries = max_retries
        # What was given, for an agent model that is already gated (None: not given).
        self._given: dict[str, Any] = {
            "tools": tools, "config": config, "on_stream_error": on_stream_error,
            "history": history, "on_turn": on_turn, "on_event": on_event}
        self._on_stream_error: OnStreamError = on_stream_error or GateSession.DEFAULT_ON_STREAM_ERROR
        self._history: HistoryPolicy = history or DEFAULT_HISTORY
        self._on_turn = on_turn
        self._on_event = on_event

    # -- the run -------------------------------------------------------------------------------

    def before_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """A new invocation is a new run: its budget count starts at zero (and no turn of an
        earlier run goes back to the model). A resume from a checkpoint (``invoke(None)``,
        ``Command(resume=...)``) does not pass here again."""
        update: dict[str, Any] = {}
        if RunState.read(state).run_calls:
            update[RunState.RUN_CALLS] = 0
        if _back_to_model(state):
            update[BACK_TO_MODEL] = False
        return update or None

    async def abefore_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return self.before_agent(state, runtime)

    # -- model calls ---------------------------------------------------------------------------

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelCallResult:
        call = _ModelCall(self, request)
        response = call_structured(call.request, handler)
        return call.pair(response, call.pipeline.results() if call.pipeline is not None else {})

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelCallResult:
        call = _ModelCall(self, request, asyncio.get_running_loop())
        response = await acall_structured(call.request, handler)
        ran = await call.pipeline.aresults() if call.pipeline is not None else {}
        return call.pair(response, ran)

    def _gated(self, model: BaseChatModel) -> ToolstreamChatModel:
        """The agent's model through the gate: its own when it is already gated (then no gate
        option may be given here too), else ``with_toolstream`` with this middleware's."""
        if isinstance(model, ToolstreamChatModel):
            GateSession.refuse_options("with_toolstream", **self._given)
            return model
        return with_toolstream(model, tools=self._registry, config=self._config,
                               on_stream_error=self._on_stream_error, on_turn=self._on_turn,
                               on_event=self._on_event, history=self._history)

    def _policy_for(self, model: ToolstreamChatModel) -> RunPolicy:
        """The run policy under the config the model is gated with."""
        if model.toolstream_config is self._config:
            return self._policy
        return RunPolicy(model.toolstream_config, max_retries=self.max_retries,
                         guard=self._policy.guard)

    # -- tool calls ----------------------------------------------------------------------------

    def after_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Record a reviewer's decisions on the turn's committed calls (``_review``): listed
        before ``HumanInTheLoopMiddleware``, this node runs after the reviewer's."""
        return reviews_update(state)

    async def aafter_model(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return self.after_model(state, runtime)

    @hook_config(can_jump_to=["model"])
    def after_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        """A turn that goes back to the model (``BACK_TO_MODEL``) goes there from the agent's
        exit, past every ``after_model`` hook, as a tool round would."""
        if _back_to_model(state):
            return {"jump_to": "model", BACK_TO_MODEL: False}
        return None

    @hook_config(can_jump_to=["model"])
    async def aafter_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return self.after_agent(state, runtime)

    def _refused_message(self, request: ToolCallRequest) -> ToolMessage | None:
        """The run policy's answer for a call about to run (``RunPolicy.admit``: committed by
        the gate, with the arguments the vendor finished or a recorded edit, within the run's
        budget; an edit judged as a vendor's arguments are), as a ToolMessage; ``None``: run
        it."""
        call = request.tool_call
        owner = _owner_of(request.state, call.get("id"))
        view = admission_view(owner, request.state) if owner is not None else None
        refusal = self._policy.admit(view, call.get("id"), call.get("name"),
                                     RunState.read(request.state), call.get("args"),
                                     pending_edit=pending_edit(request),
                                     edit_tools=edit_tools(request))
        if refusal is None:
            return None
        return ToolMessage(content=refusal.content, tool_call_id=refusal.tool_call_id,
                           name=call.get("name"), status="error",
                           artifact={"toolstream": {"reason": refusal.reason, "state": "refused"}})

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        refusal = self._refused_message(request)
        if refusal is not None:
            return refusal
        ledger = _ledger_of(request)
        return handler(request) if ledger is None else ledger.attempt(request, handler)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        refusal = self._refused_message(request)
        if refusal is not None:
            return refusal
        ledger = _ledger_of(request)
        return await handler(request) if ledger is None else await ledger.aattempt(request, handler)


class _ModelCall:
    """One model call of the agent: the request with the gated model told what the run may
    still commit and where to start a pipelined call, and the run's answer to its response."""

    def __init__(self, middleware: ToolstreamMiddleware, request: ModelRequest[Any],
                 loop: asyncio.AbstractEventLoop | None = None) -> None:
        model = middleware._gated(request.model)
        self.policy = middleware._policy_for(model)
        self.state = RunState.read(request.state)
        self.starter = ToolStarter(request.tools, loop)
        self.pipeline: Pipeline[ToolMessage] | None = self.policy.pipeline(self.starter)
        left = self.policy.budget_left(self.state)
        outputs = output_tool_names(request.response_format)
        if (left != model.run_budget or self.pipeline is not None
                or model.on_early_commit is not None or outputs != model.output_tools):
            model = model.model_copy(update={"run_budget": left, "on_early_commit": self.pipeline,
                                             "output_tools": outputs})
        self.request = request if model is request.model else request.override(model=model)
        self._asked = request

    def pair(self, response: ModelCallResult, ran: Mapping[str, ToolMessage]) -> ModelCallResult:
        """The model's messages, each AIMessage followed by the answers the gate has for it:
        the results of its pipelined calls (``ran``) and the errors of its rejected ones; the
        run's counts and where the agent goes next (``RunPolicy.after_turn``)."""
        self.starter.release()
        result = _messages_of(response)
        if any(isinstance(m, AIMessage) and MESSAGES.paused_turn(m) for m in result):
            return self._continue_paused(response, result)
        out: list[BaseMessage] = []
        committed = runs = errors = 0
        cancelled = False
        for message in result:
            out.append(message)
            if not isinstance(message, AIMessage):
                continue
            view = MESSAGES.view(message)
            answers = _gate_answers(message, view)
            out.extend(_new_answers(self._asked, message,
                                    _in_call_order(message, list(answers.values()), ran)))
            committed += len(view.committed) if view is not None else 0
            runs += len(message.tool_calls)
            errors += len(answers)
            cancelled = cancelled or (not message.tool_calls and view is not None and view.cancelled)
        verdict = agent_verdict(self._asked.response_format, out, _structured(response))
        out = verdict.messages if verdict.messages is not None else out
        outcome = self.policy.after_turn(self.state, committed=committed, runs=runs, errors=errors,
                                         cancelled=cancelled, unstructured=verdict.failure is not None)
        if verdict.failure is not None and outcome.give_up:
            raise verdict.failure  # no structured response after the bounded retries
        update: dict[str, Any] = outcome.state.changes(self.state)
        if outcome.retry or _back_to_model(self._asked.state):
            update[BACK_TO_MODEL] = outcome.retry  # a turn the graph sent back some other way
        if len(out) == len(result) and not update:
            return response
        structured = None if verdict.failure is not None else _structured(response)
        return ExtendedModelResponse(model_response=ModelResponse(result=out, structured_response=structured),
                                     command=Command(update=update))

    def _continue_paused(self, response: ModelCallResult,
                         result: list[BaseMessage]) -> ModelCallResult:
        """A paused turn goes into the state without client calls and the agent goes back to
        the model, which continues the turn from it (the failed-turn count is left as it
        was); after ``MAX_PAUSED_CONTINUATIONS`` in a row the turn ends as it is."""
        out: list[BaseMessage] = []
        for message in result:
            if isinstance(message, AIMessage) and MESSAGES.paused_turn(message):
                held = [c.get("name") for c in [*message.tool_calls, *message.invalid_tool_calls]]
                if held:
                    _log.warning("toolstream: the turn was paused; not running %s until it ends",
                                 held)
                message = MESSAGES.continued(message)
            out.append(message)
        paired = ModelResponse(result=out, structured_response=_structured(response))
        after = self.policy.continue_paused(self.state)
        update: dict[str, Any] = {RunState.PAUSED_TURNS: 0, BACK_TO_MODEL: False}
        if after is not None:
            update = {BACK_TO_MODEL: True, RunState.PAUSED_TURNS: after.paused_turns}
        return ExtendedModelResponse(model_response=paired, command=Command(update=update))


def _back_to_model(state: Any) -> bool:
    return isinstance(state, Mapping) and state.get(BACK_TO_MODEL) is True


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


def _gate_answers(message: AIMessage, view: RecordView | None) -> dict[str, ToolMessage]:
    """The error results the gate adds after ``message``: one per rejected call, except the
    calls the model malformed in a turn the vendor finished (``RecordView.malformed``).
    ``create_agent`` holds those as invalid tool calls, as it would without the gate, and
    answers each one with an id itself before the next model call (its own words); a turn
    with nothing else to run ends as the stock agent's does."""
    answers = MESSAGES.errors(message, view)
    left = view.malformed if view is not None else ()
    if not left:
        return answers
    return {ident: answer for ident, answer in answers.items() if ident not in left}


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
