"""Bedrock Converse, Ollama and Cohere: what users run on them today, beside the gate.

Each family is streamed from the project's emulator over a local socket: the scenario's
bytes, decoded by the family's real SDK (boto3's event-stream parser, the ``ollama``
client's NDJSON reader, ``cohere.ClientV2``'s SSE reader). Every side pays the same HTTP and
SDK cost, so the ratio is what each does with the SDK's events, on the path a user runs:

- toolstream: the SDK's own stream (`toolstream_core.vendors.open_stream`) fed to
  `Assembler`, then ``finish()`` (schemas checked);
- LangChain: ``ChatBedrockConverse`` / ``ChatOllama`` / ``ChatCohere`` ``.stream()`` with the
  ``full = full + chunk`` merge its streaming docs teach (each class turns the SDK's events
  into chunks; the merge accumulates them), then ``full.tool_calls``;
- LlamaIndex: ``BedrockConverse`` / ``Ollama`` ``.stream_chat()`` to the last response, then
  ``get_tool_calls_from_response`` (its ``Cohere`` class streams the v1 chat API and reads
  text only, so it has no streamed tool call to accumulate: not measured).

Timed as interleaved pairs (framework, then gate, the order alternating each round), the
garbage collector off inside each call: the median of the per-pair ratios framework / gate
and its interquartile range. A framework whose calls differ from the scenario's is marked
(its time still shown: it is what its users pay).
"""

from __future__ import annotations

import gc
import logging
import statistics
import time
from collections.abc import Callable
from typing import Any

from benchmarks.markdown import table_head
from benchmarks.timing import BudgetExceeded, alarm, quartiles

log = logging.getLogger("benchmarks")

FAMILIES: tuple[str, ...] = ("bedrock-converse", "ollama", "cohere")
#: Scenarios measured: one small call, two parallel ones, one ~200 KB ``write_file`` call in
#: ~800 fragments (``--full`` only: LangChain takes ~50 s on it on Bedrock, ~75 s on Cohere).
SCENARIOS: tuple[str, ...] = ("single_call", "parallel_calls", "large_args")
#: Per profile: (scenarios, interleaved pairs, cap on one call in seconds). A call past
#: the cap is shown as "> cap" after that one run (LangChain's merge is quadratic in the
#: number of chunks on some classes: a 200 KB call takes tens of seconds). The cap's
#: alarm stops a call only where the framework lets the exception through (boto3's
#: stream swallows it), so a capped call may run to its end once.
PLANS: dict[str, tuple[tuple[str, ...], int, float]] = {
    "smoke": (("single_call",), 2, 5.0),
    "quick": (("single_call", "parallel_calls"), 5, 5.0),
    "default": (("single_call", "parallel_calls"), 9, 10.0),
    "full": (SCENARIOS, 9, 120.0),
}
#: Model names a framework class accepts without asking the network (the emulator plays
#: the queued scenario whatever the name).
MODELS: dict[str, str] = {
    "bedrock-converse": "anthropic.claude-3-5-sonnet-20240620-v1:0",
    "ollama": "qwen3:8b",
    "cohere": "command-a-03-2025",
}
_KEY = "bench-not-a-key"
_PROMPT = "Write the notes file."

Calls = list[tuple[str, Any]]
Run = Callable[[], Calls]


def _gate(api: str, base_url: str) -> Run:
    from toolstream_core import Assembler
    from toolstream_core.testing import TOOLS
    from toolstream_core.vendors import declare_tools, make_client, open_stream

    client = make_client(api, api_key=_KEY, base_url=base_url)
    tools = declare_tools(api, TOOLS)

    def run() -> Calls:
        assembler = Assembler(tools=TOOLS, provider=api)  # type: ignore[arg-type]
        for event in open_stream(api, client, model=MODELS[api], contents=_PROMPT, tools=tools):
            assembler.feed(event)
        return [(c.name, c.arguments) for c in assembler.finish().committed]

    return run


