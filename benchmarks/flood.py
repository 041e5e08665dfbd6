"""The capped flood (issue 37.3): what a call that already failed still costs, per entry point.

A model streams one ``write_file`` call whose arguments are ``--mib`` MiB (20 by default) in
``--fragment``-byte fragments (1 KiB), with the gate's cap at ``--cap`` KiB (64). The call
fails ``arguments_exceed_max_bytes`` after its first 64 KiB; the target is that nothing
downstream keeps paying for the other 99.7 % of its bytes:

- **memory**: peak RSS growth of the run under ``2 x cap + 8 MiB``;
- **time**: the run ends within ``3 x`` the time the ``openai`` SDK alone takes to read and
  parse the same bytes (``sdk``, the floor every entry point pays). CPU time of the process
  (all its threads) is compared, as in ``e2e.py``: on a shared machine the wall time of a run
  is mostly other jobs' time; it is reported beside it.

Each entry point runs in its own process (``python -m benchmarks.flood --one NAME``), through
the real framework and the real ``openai`` client over an ``httpx.MockTransport`` whose body is
generated line by line (no socket, and no 20 MiB body held in memory: the baseline is the
process, not the input). An agent's second request gets a short text answer. Each process
makes one untimed warm-up run on a 1 MiB flood, collects garbage, resets the kernel's peak-RSS
mark (``/proc/self/clear_refs``), then makes the measured run: growth = ``VmHWM`` after the run
minus ``VmRSS`` before it. The plain framework runs the same call without the gate, stopped
at ``--cap-s`` seconds of CPU time (a lower bound is reported then). Each gated run also checks its
outcome: the call rejected for its cap, no tool ran.

    python -m benchmarks.flood                 # every entry point, gated and plain (~3 min)
    python -m benchmarks.flood --only gated    # the gated ones only
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import logging
import os
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

log = logging.getLogger("benchmarks")

KiB = 1024
MiB = 1024 * KiB

#: name -> (framework, gated): the entry points of issue 37.3, then their plain twins.
ENTRIES = {
    "sdk": ("openai", False),
    "sdk_async": ("openai", False),
    "lc_agent": ("langchain", True),
    "lc_agent_async": ("langchain", True),
    "lc_model": ("langchain", True),
    "lc_model_async": ("langchain", True),
    "li_agent_async": ("llamaindex", True),
    "li_llm": ("llamaindex", True),
    "li_llm_async": ("llamaindex", True),
    "plain_lc_agent": ("langchain", False),
    "plain_lc_model": ("langchain", False),
    "plain_li_agent_async": ("llamaindex", False),
    "plain_li_llm": ("llamaindex", False),
}
#: The SDK floor each entry point's time is compared with (sync with sync, async with async).
FLOOR = {name: ("sdk_async" if "async" in name else "sdk") for name in ENTRIES}
#: The plain framework each gated entry point is compared with (its sync twin for an async
#: one: the plain runs are stopped at the CPU cap either way, so the ratio is a bound).
PLAIN = {name: "plain_" + (name if name == "li_agent_async" else name.removesuffix("_async"))
         for name, (_, gated) in ENTRIES.items() if gated}

_HEAD = '{"id":"chatcmpl-flood","object":"chat.completion.chunk","created":1,"model":"gpt-4.1","choices":[{"index":0,'


def _chunk(delta: str, finish: str | None = None) -> bytes:
    reason = "null" if finish is None else f'"{finish}"'
    return f'data: {_HEAD}"delta":{delta},"finish_reason":{reason}}}]}}\n\n'.encode()


def flood_lines(nbytes: int, fragment: int) -> Iterator[bytes]:
    """An OpenAI chat stream of one ``write_file`` call with about ``nbytes`` of arguments."""
    open_call = ('{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_flood",'
                 '"type":"function","function":{"name":"write_file","arguments":""}}]}')
    yield _chunk(open_call)

    def piece(text: str) -> bytes:
        return _chunk('{"tool_calls":[{"index":0,"function":{"arguments":' + json.dumps(text) + "}}]}")

    yield piece('{"path": "big.txt", "content": "')
    body = ("0123456789abcdef" * (fragment // 16 + 1))[:fragment]
    for _ in range(max(1, nbytes // fragment)):
        yield piece(body)
    yield piece('"}')
    yield _chunk("{}", "tool_calls")
    yield b"data: [DONE]\n\n"


def text_lines() -> Iterator[bytes]:
    yield _chunk('{"role":"assistant","content":"The file was too big to write."}')
    yield _chunk("{}", "stop")
    yield b"data: [DONE]\n\n"


def _body_class() -> type:
    import httpx

    class Body(_Body, httpx.SyncByteStream, httpx.AsyncByteStream):
        pass

    return Body


class _Body:
    """A response body generated as it is read, for the sync and the async client alike."""

    def __init__(self, lines: Callable[[], Iterator[bytes]]) -> None:
        self._lines = lines

    def __iter__(self) -> Iterator[bytes]:
        yield from self._lines()

    async def __aiter__(self) -> Any:
        for line in self._lines():
            yield line

    def close(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


class Server:
    """``POST /v1/chat/completions``: the flood for the first request, then text answers."""

    def __init__(self, nbytes: int, fragment: int) -> None:
        self.nbytes = nbytes
        self.fragment = fragment
        self.requests = 0

    def handler(self, request: Any) -> Any:
        import httpx

        self.requests += 1
        if self.requests == 1:
            lines: Callable[[], Iterator[bytes]] = lambda: flood_lines(self.nbytes, self.fragment)  # noqa: E731
        else:
            lines = text_lines
        return httpx.Response(200, headers={"content-type": "text/event-stream"},
                              stream=_body_class()(lines))

    def clients(self) -> tuple[Any, Any]:
        import httpx

        transport = httpx.MockTransport(self.handler)
        return httpx.Client(transport=transport), httpx.AsyncClient(transport=transport)


WRITE_FILE = {
    "type": "function",
    "function": {
        "name": "write_file",
        "description": "Write a text file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"},
                                                        "content": {"type": "string"}},
                       "required": ["path", "content"]},
    },
}


class Outcome:
    """What a run did, for the check: tool executions, and the gate's reasons."""

    def __init__(self) -> None:
        self.ran = 0
        self.reasons: list[str] = []

    def on_turn(self, turn: Any) -> None:
        self.reasons.extend(str(call.reason) for call in turn.rejected)


