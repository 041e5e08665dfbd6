"""Many streams at once: ``python -m benchmarks.load [--streams N ...] [--core N] [--json]``.

Two parts (issue 12, target 5):

1. **Through HTTP.** The vendor emulator runs in its own process
   (``toolstream emulate``, 127.0.0.1 only) and one asyncio loop opens N concurrent
   streams with the real ``AsyncOpenAI`` client (one client, a pool of N
   connections), each request ``scenario:parallel_calls@<i>`` so each stream has
   its own call ids. Every stream is read twice per round, interleaved: *plain*
   (read to the end, no gate) and *gated* (``aassemble``), and for the shims
   LangChain ``with_toolstream(ChatOpenAI(...)).astream`` and LlamaIndex
   ``ToolstreamLLM(OpenAILike(...)).astream_chat``. Reported: throughput, the
   p50/p99 latency of a stream and the gate's addition to each, peak RSS growth
   per stream, the CPU each process spent, and the cross-talk proof: every turn
   holds exactly the two calls whose ids the emulator derives from that stream's
   tag (computed here offline), with the right arguments.
2. **Core alone.** Pre-built chunk dicts for K interleaved streams (no HTTP), one
   ``Assembler`` each, a round-robin feed in one loop with a yield between
   chunks: time per chunk and traced peak memory per stream at several K.

Bounded: streams and rounds are capped, every request has a timeout, and the
emulator process is ended by its pid when the run ends.

Where it stops scaling (2-vCPU VM, 2026-12-01): the client process. Its CPU per
stream grows with concurrency (5.5 ms at 100 streams, 10 ms at 2,000, read to the
end without a gate) because httpcore's pool re-scans every connection whenever a
request starts or ends (``_assign_requests_to_connections``: 500,500
``can_handle_request`` calls for 1,000 requests), on top of the OpenAI SDK's
pydantic construction of every chunk, the constant floor. The emulator is not
the limit: its asyncio server spends 0.5-0.75 ms of CPU per stream flat from 100
to 2,000 concurrent streams (the thread-per-connection server it replaced: 0.7 ms
at 100, 10.9 ms and 45 timed-out streams at 2,000). The gate adds a constant
0.6-2 ms of CPU per stream: mostly building the tool registry from schema dicts
in ``Assembler()`` and validating at ``finish()``, ~10 µs per chunk besides.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import resource
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from toolstream_core import Assembler, aassemble
from toolstream_core.testing import DEFAULT_PROMPT, TOOLS, openai_chat_tools
from toolstream_core.testing._profile_render import render_profiled
from toolstream_core.testing._profiles import PROFILES
from toolstream_core.testing._scenarios import build_script, scenario_rng
from toolstream_core.testing._wire_openai_chat import render_stream

SCENARIO = "parallel_calls"
WANT_ARGS = [{"city": "Paris"}, {"city": "Tokyo"}]
MAX_STREAMS = 5000
MAX_CORE_STREAMS = 50_000
REQUEST_TIMEOUT_S = 60.0

log = logging.getLogger("benchmarks.load")


# --------------------------------------------------------------------------- emulator process


class EmulatorProcess:
    """``toolstream emulate`` in a child process; ``base_url`` once it listens."""

    def __init__(self, profile: str | None = None) -> None:
        code = "import sys; from toolstream_core.app.cli import main; sys.exit(main(sys.argv[1:]))"
        argv = [sys.executable, "-c", code, "emulate", "--host", "127.0.0.1", "--port", "0",
                "--color", "never"]
        if profile:
            argv += ["--profile", profile]
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if "listening on " not in line:
            self.stop()
            raise RuntimeError(f"emulator did not start: {line!r}")
        self.base_url = line.rsplit("listening on ", 1)[1].strip()

    def cpu_seconds(self) -> float:
        """User + system CPU the emulator process has used (Linux /proc)."""
        try:
            with open(f"/proc/{self.proc.pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            return float("nan")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)


# --------------------------------------------------------------------------- expectations


def expected_ids(tag: str, profile: str | None = None, seed: int = 0) -> list[str]:
    """The call ids the emulator sends for ``scenario:parallel_calls@tag`` (rendered offline)."""
    seeded = f"{seed}@{tag}"
    script = build_script(SCENARIO, scenario_rng(seeded, "openai-chat", SCENARIO))
    rng = scenario_rng(seeded, "openai-chat", SCENARIO + "/wire")
    body: dict[str, Any] = {"messages": []}
    rendered = (render_profiled(PROFILES[profile], script, rng, "m", body) if profile
                else render_stream(script, rng, "m", body))
    ids: list[str] = []
    for frame in rendered.frames:
        payload = frame.decode().partition("data: ")[2].strip()
        if not payload.startswith("{"):
            continue
        for choice in json.loads(payload).get("choices") or []:
            for tc in (choice.get("delta") or {}).get("tool_calls") or []:
                if tc.get("id") and tc["id"] not in ids:
                    ids.append(tc["id"])
    return ids


@dataclass
class Outcome:
    """One stream: latency, and the calls its turn holds as (id, arguments)."""

    seconds: float
    calls: list[tuple[str, Any]] = field(default_factory=list)
    error: str | None = None


def cross_talk(outcomes: dict[str, Outcome], profile: str | None = None) -> list[str]:
    """Streams whose turn does not hold exactly its own two calls (empty list: none)."""
    bad = []
    for tag, out in outcomes.items():
        want = list(zip(expected_ids(tag, profile), WANT_ARGS, strict=True))
        if out.error or out.calls != want:
            bad.append(f"{tag}: {out.error or out.calls}")
    return bad


# --------------------------------------------------------------------------- contenders


def _messages() -> list[dict[str, Any]]:
    return [{"role": "user", "content": DEFAULT_PROMPT}]


async def _plain(client: Any, tag: str) -> Outcome:
    """Read the stream to its end, no gate: the same load without toolstream."""
    t0 = time.perf_counter()
    stream = await client.chat.completions.create(
        model=f"scenario:{SCENARIO}@{tag}", messages=_messages(), tools=openai_chat_tools(),
        stream=True)
    ids: dict[int, list[Any]] = {}
    async for chunk in stream:
        for choice in chunk.choices:
            for tc in choice.delta.tool_calls or []:
                entry = ids.setdefault(tc.index, [tc.id, ""])
                entry[1] += (tc.function.arguments if tc.function else None) or ""
    calls = [(i, json.loads(a)) for i, a in ids.values()]
    return Outcome(time.perf_counter() - t0, calls)


async def _gated(client: Any, tag: str) -> Outcome:
    """The core's ``aassemble`` over the real AsyncOpenAI stream."""
    t0 = time.perf_counter()
    stream = await client.chat.completions.create(
        model=f"scenario:{SCENARIO}@{tag}", messages=_messages(), tools=openai_chat_tools(),
        stream=True)
    turn = await aassemble(stream, tools=TOOLS, provider="openai-chat")
    calls = [(c.id, c.arguments) for c in turn.committed]
    err = None if not turn.rejected else str([(c.name, str(c.reason)) for c in turn.rejected])
    return Outcome(time.perf_counter() - t0, calls, err)


