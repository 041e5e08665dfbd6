"""The pytest plugin, exercised the way a user would: a test file run by pytester.

The plugin is loaded through its ``pytest11`` entry point in the inner runs
(``-p toolstream_core.testing.pytest_plugin`` is not passed), so these tests
also prove the registration works.
"""

from __future__ import annotations

import pytest

# pytester's in-process runs put sys.modules back as it was after each run, so a module
# first imported inside one is imported anew by the next, and PyYAML's C loader does not
# survive that. The plugin imports vcrpy (and so PyYAML) only in a test that uses a cassette:
# import them here, once, before the inner runs.
import vcr  # noqa: F401
import yaml  # noqa: F401

pytest_plugins = ["pytester"]

# Plugins of the dev venv that cost seconds per inner session and play no part here.
INNER = ("-q", "-p", "no:cacheprovider", "-p", "no:codspeed", "-p", "no:benchmark",
         "-p", "no:langsmith", "-p", "no:syrupy", "-p", "no:hypothesispytest",
         "-p", "no:recording")

AGENT_TESTS = '''
import openai
import pytest

from toolstream_core import Assembler
from toolstream_core.testing import TOOLS
from toolstream_core.testing._drops import is_dropped_connection


def run_turn(client, model="gpt-4.1-mini"):
    """A tiny agent turn: stream, assemble with toolstream, return the Turn."""
    assembler = Assembler(tools=TOOLS, provider="openai-chat")
    error = None
    try:
        for chunk in client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": "go"}], stream=True
        ):
            assembler.feed(chunk)
    except Exception as exc:
        error = exc
    return assembler.finish(transport_complete=error is None, error=error)


@pytest.mark.toolstream_cassette("openai-chat/truncated_length")
def test_truncated_call_is_rejected(toolstream_cassette):
    turn = run_turn(openai.OpenAI(api_key="test", max_retries=0))
    assert [c.raw_arguments for c in turn.rejected] == ['{"path":"/tmp/a']
    assert turn.committed == ()
    assert toolstream_cassette.play_count == 1


@pytest.mark.toolstream_cassette("openai-chat/dropped_connection")
def test_dropped_connection_raises_like_live():
    turn = run_turn(openai.OpenAI(api_key="test", max_retries=0))
    assert is_dropped_connection(turn.error), repr(turn.error)
    assert [str(c.reason) for c in turn.rejected] == ["stream_truncated"]


def test_emulator_fixture(toolstream_emulator):
    toolstream_emulator.queue("openai-chat", "parallel_calls")
    client = openai.OpenAI(base_url=toolstream_emulator.base_url + "/v1", api_key="x",
                           max_retries=0)
    turn = run_turn(client)
    assert [c.arguments for c in turn.committed] == [{"city": "Paris"}, {"city": "Tokyo"}]
    assert run_turn(client).calls == ()  # queue empty: plain text
    assert len(toolstream_emulator.requests) == 2


@pytest.mark.toolstream_emulator(seed=7)
def test_emulator_seed_marker(toolstream_emulator):
    assert toolstream_emulator.seed == 7
'''


def test_marker_and_fixtures_in_a_user_test_file(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_tsplugin_user_agent=AGENT_TESTS)
    result = pytester.runpytest_inprocess(*INNER)
    result.assert_outcomes(passed=4)


def test_unrecorded_request_fails_the_test_offline(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_tsplugin_offline='''
import anthropic
import pytest

@pytest.mark.toolstream_cassette("anthropic/text")
def test_second_request_is_not_in_the_cassette():
    client = anthropic.Anthropic(api_key="test", max_retries=0)
    msg = [{"role": "user", "content": "hi"}]
    list(client.messages.create(model="m", max_tokens=5, messages=msg, stream=True))
    list(client.messages.create(model="m", max_tokens=5, messages=msg, stream=True))
''')
    result = pytester.runpytest_inprocess(*INNER)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*CannotOverwriteExistingCassetteException*"])


def test_bad_marker_uses_are_reported(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_tsplugin_bad='''
import pytest

@pytest.mark.toolstream_cassette("anthropic/no_such_scenario")
def test_missing():
    pass

def test_fixture_without_marker(toolstream_cassette):
    pass
''')
    result = pytester.runpytest_inprocess(*INNER)
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(["*no cassette 'anthropic/no_such_scenario'*",
                                 "*needs @pytest.mark.toolstream_cassette*"])


def test_ini_cassette_dir_points_at_user_cassettes(pytester: pytest.Pytester) -> None:
    from toolstream_core.testing._recording import CASSETTE_DIR

    own = pytester.path / "my_cassettes" / "anthropic"
    own.mkdir(parents=True)
    (own / "mine.yaml").write_bytes((CASSETTE_DIR / "anthropic" / "no_args.yaml").read_bytes())
    pytester.makeini("[pytest]\ntoolstream_cassette_dir = my_cassettes\n")
    pytester.makepyfile(test_tsplugin_own='''
import anthropic
import pytest

def _tool_names():
    client = anthropic.Anthropic(api_key="test", max_retries=0)
    events = list(client.messages.create(model="m", max_tokens=5, stream=True,
                                         messages=[{"role": "user", "content": "hi"}]))
    return [e.content_block.name for e in events if e.type == "content_block_start"]

@pytest.mark.toolstream_cassette("anthropic/mine")
def test_replays_own_cassette():
    assert _tool_names() == ["get_time"]


@pytest.mark.toolstream_cassette("anthropic/single_call")
def test_bundled_cassettes_still_found():
    assert _tool_names() == ["write_file"]
''')
    result = pytester.runpytest_inprocess(*INNER)
    result.assert_outcomes(passed=2)


#: What the plugin may add to a pytest process that uses neither a cassette nor the emulator:
#: the packages it sits in, whose names load on first use (``toolstream_core._lazy``).
PLUGIN_ONLY = ["toolstream_core", "toolstream_core.testing", "toolstream_core.testing.pytest_plugin"]


def test_importing_the_plugin_loads_nothing_but_its_packages() -> None:
    """pytest imports the plugin in every run of every project that installed the package
    (issue 30: it cost ~375 ms with the emulator, vcrpy and the SDK helpers)."""
    import json
    import subprocess
    import sys

    code = ("import json, sys, pytest\nbefore = set(sys.modules)\n"
            "import toolstream_core.testing.pytest_plugin\n"
            "print(json.dumps(sorted(set(sys.modules) - before)))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          timeout=120)
    assert json.loads(done.stdout) == PLUGIN_ONLY


def test_a_run_that_uses_no_cassette_or_emulator_loads_no_more(pytester: pytest.Pytester) -> None:
    """The marker is registered and the autouse fixture runs, with nothing else loaded."""
    pytester.makepyfile(test_tsplugin_unused=f'''
import sys

def test_plain():
    assert sorted(m for m in sys.modules if m.startswith("toolstream")) == {PLUGIN_ONLY!r}
''')
    result = pytester.runpytest_subprocess(*INNER, "--strict-markers", "--markers")
    result.stdout.fnmatch_lines(["*toolstream_cassette(name, *", "*toolstream_emulator(seed=0)*"])
    result = pytester.runpytest_subprocess(*INNER)
    result.assert_outcomes(passed=1)
