"""The ``toolstream`` command: replay, record, demo, emulate.

Everything the commands compute lives in small modules (`_replay`, `_record`,
`_demo`, `_peers`); this one parses arguments, picks colours, renders text and
maps failures to exit codes. It is the only module in the package that prints.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import textwrap
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from toolstream_core import PROVIDERS

EXIT_OK = 0
EXIT_REJECTED = 1
EXIT_USAGE = 2
EXIT_INPUT = 3
EXIT_VENDOR = 4

EXIT_CODES = f"""\
exit codes:
  {EXIT_OK}  success
  {EXIT_REJECTED}  replay --strict-exit: at least one replayed call was rejected or dropped;
     fuzz: at least one case broke a safety invariant
  {EXIT_USAGE}  usage error (bad option, missing API key, output file exists; demo: a package
     it needs is not installed)
  {EXIT_INPUT}  input error (file not found, unreadable or not a stream/cassette/config)
  {EXIT_VENDOR}  network or vendor error (record: the request failed; emulate: cannot listen)
"""


class _Fail(Exception):
    """A handled failure: message for stderr, and the exit code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


# --------------------------------------------------------------------------- output


def _want_colour(choice: str) -> bool:
    if choice == "always":
        return True
    if choice == "never":
        return False
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ


def _style(args: argparse.Namespace) -> Any:
    from toolstream_core.app.demo import Style

    return Style(_want_colour(args.color))


def _write_json(doc: Any) -> None:
    sys.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n")


def _clip(text: str | None, width: int) -> str:
    text = "-" if text in (None, "") else str(text)
    return text if len(text) <= width else text[: width - 1] + "…"


# --------------------------------------------------------------------------- inputs


def _load_tools(path: str | None) -> dict[str, Any] | None:
    """The ``--tools`` file, read the way ``record`` reads it (one reader for both)."""
    if path is None:
        return None
    from toolstream_core.app.record import RecordInputError, load_tools

    try:
        return dict(load_tools(path))
    except RecordInputError as exc:
        raise _Fail(EXIT_INPUT, str(exc)) from exc


def _load_config(path: str | None) -> Any:
    if path is None:
        return None
    from toolstream_core import AssembleConfig

    try:
        return AssembleConfig.from_yaml(Path(path))
    except ValueError as exc:
        message = str(exc)
        raise _Fail(EXIT_INPUT, message if message.startswith(path) else f"{path}: {message}") \
            from exc


# --------------------------------------------------------------------------- replay


def _cmd_replay(args: argparse.Namespace) -> int:
    from toolstream_core.app.replay import replay_source, totals
    from toolstream_core.testing import SourceError, expand_paths, load_sources

    tools = _load_tools(args.tools)
    config = _load_config(args.config)
    try:
        files = expand_paths(args.paths)
        if not files:
            raise _Fail(EXIT_INPUT, f"no .jsonl or .yaml recordings in {', '.join(args.paths)}; "
                                    "give a cassette, a JSONL stream or a directory of them")
        streams = [
            replay_source(source, provider=args.provider, tools=tools, config=config)
            for path in files
            for source in load_sources(path)
        ]
    except SourceError as exc:
        raise _Fail(EXIT_INPUT, str(exc)) from exc
    summary = totals(streams)
    if args.json:
        _write_json({"toolstream": "replay", "version": 1, "streams": streams, "totals": summary})
    else:
        style = _style(args)
        for stream in streams:
            sys.stdout.write(_render_stream(stream, style))
        sys.stdout.write(
            f"\n{summary['streams']} stream(s): {summary['calls']} call(s), "
            f"{summary['committed']} committed, {summary['rejected']} rejected, "
            f"{summary['dropped']} dropped, {summary['server_calls']} server-side; "
            f"{summary['error_results']} error result(s)\n"
        )
    if args.strict_exit and (summary["rejected"] or summary["dropped"]):
        return EXIT_REJECTED
    return EXIT_OK


