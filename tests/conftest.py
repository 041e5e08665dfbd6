"""Shared pytest fixtures. Keep this file small: helpers live in importable modules."""

from __future__ import annotations

from pathlib import Path

import pytest
from streams_util import ENV_VAR, find_streams_dir


@pytest.fixture(scope="session")
def streams_dir() -> Path:
    """The shared corpus of real vendor streams; tests that need it skip when it is absent."""
    found = find_streams_dir()
    if found is None:
        pytest.skip(
            f"real-stream corpus not found: set ${ENV_VAR} or place it at <repo>/../shared/streams"
        )
    return found
