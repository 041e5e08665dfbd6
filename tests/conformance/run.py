"""Conformance: LangChain's own test suites, as shipped and with the gate added.

``python tests/conformance/run.py [WORKDIR]`` (nox session ``conformance``; see
docs/langchain.md#differences-from-the-stock-agent):

1. downloads the sdists of the *installed* ``langchain`` and ``langchain-core`` from PyPI
   (``pip download --no-deps --no-binary :all:``; both ship their unit tests);
2. runs each suite twice in the same environment: as shipped, and gated
   (``lc_gate_plugin``: ``ToolstreamMiddleware()`` added to every ``create_agent``, last and
   then first; ``lc_core_plugin``: LangChain's fakes under ``with_toolstream``);
3. fails on any test that passes as shipped and not gated, unless ``deliberate.py`` lists it:
   in ``DELIBERATE`` (what differs, why it must, which contract rule, our test of it) or in
   ``OPEN`` (not deliberate, not fixed yet, with its issue). A listed pattern none of whose
   tests differs any more also fails the run, so neither list holds a stale entry.

A test that fails as shipped (a snapshot out of date against the installed langgraph, an
optional package missing) says nothing about the gate and is only counted.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib.metadata
import logging
import os
import subprocess
import sys
import tarfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from deliberate import DELIBERATE, OPEN  # noqa: E402

_log = logging.getLogger("conformance")

# (distribution, sdist folder prefix, test paths, gated runs: name -> (plugin, extra env))
SUITES: tuple[tuple[str, str, tuple[str, ...], dict[str, tuple[str, dict[str, str]]]], ...] = (
    ("langchain", "langchain", ("tests/unit_tests/agents",), {
        "gate-last": ("lc_gate_plugin", {}),
        "gate-first": ("lc_gate_plugin", {"TOOLSTREAM_GATE_FIRST": "1"}),
    }),
    ("langchain-core", "langchain_core", ("tests/unit_tests/fake/test_fake_chat_model.py",), {
        "with_toolstream": ("lc_core_plugin", {}),
    }),
)


def _sdist(dist: str, prefix: str, workdir: Path) -> Path:
    """The unpacked sdist of the installed version of ``dist`` (downloaded once per version)."""
    version = importlib.metadata.version(dist)
    root = workdir / f"{prefix}-{version}"
    if root.is_dir():
        return root
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary",
                    ":all:", f"{dist}=={version}", "-d", str(workdir)], check=True)
    archive = workdir / f"{prefix}-{version}.tar.gz"
    with tarfile.open(archive) as tar:
        tar.extractall(workdir, filter="data")
    return root


def _run(root: Path, paths: tuple[str, ...], name: str, plugin: str | None,
         env_extra: dict[str, str]) -> dict[str, str]:
    """Run the suite; return ``test id -> outcome`` (passed, failed, skipped)."""
    report = root / f"junit-{name}.xml"
    env = {**os.environ, **env_extra, "PYTHONPATH": os.pathsep.join(
        p for p in (str(HERE), os.environ.get("PYTHONPATH", "")) if p)}
    command = [sys.executable, "-m", "pytest", *paths, "-q", "-p", "no:cacheprovider",
               "-o", "addopts=--strict-markers", "-n", os.environ.get("CONFORMANCE_WORKERS", "2"),
               f"--junitxml={report}", "-W", "ignore"]
    if plugin:
        command[3:3] = ["-p", plugin]
    start = time.monotonic()
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
    _log.info("== %s %s: %s (%.0fs)", root.name, name,
              done.stdout.strip().splitlines()[-1] if done.stdout else "", time.monotonic() - start)
    if done.returncode in (4, 5) and name.endswith("-again"):
        return {}  # an id pytest could not collect again counts as failed
    if done.returncode not in (0, 1):
        _log.error("%s\n%s", done.stdout[-4000:], done.stderr[-4000:])
        raise SystemExit(f"pytest could not run the {name} suite (exit {done.returncode})")
    outcomes: dict[str, str] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        module = case.get("classname", "").replace(".", "/")
        # junit's classname is "pkg.module.Class"; rebuild pytest's node id from the file
        parts = module.split("/")
        for cut in range(len(parts), 0, -1):
            if (root / ("/".join(parts[:cut]) + ".py")).is_file():
                node = "/".join(parts[:cut]) + ".py::" + "::".join(
                    [*parts[cut:], case.get("name", "")])
                break
        else:
            node = f"{module}::{case.get('name')}"
        if case.find("skipped") is not None:
            outcome = "skipped"
        elif case.find("failure") is not None or case.find("error") is not None:
            outcome = "failed"
        else:
            outcome = "passed"
        # a setup error and the call report share an id: a failure wins
        if outcomes.get(node) != "failed":
            outcomes[node] = outcome
    return outcomes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workdir", nargs="?", default=".conformance", type=Path)
    parser.add_argument("-k", dest="only", default=None, help="run one gated run by name")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stdout)
    # pytest runs with the sdist as its working directory: a relative report path would
    # land under it, so every path handed to it is absolute
    args.workdir = args.workdir.resolve()
    args.workdir.mkdir(parents=True, exist_ok=True)
    patterns = {pattern: "deliberate" for entry in DELIBERATE for pattern in entry.tests}
    patterns.update({pattern: "open" for entry in OPEN for pattern in entry.tests})
    used: set[str] = set()
    differences: list[str] = []
    counts = {"deliberate": 0, "open": 0}
    for dist, prefix, paths, gated in SUITES:
        root = _sdist(dist, prefix, args.workdir)
        shipped = _run(root, paths, "shipped", None, {})
        _log.info("   as shipped: %d passed, %d failed (not the gate's)",
                  sum(v == "passed" for v in shipped.values()),
                  sum(v == "failed" for v in shipped.values()))
        for name, (plugin, env_extra) in gated.items():
            if args.only and args.only != name:
                continue
            outcomes = _run(root, paths, name, plugin, env_extra)
            unlisted: list[str] = []
            for node, outcome in sorted(shipped.items()):
                if outcome != "passed" or outcomes.get(node) == "passed":
                    continue
                key = f"{dist}:{node}"
                found = [p for p in patterns if fnmatch.fnmatchcase(key, p)]
                if not found:
                    unlisted.append(node)
                    continue
                used.update(found)
                counts[patterns[found[0]]] += 1
            if unlisted:
                # once more, alone: a test that measures wall time can miss on a loaded machine;
                # a real difference fails again
                again = _run(root, tuple(unlisted), f"{name}-again", plugin, env_extra)
                differences.extend(f"{name}: {dist}:{node} ({again.get(node, 'missing')})"
                                   for node in unlisted if again.get(node) != "passed")
    stale = [] if args.only else sorted(set(patterns) - used)
    for line in differences:
        _log.error("NOT LISTED: %s", line)
    for pattern in stale:
        _log.error("STALE (its tests pass gated; remove it from deliberate.py): %s", pattern)
    _log.info("conformance: %d not listed, %d deliberate, %d open (issue 36), %d stale patterns",
              len(differences), counts["deliberate"], counts["open"], len(stale))
    return 1 if differences or stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
