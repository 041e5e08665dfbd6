"""Shared pytest fixtures. Keep this file small: helpers live in importable modules."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from streams_util import find_streams_dir

# tests/llamaindex runs in the "llamaindex" env (`.[dev-llamaindex]`, .ci/run). The "latest" env
# (`.[dev]`) has no LlamaIndex, whose integrations pin older SDK majors: there the directory is
# not collected at all (said in the header), rather than collected and skipped.
HAS_LLAMAINDEX = importlib.util.find_spec("llama_index") is not None
collect_ignore = [] if HAS_LLAMAINDEX else ["llamaindex"]


def pytest_report_header() -> str:
    return "tests/llamaindex: " + ("collected" if HAS_LLAMAINDEX
                                   else "not collected (llama_index is not installed)")


@pytest.fixture(scope="session")
def streams_dir() -> Path:
    """The corpus of real vendor streams shipped in ``tests/streams`` (missing = a failure)."""
    return find_streams_dir()