def _tag_header(tag: str) -> dict[str, str]:
    return {"x-toolstream-scenario": f"{SCENARIO}@{tag}"}


def _langchain(base_url: str, gate: bool, http: Any) -> Callable[[Any, str], Awaitable[Outcome]] | None:
    try:
        from langchain_openai import ChatOpenAI

        from langchain_toolstream import with_toolstream
    except ImportError:
        return None
    tools = openai_chat_tools()

    async def run(client: Any, tag: str) -> Outcome:
        t0 = time.perf_counter()
        llm = ChatOpenAI(model="gpt-4o-mini", base_url=base_url + "/v1", api_key="test",
                         max_retries=0, timeout=REQUEST_TIMEOUT_S,
                         default_headers=_tag_header(tag),
                         http_async_client=http)  # the shared pool
        model: Any = llm.bind_tools(tools)
        if gate:
            model = with_toolstream(model, tools=TOOLS)
        message = None
        async for chunk in model.astream(_messages()):
            message = chunk if message is None else message + chunk
        calls = [(tc["id"], tc["args"]) for tc in (message.tool_calls if message else [])]
        return Outcome(time.perf_counter() - t0, calls)

    return run


def _llamaindex(base_url: str, gate: bool, http: Any) -> Callable[[Any, str], Awaitable[Outcome]] | None:
    try:
        from llama_index.core.llms import ChatMessage
        from llama_index.llms.openai import OpenAI

        from llamaindex_toolstream import ToolstreamLLM
    except ImportError:
        return None

    async def run(client: Any, tag: str) -> Outcome:
        t0 = time.perf_counter()
        llm: Any = OpenAI(model="gpt-4o-mini", api_base=base_url + "/v1", api_key="test",
                          max_retries=0, timeout=REQUEST_TIMEOUT_S,
                          default_headers=_tag_header(tag), async_http_client=http)
        if gate:
            llm = ToolstreamLLM(llm, tools=TOOLS)
        response = None
        gen = await llm.astream_chat([ChatMessage(role="user", content=DEFAULT_PROMPT)],
                                     tools=openai_chat_tools())
        async for item in gen:
            response = item
        selected = llm.get_tool_calls_from_response(response, error_on_no_tool_call=False) \
            if response is not None else []
        calls = [(sel.tool_id, sel.tool_kwargs) for sel in selected]
        return Outcome(time.perf_counter() - t0, calls)

    return run


