"""pytest plugin: the vendor emulator and the bundled cassettes as fixtures and a marker.

Registered through the ``pytest11`` entry point (``toolstream``), so installing
``toolstream-gate`` with an extra that brings vcrpy (``record``, ``langchain`` or
``llamaindex``) is enough::

    import pytest

    @pytest.mark.toolstream_cassette("anthropic/truncated_length")
    def test_my_agent_does_not_run_truncated_calls():
        # the real anthropic client, default base URL: answered from the cassette,
        # offline (record_mode="none"); an unrecorded request fails the test
        ...

    def test_my_agent_against_the_emulator(toolstream_emulator):
        toolstream_emulator.queue("openai-chat", "truncated_length")
        client = openai.OpenAI(base_url=toolstream_emulator.base_url + "/v1", api_key="x")
        ...

Marker ``toolstream_cassette(name, *, root=None, allow_playback_repeats=False)``:
``name`` is ``"<api>/<scenario>"`` (a bundled cassette, see ``cassettes/``; or
one under ``root`` / the ``toolstream_cassette_dir`` ini option /
``$TOOLSTREAM_CASSETTES``) or a path to a ``.yaml`` file. The cassette is
active for the whole test; the ``toolstream_cassette`` fixture gives the vcrpy
``Cassette`` (``play_count``, ``all_played``). Each bundled cassette holds the
scenario's streamed answer and, when it had tool calls, the plain-text answer to
the agent's follow-up request, so a typical agent loop runs to its end.
Requests are matched on method, host, path and query only (any prompt works;
the API version segment of the path and the query order do not matter, so a
cassette serves every supported SDK major); a cassette recorded as a dropped
connection raises ``httpx.RemoteProtocolError`` at the end of its body, like the
live stream (openai 3.x wraps it in ``APIConnectionError``:
``toolstream_core.testing._recording.is_dropped_connection`` tells either). A client
that does not stream (``ChatOpenAI`` without ``streaming=True``) gets the vendor's complete
JSON answer built from the recorded stream, a cut call as cut as it was streamed.

Fixture ``toolstream_emulator``: a started :class:`VendorEmulator` (seed 0, or
``@pytest.mark.toolstream_emulator(seed=N)``), stopped after the test.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

__all__ = ["toolstream_cassette", "toolstream_emulator"]

_CASSETTE_KEY = pytest.StashKey[Any]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addini("toolstream_cassette_dir",
                  "directory of toolstream cassettes (<api>/<scenario>.yaml) used by the "
                  "toolstream_cassette marker instead of the bundled ones", default="")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "toolstream_cassette(name, *, root=None, allow_playback_repeats=False): replay the "
        "toolstream cassette '<api>/<scenario>' (or a .yaml path) offline for this test",
    )
    config.addinivalue_line(
        "markers", "toolstream_emulator(seed=0): options for the toolstream_emulator fixture"
    )


def _cassette_root(config: pytest.Config, marker_root: Any) -> Path | None:
    if marker_root is not None:
        return Path(marker_root)
    ini = str(config.getini("toolstream_cassette_dir") or "")
    if ini:
        return (config.rootpath / ini).resolve()
    return None


@pytest.fixture(autouse=True)
def _toolstream_cassette_marker(request: pytest.FixtureRequest) -> Iterator[None]:
    """Activate the cassette named by ``@pytest.mark.toolstream_cassette`` (if any)."""
    marker = request.node.get_closest_marker("toolstream_cassette")
    if marker is None:
        yield
        return
    if len(marker.args) != 1:
        raise pytest.UsageError("toolstream_cassette takes exactly one cassette name, "
                                f"got {marker.args!r}")
    try:
        from ._recording import cassette_path, use_cassette
    except ImportError as exc:  # pragma: no cover - vcrpy missing
        pytest.fail(f"toolstream_cassette needs vcrpy: pip install 'toolstream-gate[record]' "
                    f"({exc})", pytrace=False)
    root = _cassette_root(request.config, marker.kwargs.get("root"))
    name = marker.args[0]
    try:
        cassette_path(name, root)
    except FileNotFoundError as exc:
        pytest.fail(str(exc), pytrace=False)
    repeats = bool(marker.kwargs.get("allow_playback_repeats", False))
    from ._complete import serving_complete_answers

    with serving_complete_answers(), use_cassette(name, root=root,
                                                  allow_playback_repeats=repeats) as cassette:
        request.node.stash[_CASSETTE_KEY] = cassette
        yield


@pytest.fixture
def toolstream_cassette(request: pytest.FixtureRequest) -> Any:
    """The vcrpy ``Cassette`` activated by the test's ``toolstream_cassette`` marker."""
    cassette = request.node.stash.get(_CASSETTE_KEY, None)
    if cassette is None:
        pytest.fail("the toolstream_cassette fixture needs "
                    "@pytest.mark.toolstream_cassette('<api>/<scenario>') on the test",
                    pytrace=False)
    return cassette


@pytest.fixture
def toolstream_emulator(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A started :class:`~toolstream_core.testing.VendorEmulator`, stopped after the test."""
    from ._server import VendorEmulator

    marker = request.node.get_closest_marker("toolstream_emulator")
    seed = int(marker.kwargs.get("seed", 0)) if marker is not None else 0
    with VendorEmulator(seed=seed) as emulator:
        yield emulator