def _runner(name: str, server: Server, cap: int, outcome: Outcome) -> Callable[[], Any]:
    """One run of entry point ``name`` against ``server`` (a fresh stack, the same clients)."""
    sync_client, async_client = server.clients()
    config = {"max_tool_argument_bytes": cap}

    def write_file(path: str, content: str) -> str:
        """Write a text file."""
        outcome.ran += 1
        return f"wrote {len(content)} characters"

    async def awrite_file(path: str, content: str) -> str:
        """Write a text file."""
        outcome.ran += 1
        return f"wrote {len(content)} characters"

    if name.startswith("sdk"):
        import openai

        def sdk() -> Any:
            client = openai.OpenAI(api_key="sk-bench", base_url="http://bench/v1", max_retries=0,
                                   http_client=sync_client)
            for _ in client.chat.completions.create(model="gpt-4.1", messages=[], stream=True):
                pass

        async def asdk() -> Any:
            client = openai.AsyncOpenAI(api_key="sk-bench", base_url="http://bench/v1",
                                        max_retries=0, http_client=async_client)
            async for _ in await client.chat.completions.create(model="gpt-4.1", messages=[],
                                                                stream=True):
                pass

        return (lambda: asyncio.run(asdk())) if name.endswith("async") else sdk

    if "lc_" in name:
        from langchain.agents import create_agent
        from langchain_core.messages import HumanMessage
        from langchain_core.tools import StructuredTool
        from langchain_openai import ChatOpenAI

        from langchain_toolstream import ToolstreamMiddleware, with_toolstream

        def chat() -> Any:
            return ChatOpenAI(model="gpt-4.1", api_key="sk-bench", base_url="http://bench/v1",
                              max_retries=0, streaming=True, http_client=sync_client,
                              http_async_client=async_client)

        messages = [HumanMessage("Write big.txt")]
        if "agent" in name:
            tool = StructuredTool.from_function(func=write_file, coroutine=awrite_file)
            middleware = ([ToolstreamMiddleware(config=config, on_turn=outcome.on_turn)]
                          if not name.startswith("plain") else [])
            agent = create_agent(chat(), tools=[tool], middleware=middleware)
            if name.endswith("async"):
                return lambda: asyncio.run(agent.ainvoke({"messages": messages}))
            return lambda: agent.invoke({"messages": messages})
        model = (chat() if name.startswith("plain")
                 else with_toolstream(chat(), config=config, on_turn=outcome.on_turn))
        bound = model.bind_tools([WRITE_FILE])
        if name.endswith("async"):
            return lambda: asyncio.run(bound.ainvoke(messages))
        return lambda: bound.invoke(messages)

    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.llms import ChatMessage
    from llama_index.core.tools import FunctionTool
    from llama_index.llms.openai import OpenAI

    from llamaindex_toolstream import ToolstreamFunctionAgent, ToolstreamLLM

    def llm() -> Any:
        return OpenAI(model="gpt-4.1", api_key="sk-bench", api_base="http://bench/v1",
                      max_retries=0, http_client=sync_client, async_http_client=async_client)

    tool = FunctionTool.from_defaults(fn=write_file, async_fn=awrite_file)
    if "agent" in name:
        agent = (FunctionAgent(tools=[tool], llm=llm()) if name.startswith("plain")
                 else ToolstreamFunctionAgent(tools=[tool], llm=llm(), config=config,
                                              on_turn=outcome.on_turn))

        async def run_agent() -> Any:
            handler = agent.run(user_msg="Write big.txt")
            async for _ in handler.stream_events():
                pass
            return await handler

        return lambda: asyncio.run(run_agent())
    model = llm() if name.startswith("plain") else ToolstreamLLM(llm(), config=config,
                                                                 on_turn=outcome.on_turn)
    history = [ChatMessage(role="user", content="Write big.txt")]

    def read() -> Any:
        return deque(model.stream_chat_with_tools([tool], chat_history=history), maxlen=1)

    async def aread() -> Any:
        last: deque[Any] = deque(maxlen=1)
        async for response in await model.astream_chat_with_tools([tool], chat_history=history):
            last.append(response)
        return last

    return (lambda: asyncio.run(aread())) if name.endswith("async") else read