# Widths fit 100 columns with the usual reasons; the reason is last and never clipped.
_CALL_COLUMNS = (("index", 5), ("id", 25), ("name", 16), ("kind", 8), ("state", 9),
                 ("bytes", 8), ("reason", 0))


def _render_stream(stream: dict[str, Any], style: Any) -> str:
    source = stream["source"]
    if stream["interaction"] is not None:
        source += f"#{stream['interaction']}"
    lines = ["", style.bold(source)]
    facts = [
        f"provider {stream['provider'] or 'auto'}",
        f"events {stream['events']}",
        f"finish_reason {stream['finish_reason']}",
        "complete" if stream["complete"] else style.yellow("not complete"),
    ]
    if not stream["transport_complete"]:
        facts.append(style.yellow("transport cut"))
    lines.append("  " + ", ".join(facts))
    for note in stream.get("notes", []):
        lines.append("  " + style.dim("note: " + note))
    if stream.get("error"):
        lines.append("  " + style.yellow("stream error: " + str(stream["error"])))
    rows = [(c, "") for c in stream["calls"]]
    rows += [(c, "server") for c in stream["server_calls"]]
    rows += [(c, "dropped") for c in stream["dropped"]]
    if rows:
        header = " ".join(name.ljust(width) for name, width in _CALL_COLUMNS)
        lines.append("  " + style.dim(header.rstrip()))
        for call, tag in rows:
            state = tag or call["state"] or "-"
            cells = [
                str(call["index"]),
                call["id"],
                call["name"],
                call["kind"],
                state,
                str(call["bytes"]),
                call["reason"],
            ]
            text = [
                _clip(value, width).ljust(width) if width else _clip(value, 200)
                for value, (_, width) in zip(cells, _CALL_COLUMNS, strict=True)
            ]
            if state == "committed":
                text[4] = style.green(text[4])
            elif state in ("failed", "cancelled", "dropped"):
                text[4] = style.red(text[4])
                text[6] = style.yellow(text[6])
            lines.append("  " + " ".join(text).rstrip())
    else:
        lines.append("  " + style.dim("no tool calls"))
    results = stream["error_results"]
    if results:
        lines.append("  " + style.bold("error results (one per rejected call):"))
        for result in results:
            head = f"    {result['tool_call_id']}  {result['name']}  "
            head += style.yellow(str(result["reason"]))
            lines.append(head)
            for piece in textwrap.wrap(str(result["content"]), width=92):
                lines.append("      " + style.dim(piece))
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- record


def _cmd_record(args: argparse.Namespace) -> int:
    from toolstream_core.app import record as _record
    from toolstream_core.testing import SourceError

    try:
        tools = _record.load_tools(args.tools)
        result = _record.record(
            api=args.api,
            model=args.model,
            prompt=args.prompt,
            tools=tools,
            output=Path(args.output),
            base_url=args.base_url,
            max_tokens=args.max_tokens,
            overwrite=args.force,
        )
    except (_record.RecordInputError, SourceError) as exc:
        raise _Fail(EXIT_INPUT, str(exc)) from exc
    except _record.RecordUsageError as exc:
        raise _Fail(EXIT_USAGE, str(exc)) from exc
    except _record.VendorError as exc:
        raise _Fail(EXIT_VENDOR, f"vendor request failed: {exc}") from exc
    # What was recorded, read back the way `replay` reads it: the user sees at once
    # whether the cassette holds the fault they were after.
    from toolstream_core.app.replay import replay_source
    from toolstream_core.testing import load_sources

    try:
        streams = [
            replay_source(source, tools=tools) for source in load_sources(result.cassette)
        ]
    except SourceError as exc:
        raise _Fail(EXIT_INPUT, f"the recorded cassette cannot be read back: {exc}") from exc
    doc = {
        "toolstream": "record",
        "version": 1,
        "cassette": str(result.cassette),
        "api": args.api,
        "model": args.model,
        "interactions": result.interactions,
        "chunks": result.chunks,
        "stream_error": result.stream_error,
        "streams": streams,
    }
    if args.json:
        _write_json(doc)
    else:
        sys.stdout.write(
            f"recorded {result.chunks} chunk(s) in {result.interactions} interaction(s) "
            f"to {result.cassette}\n"
        )
        if result.stream_error:
            sys.stdout.write(f"the stream ended with an error: {result.stream_error}\n")
        style = _style(args)
        for stream in streams:
            sys.stdout.write(_render_stream(stream, style))
        sys.stdout.write(f"\nreplay it with: toolstream replay {result.cassette}\n")
    return EXIT_OK


