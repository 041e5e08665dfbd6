"""The deployment of docs/deploy.md: the ``langgraph.json`` a LangGraph server loads.

The file is read and validated by LangGraph's CLI; the graph it names is imported from the
path it gives, as the server does, and runs with what the server would attach to it: a
Postgres checkpointer and store (here the suite's real PostgreSQL), against the emulator.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
from docs_examples import ROOT, blocks
from langchain_core.messages import AIMessage
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.store.postgres import PostgresStore
from langgraph_cli.config import validate_config_file
from toolstream_core.testing import VendorEmulator

from benchmarks.postgres import setup_langgraph_tables
from benchmarks.scale_out import pairing_problems
from langchain_toolstream import read_record

DEPLOY = ROOT / "docs" / "deploy"


def served_graph(monkeypatch: pytest.MonkeyPatch, emu: VendorEmulator, notes: Path) -> Any:
    """The graph ``langgraph.json`` names, loaded from its file as the server loads it."""
    config = validate_config_file(DEPLOY / "langgraph.json")
    assert "toolstream-gate[langchain]" in config["dependencies"]
    file, _, attribute = str(config["graphs"]["agent"]).partition(":")
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    monkeypatch.setenv("OPENAI_BASE_URL", emu.base_url + "/v1")
    monkeypatch.setenv("NOTES_DIR", str(notes))
    spec = importlib.util.spec_from_file_location("deployed_agent", DEPLOY / file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, attribute)


def test_the_langgraph_json_graph_runs_gated_on_postgres(
        monkeypatch: pytest.MonkeyPatch, emu: VendorEmulator, pg_url: str, tmp_path: Path) -> None:
    graph = served_graph(monkeypatch, emu, tmp_path)
    setup_langgraph_tables(pg_url)
    emu.queue("openai-chat", "truncated_length", "single_call", "text")
    config: Any = {"configurable": {"thread_id": "deployed"}}
    with PostgresSaver.from_conn_string(pg_url) as saver, \
            PostgresStore.from_conn_string(pg_url) as store:
        served = graph.copy(update={"checkpointer": saver, "store": store})
        served.invoke({"messages": [("user", "write my notes")]}, config, durability="sync")
        state = served.get_state(config).values
        ledger = [item.value for item in store.search(("toolstream", "started"))]
    records = [read_record(m) for m in state["messages"] if isinstance(m, AIMessage)]
    assert [([c["reason"] for c in r["rejected"]], [c["name"] for c in r["committed"]])
            for r in records if r] == [(["stream_truncated"], []), ([], ["write_file"]), ([], [])]
    [written] = list(tmp_path.iterdir())  # the cut call wrote nothing; the complete one, once
    assert [(e["name"], e["state"]) for e in ledger] == [("write_file", "finished")]
    assert set(emu.statuses) == {200} and len(emu.requests) == 3
    assert all(pairing_problems(r.body) == [] for r in emu.requests)
    assert written.read_text(encoding="utf-8")


def test_the_page_shows_the_files_as_they_are() -> None:
    shown = [b for b in blocks() if b.page.name == "deploy.md" and b.kind == "fragment"]
    assert [b.lang for b in shown[:2]] == ["json", "python"]
    assert shown[0].code == (DEPLOY / "langgraph.json").read_text(encoding="utf-8")
    assert shown[1].code == (DEPLOY / "agent.py").read_text(encoding="utf-8")