def _langchain_model(api: str, base_url: str) -> Any:
    if api == "bedrock-converse":
        from langchain_aws import ChatBedrockConverse
        from toolstream_core.vendors import make_client

        return ChatBedrockConverse(model=MODELS[api], region_name="us-east-1",
                                   client=make_client(api, api_key=_KEY, base_url=base_url),
                                   aws_access_key_id=_KEY, aws_secret_access_key=_KEY)
    if api == "ollama":
        from langchain_ollama import ChatOllama

        return ChatOllama(model=MODELS[api], base_url=base_url)
    from langchain_cohere import ChatCohere

    return ChatCohere(model=MODELS[api], cohere_api_key=_KEY, base_url=base_url, max_retries=0)


def _langchain(api: str, base_url: str) -> Run:
    model = _langchain_model(api, base_url)

    def run() -> Calls:
        full: Any = None
        for chunk in model.stream(_PROMPT):
            full = chunk if full is None else full + chunk
        return [(tc["name"], tc["args"]) for tc in full.tool_calls]

    return run


def _llamaindex_llm(api: str, base_url: str) -> Any:
    if api == "bedrock-converse":
        from llama_index.llms.bedrock_converse import BedrockConverse
        from toolstream_core.vendors import make_client

        return BedrockConverse(model=MODELS[api], region_name="us-east-1",
                               client=make_client(api, api_key=_KEY, base_url=base_url))
    if api == "ollama":
        from llama_index.llms.ollama import Ollama

        return Ollama(model=MODELS[api], base_url=base_url, context_window=32_768)
    raise ImportError("LlamaIndex's Cohere class streams no tool calls (v1 chat, text only)")


def _llamaindex(api: str, base_url: str) -> Run:
    from llama_index.core.llms import ChatMessage

    llm = _llamaindex_llm(api, base_url)

    def run() -> Calls:
        last: Any = None
        for last in llm.stream_chat([ChatMessage(role="user", content=_PROMPT)]):  # noqa: B007
            pass
        return [(s.tool_name, s.tool_kwargs)
                for s in llm.get_tool_calls_from_response(last, error_on_no_tool_call=False)]

    return run


PEERS: dict[str, tuple[str, Callable[[str, str], Run]]] = {
    "langchain": ("LangChain .stream() + full+chunk", _langchain),
    "llamaindex": ("LlamaIndex stream_chat + get_tool_calls", _llamaindex),
}
_CLASSES = {
    "langchain": {"bedrock-converse": "ChatBedrockConverse", "ollama": "ChatOllama",
                  "cohere": "ChatCohere"},
    "llamaindex": {"bedrock-converse": "BedrockConverse", "ollama": "Ollama", "cohere": "Cohere"},
}


def _timed(emu: Any, api: str, scenario: str, run: Run, cap: float) -> tuple[float, Calls]:
    emu.queue(api, scenario)
    gc.collect()
    gc.disable()
    try:
        with alarm(cap):
            started = time.perf_counter()
            calls = run()
            return time.perf_counter() - started, calls
    finally:
        gc.enable()


def _pairs(emu: Any, api: str, scenario: str, peer: Run, gate: Run, n: int,
           cap: float) -> dict[str, Any]:
    """``n`` interleaved rounds after one untimed round (imports, pydantic schemas)."""
    from toolstream_core.testing._scenarios import build_script, scenario_rng

    want = [(c.name, c.arguments)
            for c in build_script(scenario, scenario_rng(emu.seed, api, scenario)).calls]
    try:
        gate_s, _ = _timed(emu, api, scenario, gate, cap)
    except BudgetExceeded:
        gate_s = cap
    if gate_s >= cap:  # the SDK's own decoding is past the cap: nothing to compare
        return {"status": "capped", "detail": f"the SDK stream alone > {cap:g} s"}
    try:
        peer_s, peer_calls = _timed(emu, api, scenario, peer, cap)
    except BudgetExceeded:
        peer_s = cap
    if peer_s >= cap:  # stopped, or past the cap with the alarm swallowed by the framework
        return {"status": "capped", "detail": f"> {cap:g} s", "cap_s": cap,
                "gate_ms": 1000 * gate_s, "min_ratio": cap / gate_s}
    times: dict[str, list[float]] = {"peer": [], "gate": []}
    for i in range(n):
        order = (("peer", peer), ("gate", gate)) if i % 2 == 0 else (("gate", gate), ("peer", peer))
        for side, run in order:
            seconds, calls = _timed(emu, api, scenario, run, cap)
            if side == "gate" and calls != want:
                return {"status": "wrong", "detail": f"toolstream committed {calls!r}"}
            times[side].append(seconds)
    ratios = [p / g for p, g in zip(times["peer"], times["gate"], strict=True)]
    q1, q3 = quartiles(ratios)
    return {"status": "ok", "pairs": n, "median": statistics.median(ratios), "q1": q1, "q3": q3,
            "peer_ms": 1000 * statistics.median(times["peer"]),
            "gate_ms": 1000 * statistics.median(times["gate"]),
            "peer_correct": peer_calls == want}


