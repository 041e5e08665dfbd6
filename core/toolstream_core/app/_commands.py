"""What each ``toolstream`` subcommand does, given its parsed arguments: replay, record, demo
(and its gateway run), fuzz; the exit codes and the one handled failure, `_Fail`.

Moved out of ``cli.py``, which parses the arguments and maps failures to exit codes; the
emulator's command is ``_emulate.py``. Like ``cli.py``, these are the only modules of the
package that print.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

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
