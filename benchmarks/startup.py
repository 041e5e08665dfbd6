"""What installing toolstream costs before any stream: ``python -m benchmarks.startup [-n N]``.

Issue 30, targets: ``import toolstream_core`` (and the names a stream needs) under 50 ms, and
the pytest plugin within 20 ms of ``-p no:toolstream`` on ``pytest --co`` of an empty test file.
Each figure is the least CPU time (user + system) of ``N`` fresh interpreters: CPU time, not
wall time, because on a shared machine a process waiting for a core is not doing the work, and
the least because an import has one true cost that noise only adds to. Bytecode is cached
first, as in an installed wheel. The tests (``tests/test_layers.py``,
``tests/testing/test_pytest_plugin.py``) pin what is loaded; this only measures it.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

IMPORTS = {
    "import toolstream_core": "import toolstream_core",
    "from toolstream_core import Assembler, assemble, aassemble":
        "from toolstream_core import Assembler, assemble, aassemble",
    "the pytest plugin, after `import pytest`": "import toolstream_core.testing.pytest_plugin",
}
_TIMED = "import time; {setup}; t = time.process_time(); {stmt}; print(time.process_time() - t)"


def _in_process(stmt: str, setup: str, n: int) -> float:
    """The least CPU time ``stmt`` took in ``n`` fresh interpreters (after ``setup``)."""
    code = _TIMED.format(setup=setup or "pass", stmt=stmt)
    return min(float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                    check=True).stdout) for _ in range(n))


def _child_cpu(args: list[str], cwd: str) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(args, cwd=cwd, capture_output=True, check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def pytest_startup(n: int) -> dict[str, float]:
    """``pytest --co`` of one empty test, with and without the plugin (least CPU of ``n``)."""
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "test_empty.py").write_text("def test_nothing():\n    pass\n", encoding="utf-8")
        Path(tmp, "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
        base = [sys.executable, "-m", "pytest", "--co", "-q", "-p", "no:cacheprovider"]
        _child_cpu(base, tmp)  # bytecode and pytest's rewrite cache, off the clock
        out = {"with": float("inf"), "without": float("inf")}
        for _ in range(n):  # interleaved, so drift on the machine hits both alike
            out["with"] = min(out["with"], _child_cpu(base, tmp))
            out["without"] = min(out["without"], _child_cpu([*base, "-p", "no:toolstream"], tmp))
    return out


def run(n: int = 15) -> dict[str, float]:
    subprocess.run([sys.executable, "-c", "import toolstream_core.testing.pytest_plugin; "
                    "from toolstream_core import *"], check=True)  # cache the bytecode
    out = {label: _in_process(stmt, "import pytest" if "pytest" in label else "", n)
           for label, stmt in IMPORTS.items()}
    runs = pytest_startup(max(3, n // 3))
    out["pytest --co, with the plugin"] = runs["with"]
    out["pytest --co, -p no:toolstream"] = runs["without"]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.startup", description=__doc__)
    parser.add_argument("-n", type=int, default=15, help="fresh interpreters per figure")
    args = parser.parse_args(argv)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed wheel has its bytecode
    results = run(args.n)
    for label, seconds in results.items():
        sys.stdout.write(f"{label}: {seconds * 1000:.1f} ms CPU\n")
    added = results["pytest --co, with the plugin"] - results["pytest --co, -p no:toolstream"]
    sys.stdout.write(f"the plugin adds {added * 1000:.1f} ms CPU to pytest start-up\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
