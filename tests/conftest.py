"""Shared pytest fixtures. Keep this file small: helpers live in importable modules."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from streams_util import find_streams_dir
from toolstream_core.testing import VendorEmulator

from benchmarks.postgres import fresh_database, postgres_server

# litellm fetches its model price list from the network when it is imported, unless told
# to use the copy it ships (ChatLiteLLM and LlamaIndex's LiteLLM import it): no network here.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

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


@pytest.fixture(scope="session")
def emulator() -> Iterator[VendorEmulator]:
    """The one vendor emulator of the suite. Its answers depend only on (seed, API, scenario),
    so tests share it; a test that reads the request log or queues scenarios clears it
    first, or takes ``emu``."""
    with VendorEmulator(seed=0) as server:
        yield server


@pytest.fixture
def emu(emulator: VendorEmulator) -> VendorEmulator:
    """The shared ``emulator`` with an empty queue and request log for this test."""
    emulator.clear()
    return emulator


@pytest.fixture(scope="session")
def postgres() -> Iterator[str]:
    """A real PostgreSQL 16 for this pytest process (``pgserver``, started on first use, stopped
    and removed at the end); its server URL. Tests take ``pg_url``, a database of their own."""
    with postgres_server() as url:
        yield url


@pytest.fixture
def pg_url(postgres: str) -> str:
    """An empty database on the session's PostgreSQL, for this test alone."""
    return fresh_database(postgres)
