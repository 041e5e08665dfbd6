"""Every bad input the command gets is one line on stderr, says what to do, and exits non-zero.

Each case drives the real entry point in a subprocess (the `run_cli` fixture).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_util import CASSETTES, RunCli
from toolstream_core import AssembleConfig


def _one_line(proc: object, code: int) -> str:
    """stderr of a failed run: exactly one line, no traceback, nothing on stdout."""
    err: str = proc.stderr  # type: ignore[attr-defined]
    assert proc.returncode == code, (proc.stdout, err)  # type: ignore[attr-defined]
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert proc.stdout == ""  # type: ignore[attr-defined]
    return err


def _cut_cassette(tmp_path: Path) -> Path:
    """A bundled cassette cut right after its first request: still valid YAML."""
    text = (CASSETTES / "openai-chat" / "single_call.yaml").read_text(encoding="utf-8")
    cut = tmp_path / "cut.yaml"
    cut.write_text(text[: text.index("  response:")], encoding="utf-8")
    return cut


def test_garbage_yaml_cassette(run_cli: RunCli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("foo: [unclosed\n  - : :\n", encoding="utf-8")
    err = _one_line(run_cli("replay", str(bad)), 3)
    assert "not a YAML cassette" in err and "line 2" in err and "give a vcrpy cassette" in err


def test_cut_cassette_is_an_error_on_replay(run_cli: RunCli, tmp_path: Path) -> None:
    err = _one_line(run_cli("replay", str(_cut_cassette(tmp_path))), 3)
    assert "cut short" in err and "record it again" in err


def test_cut_cassette_is_an_error_on_fuzz(run_cli: RunCli, tmp_path: Path) -> None:
    err = _one_line(run_cli("fuzz", str(_cut_cassette(tmp_path)), "--cases", "10"), 3)
    assert "cut short" in err


def test_cut_inside_the_response_is_an_error_too(run_cli: RunCli, tmp_path: Path) -> None:
    text = (CASSETTES / "anthropic" / "single_call.yaml").read_text(encoding="utf-8")
    cut = tmp_path / "cut.yaml"
    cut.write_text(text[: text.index("    status:")], encoding="utf-8")
    assert "cut short" in _one_line(run_cli("replay", str(cut)), 3)


def test_replay_of_an_empty_directory_names_it(run_cli: RunCli, tmp_path: Path) -> None:
    err = _one_line(run_cli("replay", str(tmp_path)), 3)
    assert str(tmp_path) in err and "give a cassette" in err


def test_config_that_is_a_directory(run_cli: RunCli, tmp_path: Path) -> None:
    cassette = CASSETTES / "openai-chat" / "text.yaml"
    err = _one_line(run_cli("replay", "--config", str(tmp_path), str(cassette)), 3)
    assert "is a directory, not a config file" in err


def test_a_subcommands_bad_option_names_the_subcommand(run_cli: RunCli) -> None:
    cassette = CASSETTES / "openai-chat" / "text.yaml"
    err = _one_line(run_cli("replay", str(cassette), "--bogus"), 2)
    assert err.startswith("toolstream replay: error: unrecognized arguments: --bogus")
    assert "toolstream replay --help" in err


def test_demo_unknown_scenario_lists_the_names(run_cli: RunCli) -> None:
    err = _one_line(run_cli("demo", "--scenario", "bogus"), 3)
    assert "'bogus'" in err and "truncated_length" in err and "single_call" in err


def test_demo_too_narrow(run_cli: RunCli) -> None:
    err = _one_line(run_cli("demo", "--width", "5"), 2)
    assert "--width 5 is too narrow" in err and "80" in err


def test_record_into_a_missing_directory(run_cli: RunCli, tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text('{"get_time": {"type": "object"}}', encoding="utf-8")
    target = tmp_path / "missing" / "dir" / "x.yaml"
    err = _one_line(run_cli("record", "--api", "openai-chat", "--model", "m", "--prompt", "p",
                            "--tools", str(tools), "-o", str(target)), 2)
    assert "does not exist" in err and "create it first" in err
    assert not target.parent.exists()


@pytest.mark.parametrize("source", ["missing.yaml", Path("missing.yaml")])
def test_from_yaml_on_a_missing_file_says_so(source: str | Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=r"missing\.yaml: no such config file"):
        AssembleConfig.from_yaml(source)
    (tmp_path / "missing.yaml").write_text("agent_stream_assemble:\n  mode: lenient\n",
                                           encoding="utf-8")
    assert AssembleConfig.from_yaml(source).mode == "lenient"


def test_from_yaml_parse_error_is_one_line() -> None:
    with pytest.raises(ValueError) as info:
        AssembleConfig.from_yaml("agent_stream_assemble:\n  mode: [x\n")
    assert "\n" not in str(info.value) and "at line" in str(info.value)


def test_gateway_unknown_scenario_lists_the_names(run_cli: RunCli) -> None:
    err = _one_line(run_cli("demo", "--gateway", "--scenario", "bogus"), 2)
    assert "'bogus'" in err and "choose from:" in err and "missing_index" in err


def test_tools_file_that_does_not_parse(run_cli: RunCli, tmp_path: Path) -> None:
    tools = tmp_path / "tools.yaml"
    tools.write_text("foo: [unclosed\n  - : :\n", encoding="utf-8")
    err = _one_line(run_cli("record", "--api", "openai-chat", "--model", "m", "--prompt", "p",
                            "--tools", str(tools), "-o", str(tmp_path / "x.yaml")), 3)
    assert "not valid JSON/YAML" in err and "line 2" in err