#: Each gated contender and the same load without the gate it is compared with.
BASELINE = {"gated": "plain", "langchain": "langchain-plain", "llamaindex": "llamaindex-plain"}


# --------------------------------------------------------------------------- HTTP load


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _wave(run: Callable[[Any, str], Awaitable[Outcome]], client: Any, n: int,
                prefix: str) -> tuple[float, dict[str, Outcome]]:
    async def one(tag: str) -> Outcome:
        try:
            return await asyncio.wait_for(run(client, tag), REQUEST_TIMEOUT_S)
        except Exception as exc:  # reported per stream, the run goes on
            return Outcome(float("nan"), [], f"{type(exc).__name__}: {exc}")

    tags = [f"{prefix}{i}" for i in range(n)]
    t0 = time.perf_counter()
    outs = await asyncio.gather(*(one(t) for t in tags))
    return time.perf_counter() - t0, dict(zip(tags, outs, strict=True))


async def http_load(base_url: str, n: int, rounds: int, contenders: list[str],
                    emulator: EmulatorProcess) -> dict[str, Any]:
    """N concurrent streams per contender, ``rounds`` interleaved rounds."""
    import httpx
    from openai import AsyncOpenAI

    limits = httpx.Limits(max_connections=n, max_keepalive_connections=n)
    http = httpx.AsyncClient(limits=limits, timeout=REQUEST_TIMEOUT_S)
    client = AsyncOpenAI(base_url=base_url + "/v1", api_key="test", max_retries=0,
                         http_client=http)
    runners: dict[str, Callable[[Any, str], Awaitable[Outcome]]] = {}
    if "gated" in contenders:
        runners.update(plain=_plain, gated=_gated)
    for key, make in (("langchain", _langchain), ("llamaindex", _llamaindex)):
        if key in contenders:
            gated, plain = make(base_url, True, http), make(base_url, False, http)
            if gated is not None and plain is not None:
                runners.update({BASELINE[key]: plain, key: gated})
    samples: dict[str, list[float]] = {k: [] for k in runners}
    walls: dict[str, list[float]] = {k: [] for k in runners}
    errors: dict[str, list[str]] = {k: [] for k in runners}
    talk: dict[str, list[str]] = {k: [] for k in runners}
    cpu: dict[str, float] = {k: 0.0 for k in runners}
    cpu_client = cpu_server = 0.0
    rss0 = _rss_mib()
    try:
        await _wave(_plain, client, min(n, 50), "warm")  # connections and imports warm
        for r in range(rounds):
            for key, run in runners.items():
                c0, s0 = time.process_time(), emulator.cpu_seconds()
                wall, outs = await _wave(run, client, n, f"{key}{r}-")
                cpu[key] += time.process_time() - c0
                cpu_client += time.process_time() - c0
                cpu_server += emulator.cpu_seconds() - s0
                walls[key].append(wall)
                samples[key].extend(o.seconds for o in outs.values() if not o.error)
                errors[key].extend(f"{t}: {o.error}" for t, o in outs.items() if o.error)
                talk[key].extend(cross_talk(outs))
    finally:
        await http.aclose()
    rows: dict[str, Any] = {}
    for key in runners:
        lat = samples[key]
        rows[key] = {
            "streams": n * rounds,
            "failed": len(errors[key]),
            "first_errors": errors[key][:3],
            "cross_talk": len(talk[key]),
            "first_cross_talk": talk[key][:3],
            "throughput_per_s": n / statistics.median(walls[key]),
            "p50_ms": 1000 * _pct(lat, 0.50) if lat else None,
            "p99_ms": 1000 * _pct(lat, 0.99) if lat else None,
            "client_cpu_ms_per_stream": 1000 * cpu[key] / (n * rounds),
        }
    for key, row in rows.items():
        base = rows.get(BASELINE.get(key, ""))
        if base and row["p50_ms"] is not None and base["p50_ms"] is not None:
            row["added_p50_ms"] = row["p50_ms"] - base["p50_ms"]
            row["added_p99_ms"] = row["p99_ms"] - base["p99_ms"]
            row["added_cpu_ms_per_stream"] = (row["client_cpu_ms_per_stream"]
                                              - base["client_cpu_ms_per_stream"])
    return {"concurrency": n, "rounds": rounds, "contenders": rows,
            "peak_rss_growth_kib_per_stream": 1024 * (_rss_mib() - rss0) / n,
            "cpu_client_s": cpu_client, "cpu_emulator_s": cpu_server}


