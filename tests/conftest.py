"""Shared pytest fixtures. Keep this file small: helpers live in importable modules."""

from __future__ import annotations

from pathlib import Path

import pytest
from streams_util import find_streams_dir


@pytest.fixture(scope="session")
def streams_dir() -> Path:
    """The corpus of real vendor streams shipped in ``tests/streams`` (missing = a failure)."""
    return find_streams_dir()
