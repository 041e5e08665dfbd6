"""Sensitive tools (DESIGN §3 ``ToolSpec.sensitive`` / ``sensitive_tools``, 4.9): their argument
text reaches no UI event, no trace and no error text; every other tool is unaffected.

Streams are the rule tests' synthetic vendor events (``builders``), on all four wires.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from builders import PROVIDERS, Call, make, record_events
from docs_examples import example, run_example
from otel_util import InMemorySpanExporter, call_events, span_exporter, turn_spans
from toolstream_core import (
    ArgumentsDelta,
    AssembleConfig,
    CallCommitted,
    CallRejected,
    Reason,
    ToolSpec,
)
from toolstream_core._registry import Registry
from toolstream_core._sensitive import MASK, capture_content, masked_arguments
from toolstream_core.agui import AGUIToolCallEvents
from toolstream_core.integration import ProgressEncoder

SECRET = "hunter2-canary"
LOGIN = json.dumps({"user": "ada", "password": SECRET, "headers": {"Authorization": SECRET, "Accept": "*/*"}})
ECHO = '{"text":"hello"}'
SCHEMAS: dict[str, Any] = {"login": {"type": "object"}, "echo": {"type": "object"}}


@pytest.fixture
def spans() -> InMemorySpanExporter:
    return span_exporter()


def decide(provider: str, config: AssembleConfig, tools: Any = None, *, login: str = LOGIN,
           ending: str = "finish") -> tuple[Any, list[Any]]:
    events = make(provider, [Call(id="call_login", name="login", arguments=login, cuts=(5, 30)),
                             Call(id="call_echo", name="echo", arguments=ECHO, cuts=(4,))],
                  ending=ending)
    assembler, seen = record_events(tools=tools if tools is not None else SCHEMAS, config=config,
                                    provider=provider)
    for event in events:
        assembler.feed(event)
    return assembler.finish(), seen


def fragments(seen: list[Any], turn: Any, name: str) -> list[str | None]:
    keys = {c.key for c in turn.calls if c.name == name}
    return [e.fragment for e in seen if isinstance(e, ArgumentsDelta) and e.key in keys]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("how", ["toolspec", "config"])
def test_a_sensitive_call_streams_its_size_only_and_others_are_unaffected(provider: str, how: str) -> None:
    if how == "toolspec":
        tools: Any = {"login": ToolSpec("login", SCHEMAS["login"], sensitive=True), "echo": SCHEMAS["echo"]}
        config = AssembleConfig()
    else:
        tools, config = SCHEMAS, AssembleConfig(sensitive_tools=["login"])
    turn, seen = decide(provider, config, tools)
    assert [c.committed for c in turn.calls] == [True, True]
    login, echo = turn.calls
    assert login.sensitive is True and echo.sensitive is False
    assert login.arguments["password"] == SECRET  # the tool itself gets the real arguments
    login_fragments = fragments(seen, turn, "login")
    assert login_fragments and set(login_fragments) == {None}
    assert [e.total_bytes for e in seen if isinstance(e, ArgumentsDelta) and e.key == login.key][-1] > 0
    assert "hello" in "".join(f or "" for f in fragments(seen, turn, "echo"))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_encoders_mask_committed_arguments_by_path(provider: str) -> None:
    config = AssembleConfig(sensitive_tools={"login": ["password", "headers.Authorization"]})
    encoder, agui = ProgressEncoder(), AGUIToolCallEvents()
    _turn, seen = decide(provider, config)
    for event in seen:
        agui(event)
    encoded = [encoder.encode(e) for e in seen]
    [committed] = [e for e in encoded if e["type"] == "toolstream.call_committed" and e["name"] == "login"]
    assert committed["arguments"] == {"user": "ada", "password": MASK,
                                      "headers": {"Authorization": MASK, "Accept": "*/*"}}
    assert committed["sensitive"] is True
    assert SECRET not in json.dumps(encoded)
    assert SECRET not in json.dumps([e.model_dump(by_alias=True) for e in agui.events])
    assert any(e["type"] == "toolstream.call_committed" and e["name"] == "echo" and "sensitive" not in e
               for e in encoded)


def test_a_sensitive_parse_message_reaches_neither_the_model_nor_a_ui() -> None:
    duplicate = f'{{"{SECRET}": 1, "{SECRET}": 2}}'
    for sensitive in (False, True):
        config = AssembleConfig(sensitive_tools=["login"] if sensitive else ())
        turn, seen = decide("anthropic", config, login=duplicate)
        [rejected] = turn.rejected
        assert rejected.reason is Reason.invalid_json and SECRET in (rejected.detail or "")
        [result] = turn.error_results()
        [event] = [e for e in seen if isinstance(e, CallRejected)]
        encoded = ProgressEncoder().encode(event)
        agui = AGUIToolCallEvents()
        agui(event)
        shown = [result.content, json.dumps(encoded), json.dumps([e.model_dump() for e in agui.events])]
        assert all((SECRET in text) is not sensitive for text in shown), (sensitive, shown)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_traces_mask_a_sensitive_tool_even_with_content_capture(provider: str,
                                                                spans: InMemorySpanExporter) -> None:
    config = AssembleConfig(trace_tool_arguments=True,
                            sensitive_tools={"login": ["password", "headers.Authorization"]})
    decide(provider, config)
    events = {e["gen_ai.tool.name"]: e for e in call_events(turn_spans(spans)[0])}
    assert json.loads(str(events["login"]["gen_ai.tool.call.arguments"]))["password"] == MASK
    assert events["login"]["toolstream.tool_call.sensitive"] is True
    assert json.loads(str(events["echo"]["gen_ai.tool.call.arguments"])) == {"text": "hello"}
    assert SECRET not in json.dumps([dict(e) for e in call_events(turn_spans(spans)[0])])


def test_a_cut_call_of_a_tool_with_sensitive_paths_puts_no_text_on_the_span(spans: InMemorySpanExporter) -> None:
    config = AssembleConfig(trace_tool_arguments=True, sensitive_tools={"login": ["password"]})
    turn, _ = decide("openai-chat", config, ending="truncated")
    assert {c.name for c in turn.rejected} == {"login", "echo"}
    events = {e["gen_ai.tool.name"]: e for e in call_events(turn_spans(spans)[0])}
    assert "gen_ai.tool.call.arguments" not in events["login"]
    assert "gen_ai.tool.call.arguments" in events["echo"]


# Gemini's arguments are a JSON object on the wire: they cannot arrive unparseable.
DEFAULT_CASES = [(p, o) for p in PROVIDERS for o in ("committed", "cut", "unparseable")
                 if (p, o) != ("gemini", "unparseable")]


@pytest.mark.parametrize(("provider", "outcome"), DEFAULT_CASES)
def test_by_default_no_span_and_no_debug_log_holds_argument_text(
        provider: str, outcome: str, spans: InMemorySpanExporter, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The issue's "done when", on every wire (tests/test_canary.py follows every channel)."""
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    caplog.set_level(logging.DEBUG)
    login = f'{{"{SECRET}": 1, "{SECRET}": 2}}' if outcome == "unparseable" else LOGIN
    turn, _ = decide(provider, AssembleConfig(), login=login,
                     ending="truncated" if outcome == "cut" else "finish")
    assert turn.calls[0].committed is (outcome == "committed")
    assert SECRET in (turn.calls[0].raw_arguments or "")
    [span] = turn_spans(spans)
    texts = [json.dumps(dict(span.attributes or {})), str(span.status.description)]
    texts += [json.dumps(dict(e.attributes or {})) for e in span.events]
    texts += [r.getMessage() + repr(r.args) for r in caplog.records]
    assert not any(SECRET in t for t in texts)