# --------------------------------------------------------------------------- demo


def _cmd_gateway(args: argparse.Namespace) -> int:
    from toolstream_core.app import gateway as _gateway

    scenario = (args.scenario or [_gateway.DEFAULT_SCENARIO])[0]
    try:
        doc = _gateway.run_gateway(scenario, profiles=args.profile)
    except ValueError as exc:
        raise _Fail(EXIT_USAGE, str(exc)) from exc
    except ImportError as exc:
        raise _Fail(EXIT_USAGE, f"the gateway view needs the emulator and the SDKs: {exc}") \
            from exc
    if args.json:
        _write_json(doc)
    else:
        sys.stdout.write(_gateway.render_gateway(doc, _style(args), total_width=args.width))
    return EXIT_OK


def _cmd_demo(args: argparse.Namespace) -> int:
    from toolstream_core.app import demo as _demo
    from toolstream_core.testing import SourceError

    if args.width < _demo.MIN_WIDTH:
        raise _Fail(EXIT_USAGE, f"--width {args.width} is too narrow: the table needs at least "
                                f"{_demo.MIN_WIDTH} columns")
    if getattr(args, "gateway", False):
        return _cmd_gateway(args)

    try:
        root = _demo.find_cassette_dir(args.cassettes)
        cases = _demo.find_cases(
            root, apis=args.api, scenarios=args.scenario, everything=args.all
        )
    except _demo.DemoError as exc:
        raise _Fail(EXIT_INPUT, str(exc)) from exc
    if not cases:
        raise _Fail(EXIT_INPUT, f"{root}: no cassette matches the chosen APIs/scenarios")
    style = _style(args)
    interactive = not args.json and sys.stderr.isatty()

    def progress(case: Any) -> None:
        if interactive:
            sys.stderr.write(f"\r\x1b[Kreplaying {case.api}/{case.scenario} …")
            sys.stderr.flush()

    try:
        doc = _demo.run_demo(cases, progress=progress)
    except _demo.DemoUnavailable as exc:
        raise _Fail(EXIT_USAGE, str(exc)) from exc
    except SourceError as exc:
        raise _Fail(EXIT_INPUT, str(exc)) from exc
    finally:
        if interactive:
            sys.stderr.write("\r\x1b[K")
    if args.json:
        _write_json(doc)
    else:
        sys.stdout.write(_demo.render(doc, style, total_width=args.width))
    return EXIT_OK


# --------------------------------------------------------------------------- emulate


def _emulator_script(args: argparse.Namespace) -> list[str]:
    """The scenarios of ``--script a,b`` and repeated ``--scenario``, checked, in order."""
    from toolstream_core.testing import SCENARIOS

    names = [n.strip() for item in (args.script or []) for n in item.split(",") if n.strip()]
    names += args.scenario or []
    unknown = [n for n in names if n not in SCENARIOS]
    if unknown:
        raise _Fail(EXIT_USAGE, f"unknown scenario {unknown[0]!r}; choose from: "
                                f"{', '.join(sorted(SCENARIOS))}")
    return names


def _check_port(port: int) -> None:
    if not 0 <= port <= 65535:
        raise _Fail(EXIT_USAGE, f"--port {port} is not a TCP port; give 0-65535 (0: any free one)")


