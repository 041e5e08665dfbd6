"""The real-vendor cassettes (``cassettes/real``) and the verdict each must reach.

Shared by the replay tests of the SDKs (``tests/testing``), the LangChain shim and the
LlamaIndex shim, so all three hold the same cassettes to the same outcome: the one
``tests/core/stream_expectations.py`` wrote down for the corpus stream the cassette re-frames,
and the factual calls of its ``*.expected.json``.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from streams_util import REPO_STREAMS, load_stream

sys.path.append(str(Path(__file__).resolve().parent / "core"))  # the expectations table lives there
from stream_expectations import EXPECTATIONS, Outcome

__all__ = ["CLIENT_KINDS", "REAL_CASSETTES", "RealCase", "check_verdict", "real_case_params", "real_cases"]

REAL_CASSETTES = Path(__file__).resolve().parents[1] / "cassettes" / "real"
#: ``kind`` values of ``expected.json`` that are client calls (the rest run on the vendor's side).
CLIENT_KINDS = frozenset({"function", "tool_use", "custom_tool_call"})


@dataclass(frozen=True)
class RealCase:
    """One real cassette: where it is, the model in its URL, and what it must produce."""

    api: str
    stem: str
    path: Path
    model: str
    outcome: Outcome
    client_calls: list[dict[str, Any]]

    @property
    def id(self) -> str:
        return f"{self.api}/{self.stem}"


def _model_of(api: str, uri: str) -> str:
    """The model the request must name: Gemini's is in the path, the others' is free."""
    if api == "gemini":
        return uri.split("/models/", 1)[1].split(":", 1)[0]
    return {"openai-chat": "gpt-4o-mini", "openai-responses": "gpt-4o-mini"}.get(api, "claude-sonnet-4-5")


def real_cases(apis: Iterable[str] = ("openai-chat", "openai-responses", "anthropic", "gemini")) -> list[RealCase]:
    """Every cassette under ``cassettes/real/<api>/``, with its corpus stream's expectations."""
    cases = []
    for api in apis:
        for path in sorted((REAL_CASSETTES / api).glob("*.yaml")):
            doc = yaml.safe_load(path.read_text(encoding="utf-8"))
            uri = doc["interactions"][0]["request"]["uri"]
            stream = load_stream(REPO_STREAMS / api / f"{path.stem}.jsonl")
            assert stream.expected is not None, path
            client = [c for c in stream.expected["tool_calls"] if c["kind"] in CLIENT_KINDS]
            cases.append(RealCase(api, path.stem, path, _model_of(api, uri),
                                  EXPECTATIONS[f"{api}/{path.stem}"], client))
    return cases


def real_case_params(*, marker: bool = False) -> list[Any]:
    """One pytest param per cassette; ``marker`` activates it with ``toolstream_cassette``."""
    return [
        pytest.param(case, id=case.id,
                     marks=[pytest.mark.toolstream_cassette(str(case.path))] if marker else [])
        for case in real_cases()
    ]


def check_verdict(case: RealCase, committed: list[tuple[str | None, str]],
                  rejected: list[tuple[str | None, str, str]], complete: bool | None) -> None:
    """Committed ``(id, name)``, rejected ``(id, name, reason)`` and completeness as expected.

    The expectation counts and reasons come from the table; names must be the stream's client
    calls (as a multiset: a shim may list committed and rejected calls apart), and every id the
    vendor sent must be the id the caller sees.
    """
    outcome = case.outcome
    got = (len(committed), len(rejected), {reason for _, _, reason in rejected})
    assert got == (outcome.committed, outcome.rejected, set(outcome.reasons)), (outcome.why, committed, rejected)
    if complete is not None:
        assert complete is outcome.complete, outcome.why
    names = Counter(name for _, name in committed) + Counter(name for _, name, _ in rejected)
    assert names == Counter(c["name"] for c in case.client_calls), names
    seen_ids = {i for i, _ in committed} | {i for i, _, _ in rejected}
    vendor_ids = {c["id"] for c in case.client_calls if c["id"]}
    assert vendor_ids <= seen_ids, (vendor_ids, seen_ids)
