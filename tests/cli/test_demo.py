"""`toolstream demo`: offline, through the real SDKs and frameworks, toolstream vs the rest."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from cli_util import ANSI, RunCli
from toolstream_core.testing._scenarios import build_script, scenario_rng

APIS = ("openai-chat", "openai-responses", "anthropic", "gemini", "bedrock-converse", "ollama",
        "cohere")
PEERS = ("langchain", "llamaindex", "sdk")
#: Where today's stack gets even a clean call wrong, from its own code:
#: langchain-cohere 0.6 gives every streamed tool-call chunk a fresh uuid, so ``full +
#: chunk`` cannot merge them (a named call with ``{}``, nameless fragments); LlamaIndex's
#: Cohere class streams through the v1 chat API and its ``stream_chat`` reads text only.
CLEAN_CALL_FAULTS = {("cohere", "langchain"), ("cohere", "llamaindex")}
# The "latest" env has no LlamaIndex (it pins older SDK majors): its column must say so.
HAS_LLAMAINDEX = importlib.util.find_spec("llama_index") is not None
RUNNING = tuple(p for p in PEERS if HAS_LLAMAINDEX or p != "llamaindex")
OFFLINE = {  # any attempt to reach a vendor would fail loudly instead of leaving the host
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "HTTP_PROXY": "http://127.0.0.1:9",
    "NO_PROXY": "",
}


@pytest.fixture(scope="module")
def demo(run_cli: RunCli) -> dict[str, Any]:
    proc = run_cli("demo", "--json", "--scenario", "truncated_length", "--scenario",
                   "single_call", env=OFFLINE)
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    assert doc["toolstream"] == "demo"
    return doc


def rows(doc: dict[str, Any], scenario: str) -> dict[str, dict[str, Any]]:
    return {r["api"]: r for r in doc["rows"] if r["scenario"] == scenario}


def test_demo_covers_every_api(demo: dict[str, Any]) -> None:
    assert [(r["scenario"], r["api"]) for r in demo["rows"]] == [
        *(("truncated_length", api) for api in APIS),
        *(("single_call", api) for api in APIS),
    ]
    for row in demo["rows"]:
        assert set(row["engines"]) == {*PEERS, "toolstream"}
        for engine in RUNNING:
            assert row["engines"][engine]["status"] in ("ok", "raised"), (row["api"], engine)
        if not HAS_LLAMAINDEX:
            llamaindex = row["engines"]["llamaindex"]
            assert (llamaindex["status"], llamaindex["install_extra"]) == ("unavailable",
                                                                          "llamaindex")


def test_toolstream_rejects_the_truncated_call_the_peers_would_run(demo: dict[str, Any]) -> None:
    truncated = rows(demo, "truncated_length")
    for api, row in truncated.items():
        ts = row["engines"]["toolstream"]
        assert [(c["name"], c["verdict"], c["reason"]) for c in ts["calls"]] == [
            ("write_file", "reject", "stream_truncated")
        ], api
        (result,) = ts["error_results"]
        assert result["tool_call_id"] == ts["calls"][0]["id"]
        # On every API at least one of today's stacks hands the cut call to the runner.
        assert any(row["runs_what_toolstream_rejects"][peer] == ["write_file"]
                   for peer in RUNNING), api

    # The DESIGN's example, from the real LangChain code: {"path":"/tmp/a is run as /tmp/a.
    chat = truncated["openai-chat"]
    assert chat["raw_arguments"] == ['{"path":"/tmp/a']
    langchain = chat["engines"]["langchain"]
    assert [(c["name"], c["verdict"], c["arguments"]) for c in langchain["calls"]] == [
        ("write_file", "run", {"path": "/tmp/a"})
    ]
    assert demo["summary"]["peer_runs_of_rejected_calls"]["langchain"] >= 1
    assert demo["summary"]["toolstream_rejected"] == len(APIS)
    assert demo["summary"]["toolstream_error_results"] == len(APIS)


def test_on_a_clean_call_everyone_agrees(demo: dict[str, Any]) -> None:
    for api, row in rows(demo, "single_call").items():
        spec = build_script("single_call", scenario_rng(0, api, "single_call")).calls[0]
        ts = row["engines"]["toolstream"]
        assert [(c["name"], c["verdict"], c["arguments"]) for c in ts["calls"]] == [
            ("write_file", "commit", spec.arguments)
        ], api
        assert ts["error_results"] == []
        for peer in RUNNING:
            calls = row["engines"][peer]["calls"]
            got = [(c["name"], c["verdict"], c["arguments"]) for c in calls]
            want = [("write_file", "run", spec.arguments)]
            assert (got != want) is ((api, peer) in CLEAN_CALL_FAULTS), (api, peer, got)
        assert row["runs_what_toolstream_rejects"] == {p: [] for p in PEERS}


def _blocked(tmp_path: Path, *modules: str) -> str:
    """A PYTHONPATH entry whose packages shadow ``modules`` and fail to import."""
    root = tmp_path / "blocked"
    for module in modules:
        package = root.joinpath(*module.split("."))
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("raise ImportError('blocked by the test')\n",
                                             encoding="utf-8")
    return str(root)


def test_missing_framework_shows_na_and_the_table_fits(run_cli: RunCli, tmp_path: Path) -> None:
    """With langchain-openai unimportable the LangChain column says how to get it."""
    proc = run_cli("demo", "--api", "openai-chat", "--scenario", "truncated_length",
                   "--color", "always",
                   env={**OFFLINE, "PYTHONPATH": _blocked(tmp_path, "langchain_openai")})
    assert proc.returncode == 0, proc.stderr
    assert "\x1b[" in proc.stdout  # --color always
    text = ANSI.sub("", proc.stdout)
    langchain_column = [line[18:39].strip() for line in text.splitlines()]
    row = langchain_column.index("n/a (install")
    assert langchain_column[row:row + 3] == ["n/a (install", "toolstream-gate", "[langchain])"]
    assert "REJECTS write_file" in text
    assert "stream_truncated" in text
    # the summary does not count an absent framework's runs as zero
    assert "LangChain: not installed (toolstream-gate[langchain])." in text
    assert "LangChain would run" not in text
    if HAS_LLAMAINDEX:
        assert "RUNS write_file" in text  # LlamaIndex still runs the cut call
    else:
        llamaindex_column = [line[39:60].strip() for line in text.splitlines()]
        assert "[llamaindex])" in llamaindex_column
        assert "LlamaIndex: not installed (toolstream-gate[llamaindex])." in text
    assert max(len(line) for line in text.splitlines()) <= 100


@pytest.mark.parametrize(("blocked", "named"), [
    (("vcr",), "vcrpy"),  # the offline replay
    (("anthropic",), "anthropic"),  # the SDK toolstream's own column streams through
    (("vcr", "openai"), "vcrpy, openai"),
])
def test_demo_that_cannot_run_says_so_in_one_line(run_cli: RunCli, tmp_path: Path,
                                                   blocked: tuple[str, ...], named: str) -> None:
    """A missing piece is one line and a non-zero exit, not a table of n/a that exits 0."""
    proc = run_cli("demo", env={**OFFLINE, "PYTHONPATH": _blocked(tmp_path, *blocked)})
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"toolstream demo: cannot run: {named} not installed ")
    assert "toolstream-gate[langchain]" in proc.stderr
    assert "toolstream-gate[llamaindex]" in proc.stderr


def test_demo_of_one_api_needs_only_that_sdk(run_cli: RunCli, tmp_path: Path) -> None:
    proc = run_cli("demo", "--json", "--api", "anthropic", "--scenario", "single_call",
                   env={**OFFLINE, "PYTHONPATH": _blocked(tmp_path, "openai")})
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)["summary"]
    assert (summary["toolstream_committed"], summary["toolstream_rejected"]) == (1, 0)


def test_demo_input_errors_exit_3(run_cli: RunCli, tmp_path: Path) -> None:
    missing = run_cli("demo", "--cassettes", str(tmp_path / "nowhere"))
    assert missing.returncode == 3
    assert "no cassette directory" in missing.stderr
    none = run_cli("demo", "--scenario", "no_such_scenario")
    assert none.returncode == 3
    assert "no cassette for scenario 'no_such_scenario'; choose from:" in none.stderr


def test_demo_prints_its_key_before_the_first_table(run_cli: RunCli) -> None:
    proc = run_cli("demo", "--api", "openai-chat", "--scenario", "truncated_length",
                   "--color", "never")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    key, table = out.index("Key: RUNS"), out.index("─")
    assert key < table
    for word in ("REJECTS", "raises", "SDK helper"):
        assert key < out.index(word) < table


def test_a_cut_structured_output_is_no_object(run_cli: RunCli) -> None:
    """The structured-output row: plain LangChain builds ``Weather(unit="cel")`` from the cut
    call on every API that sent its text; toolstream rejects it everywhere."""
    proc = run_cli("demo", "--json", "--scenario", "structured_call_truncated", env=OFFLINE)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    for api, row in rows(doc, "structured_call_truncated").items():
        ts = row["engines"]["toolstream"]
        assert [(c["name"], c["verdict"], c["reason"]) for c in ts["calls"]] == [
            ("Weather", "reject", "stream_truncated")], api
    langchain = rows(doc, "structured_call_truncated")["openai-chat"]["engines"]["langchain"]
    assert [(c["name"], c["verdict"], c["arguments"]) for c in langchain["calls"]] == [
        ("Weather", "run", {"city": "Paris", "unit": "cel"})]