def _status(key: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * KiB
    raise KeyError(key)


def one(name: str, nbytes: int, fragment: int, cap: int) -> dict[str, Any]:
    """Entry point ``name`` in this process: a warm-up, then the measured run."""
    warm = Server(MiB, fragment)
    _runner(name, warm, cap, Outcome())()
    server = Server(nbytes, fragment)
    outcome = Outcome()
    run = _runner(name, server, cap, outcome)
    gc.collect()
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")  # reset VmHWM to the current RSS
    before = _status("VmRSS")
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"name": name, "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
            "peak_growth_mib": round((_status("VmHWM") - before) / MiB, 2),
            "ran": outcome.ran, "reasons": outcome.reasons, "requests": server.requests}


def _cpu_limit(seconds: float) -> Callable[[], None]:
    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_CPU, (int(seconds), int(seconds) + 5))
    return limit


def measure(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """Run ``name`` in a child process, stopped after ``args.cap_s`` seconds of CPU time (the
    kernel's ``RLIMIT_CPU``: on a busy machine a wall-clock cap would stop a run that waited,
    not one that worked), or ten times that of wall time."""
    command = [sys.executable, "-m", "benchmarks.flood", "--one", name, "--mib", str(args.mib),
               "--fragment", str(args.fragment), "--cap", str(args.cap)]
    stopped = {"name": name, "cpu_s": None, "stopped_at_cpu_s": args.cap_s}
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=10 * args.cap_s,
                              env=os.environ.copy(), check=False,
                              preexec_fn=_cpu_limit(args.cap_s))
    except subprocess.TimeoutExpired:
        return stopped
    if done.returncode == -24:  # SIGXCPU: the CPU limit
        return stopped
    if done.returncode != 0:
        return {"name": name, "error": done.stderr.strip().splitlines()[-1:]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def verdicts(rows: dict[str, dict[str, Any]], cap: int) -> list[str]:
    """One line per gated entry point: memory and time against the targets."""
    bound = (2 * cap + 8 * MiB) / MiB
    lines = []
    for name, row in rows.items():
        if not ENTRIES[name][1]:
            continue
        floor = rows.get(FLOOR[name], {}).get("cpu_s")
        if row.get("cpu_s") is None or not floor:
            lines.append(f"{name}: not measured ({row})")
            continue
        ratio = row["cpu_s"] / floor
        ok = (row["peak_growth_mib"] < bound and ratio <= 3.0 and row["ran"] == 0
              and row["reasons"][:1] == ["arguments_exceed_max_bytes"])
        lines.append(f"{name}: {row['peak_growth_mib']} MiB (bound {bound:.2f}), {row['cpu_s']} s"
                     f" CPU = {ratio:.2f}x the SDK, {_against_plain(row, rows.get(PLAIN[name]))},"
                     f" ran {row['ran']}, reasons {row['reasons']}:"
                     f" {'holds' if ok else 'DOES NOT HOLD'}")
    return lines


def _against_plain(row: dict[str, Any], plain: dict[str, Any] | None) -> str:
    """The gated run's CPU time over the plain framework's, in the same run: ``<`` when the
    plain run was stopped at the cap (so the plain time is at least the cap)."""
    if plain is None:
        return "plain framework not measured"
    if plain.get("cpu_s") is not None:
        return f"{row['cpu_s'] / plain['cpu_s']:.3f}x the plain framework ({plain['cpu_s']} s)"
    return (f"< {row['cpu_s'] / plain['stopped_at_cpu_s']:.3f}x the plain framework"
            f" (stopped at {plain['stopped_at_cpu_s']} s CPU)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.flood", description=__doc__)
    parser.add_argument("--mib", type=float, default=20.0, help="argument size, MiB")
    parser.add_argument("--fragment", type=int, default=KiB, help="fragment size, bytes")
    parser.add_argument("--cap", type=int, default=64 * KiB, help="the cap, bytes")
    parser.add_argument("--cap-s", type=float, default=60.0, help="stop a run after this much CPU time")
    parser.add_argument("--only", choices=["gated", "plain"], help="only these entry points")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    nbytes = int(args.mib * MiB)
    if args.one:
        sys.stdout.write(json.dumps(one(args.one, nbytes, args.fragment, args.cap)) + "\n")
        return 0
    names = [n for n, (_, gated) in ENTRIES.items()
             if n.startswith("sdk") or args.only is None or (args.only == "gated") == gated]
    rows = {}
    for name in names:
        rows[name] = measure(name, args)
        log.info("%s", json.dumps(rows[name]))
    sys.stdout.write("\n".join(verdicts(rows, args.cap)) + "\n" + json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
