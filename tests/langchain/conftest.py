"""Fixtures for the LangChain shim tests: one emulator, the real chat model classes, tools that
record what they were asked to do.

Everything here is real above the HTTP line: the vendor SDKs (``openai``, ``anthropic``,
``google-genai``) speak to the emulator on 127.0.0.1, LangChain's integration classes drive
them, and ``create_agent`` / LangGraph run the tools.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from lc_util import APIS, Recorder, make_model, recording_tools
from toolstream_core.testing import VendorEmulator


@pytest.fixture(scope="session")
def emulator() -> Iterator[VendorEmulator]:
    with VendorEmulator(seed=0) as emu:
        yield emu


@pytest.fixture
def emu(emulator: VendorEmulator) -> VendorEmulator:
    """The shared emulator, with an empty queue and request log for this test."""
    emulator.clear()
    return emulator


@pytest.fixture(params=APIS)
def api(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def model(api: str, emu: VendorEmulator) -> Any:
    return make_model(api, emu)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def tools(recorder: Recorder) -> list[Any]:
    return recording_tools(recorder)


@pytest.fixture(autouse=True)
def _quiet_gemini_schema_warnings() -> None:
    # langchain-google-genai logs one warning per bound tool for ``additionalProperties``.
    logging.getLogger("langchain_google_genai").setLevel(logging.ERROR)
