"""The shims import only the core's public API (issue 11.3, docs/shims.md).

A shim that reaches into ``toolstream_core._something`` breaks whenever the core moves a
private name, and hides from the core's authors what integrations depend on. Every import
statement counts, lazy and ``TYPE_CHECKING`` ones included.

One private module is allowed, ``toolstream_core.integration._private`` (issue 39): what the
shims share with the core that is no integration's API (touching other libraries' private
names, tracing internals). It is named here, and only the names in its ``__all__`` count.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHIMS = ("langchain_toolstream", "llamaindex_toolstream")


def _core_imports(path: Path) -> list[tuple[int, str]]:
    """``(line, dotted name)`` of every ``toolstream_core`` name that ``path`` imports."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "toolstream_core"]
        elif (isinstance(node, ast.ImportFrom) and not node.level and node.module
              and node.module.split(".")[0] == "toolstream_core"):
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return found


#: The one private module a shim may import from (see the module docstring).
SHARED = "toolstream_core.integration._private"


def _private(dotted: str) -> bool:
    module, _, name = dotted.rpartition(".")
    if module == SHARED:
        return name.startswith("_")
    return any(part.startswith("_") for part in dotted.split("."))


def _violations(paths: list[Path]) -> list[str]:
    return [f"{path.relative_to(ROOT)}:{line}: {name}"
            for path in paths for line, name in _core_imports(path) if _private(name)]


def test_the_check_sees_private_imports(tmp_path: Path) -> None:
    """The check is only worth something if it catches each way of spelling one."""
    bad = tmp_path / "bad.py"
    bad.write_text("import toolstream_core._models\n"
                   "from toolstream_core import _tracing as tracing\n"
                   "from toolstream_core._progress import ProgressEncoder\n"
                   "def lazy():\n    from toolstream_core.integration import _hidden\n"
                   "from toolstream_core import Assembler\n"
                   "from toolstream_core.integration import untraced\n"
                   "from toolstream_core.integration._private import untraced\n"
                   "from toolstream_core.integration._session import GateSession\n"
                   "from toolstream_core.integration._private import _contacts\n", encoding="utf-8")
    found = sorted(name for _, name in _core_imports(bad) if _private(name))
    assert found == ["toolstream_core._models", "toolstream_core._progress.ProgressEncoder",
                     "toolstream_core._tracing", "toolstream_core.integration._hidden",
                     "toolstream_core.integration._private._contacts",
                     "toolstream_core.integration._session.GateSession"]


@pytest.mark.parametrize("shim", SHIMS)
def test_a_shim_imports_no_private_core_name(shim: str) -> None:
    paths = sorted((ROOT / shim).rglob("*.py"))
    assert paths, f"no sources found for {shim}"
    assert sum(len(_core_imports(p)) for p in paths) > 3  # the shim does use the core
    assert _violations(paths) == []


@pytest.mark.parametrize("shim", SHIMS)
def test_every_core_name_a_shim_imports_is_exported(shim: str) -> None:
    """Public means listed in the module's ``__all__``, not merely without an underscore."""
    missing: list[str] = []
    for path in sorted((ROOT / shim).rglob("*.py")):
        for line, dotted in _core_imports(path):
            module_name, _, name = dotted.rpartition(".")
            try:
                module = importlib.import_module(dotted)
            except ImportError:
                module = None
            if module is not None and module.__name__ == dotted:
                continue  # a public module imported as such
            exported = getattr(importlib.import_module(module_name), "__all__", ())
            if name not in exported:
                missing.append(f"{path.relative_to(ROOT)}:{line}: {dotted}")
    assert missing == []