def _queue_script(emulator: Any, names: list[str]) -> list[str]:
    """Queue the script on every API where each of its scenarios exists; those APIs."""
    from toolstream_core.testing import API_NAMES, SCENARIOS

    apis = [api for api in API_NAMES if all(api in SCENARIOS[n].apis for n in names)]
    for api in apis:
        emulator.queue(api, *names)
    return apis


def _banner(base: str, script: list[str], apis: list[str]) -> str:
    from toolstream_core.testing import SCENARIOS

    if script:
        plays = (f"requests with any other model name play, in order: {', '.join(script)} "
                 f"(on {', '.join(apis)}), then the final answer\n")
    else:
        plays = "requests with any other model name play 'text' (the final answer)\n"
    return (
        f"toolstream vendor emulator listening on {base}\n"
        "base URLs as each SDK (and `toolstream record --base-url`) takes them:\n"
        f"  openai-chat, openai-responses  {base}/v1\n"
        f"  anthropic                      {base}\n"
        f"  gemini                         {base}\n"
        f"  bedrock-converse (endpoint_url) {base}\n"
        f"  ollama (host), cohere          {base}\n"
        "choose a scenario with the model name 'scenario:<name>':\n"
        f"  {', '.join(sorted(SCENARIOS))}\n"
        + plays +
        "a request whose history ends with tool results gets the final answer, which says\n"
        "what those results were; so an agent runs the scenario's calls once and finishes:\n"
        f"  LangChain   create_agent(ChatOpenAI(model='scenario:single_call', "
        f"base_url='{base}/v1',\n"
        "                api_key='x'), tools, middleware=[ToolstreamMiddleware()])\n"
        f"  LlamaIndex  ToolstreamFunctionAgent(tools=tools, llm=OpenAI(model='gpt-4o-mini',\n"
        f"                api_base='{base}/v1', api_key='x', default_headers=\n"
        "                {'x-toolstream-scenario': 'single_call'}))\n"
        f"  raw SDK     OpenAI(base_url='{base}/v1', api_key='x').chat.completions.create(\n"
        "                model='scenario:single_call', messages=..., tools=..., stream=True)\n"
        "Ctrl-C to stop\n"
    )


def _cmd_emulate(args: argparse.Namespace) -> int:
    try:
        from toolstream_core.testing import VendorEmulator
    except ImportError as exc:
        raise _Fail(EXIT_USAGE, f"the emulator is not available: {exc}") from exc
    _check_port(args.port)
    script = _emulator_script(args)
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    # Ctrl-C and SIGTERM (a supervisor, a test harness) both just end the wait below, so a
    # signal at any point after this line stops the server cleanly, banner or not.
    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            emulator = VendorEmulator(
                seed=args.seed, host=args.host, port=args.port, soft_drop=args.soft_drop,
                profile=getattr(args, "profile", None),
            )
            emulator.start()
        except (OSError, OverflowError) as exc:
            raise _Fail(EXIT_VENDOR, f"cannot listen on {args.host}:{args.port}: {exc}; "
                                     "choose another --port or --host") from exc
        try:
            apis = _queue_script(emulator, script)
            sys.stdout.write(_banner(emulator.base_url.rstrip("/"), script, apis))
            sys.stdout.flush()
            while not stop.wait(0.5):
                pass
        finally:
            emulator.stop()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    sys.stdout.write("emulator stopped\n")
    return EXIT_OK


# --------------------------------------------------------------------------- fuzz


