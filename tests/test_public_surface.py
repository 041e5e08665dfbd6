"""Every public ``__all__``, pinned: a new public name is a decision, made here (issue 30.4).

Each list below is the module's ``__all__`` exactly, in its sorted order. Adding a name to a
module without adding it here fails, and so does dropping one: the diff of this file is the
diff of the public surface. The decisions behind the lists are
docs/decisions/0074-pinned-lists.md and docs/decisions/0076-shim-names.md.

The lists are read from the source (the ``__all__`` literal), so the test holds in either
environment; where the module imports (its framework is installed), the runtime list and
every name on it are checked too.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SURFACE: dict[str, tuple[str, list[str]]] = {
    "toolstream_core": ("core/toolstream_core/__init__.py", [
        "PROVIDERS", "ArgumentsDelta", "AssembleConfig", "Assembler", "AssemblerClosed",
        "AssemblerEvent", "CallCommitted", "CallOpened", "CallRejected", "CallState", "ErrorResult",
        "Provider", "Reason", "ToolCall", "ToolSpec", "Turn", "aassemble", "assemble",
    ]),
    "toolstream_core.integration": ("core/toolstream_core/integration/__init__.py", [
        "DEFAULT_HISTORY", "FINISH", "RECORD_KEY", "DecisionRecord", "FinishSignal", "GateSession",
        "HistoryCall", "HistoryEdit", "HistoryEntry", "HistoryError", "HistoryPolicy",
        "HistoryProblem", "MessageKit", "OnStreamError", "Pipeline", "ProgressEncoder", "RawSink",
        "RecordView", "RunPolicy", "RunState", "StartedLedger", "StreamIdleTimeout",
        "StructuredOutput", "StructuredOutputError", "TapUnavailableError", "history_args",
        "ollama_tap_kwargs", "settings_limit", "tap_client", "turn_record",
    ]),
    "toolstream_core.testing": ("core/toolstream_core/testing/__init__.py", [
        "API_NAMES", "DEFAULT_PROMPT", "DROPPED_HEADER", "PROFILES", "SCENARIOS", "STALL_SCENARIO",
        "TOOLS", "Expectation", "FuzzReport", "PairingProblem", "Profile", "Received", "Scenario",
        "SourceError", "Stall", "StreamResult", "StreamSource", "VendorEmulator", "Violation",
        "api_from_uri", "decode_body", "default_cassette_dir", "expand_paths", "followup_sdk",
        "history_pairing", "is_dropped_connection", "load_sources", "openai_chat_tools",
        "read_cassette", "recording_vcr", "replay_vcr", "replaying_drops", "request_model",
        "response_body", "run_fuzz", "scenario_tools", "sent_calls", "stream_sdk", "use_cassette",
    ]),
    "toolstream_core.testing.fuzz": ("core/toolstream_core/testing/fuzz.py", [
        "DEFAULT_CASES", "FuzzReport", "SourceError", "Violation", "run_fuzz",
    ]),
    "toolstream_core.sse": ("core/toolstream_core/sse/__init__.py", [
        "UNPARSABLE_KEY", "AWSEventStreamDecoder", "EventDecoder", "JSONArrayStreamDecoder",
        "NDJSONDecoder", "SSEDecoder", "SSEMessage", "StreamFormat", "aiter_events", "format_for",
        "iter_events",
    ]),
    "toolstream_core.vendors": ("core/toolstream_core/vendors/__init__.py", [
        "SDK_EXTRA", "Describe", "aopen_stream", "declare_tools", "make_client", "open_stream",
        "schema_description",
    ]),
    "toolstream_core.agui": ("core/toolstream_core/agui.py", [
        "REJECTED_EVENT_NAME", "AGUIToolCallEvents",
    ]),
    "langchain_toolstream": ("langchain_toolstream/__init__.py", [
        "HistoryError", "StructuredOutputError", "TapUnavailableError", "ToolstreamCallbackHandler",
        "ToolstreamChatModel", "ToolstreamMiddleware", "check_history", "declare_finish_signal",
        "declare_test_double", "error_tool_messages", "message_with_rejected_calls",
        "pair_orphan_calls", "read_record", "with_toolstream",
    ]),
    "llamaindex_toolstream": ("llamaindex_toolstream/__init__.py", [
        "CallCommittedEvent", "CallOpenedEvent", "CallProgressEvent", "CallRejectedEvent",
        "CallStreamEvent", "HistoryError", "ProviderMismatchError", "StructuredOutputError",
        "TapUnavailableError", "ToolstreamFunctionAgent", "ToolstreamLLM", "ToolstreamReActAgent",
        "ToolstreamStreamHandler", "check_history", "declare_finish_signal", "declare_test_double",
        "error_tool_messages", "message_with_rejected_calls", "pair_orphan_calls", "read_record",
        "stream_call_events",
    ]),
}

#: Third-party packages whose absence makes a module unimportable in one of the two envs.
OPTIONAL = ("llama_index", "ag_ui")


def _source_all(path: Path) -> list[str]:
    """The ``__all__`` literal a module assigns at its top level."""
    for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
        if (isinstance(node, ast.Assign) and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == "__all__"):
            value = ast.literal_eval(node.value)
            assert isinstance(value, list)
            return [str(name) for name in value]
    raise AssertionError(f"{path} assigns no __all__ list")


def _isort_key(name: str) -> tuple[int, str]:
    """ruff's RUF022 order: SCREAMING_CASE, then CamelCase, then the rest."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def test_the_reader_sees_a_list_and_refuses_a_module_without_one(tmp_path: Path) -> None:
    good = tmp_path / "good.py"
    good.write_text('"""doc."""\n__all__ = ["b", "A"]\nx = 1\n', encoding="utf-8")
    assert _source_all(good) == ["b", "A"]
    bad = tmp_path / "bad.py"
    bad.write_text("x = 1\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="no __all__"):
        _source_all(bad)


@pytest.mark.parametrize("module", sorted(SURFACE))
def test_each_public_list_is_the_pinned_one(module: str) -> None:
    path, pinned = SURFACE[module]
    assert pinned == sorted(pinned, key=_isort_key), "keep the pinned list in ruff's order"
    assert _source_all(ROOT / path) == pinned


@pytest.mark.parametrize("module", sorted(SURFACE))
def test_each_pinned_name_exists_where_the_module_imports(module: str) -> None:
    try:
        loaded = importlib.import_module(module)
    except ImportError as error:
        # Only a missing framework excuses it; the source list was checked above.
        assert error.name is not None and error.name.split(".")[0] in OPTIONAL, error
        return
    _, pinned = SURFACE[module]
    assert list(loaded.__all__) == pinned
    assert [name for name in pinned if not hasattr(loaded, name)] == []

