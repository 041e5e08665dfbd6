"""A real PostgreSQL for the suite and the scale-out benchmark: ``pgserver`` runs PostgreSQL 16
from pip-installed binaries.

No system package, no Docker, no network: ``pip install -e ".[dev]"`` is enough, so CI
(which only runs pip) gets the same server as a developer. One server per pytest process
(``tests/conftest.py``: each xdist worker starts its own when one of its tests first asks),
in a fresh temporary folder that is removed afterwards. Per-process servers need no lock and no hand-over between
workers: the first worker to finish cannot stop a server another worker is still using.

Each test (and each benchmark run) gets a database of its own (``fresh_database``), so counts of rows, checkpoints and
ledger entries belong to one test, whatever else the server has served.

The folder is made with ``tempfile.mkdtemp`` and not under pytest's ``tmp_path``: run as
root, pgserver hands the folder to its own ``pgserver`` user and opens every parent folder
to it, and pytest closes ``/tmp/pytest-of-<user>`` to its owner again whenever a pytest
starts (another run on the same machine would cut the server off its own files).
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit, urlunsplit

__all__ = ["fresh_database", "postgres_server", "setup_langgraph_tables"]


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start PostgreSQL 16 in a new temporary folder; yield its URL; stop it and remove the
    folder. The URL reaches the server over its Unix socket (``?host=/tmp/...``)."""
    with warnings.catch_warnings():
        # platformdirs warns that XDG_RUNTIME_DIR is unset where pgserver puts its lock file.
        warnings.simplefilter("ignore")
        import pgserver

    folder = tempfile.mkdtemp(prefix="toolstream-pg-")
    try:
        server = pgserver.get_server(folder, cleanup_mode="delete")
        try:
            yield str(server.get_uri())
        finally:
            server.cleanup()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def database_url(server_url: str, name: str) -> str:
    """``server_url`` with its database replaced by ``name``."""
    parts = urlsplit(server_url)
    return urlunsplit(parts._replace(path="/" + name))


def fresh_database(server_url: str) -> str:
    """Create an empty database on the server; return its URL."""
    import psycopg

    name = "t_" + uuid.uuid4().hex[:16]
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return database_url(server_url, name)


def setup_langgraph_tables(url: str) -> None:
    """Create LangGraph's checkpoint and store tables once, before any worker connects
    (``setup()`` run by several processes at once races on the same ``CREATE TABLE``)."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.store.postgres import PostgresStore

    with PostgresSaver.from_conn_string(url) as saver:
        saver.setup()
    with PostgresStore.from_conn_string(url) as store:
        store.setup()