def test_a_call_without_a_name_yet_is_treated_as_sensitive_while_any_tool_is() -> None:
    assert Registry(None).sensitivity(None) is False
    registry = Registry(None, sensitive=[("login", True)])
    assert registry.sensitivity(None) is True
    assert registry.sensitivity("echo") is False


def test_toolspec_and_config_markings_combine() -> None:
    registry = Registry({"login": ToolSpec("login", sensitive=["password"])},
                        sensitive=[("login", ("token",))])
    assert registry.sensitivity("login") == ("token", "password")
    whole = Registry({"login": ToolSpec("login", sensitive=True)}, sensitive=[("login", ("token",))])
    assert whole.sensitivity("login") is True
    with pytest.raises(ValueError, match="sensitive"):
        Registry({"login": ToolSpec("login", sensitive="password")})  # type: ignore[arg-type]


def test_masking_by_path() -> None:
    value = {"a": {"b": 1, "c": 2}, "items": [{"token": "x", "id": 1}, {"token": "y", "id": 2}], "d": 3}
    assert masked_arguments(value, ("a.b", "items.*.token", "missing.path", "d.deeper")) == {
        "a": {"b": MASK, "c": 2}, "items": [{"token": MASK, "id": 1}, {"token": MASK, "id": 2}], "d": 3}
    assert masked_arguments(value, ("items.1",))["items"] == [{"token": "x", "id": 1}, MASK]
    assert value["a"]["b"] == 1  # a copy: the caller's value is untouched
    assert masked_arguments(value, True) is None
    assert masked_arguments(value, False) is value


@pytest.mark.parametrize(("env", "explicit", "on"), [
    (None, None, False), ("true", None, True), ("TRUE", None, True), ("false", None, False),
    ("span_and_event", None, True), ("no_content", None, False), ("true", False, False),
    (None, True, True),
])
def test_content_capture_follows_the_genai_convention_unless_configured(
        env: str | None, explicit: bool | None, on: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if env is None:
        monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    else:
        monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", env)
    assert capture_content(explicit) is on


def test_committed_event_of_a_sensitive_tool_still_carries_the_real_call() -> None:
    _turn, seen = decide("openai-chat", AssembleConfig(sensitive_tools=["login"]))
    [event] = [e for e in seen if isinstance(e, CallCommitted) and e.call.name == "login"]
    assert event.call.arguments["password"] == SECRET and event.call.sensitive is True


def test_the_documented_example_prints_what_it_says() -> None:
    """docs/observability.md, "Sensitive tools": run as written, in a fresh interpreter."""
    said = [line[2:] for line in example("sensitive-tool").splitlines() if line.startswith("# the ")]
    assert len(said) == 3
    assert run_example("sensitive-tool") == said
