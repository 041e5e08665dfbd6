"""Run the benchmarks: ``python -m benchmarks.run [--quick | --full | --smoke] [--out DIR]``.

Prints the ratio tables to stdout and writes ``results.json``, ``results.md`` and
``time-vs-size.svg`` to ``benchmarks/results/`` (git-ignored). Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import logging
import os
import platform
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from benchmarks import e2e, families, floor, load, report
from benchmarks.memory import core_peak, memory_workloads
from benchmarks.peers import BY_KEY, core_available
from benchmarks.plan import PROFILES, Profile, Series
from benchmarks.timing import Budget, Measurement, measure
from benchmarks.workloads import KiB, Workload, parallel, real_streams, synthetic

log = logging.getLogger("benchmarks")

RESULTS_DIR = Path(__file__).resolve().parent / "results"
VERSIONS = (
    "toolstream-gate",
    "langchain-core",
    "langchain-openai",
    "llama-index-core",
    "llama-index-llms-openai",
    "openai",
    "anthropic",
    "boto3",
    "ollama",
    "cohere",
    "langchain-aws",
    "langchain-ollama",
    "langchain-cohere",
    "llama-index-llms-bedrock-converse",
    "llama-index-llms-ollama",
    "pydantic",
    "jiter",
)


def _versions() -> dict[str, str]:
    out = {}
    for name in VERSIONS:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


def _git_state() -> str:
    """HEAD, plus the measured packages with uncommitted changes (other work in the tree)."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "core", "langchain_toolstream", "llamaindex_toolstream"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split("\n")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    changed = sorted({line[3:].split("/")[0] for line in dirty if line.strip()})
    return head + (f" (uncommitted changes in {', '.join(changed)})" if changed else "")


#: Peers whose framework only one of the two supported envs installs (LlamaIndex pins older
#: SDK majors, so the "latest" env has none): there they are reported unavailable, not errors.
_PEER_NEEDS = {"llamaindex": "llama_index.llms.openai", "llamaindex_noparse": "llama_index.llms.openai"}


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # the parent package is missing
        return False


def _available(key: str) -> bool:
    if BY_KEY[key].role == "core":
        return core_available()
    return key not in _PEER_NEEDS or _importable(_PEER_NEEDS[key])


def _log(m: Measurement) -> None:
    shown = f"{m.seconds * 1e3:10.2f} ms" if m.seconds is not None else f"{m.status:>13}"
    log.info("  %-48s %-20s %s %s", m.workload, m.contender, shown, m.detail[:80])


def run_series(series: Series, budget: Budget) -> dict[str, Any]:
    """Every contender over the size scale; a contender stops after its first capped run."""
    budget = Budget(series.cap_s or budget.cap_s, budget.min_total_s, budget.max_repeats, budget.batch)
    stopped: dict[str, Measurement] = {}
    measurements: list[Measurement] = []
    log.info("series %s", series.title)
    gc.collect()  # a full pass costs ~0.4 s with the frameworks imported: once per series
    for nbytes in series.sizes:
        workload = synthetic(series.payload, series.api, nbytes, series.fragment)
        for key in series.contenders:
            if nbytes > series.max_size.get(key, nbytes):
                continue
            if not _available(key):
                m = Measurement(key, workload.label, nbytes, workload.n_chunks, "unavailable")
            elif key in stopped:
                m = Measurement(
                    key,
                    workload.label,
                    nbytes,
                    workload.n_chunks,
                    "skipped",
                    cap_s=stopped[key].cap_s,
                    detail=stopped[key].detail,
                )
            else:
                m = measure(BY_KEY[key], workload, budget)
                _log(m)
                if m.status in ("capped", "error"):
                    stopped[key] = m
            measurements.append(m)
    return {
        "title": series.title,
        "payload": series.payload,
        "api": series.api,
        "fragment": series.fragment,
        "chart": series.chart,
        "contenders": list(series.contenders),
        "measurements": [m.as_dict() for m in measurements],
    }