def _cmd_fuzz(args: argparse.Namespace) -> int:
    from toolstream_core.testing import SourceError, run_fuzz

    if args.cases < 1 or (args.case is not None and args.case < 0):
        raise _Fail(EXIT_USAGE, "--cases must be at least 1 and --case at least 0")
    try:
        report = run_fuzz(args.paths, cases=args.cases, seed=args.seed, case=args.case)
    except SourceError as exc:
        raise _Fail(EXIT_INPUT, str(exc)) from exc
    if report.streams == 0:
        raise _Fail(EXIT_INPUT, f"no .jsonl or .yaml recordings in {', '.join(args.paths)}; "
                                "give a cassette, a JSONL stream or a directory of them")
    if args.json:
        _write_json({"toolstream": "fuzz", "version": 1, **report.to_json()})
        return EXIT_REJECTED if report.violations else EXIT_OK
    for violation in report.violations:
        sys.stdout.write(violation.reproduction + "\n")
    sys.stdout.write(f"\n{'api / mutation':<22}{'cases':>8}{'violating':>11}{'undetectable':>14}\n")
    for table in (report.by_api, report.by_mutation):
        for name, tally in sorted(table.items()):
            sys.stdout.write(f"{name:<22}{tally.cases:>8}{tally.violations:>11}"
                             f"{tally.undetectable:>14}\n")
        sys.stdout.write("\n")
    sys.stdout.write(
        f"{report.cases} case(s) over {report.streams} stream(s), seed {report.seed}, "
        f"{report.seconds:.1f} s: {report.violating_cases} violating, "
        f"{report.undetectable_cases} undetectable (a lost or repeated fragment no one can see)\n"
    )
    return EXIT_REJECTED if report.violations else EXIT_OK


# --------------------------------------------------------------------------- parser


def _profile_names() -> list[str]:
    try:
        from toolstream_core.testing import PROFILES
    except ImportError:  # pragma: no cover - the test kit ships with the core
        return []
    return sorted(PROFILES)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("toolstream-gate")
    except PackageNotFoundError:
        return "unknown (not installed)"


class _Parser(argparse.ArgumentParser):
    """argparse with the usage-error exit code spelled out (argparse already uses 2)."""

    def error(self, message: str) -> NoReturn:
        """One line: what was wrong, and where the help is (the usage block hid the error)."""
        sys.stderr.write(f"{self.prog}: error: {message}; see '{self.prog} --help'\n")
        raise SystemExit(EXIT_USAGE)


def _para(text: str) -> str:
    return textwrap.fill(text, width=78)


_COLOUR_HELP = "colour text output (auto: only on a terminal and when NO_COLOR is unset)"


def _add_colour(parser: argparse.ArgumentParser, default: Any) -> None:
    parser.add_argument("--color", choices=("auto", "always", "never"), default=default,
                        help=_COLOUR_HELP)


def _add_json(parser: argparse.ArgumentParser, what: str = "one JSON document") -> None:
    parser.add_argument("--json", action="store_true", help=f"print {what}")


