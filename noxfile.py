"""Every supported environment, one command: ``nox`` (``.ci/run`` runs the same).

Three sessions, each in a fresh virtualenv built from the extras (``nox -r`` reuses them):

- ``latest``: ``pip install -e ".[dev]"`` (the newest openai, anthropic and google-genai
  majors with LangChain), then ruff, mypy on the core and the LangChain shim (the env has no
  LlamaIndex), and ``pytest``: the README's test command, so everything but tests/llamaindex.
- ``llamaindex``: ``pip install -e ".[dev-llamaindex]"`` (the SDK majors the LlamaIndex
  integrations pin: openai 2, anthropic 0.12x, google-genai 2), then mypy on all three
  packages and the tests that depend on those versions: tests/llamaindex, tests/testing (the
  SDK clients, cassettes and emulator), tests/core and the demo with all its columns.

- ``conformance``: ``pip install -e ".[conformance]"`` (dev plus the upstream suites' test
  tools), then ``tests/conformance/run.py``: LangChain's own agent tests (the ``langchain``
  sdist) and ``langchain-core``'s fake chat model tests, as shipped and with the gate added;
  any test that passes as shipped and not gated fails the session unless
  ``tests/conformance/deliberate.py`` lists it (docs/langchain.md, "Differences from the stock
  agent").

Each step prints its time. pytest's exit 5 (no test collected) fails the session, as any
exit but 0 does. ``nox -s latest`` or ``nox -s llamaindex`` runs one; arguments after ``--``
go to pytest (``nox -s latest -- tests/core -x``).
"""

from __future__ import annotations

import time

import nox

nox.options.sessions = ["latest", "llamaindex", "conformance"]

LLAMAINDEX_TESTS = ("tests/llamaindex", "tests/testing", "tests/core", "tests/cli/test_demo.py")


def _step(session: nox.Session, name: str, *command: str) -> None:
    """Run ``command`` in the session and print how long it took."""
    start = time.monotonic()
    session.log(f"== {session.name}: {name}")
    try:
        session.run(*command)
    finally:
        session.log(f"== {session.name}: {name} took {time.monotonic() - start:.0f}s")


def _install(session: nox.Session, extras: str) -> None:
    start = time.monotonic()
    session.install("--upgrade", "pip")
    session.install("-e", f".[{extras}]")
    session.log(f"== {session.name}: install .[{extras}] took {time.monotonic() - start:.0f}s")


@nox.session
def latest(session: nox.Session) -> None:
    """The newest SDK majors with LangChain: lint, types, and the README's ``pytest``."""
    _install(session, "dev")
    _step(session, "ruff", "ruff", "check", ".")
    _step(session, "mypy", "mypy", "-p", "toolstream_core", "-p", "langchain_toolstream")
    _step(session, "pytest", "pytest", *session.posargs)


@nox.session
def llamaindex(session: nox.Session) -> None:
    """The SDK majors the LlamaIndex integrations pin: types, and the tests they affect."""
    _install(session, "dev-llamaindex")
    _step(session, "mypy", "mypy")
    _step(session, "pytest", "pytest", *(session.posargs or LLAMAINDEX_TESTS))


@nox.session
def conformance(session: nox.Session) -> None:
    """LangChain's own test suites, as shipped and with the gate added (tests/conformance)."""
    _install(session, "conformance")
    _step(session, "conformance", "python", "tests/conformance/run.py",
          str(session.cache_dir / "conformance"), *session.posargs)
