"""The started-ledger's rule as both agents apply it (the stores are tested in each shim)."""

from __future__ import annotations

import json

from toolstream_core.integration import (
    LEDGER_STATES,
    is_repeatable,
    ledger_entry,
    ledger_key,
    may_run,
    not_repeated_text,
)


def test_only_a_call_without_an_entry_may_run() -> None:
    assert may_run(None)
    for state in LEDGER_STATES:
        assert not may_run(ledger_entry("t", "c1", "write_file", state))


def test_the_key_holds_scope_message_and_call_not_a_task_id() -> None:
    assert json.loads(ledger_key("thread", None, "c1")) == ["thread", "", "c1"]
    assert ledger_key("a", "m", "c1") != ledger_key("b", "m", "c1")
    assert ledger_key("a", "m1", "c1") != ledger_key("a", "m2", "c1")


def test_the_words_say_what_the_earlier_attempt_got_to() -> None:
    started = not_repeated_text("write_file", "c1", ledger_entry("t", "c1", "write_file", "started"))
    finished = not_repeated_text("write_file", "c1", {"state": "finished"})
    assert started.endswith("[not_repeated]") and "'write_file' (id c1)" in started
    assert "started (it may have run in part or in full)" in started
    assert "ran to its end" in finished


def test_only_true_declares_a_tool_repeatable() -> None:
    assert is_repeatable(True)
    assert not any(is_repeatable(v) for v in (None, False, "true", 1))
