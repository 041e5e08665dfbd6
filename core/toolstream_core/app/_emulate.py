"""``toolstream emulate``: the vendor emulator in the foreground, with its banner and script.

Moved out of ``cli.py`` with the other subcommands (``_commands.py``).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Any

from ._commands import EXIT_OK, EXIT_USAGE, EXIT_VENDOR, _Fail


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
