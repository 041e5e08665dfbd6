"""The ``toolstream`` command: replay, record, demo, emulate.

Everything the commands compute lives in small modules (`_replay`, `_record`,
`_demo`, `_peers`); this one parses arguments and maps failures to exit codes. The
subcommands themselves (`_commands`, `_emulate`) pick colours, render text and print: they and
this module are the only ones in the package that print.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from collections.abc import Sequence
from typing import Any, NoReturn

from toolstream_core import PROVIDERS

from ._commands import (
    EXIT_CODES,
    EXIT_REJECTED,
    EXIT_USAGE,
    _cmd_demo,
    _cmd_fuzz,
    _cmd_record,
    _cmd_replay,
    _Fail,
)
from ._commands import EXIT_INPUT as EXIT_INPUT  # the exit codes: tests and scripts read them here
from ._commands import EXIT_OK as EXIT_OK
from ._commands import EXIT_VENDOR as EXIT_VENDOR
from ._emulate import _cmd_emulate


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
