"""Rule 6, no repair, ever (docs/DESIGN.md §4.6).

Half JSON is a failed call, not a guess.
"""

from __future__ import annotations

import builders as b
import pytest
from builders import TEXT_VENDORS, make, run
from toolstream_core import CallState, Reason

BROKEN = ['{"path":"/tmp/a', '{"path":"/tmp/a"', '{"a":1,}', "{'a': 1}", '{"a":1', '{"a": tru}', '{a:1}']


@pytest.mark.parametrize("text", BROKEN)
@pytest.mark.parametrize("provider", TEXT_VENDORS)
def test_rule6_half_json_is_a_failed_call_not_a_guess(provider: str, text: str) -> None:
    turn = run(make(provider, [b.Call(id="call_1", name="write", arguments=text, cuts=(3,))]), provider=provider)
    [call] = turn.calls
    assert (call.state, call.reason, call.arguments) == (CallState.failed, Reason.invalid_json, None)
    assert call.raw_arguments == text
