"""Scale out: gated agents in several worker processes on one PostgreSQL.

``python -m benchmarks.scale_out [--processes 4] [--threads 25] [--rounds 2] [--json]`` runs
the same load twice, side by side in one run: ``create_agent`` with ``ToolstreamMiddleware`` (gated) and
without it (plain). Each of K worker processes runs N threads one after another, each on its
own thread id, all on one PostgreSQL (LangGraph's ``PostgresSaver`` and ``PostgresStore``) and
one vendor emulator (``ChatOpenAI`` streaming from ``scenario:<name>@<thread id>``, so every
thread has its own call ids). The threads mix complete turns and cut ones (``MIX``).

Reported per mode, over alternating rounds: threads and model requests per second (from the
first thread's start to the last one's end, the workers' start-up left out), the p50 / p99
latency of a thread (``agent.invoke`` in its worker, complete scenarios only: the same work
in both modes) and the median CPU its worker spent on it, the workers' CPU per thread of any
scenario (CPU is what a busy machine disturbs least), and what went wrong: requests the
emulator refused, cut calls that ran, threads that raised.

The same harness serves the scale-out tests (``tests/langchain/test_lc_scale_out.py``): a
worker is ``python -m benchmarks.scale_out worker`` with a JSON job on stdin (one agent
invocation, or a batch of threads), which can die on purpose (``os._exit``) inside a tool or
before a model call, and prints one JSON line of what it saw. Every tool run is a row in a
Postgres table (``RUNS_TABLE``), written before the tool returns, so "ran once" is counted
durably across processes, crashes included.

Bounded: the counts are capped, every worker has a timeout, and the emulator and Postgres
are stopped when the run ends.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any

# At module level: the tools' annotations are read by name when LangChain builds their schemas.
from langchain.tools import ToolRuntime

__all__ = [
    "CRASH_EXIT",
    "MIX",
    "RUNS",
    "RUNS_TABLE",
    "LoadResult",
    "load_problems",
    "pairing_problems",
    "prepare_database",
    "run_load",
    "run_worker",
    "tool_runs",
]

log = logging.getLogger(__name__)

#: The thread scenarios of the load, in turn: complete turns, then turns the vendor cut.
MIX = ("single_call", "parallel_calls", "no_args", "truncated_length", "dropped_connection",
       "no_finish", "single_call", "error_event")
#: What runs for each complete scenario (tool names, in any order); a cut one runs nothing.
RUNS: Mapping[str, tuple[str, ...]] = {
    "single_call": ("write_file",),
    "parallel_calls": ("get_weather", "get_weather"),
    "no_args": ("get_time",),
}
#: Every tool run, one row each: written (and committed) before the tool returns.
RUNS_TABLE = "toolstream_tool_runs"
#: The exit status of a worker that died on purpose.
CRASH_EXIT = 17
MAX_PROCESSES = 8
MAX_THREADS = 200
WORKER_TIMEOUT = 600.0


# --------------------------------------------------------------------------- the database


def prepare_database(url: str) -> None:
    """LangGraph's tables and the runs table, created once before any worker connects."""
    import psycopg

    from benchmarks.postgres import setup_langgraph_tables

    setup_langgraph_tables(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE TABLE IF NOT EXISTS {RUNS_TABLE} (seq serial PRIMARY KEY, "
                     "thread_id text, call_id text, name text, args jsonb, pid int)")


def tool_runs(url: str) -> list[dict[str, Any]]:
    """Every tool run so far, in order: thread, call id, tool name, arguments, process."""
    import psycopg
    from psycopg.rows import dict_row

    with psycopg.connect(url, row_factory=dict_row) as conn:
        return list(conn.execute(f"SELECT thread_id, call_id, name, args, pid FROM {RUNS_TABLE} "
                                 "ORDER BY seq").fetchall())


# --------------------------------------------------------------------------- in a worker


def _counting_tools(url: str, *, crash: bool, repeatable: bool) -> list[Any]:
    """The emulator's three tools; each run is a committed row first. ``crash``: the process
    dies right after the row, before the tool returns (its result is never written)."""
    import psycopg
    from langchain_core.tools import tool
    from psycopg.types.json import Jsonb

    conn = psycopg.connect(url, autocommit=True)

    def ran(runtime: ToolRuntime, name: str, args: dict[str, Any]) -> None:
        thread = (runtime.config.get("configurable") or {}).get("thread_id")
        conn.execute(f"INSERT INTO {RUNS_TABLE} (thread_id, call_id, name, args, pid) "
                     "VALUES (%s, %s, %s, %s, %s)",
                     (thread, runtime.tool_call_id, name, Jsonb(args), os.getpid()))
        if crash:
            os._exit(CRASH_EXIT)

    @tool
    def write_file(path: str, runtime: ToolRuntime, content: str = "") -> str:
        """Write a text file."""
        ran(runtime, "write_file", {"path": path, "content": content})
        return f"wrote {len(content)} characters to {path}"

    @tool
    def get_weather(city: str, runtime: ToolRuntime) -> str:
        """Get the current weather for a city."""
        ran(runtime, "get_weather", {"city": city})
        return f"sunny in {city}"

    @tool
    def get_time(runtime: ToolRuntime) -> str:
        """Get the current time (no arguments)."""
        ran(runtime, "get_time", {})
        return "12:00"

    tools = [write_file, get_weather, get_time]
    if repeatable:
        for one in tools:
            one.metadata = {**(one.metadata or {}), "toolstream_repeatable": True}
    return tools


def _crash_before_model_call(after: int) -> Any:
    """A middleware that lets ``after`` model calls through in this process, then dies before
    the next one is sent (its checkpoint, with the agent state, is already saved)."""
    from langchain.agents.middleware import AgentMiddleware

    class CrashBeforeModel(AgentMiddleware[Any, Any, Any]):
        calls = 0

        def wrap_model_call(self, request: Any, handler: Any) -> Any:
            CrashBeforeModel.calls += 1
            if CrashBeforeModel.calls > after:
                os._exit(CRASH_EXIT)
            return handler(request)

    return CrashBeforeModel()


def _agent(job: Mapping[str, Any], checkpointer: Any, store: Any, tools: list[Any],
           model_name: str) -> Any:
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langchain_openai import ChatOpenAI

    from langchain_toolstream import ToolstreamMiddleware

    middleware: list[Any] = []
    if job.get("crash_before_model_call") is not None:
        middleware.append(_crash_before_model_call(int(job["crash_before_model_call"])))
    if job.get("gated", True):
        middleware.append(ToolstreamMiddleware(max_retries=int(job.get("max_retries", 2)),
                                               config=job.get("config")))
    if job.get("hitl"):
        middleware.append(HumanInTheLoopMiddleware(interrupt_on=dict.fromkeys(job["hitl"], True)))
    model = ChatOpenAI(model=model_name, api_key="test", base_url=job["emulator"] + "/v1",
                       max_retries=0, streaming=True)
    return create_agent(model, tools=tools, middleware=middleware, checkpointer=checkpointer,
                        store=store)


@contextmanager
def _savers(job: Mapping[str, Any]) -> Iterator[tuple[Any, Any]]:
    """LangGraph's Postgres saver, and its store unless the job says ``"store": false``."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.store.postgres import PostgresStore

    with PostgresSaver.from_conn_string(job["db"]) as saver:
        if not job.get("store", True):
            yield saver, None
            return
        with PostgresStore.from_conn_string(job["db"]) as store:
            yield saver, store


def _summary(state: Mapping[str, Any]) -> dict[str, Any]:
    """What a test reads of a thread's state: the gate's records and the tool messages."""
    from langchain_core.messages import AIMessage, ToolMessage

    from langchain_toolstream import read_record

    messages = state.get("messages") or []
    return {
        "interrupted": bool(state.get("__interrupt__")),
        "records": [read_record(m) for m in messages if isinstance(m, AIMessage)],
        "tool_messages": [{"id": m.tool_call_id, "status": m.status, "text": m.text[:300]}
                          for m in messages if isinstance(m, ToolMessage)],
        "failed_turns": state.get("toolstream_failed_turns"),
    }


def _invoke(job: Mapping[str, Any]) -> dict[str, Any]:
    """One invocation of one thread: a user message, an approval (``resume``), or ``None``
    (carry on from the last checkpoint, as after a crash)."""
    from langgraph.types import Command

    tools = _counting_tools(job["db"], crash=bool(job.get("crash_in_tool")),
                            repeatable=bool(job.get("repeatable")))
    config = {"configurable": {"thread_id": job["thread"]}}
    given = job.get("input")
    if isinstance(given, Mapping) and "resume" in given:
        payload: Any = Command(resume=given["resume"])
    else:
        payload = None if given is None else {"messages": [("user", given)]}
    with _savers(job) as (saver, store):
        agent = _agent(job, saver, store, tools, job["model"])
        result = agent.invoke(payload, config, durability=job.get("durability", "sync"))
        state = agent.get_state(config).values
    return _summary({**state, "__interrupt__": result.get("__interrupt__")})


def _batch(job: Mapping[str, Any]) -> dict[str, Any]:
    """Threads one after another: ``[thread id, scenario]`` pairs; each thread's time and
    outcome (the exception's type when the agent raised)."""
    tools = _counting_tools(job["db"], crash=False, repeatable=False)
    out: list[dict[str, Any]] = []
    with _savers(job) as (saver, store):
        if job.get("barrier"):
            _agent(job, saver, store, tools, "scenario:text")  # the first one imports (~3 s)
            sys.stdout.write("ready\n")
            sys.stdout.flush()
            sys.stdin.readline()
        begun, cpu = time.time(), time.process_time()
        for thread, scenario in job["threads"]:
            agent = _agent(job, saver, store, tools, f"scenario:{scenario}@{thread}")
            config = {"configurable": {"thread_id": thread}}
            started, used = time.perf_counter(), time.process_time()
            error = None
            try:
                agent.invoke({"messages": [("user", "go")]}, config,
                             durability=job.get("durability", "sync"))
            except Exception as exc:  # the plain agent raises on a dropped stream
                error = type(exc).__name__
            out.append({"thread": thread, "scenario": scenario, "error": error,
                        "seconds": time.perf_counter() - started,
                        "cpu": time.process_time() - used})
        # the batch alone, without the process's start (imports, connections)
        return {"threads": out, "begun": begun, "ended": time.time(),
                "cpu_seconds": time.process_time() - cpu}


def worker_main() -> int:
    """``python -m benchmarks.scale_out worker``: one JSON job on a line of stdin, one JSON
    line out. A batch with ``"barrier": true`` prints ``ready`` once it is set up, and starts
    when a line comes in: the workers of a load start together, their imports done."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    job = json.loads(sys.stdin.readline())
    result = _batch(job) if "threads" in job else _invoke(job)
    sys.stdout.write(json.dumps(result, default=str) + "\n")
    return 0


# --------------------------------------------------------------------------- the driver


@dataclass
class Worker:
    """A worker process and the job it was given."""

    job: dict[str, Any]
    proc: subprocess.Popen[str]
    stderr: IO[bytes]

    def ready(self) -> None:
        """Wait until a barrier job says it is set up."""
        assert self.proc.stdout is not None
        self.proc.stdout.readline()

    def go(self) -> None:
        """Let a barrier job start."""
        assert self.proc.stdin is not None
        self.proc.stdin.write("go\n")
        self.proc.stdin.close()

    def wait(self, timeout: float = WORKER_TIMEOUT) -> tuple[int, dict[str, Any] | None, str]:
        """Exit status, the JSON it printed (``None`` if it died first), and its stderr."""
        self.proc.stdin = None  # closed already; communicate() must not flush it
        try:
            out, _ = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
        self.stderr.seek(0)
        err = self.stderr.read().decode(errors="replace")
        self.stderr.close()
        lines = [line for line in out.splitlines() if line.startswith("{")]
        return self.proc.returncode, (json.loads(lines[-1]) if lines else None), err


def start_worker(job: Mapping[str, Any]) -> Worker:
    """Start ``python -m benchmarks.scale_out worker`` on ``job``. Its stderr goes to a file,
    so a chatty worker never blocks on a full pipe while the driver waits on its stdout."""
    stderr = tempfile.TemporaryFile()  # noqa: SIM115 (closed by Worker.wait)
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.scale_out", "worker"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                            text=True)
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(job) + "\n")
    proc.stdin.flush()
    if not job.get("barrier"):
        proc.stdin.close()
    return Worker(dict(job), proc, stderr)


def run_worker(job: Mapping[str, Any]) -> tuple[int, dict[str, Any] | None, str]:
    """Run one worker to its end: exit status, what it printed, its stderr."""
    return start_worker(job).wait()


@dataclass
class LoadResult:
    """One mode's load: every thread's outcome; from the first thread's start to the last
    thread's end (the workers' start-up left out), and the CPU the workers spent on it."""

    gated: bool
    threads: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    failures: list[str] = field(default_factory=list)  # workers that did not finish cleanly


def plan(processes: int, threads: int, prefix: str) -> list[list[tuple[str, str]]]:
    """``threads`` (thread id, scenario) pairs per process, the scenarios taken from ``MIX``."""
    return [[(f"{prefix}-p{p}-t{t}", MIX[(p * threads + t) % len(MIX)]) for t in range(threads)]
            for p in range(processes)]


def run_load(db: str, emulator: str, *, processes: int, threads: int, gated: bool,
             prefix: str) -> LoadResult:
    """K worker processes at once, each running its threads one after another."""
    processes, threads = min(processes, MAX_PROCESSES), min(threads, MAX_THREADS)
    workers = [start_worker({"db": db, "emulator": emulator, "gated": gated, "threads": part,
                             "barrier": True})
               for part in plan(processes, threads, prefix)]
    for worker in workers:
        worker.ready()
    for worker in workers:
        worker.go()
    result = LoadResult(gated)
    spans: list[tuple[float, float]] = []
    for worker in workers:
        status, out, err = worker.wait()
        if status != 0 or out is None:
            result.failures.append(f"worker exit {status}: {err[-2000:]}")
            continue
        result.threads.extend(out["threads"])
        result.cpu_seconds += out["cpu_seconds"]
        spans.append((out["begun"], out["ended"]))
    if spans:
        result.seconds = max(end for _, end in spans) - min(begin for begin, _ in spans)
    return result


# --------------------------------------------------------------------------- the checks


def pairing_problems(body: Mapping[str, Any]) -> list[str]:
    """What breaks the pairing rule in a Chat Completions request body: every call id of an
    assistant message answered exactly once by the tool messages right after it, and no tool
    message that answers anything else."""
    problems: list[str] = []
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    for i, message in enumerate(messages):
        if message.get("role") == "tool" and (i == 0 or messages[i - 1].get("role") not in
                                              ("tool", "assistant")):
            problems.append(f"message {i}: a tool result after no call")
        if message.get("role") != "assistant":
            continue
        ids = [call.get("id") for call in message.get("tool_calls") or []]
        answers: list[Any] = []
        for later in messages[i + 1:]:
            if later.get("role") != "tool":
                break
            answers.append(later.get("tool_call_id"))
        if sorted(answers, key=str) != sorted(ids, key=str):
            problems.append(f"message {i}: calls {ids} answered by {answers}")
    return problems


def load_problems(load: LoadResult, requests: Sequence[Any], statuses: Sequence[int],
                  runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """Everything that breaks the gate's promise in a load: a request the emulator refused or
    that pairs badly, a complete call that did not run exactly once, a cut call that ran, a
    thread that raised, a worker that failed."""
    problems = list(load.failures)
    problems += [f"request {i}: HTTP {s}" for i, s in enumerate(statuses) if s != 200]
    for i, received in enumerate(requests):
        problems += [f"request {i}: {p}" for p in pairing_problems(received.body)]
    ran: dict[str, list[str]] = {}
    for row in runs:
        ran.setdefault(row["thread_id"], []).append(row["name"])
    calls = [(row["thread_id"], row["call_id"]) for row in runs]
    if len(set(calls)) != len(calls):
        problems.append("a call ran twice")
    for thread in load.threads:
        expected = sorted(RUNS.get(thread["scenario"], ()))
        if sorted(ran.get(thread["thread"], [])) != expected:
            problems.append(f"{thread['thread']} ({thread['scenario']}): ran "
                            f"{ran.get(thread['thread'], [])}, expected {expected}")
        if thread["error"] is not None:
            problems.append(f"{thread['thread']} ({thread['scenario']}): {thread['error']}")
    return problems


# --------------------------------------------------------------------------- the benchmark


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


@dataclass
class _Mode:
    """One mode summed over the rounds."""

    gated: bool
    threads: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    requests: int = 0
    refused: int = 0
    cut_runs: int = 0
    problems: list[str] = field(default_factory=list)

    def add(self, load: LoadResult, requests: Sequence[Any], statuses: Sequence[int],
            runs: Sequence[Mapping[str, Any]]) -> None:
        self.threads += load.threads
        self.seconds += load.seconds
        self.cpu_seconds += load.cpu_seconds
        self.requests += len(requests)
        self.refused += sum(1 for status in statuses if status != 200)
        cut = {t["thread"] for t in load.threads if t["scenario"] not in RUNS}
        self.cut_runs += sum(1 for row in runs if row["thread_id"] in cut)
        self.problems += load_problems(load, requests, statuses, runs)

    def row(self) -> dict[str, Any]:
        complete = [t["seconds"] for t in self.threads if t["scenario"] in RUNS]
        complete_cpu = [t["cpu"] for t in self.threads if t["scenario"] in RUNS]
        n = len(self.threads)
        return {
            "mode": "gated" if self.gated else "plain",
            "threads": n,
            "seconds": round(self.seconds, 2),
            "threads_per_s": round(n / self.seconds, 2),
            "requests_per_s": round(self.requests / self.seconds, 2),
            "p50_ms": round(1000 * statistics.median(complete), 1),
            "p99_ms": round(1000 * _pct(complete, 0.99), 1),
            "cpu_ms_per_thread": round(1000 * self.cpu_seconds / n, 1),
            "complete_cpu_p50_ms": round(1000 * statistics.median(complete_cpu), 1),
            "refused_requests": self.refused,
            "cut_calls_run": self.cut_runs,
            "threads_raised": sum(1 for t in self.threads if t["error"]),
            "problems": len(self.problems),
        }


def benchmark(processes: int, threads: int, rounds: int) -> dict[str, Any]:
    """Plain and gated in turn (the order swaps every round, so a busy machine's drift falls
    on both), each round on a fresh database of one server, against one emulator."""
    from toolstream_core.testing import VendorEmulator

    from benchmarks.postgres import fresh_database, postgres_server

    modes = {False: _Mode(False), True: _Mode(True)}
    with postgres_server() as server, VendorEmulator() as emulator:
        for round_ in range(rounds):
            for gated in ((False, True) if round_ % 2 == 0 else (True, False)):
                db = fresh_database(server)
                prepare_database(db)
                emulator.clear()
                load = run_load(db, emulator.base_url, processes=processes, threads=threads,
                                gated=gated, prefix=f"r{round_}")
                modes[gated].add(load, emulator.requests, emulator.statuses, tool_runs(db))
                log.info("round %d %s: %.1f s, %d threads", round_, "gated" if gated else "plain",
                         load.seconds, len(load.threads))
    return {"processes": processes, "threads_per_process": threads, "rounds": rounds,
            "cpus": os.cpu_count(), "load_average": os.getloadavg()[0],
            "modes": [modes[False].row(), modes[True].row()]}


_COLUMNS = (("mode", "mode"), ("threads", "threads"), ("seconds", "s"),
            ("threads_per_s", "threads/s"), ("requests_per_s", "requests/s"), ("p50_ms", "p50 ms"),
            ("p99_ms", "p99 ms"), ("complete_cpu_p50_ms", "CPU ms p50"),
            ("cpu_ms_per_thread", "worker CPU ms/thread"),
            ("refused_requests", "refused requests"), ("cut_calls_run", "cut calls run"),
            ("threads_raised", "threads raised"))


def render(doc: Mapping[str, Any]) -> str:
    lines = [f"{doc['processes']} processes x {doc['threads_per_process']} threads, "
             f"{doc['rounds']} rounds per mode, {doc['cpus']} CPUs, load average "
             f"{doc['load_average']:.1f} at the end", "",
             "| " + " | ".join(title for _, title in _COLUMNS) + " |",
             "|" + "---|" * len(_COLUMNS)]
    for row in doc["modes"]:
        lines.append("| " + " | ".join(str(row[key]) for key, _ in _COLUMNS) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args_in = sys.argv[1:] if argv is None else argv
    if args_in[:1] == ["worker"]:
        return worker_main()
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scale_out", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--processes", type=int, default=4, help=f"at most {MAX_PROCESSES}")
    parser.add_argument("--threads", type=int, default=25, help="per process, at most "
                        f"{MAX_THREADS}")
    parser.add_argument("--rounds", type=int, default=2, help="rounds per mode, alternating")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(args_in)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    doc = benchmark(args.processes, args.threads, max(1, min(args.rounds, 10)))
    sys.stdout.write((json.dumps(doc, indent=2) if args.json else render(doc)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
