"""Issue 11 item 2: the Assembler shows feed, cancel, finish and read-only state; adapters speak
to the call table through the ``Sink`` protocol; every state change goes through one table."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import toolstream_core
from toolstream_core import Assembler, CallState, Reason
from toolstream_core._call import TRANSITIONS, Call, IllegalTransition, Move, move

CORE = Path(toolstream_core.__file__).parent


def test_assembler_public_surface_is_feed_cancel_finish_and_state() -> None:
    public = {name for name in dir(Assembler) if not name.startswith("_")}
    assert public == {"feed", "cancel", "finish", "finished", "provider", "config", "max_output_tokens",
                      "spent"}
    for name in ("finished", "provider", "config", "spent"):
        assert isinstance(getattr(Assembler, name), property)
        assert getattr(Assembler, name).fset is None, f"{name} must be read-only"


def test_assembler_state_cannot_be_assigned() -> None:
    assembler = Assembler(provider="anthropic")
    with pytest.raises(AttributeError):
        assembler.provider = "gemini"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        assembler.open = None  # type: ignore[attr-defined]
    assembler.max_output_tokens = 5  # the shims learn the limit late: settable until finish
    assert assembler.max_output_tokens == 5


def test_adapters_never_import_the_assembler() -> None:
    for path in sorted((CORE / "_adapters").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert not any(name.endswith("_assembler") or name.endswith("_table") for name in imported), path.name


def test_state_is_written_only_by_move() -> None:
    writers = []
    for path in sorted(CORE.glob("*.py")) + sorted((CORE / "_adapters").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Attribute) and target.attr == "state":
                        writers.append(f"{path.name}:{node.lineno}")
    # Call.__init__ (the initial state) and move() itself.
    assert [w.split(":")[0] for w in writers] == ["_call.py", "_call.py"], writers


@pytest.mark.parametrize("state", [CallState.committed, CallState.failed, CallState.cancelled])
@pytest.mark.parametrize("what", list(Move))
def test_terminal_states_have_no_way_out(state: CallState, what: Move) -> None:
    call = Call(("k",), 0, 0, 0, "function")
    call.state = state
    with pytest.raises(IllegalTransition):
        move(call, what)
    assert call.state is state


def test_close_happens_only_from_open() -> None:
    assert {(s, m) for (s, m) in TRANSITIONS if m is Move.close} == {(CallState.open, Move.close)}
    call = Call(("k",), 0, 0, 0, "function")
    assert move(call, Move.close) is CallState.args_complete
    with pytest.raises(IllegalTransition):
        move(call, Move.close)
    assert move(call, Move.commit) is CallState.committed


def test_idle_timeout_still_fails_undecided_calls_through_the_driver() -> None:
    from toolstream_core._assembler import fail_unfinished

    assembler = Assembler(provider="anthropic")
    assembler.feed({"type": "content_block_start", "index": 0,
                    "content_block": {"type": "tool_use", "id": "t1", "name": "add", "input": {}}})
    fail_unfinished(assembler, Reason.idle_timeout, "no data for 1 s")
    turn = assembler.finish(transport_complete=False)
    assert [(c.state, c.reason) for c in turn.calls] == [(CallState.failed, Reason.idle_timeout)]