# --------------------------------------------------------------------------- core alone


def core_events(k: int) -> list[list[dict[str, Any]]]:
    """K pre-built chat streams (dicts), each with its own ids (tag = stream number)."""
    out = []
    for i in range(k):
        seeded = f"0@core{i}"
        script = build_script(SCENARIO, scenario_rng(seeded, "openai-chat", SCENARIO))
        rng = scenario_rng(seeded, "openai-chat", SCENARIO + "/wire")
        frames = render_stream(script, rng, "m", {"messages": []}).frames
        events = []
        for frame in frames:
            payload = frame.decode().partition("data: ")[2].strip()
            if payload.startswith("{"):
                events.append(json.loads(payload))
        out.append(events)
    return out


async def _feed_interleaved(streams: list[list[dict[str, Any]]]) -> list[Any]:
    """One Assembler per stream, one chunk per stream per loop turn (round-robin)."""

    async def one(events: list[dict[str, Any]]) -> Any:
        a = Assembler(tools=TOOLS, provider="openai-chat")
        for ev in events:
            a.feed(ev)
            await asyncio.sleep(0)
        return a.finish()

    return await asyncio.gather(*(one(s) for s in streams))


def core_load(k: int) -> dict[str, Any]:
    """K interleaved streams through the core in one loop: time and memory."""
    streams = core_events(k)
    chunks = sum(len(s) for s in streams)
    t0 = time.perf_counter()
    turns = asyncio.run(_feed_interleaved(streams))
    wall = time.perf_counter() - t0
    bad = [i for i, t in enumerate(turns)
           if [c.arguments for c in t.committed] != WANT_ARGS or t.rejected]
    ids = {c.id for t in turns for c in t.committed}
    # the loop alone (same yields, no Assembler): what the scheduling costs
    async def idle(events: list[dict[str, Any]]) -> None:
        for _ev in events:
            await asyncio.sleep(0)

    async def idle_all() -> None:
        await asyncio.gather(*(idle(s) for s in streams))

    t1 = time.perf_counter()
    asyncio.run(idle_all())
    loop_only = time.perf_counter() - t1
    tracemalloc.start()
    asyncio.run(_feed_interleaved(streams[: min(k, 2000)]))
    _cur, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {"streams": k, "chunks": chunks, "seconds": wall,
            "us_per_chunk": 1e6 * wall / chunks, "loop_only_us_per_chunk": 1e6 * loop_only / chunks,
            "streams_per_s": k / wall, "wrong_turns": len(bad), "unique_ids": len(ids),
            "traced_peak_kib_per_stream": peak / 1024 / min(k, 2000)}


# --------------------------------------------------------------------------- entry point


def run(streams: list[int], rounds: int, core: list[int], contenders: list[str],
        profile: str | None = None) -> dict[str, Any]:
    """Every part, as one JSON-able document."""
    doc: dict[str, Any] = {"http": [], "core": []}
    emulator = EmulatorProcess(profile)
    try:
        for n in streams:
            n = min(n, MAX_STREAMS)
            log.info("load: %d concurrent streams x %d rounds", n, rounds)
            doc["http"].append(asyncio.run(http_load(emulator.base_url, n, rounds, contenders,
                                                     emulator)))
    finally:
        emulator.stop()
    for k in core:
        k = min(k, MAX_CORE_STREAMS)
        log.info("load: core alone, %d interleaved streams", k)
        doc["core"].append(core_load(k))
    return doc


#: (HTTP concurrencies, rounds, core stream counts) per ``benchmarks.run`` profile.
SIZES: dict[str, tuple[list[int], int, list[int]]] = {
    "smoke": ([20], 1, [200]),
    "quick": ([100], 1, [1000]),
    "default": ([100, 1000], 2, [1000, 10_000]),
    "full": ([100, 1000, 2000], 3, [1000, 10_000, 50_000]),
}


def run_for_profile(name: str) -> dict[str, Any]:
    """The load section of ``python -m benchmarks.run`` at that profile's size."""
    streams, rounds, core = SIZES.get(name, SIZES["default"])
    return run(streams, rounds, core, ["gated", "langchain", "llamaindex"])