def run_probes(profile: Profile, results: dict[str, Any]) -> list[dict[str, Any]]:
    """Decide the 1 MiB ratio targets the capped series could not: the peer gets a cap of
    1.25 x target x the core's time, so it either finishes (exact ratio) or proves it."""
    out = []
    for probe in profile.probes:
        label = f"{probe.payload}/{probe.api}/{probe.fragment}B/1 MiB"
        if probe.nbytes != 1 << 20:
            continue
        found = report._find(results, label, probe.peer)
        base = report._find(results, label, probe.baseline)
        if found and base and report.ratio(found, base)[1] is not None:
            value = report.ratio(found, base)[1] or 0.0
            if found.get("seconds") is not None or value >= probe.ratio:
                continue  # measured, or the cap already proves the target
        workload = synthetic(probe.payload, probe.api, probe.nbytes, probe.fragment)
        if not base or base.get("seconds") is None:
            base_m = measure(BY_KEY[probe.baseline], workload, profile.budget)
            _log(base_m)
            out.append(base_m.as_dict())
            base = base_m.as_dict()
            if base.get("seconds") is None:
                continue
        cap = max(profile.budget.cap_s, 1.25 * probe.ratio * base["seconds"])
        budget = Budget(cap, 0.0, 1, profile.budget.batch)
        log.info("probe %s %s, cap %.0f s", label, probe.peer, cap)
        m = measure(BY_KEY[probe.peer], workload, budget)
        _log(m)
        out.append(m.as_dict())
    return out


def run_group(workload: Workload, keys: list[str], budget: Budget, *, verify: bool = True) -> list[dict[str, Any]]:
    out = []
    for key in keys:
        if not _available(key):
            continue
        m = measure(BY_KEY[key], workload, budget, verify=verify)
        _log(m)
        out.append({**m.as_dict(), "api": workload.api})
    return out


def run_parallel(profile: Profile) -> list[dict[str, Any]]:
    groups = []
    for api, keys in (
        (
            "openai-chat",
            ["floor", "core_dict", "core_openai_obj", "lc_loop", "lc_generate", "llamaindex", "openai_sdk"],
        ),
        ("anthropic", ["floor", "core_dict", "core_anthropic_obj", "anthropic_sdk"]),
    ):
        workload = parallel(api, profile.parallel_n)
        log.info("parallel %s", workload.label)
        groups.append({"workload": workload.label, "measurements": run_group(workload, keys, profile.budget)})
    return groups


STREAM_CONTENDERS = {
    "openai-chat": ["floor", "core_dict", "core_openai_obj", "lc_loop", "lc_generate", "llamaindex", "openai_sdk"],
    "anthropic": ["floor", "core_dict", "core_anthropic_obj", "anthropic_sdk"],
    "openai-responses": ["floor", "core_dict"],
    "gemini": ["floor", "core_dict"],
}


def run_streams(profile: Profile) -> dict[str, Any]:
    if profile.streams_limit == 0:
        return {}
    workloads = real_streams(limit=profile.streams_limit)
    if not workloads:
        log.warning("real streams not found (set TOOLSTREAM_STREAMS); section skipped")
        return {"skipped": "streams directory not found"}
    log.info("real streams: %d", len(workloads))
    per_stream = []
    for workload in workloads:
        # real streams carry odd cases on purpose (truncations, errors, server tools): timing
        # only; what each contender makes of them is the core test suite's business
        per_stream += run_group(workload, STREAM_CONTENDERS[workload.api], profile.stream_budget, verify=False)
    return {"per_stream": per_stream, "summary": report.summarize_streams(per_stream)}


