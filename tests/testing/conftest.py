"""Shared fixture for the emulator / cassette tests: one emulator per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from toolstream_core.testing import VendorEmulator


@pytest.fixture(scope="module")
def emu() -> Iterator[VendorEmulator]:
    with VendorEmulator(seed=0) as emulator:
        yield emulator
