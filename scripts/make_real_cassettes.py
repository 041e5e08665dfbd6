#!/usr/bin/env python3
"""Regenerate ``cassettes/real/`` from the in-repo stream corpus (after ``refresh_streams.py``).

    python scripts/make_real_cassettes.py [STREAMS_DIR [OUT_DIR]]

The work is done by :mod:`toolstream_core.testing._real_cassettes` (importable, so the tests
and users can regenerate too); this wrapper only makes it runnable from a checkout.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "core"))

from toolstream_core.testing._real_cassettes import main

if __name__ == "__main__":
    raise SystemExit(main())