def _add_paths(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", metavar="PATH", help="cassette, JSONL stream or dir")


def _profile_help(what: str) -> str:
    return f"{what} (one of: {', '.join(_profile_names())})"


_ABOUT: dict[str, tuple[str, str]] = {  # command -> (one-line help, --help description)
    "replay": (
        "replay recorded streams through the assembler",
        "Replay vcrpy cassettes (.yaml) or JSONL streams (the tests/streams format) through "
        "toolstream's Assembler and show, per tool call, its identity, state, reason and "
        "size, then the error results that pair every rejected call. Directories are "
        "searched for .jsonl/.yaml files."),
    "record": (
        "record a real vendor stream to a scrubbed cassette",
        "Make one streamed tool-call request with the vendor's own SDK and save the HTTP "
        "exchange as a vcrpy cassette, with API keys, cookies and org headers removed before "
        "anything is written. The key comes from the environment: OPENAI_API_KEY, "
        "ANTHROPIC_API_KEY, GEMINI_API_KEY or GOOGLE_API_KEY. Use --base-url to record from an "
        "OpenAI/Anthropic/Gemini-compatible server or the local emulator (`toolstream "
        "emulate`; choose its scenario with --model scenario:<name>)."),
    "demo": (
        "what LangChain, LlamaIndex and the SDKs would run, next to toolstream",
        "Replay the bundled cassettes offline through the real vendor SDKs and show, per "
        "scenario and API, the calls each stack hands to its tool runner: plain LangChain "
        "(chunk merging + tool_calls), plain LlamaIndex (stream_chat + "
        "get_tool_calls_from_response), the SDK's stream helper (get_final_*; argument text "
        "parsed with json.loads) and toolstream (committed / rejected with a reason). No "
        "network, no API key. A framework that is not installed shows as n/a."),
    "emulate": (
        "run the local vendor wire emulator until Ctrl-C",
        "Serve the OpenAI, Anthropic and Gemini streaming wire formats on 127.0.0.1 from "
        "scripted scenarios (model name 'scenario:<name>', or --script for clients whose model "
        "name is fixed), for testing agents and recording cassettes without a vendor account. "
        "A request whose history ends with tool results gets the final answer, which says what "
        "those results were, so an agent runs the scenario's calls once and finishes."),
    "fuzz": (
        "mutate recorded streams and check the safety invariants on every case",
        "Mutate each recorded stream (JSONL streams, vcrpy cassettes, directories of either) "
        "case by case - truncation, dropped, repeated and swapped events, re-chunked argument "
        "fragments, Gemini keep-alive parts, garbage and mistyped events, changed characters, "
        "raw bytes cut anywhere - and check that no case raises, leaves a call undecided, "
        "breaks the one-result-per-rejected-call pairing or commits a call the stream did not "
        "prove. Each violation prints one line that replays it."),
}


def _command(sub: Any, name: str,
             parents: Sequence[argparse.ArgumentParser] = ()) -> argparse.ArgumentParser:
    """One subcommand with the shared look: wrapped description, exit codes below."""
    summary, description = _ABOUT[name]
    parser: argparse.ArgumentParser = sub.add_parser(
        name, parents=list(parents), help=summary, description=_para(description),
        epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.set_defaults(parser=parser)  # main() reports a stray option as this command's
    return parser


def _add_replay(sub: Any, colour: argparse.ArgumentParser) -> None:
    replay = _command(sub, "replay", [colour])
    _add_paths(replay)
    _add_json(replay)
    replay.add_argument(
        "--provider", choices=PROVIDERS, metavar="PROVIDER",
        help=f"vendor wire format, one of {', '.join(PROVIDERS)} (default: the recording's API, "
             "else detected from the chunks)")
    replay.add_argument(
        "--config", metavar="FILE",
        help="YAML file with an 'agent_stream_assemble:' section (AssembleConfig)")
    replay.add_argument(
        "--tools", metavar="FILE",
        help="JSON/YAML mapping tool name -> JSON Schema (enables registry and schema checks)")
    replay.add_argument("--strict-exit", action="store_true",
                        help=f"exit {EXIT_REJECTED} when any call was rejected or dropped")
    replay.set_defaults(func=_cmd_replay)


def _add_record(sub: Any, colour: argparse.ArgumentParser) -> None:
    record = _command(sub, "record", [colour])
    record.add_argument("--api", required=True, choices=PROVIDERS, metavar="API",
                        help=f"vendor API to call: {', '.join(PROVIDERS)}")
    record.add_argument("--model", required=True, help="model name")
    record.add_argument("--prompt", required=True, help="the user message")
    record.add_argument("--tools", required=True, metavar="FILE",
                        help="JSON/YAML mapping tool name -> JSON Schema")
    record.add_argument(
        "--base-url", metavar="URL",
        help="API base URL as the SDK takes it (OpenAI: ending in /v1; Anthropic, Gemini: the "
        "server root); default: the vendor's")
    record.add_argument("-o", "--output", required=True, metavar="FILE",
                        help="cassette to write (.yaml)")
    record.add_argument("--max-tokens", type=int, default=1024, help="output token limit")
    record.add_argument("--force", action="store_true", help="replace an existing cassette")
    _add_json(record, "the result as JSON")
    record.set_defaults(func=_cmd_record)


def _add_demo(sub: Any, colour: argparse.ArgumentParser) -> None:
    demo = _command(sub, "demo", [colour])
    _add_json(demo)
    demo.add_argument("--api", action="append", choices=PROVIDERS, metavar="API",
                      help=f"only this API (repeatable): {', '.join(PROVIDERS)}")
    demo.add_argument("--scenario", action="append", metavar="NAME",
                      help="only this scenario (repeatable)")
    demo.add_argument("--all", action="store_true", help="every bundled scenario, not a showcase")
    demo.add_argument("--cassettes", metavar="DIR", help="cassette directory (<api>/<name>.yaml)")
    demo.add_argument("--width", type=int, default=100, help="table width in columns")
    demo.add_argument(
        "--gateway", action="store_true",
        help="one openai-chat scenario (--scenario, default truncated_length) streamed live "
        "from the emulator's OpenAI-compatible server profiles (127.0.0.1)")
    demo.add_argument("--profile", action="append", choices=_profile_names(), metavar="NAME",
                      help=_profile_help("with --gateway: only this server profile (repeatable)"))
    demo.set_defaults(func=_cmd_demo)


def _add_emulate(sub: Any, colour: argparse.ArgumentParser) -> None:
    emulate = _command(sub, "emulate", [colour])
    emulate.add_argument("--host", default="127.0.0.1", help="address to bind")
    emulate.add_argument("--port", type=int, default=0, help="port (0: pick a free one)")
    emulate.add_argument(
        "--soft-drop", action="store_true",
        help="end a dropped_connection body cleanly with an 'x-toolstream-transport: dropped' "
        "header instead of cutting the socket (needed to record it: vcrpy cannot store a "
        "broken body; replay restores the drop)")
    emulate.add_argument("--seed", type=int, default=0,
                         help="seed of the fragment cutter (same seed, same bytes)")
    emulate.add_argument(
        "--script", action="append", metavar="A,B,...",
        help="scenarios that requests whose model is not 'scenario:<name>' play in order "
        "(e.g. single_call,text), then the final answer")
    emulate.add_argument("--scenario", action="append", metavar="NAME",
                         help="append one scenario to the script (repeatable)")
    emulate.add_argument(
        "--profile", choices=_profile_names(), metavar="NAME",
        help=_profile_help("stream openai-chat answers the way this OpenAI-compatible server "
                           "does"))
    emulate.set_defaults(func=_cmd_emulate)


def _add_fuzz(sub: Any) -> None:
    fuzz = _command(sub, "fuzz")
    _add_paths(fuzz)
    fuzz.add_argument("--cases", type=int, default=10_000,
                      help="total cases, shared evenly by the streams (default 10000)")
    fuzz.add_argument("--seed", type=int, default=0, help="seed of every mutation choice")
    fuzz.add_argument("--case", type=int, metavar="N",
                      help="run only case N of each stream (the reproduction of a violation)")
    _add_json(fuzz, "the report as one JSON document")
    fuzz.set_defaults(func=_cmd_fuzz)


def build_parser() -> argparse.ArgumentParser:
    """The whole command line, so tests and docs can inspect it without running it."""
    # --color works before or after the command name; SUPPRESS keeps the top-level value.
    colour = _Parser(add_help=False)
    _add_colour(colour, argparse.SUPPRESS)
    parser = _Parser(
        prog="toolstream",
        description=_para("Strict assembly of streamed LLM tool calls: replay recordings, "
                          "record new ones, see what other stacks would run."),
        epilog=EXIT_CODES, formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_colour(parser, "auto")
    parser.add_argument("--version", action="version", version=f"toolstream {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for add in (_add_replay, _add_record, _add_demo, _add_emulate):
        add(sub, colour)
    _add_fuzz(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``toolstream`` script; returns the exit code."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # argparse would blame the top-level command for a subcommand's bad option
        args.parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        code: int = args.func(args)
    except _Fail as exc:
        sys.stdout.flush()
        sys.stderr.write(f"toolstream {args.command}: {exc}\n")
        return exc.code
    except BrokenPipeError:  # `toolstream replay ... | head`
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    return code


if __name__ == "__main__":
    sys.exit(main())