def run_memory(profile: Profile) -> list[dict[str, Any]]:
    if not core_available():
        return []
    out = []
    for workload in memory_workloads(list(profile.memory_points)):
        result = core_peak(workload)
        log.info("  memory %-40s %.2f bytes/arg byte", workload.label, result.per_byte)
        out.append(result.as_dict())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__)
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--quick",
        action="store_const",
        dest="profile",
        const="quick",
        help="about a minute: sizes to 64 KiB, short cap",
    )
    group.add_argument(
        "--full",
        action="store_const",
        dest="profile",
        const="full",
        help="every fragment size and payload to 16 MiB (tens of minutes)",
    )
    group.add_argument(
        "--smoke",
        action="store_const",
        dest="profile",
        const="smoke",
        help="tiny sizes, one run each (what the test suite runs)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS_DIR, help="results folder")
    parser.add_argument(
        "--only",
        nargs="+",
        metavar="SECTION",
        choices=["floor", "series", "parallel", "streams", "memory", "e2e", "load", "families"],
        help="run only these sections",
    )
    parser.set_defaults(profile="default")
    args = parser.parse_args(argv)

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    profile = PROFILES[args.profile]()
    sections = set(args.only or ["floor", "series", "parallel", "streams", "memory", "e2e", "load",
                                 "families"])
    started = time.perf_counter()
    results: dict[str, Any] = {
        "meta": {
            "profile": profile.name,
            "started": time.strftime("%Y-%m-%d %H:%M:%S %z"),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "loadavg_start": ", ".join(f"{x:.2f}" for x in os.getloadavg()),
            "versions": _versions(),
            "core_available": core_available(),
            "git": _git_state(),
            "gc": "disabled inside timed runs, collected between runs",
        },
        "contenders": {
            k: {"label": c.label, "role": c.role, "input": c.input_kind, "baseline": c.baseline}
            for k, c in BY_KEY.items()
        },
    }
    args.out.mkdir(parents=True, exist_ok=True)

    def save() -> None:
        results["meta"]["duration_s"] = round(time.perf_counter() - started, 1)
        results["meta"]["cpu_s"] = round(time.process_time(), 1)
        results["meta"]["loadavg_end"] = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        results["targets"] = report.targets(results)
        (args.out / "results.json").write_text(json.dumps(results, indent=1, default=str))

    timings = results["meta"]["section_wall_s"] = {}
    floor_sizes = [4 * KiB, 16 * KiB] if profile.name == "smoke" else None
    steps: list[tuple[str, str, Any]] = [
        ("floor", "floor", lambda: floor.run(profile.budget, floor_sizes, smoke=profile.name == "smoke")),
        ("series", "series", lambda: [run_series(s, profile.budget) for s in profile.series]),
        ("series", "probes", lambda: run_probes(profile, results)),
        ("parallel", "parallel", lambda: run_parallel(profile)),
        ("streams", "streams", lambda: run_streams(profile)),
        ("memory", "memory", lambda: run_memory(profile)),
        ("e2e", "e2e", lambda: e2e.run(profile)),
        ("load", "load", lambda: load.run_for_profile(profile.name)),
        ("families", "families", lambda: families.run(profile)),
    ]
    for section, key, step in steps:
        if section in sections:
            begun = time.perf_counter()
            results[key] = step()
            timings[key] = round(time.perf_counter() - begun, 1)
            save()

    save()
    text = report.markdown(results)
    if results.get("floor"):
        text = floor.render(results["floor"]) + "\n\n" + text
    if results.get("e2e"):
        text += "\n\n" + e2e.render(results["e2e"])
    if results.get("families"):
        text += "\n\n" + families.render(results["families"])
    if results.get("load"):
        text += "\n\n## Many streams at once (issue 12, target 5)\n\n" + load.render(results["load"])
    (args.out / "results.md").write_text(text)
    if results.get("series"):
        (args.out / "time-vs-size.svg").write_text(report.chart(results))
    sys.stdout.write(text + "\n")
    log.info("wrote %s (%.0f s)", args.out, time.perf_counter() - started)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
