"""The started-ledger's rule as both agents apply it (the stores are tested in each shim)."""

from __future__ import annotations

import json

from toolstream_core.integration import StartedLedger


def test_only_a_call_without_an_entry_may_run() -> None:
    assert StartedLedger.may_run(None)
    for state in StartedLedger.STATES:
        assert not StartedLedger.may_run(StartedLedger.entry("t", "c1", "write_file", state))


def test_the_key_holds_scope_message_and_call_not_a_task_id() -> None:
    assert json.loads(StartedLedger.key("thread", None, "c1")) == ["thread", "", "c1"]
    assert StartedLedger.key("a", "m", "c1") != StartedLedger.key("b", "m", "c1")
    assert StartedLedger.key("a", "m1", "c1") != StartedLedger.key("a", "m2", "c1")


def test_the_words_say_what_the_earlier_attempt_got_to() -> None:
    entry = StartedLedger.entry("t", "c1", "write_file", "started")
    started = StartedLedger.not_repeated_text("write_file", "c1", entry)
    finished = StartedLedger.not_repeated_text("write_file", "c1", {"state": "finished"})
    assert started.endswith("[not_repeated]") and "'write_file' (id c1)" in started
    assert "started (it may have run in part or in full)" in started
    assert "ran to its end" in finished


def test_only_true_declares_a_tool_repeatable() -> None:
    assert StartedLedger.is_repeatable(True)
    assert not any(StartedLedger.is_repeatable(v) for v in (None, False, "true", 1))
