"""Fixtures for the LlamaIndex shim tests (the emulator fixture comes from the toolstream plugin)."""

from __future__ import annotations

import warnings

import pytest

pytest.importorskip("llama_index.core", reason="the llamaindex extra is not installed")

# The workflows runtime warns when it snapshots a context holding the (unserialisable) memory.
warnings.filterwarnings("ignore", message=".*unserializable key.*")