def render(doc: dict[str, Any]) -> str:
    """The tables as Markdown."""
    lines = ["| concurrency | contender | streams/s | p50 ms | p99 ms | +p50 ms | +p99 ms "
             "| client CPU ms/stream | +CPU ms | failed | wrong turns |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for part in doc["http"]:
        for key, row in part["contenders"].items():
            def f(v: Any) -> str:
                return "—" if v is None else f"{v:.1f}"
            lines.append(f"| {part['concurrency']} | {key} | {row['throughput_per_s']:.0f} | "
                         f"{f(row['p50_ms'])} | {f(row['p99_ms'])} | "
                         f"{f(row.get('added_p50_ms'))} | {f(row.get('added_p99_ms'))} | "
                         f"{row['client_cpu_ms_per_stream']:.2f} | "
                         f"{f(row.get('added_cpu_ms_per_stream'))} | "
                         f"{row['failed']} | {row['cross_talk']} |")
        lines.append(f"| {part['concurrency']} | (processes) | CPU client "
                     f"{part['cpu_client_s']:.1f} s, emulator {part['cpu_emulator_s']:.1f} s; "
                     f"peak RSS +{part['peak_rss_growth_kib_per_stream']:.0f} KiB/stream "
                     "| | | | | | | | |")
    lines += ["", "| core streams | chunks | µs/chunk | loop only µs/chunk | streams/s "
              "| KiB/stream (traced) | wrong turns | unique ids |",
              "|---|---|---|---|---|---|---|---|"]
    for row in doc["core"]:
        lines.append(f"| {row['streams']} | {row['chunks']} | {row['us_per_chunk']:.1f} | "
                     f"{row['loop_only_us_per_chunk']:.1f} | {row['streams_per_s']:.0f} | "
                     f"{row['traced_peak_kib_per_stream']:.1f} | {row['wrong_turns']} | "
                     f"{row['unique_ids']} |")
    lines += ["", verdict(doc)]
    return "\n".join(lines)


#: Target 5 asks for 1,000 concurrent gated streams per contender and 10,000 through the core.
TARGET_5_HTTP = 1000
TARGET_5_CORE = 10_000


def verdict(doc: dict[str, Any]) -> str:
    """Target 5 in one sentence: the sizes it names were run, every stream was served, and
    every turn held exactly its own calls."""
    http = max(doc["http"], key=lambda part: part["concurrency"], default=None)
    core = max(doc["core"], key=lambda row: row["streams"], default=None)
    if http is None or core is None:
        return "**Target 5 (many streams at once): not decided** (a part was not run)."
    # The baselines (plain AsyncOpenAI, plain LangChain, plain LlamaIndex) are measured for the
    # added latency; their own wrong turns (plain LlamaIndex merges interleaved calls) are theirs.
    rows = {key: row for key, row in http["contenders"].items() if key != "plain" and not key.endswith("-plain")}
    failed = sum(row["failed"] for row in rows.values())
    wrong = sum(row["cross_talk"] for row in rows.values()) + core["wrong_turns"]
    sizes_met = http["concurrency"] >= TARGET_5_HTTP and core["streams"] >= TARGET_5_CORE
    clean = failed == 0 and wrong == 0 and core["unique_ids"] == core["streams"] * len(WANT_ARGS)
    state = "HOLDS" if sizes_met and clean else "DOES NOT HOLD" if not clean else "not decided"
    return (f"**Target 5 (1,000 concurrent gated streams per contender, 10,000 through the core, no "
            f"cross-talk): {state}** — {http['concurrency']:,} concurrent HTTP streams for "
            f"{', '.join(sorted(rows))}: {failed} failed, "
            f"{sum(row['cross_talk'] for row in rows.values())} wrong turns; {core['streams']:,} "
            f"streams through the core: {core['wrong_turns']} wrong turns, {core['unique_ids']:,} "
            f"unique call ids. Where it stops scaling: the client process (see `benchmarks/load.py`).")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.load", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--streams", type=int, nargs="+", default=[100, 1000],
                        help=f"concurrent HTTP streams per wave (capped at {MAX_STREAMS})")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds per size")
    parser.add_argument("--core", type=int, nargs="+", default=[1000, 10_000],
                        help=f"streams through the core alone (capped at {MAX_CORE_STREAMS})")
    parser.add_argument("--contenders", nargs="+", default=["gated", "langchain", "llamaindex"],
                        choices=["gated", "langchain", "llamaindex"])
    parser.add_argument("--profile", choices=sorted(PROFILES), help="emulator profile")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s", stream=sys.stderr)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    doc = run(args.streams, args.rounds, args.core, args.contenders, args.profile)
    sys.stdout.write((json.dumps(doc, indent=2) if args.json else render(doc)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