def run(profile: Any) -> list[dict[str, Any]]:
    """Every family x scenario x framework the environment has, as ratio rows."""
    try:
        from toolstream_core.testing import VendorEmulator
    except ImportError as exc:
        return [{"status": "skipped", "detail": str(exc)}]
    scenarios, n, cap = PLANS.get(getattr(profile, "name", ""), PLANS["default"])
    rows: list[dict[str, Any]] = []
    with VendorEmulator(seed=0) as emu:
        for api in FAMILIES:
            try:
                gate = _gate(api, emu.base_url)
            except ImportError as exc:
                rows.append({"api": api, "status": "unavailable", "detail": str(exc)})
                continue
            for key, (label, build) in PEERS.items():
                row = {"api": api, "peer": key, "label": f"{label} ({_CLASSES[key][api]})"}
                try:
                    peer = build(api, emu.base_url)
                except ImportError as exc:
                    rows.append({**row, "status": "unavailable", "detail": str(exc)[:120]})
                    continue
                for scenario in scenarios:
                    result = _pairs(emu, api, scenario, peer, gate, n, cap)
                    rows.append({**row, "scenario": scenario, **result})
                    _log(rows[-1])
    return rows


def _log(row: dict[str, Any]) -> None:
    if row.get("status") == "ok":
        log.info("  %-16s %-12s %-10s %.2fx (IQR %.2f-%.2f)%s", row["api"], row["scenario"],
                 row["peer"], row["median"], row["q1"], row["q3"],
                 "" if row["peer_correct"] else "  [peer's calls are wrong]")
    else:
        log.info("  %-16s %-12s %s: %s", row["api"], row.get("scenario", ""), row["status"],
                 row.get("detail", ""))


def render(rows: list[dict[str, Any]]) -> str:
    """The section's markdown table."""
    lines = table_head(
        "## Bedrock Converse, Ollama and Cohere: today's framework path / toolstream",
        "Streamed from the emulator through each family's SDK; ratio = framework time / "
        "(SDK stream + `Assembler`), median of interleaved pairs (IQR). *wrong*: the "
        "framework's tool calls differ from what the vendor sent.",
        "| family | scenario | framework | ratio | IQR | framework ms | toolstream ms |",
    )
    for row in rows:
        if row.get("status") == "capped" and "min_ratio" in row:
            lines.append(f"| {row['api']} | {row['scenario']} | {row['label']} | "
                         f"> {row['min_ratio']:.0f}x | | > {1000 * row['cap_s']:.0f} | "
                         f"{row['gate_ms']:.1f} |")
            continue
        if row.get("status") != "ok":
            lines.append(f"| {row.get('api', '')} | {row.get('scenario', '')} | "
                         f"{row.get('label', '')} | {row.get('status')}: "
                         f"{row.get('detail', '')} | | | |")
            continue
        mark = "" if row["peer_correct"] else " (*wrong*)"
        lines.append(
            f"| {row['api']} | {row['scenario']} | {row['label']}{mark} | "
            f"{row['median']:.2f}x | {row['q1']:.2f}-{row['q3']:.2f} | "
            f"{row['peer_ms']:.1f} | {row['gate_ms']:.1f} |")
    return "\n".join(lines)
