"""Fixtures for the LlamaIndex shim tests (the emulator fixtures `emulator` and `emu` come from
tests/conftest.py)."""

from __future__ import annotations

import warnings

# Collected only where llama_index is installed (tests/conftest.py); a broken install fails here.
import llama_index.core  # noqa: F401

# The workflows runtime warns when it snapshots a context holding the (unserialisable) memory.
warnings.filterwarnings("ignore", message=".*unserializable key.*")
