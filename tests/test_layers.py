"""The package's layers, checked: nothing in a lower layer imports a higher one.

``toolstream_core`` (the sans-I/O core) < ``toolstream_core.vendors`` (the SDKs) <
``toolstream_core.integration`` (what the shims stand on) <
``toolstream_core.testing`` (the test kit) < ``toolstream_core.app`` (the command).
Every import statement counts, including the lazy ones inside functions and those
under ``TYPE_CHECKING``: a lazy import is still a dependency, only a cheaper one.
Importing the core must also load no SDK, framework, HTTP or recording library.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
import toolstream_core

PACKAGE = Path(toolstream_core.__file__).parent
LAYERS = ("core", "vendors", "integration", "testing", "app")  # low to high
# ``integration`` is a module: the shims' layer, on top of the SDK knowledge in ``vendors``.
SUBPACKAGES = ("vendors", "integration", "testing", "app")


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> str | None:
    """The layer of a ``toolstream_core`` module; None for anything outside the package."""
    parts = module.split(".")
    if parts[0] != "toolstream_core":
        return None
    return parts[1] if len(parts) > 1 and parts[1] in SUBPACKAGES else "core"


def _imports(path: Path) -> set[str]:
    """Every module an import statement in ``path`` names, resolved to absolute names.

    ``from toolstream_core import app`` names ``toolstream_core.app``: a name imported
    from a package may be a submodule, and for the layer check it counts as one.
    """
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            found.add(source)
            found.update(f"{source}.{alias.name}" for alias in node.names)
    return found


def _edges() -> list[tuple[str, str]]:
    return [(_module_name(path), target)
            for path in sorted(PACKAGE.rglob("*.py"))
            for target in sorted(_imports(path))]


EDGES = _edges()


def test_the_parser_sees_known_edges() -> None:
    """The check below is only worth something if real imports are found."""
    assert ("toolstream_core.app.cli", "toolstream_core.testing") in EDGES
    assert ("toolstream_core.testing._clients", "toolstream_core.vendors") in EDGES
    assert ("toolstream_core._table", "toolstream_core._call") in EDGES  # relative import
    assert {_layer(m) for m, _ in EDGES} == set(LAYERS)


@pytest.mark.parametrize("layer", LAYERS)
def test_no_layer_imports_a_higher_one(layer: str) -> None:
    higher = set(LAYERS[LAYERS.index(layer) + 1:])
    wrong = [f"{source} imports {target}" for source, target in EDGES
             if _layer(source) == layer and _layer(target) in higher]
    assert wrong == []


def test_the_app_uses_only_the_test_kits_public_names() -> None:
    private = [f"{source} imports {target}" for source, target in EDGES
               if _layer(source) == "app"
               and target.startswith("toolstream_core.testing.")
               and target.split(".")[2].startswith("_")]
    assert private == []


HEAVY = ("openai", "anthropic", "google.genai", "langchain", "langchain_core", "llama_index",
         "httpx", "aiohttp", "vcr", "yaml", "opentelemetry.sdk", "ag_ui")


@pytest.mark.parametrize("modules", [("toolstream_core",),
                                     ("toolstream_core", "toolstream_core.vendors",
                                      "toolstream_core.sse")])
def test_importing_the_core_loads_no_sdk_framework_http_or_recording_library(
        modules: tuple[str, ...]) -> None:
    code = (
        "import importlib, json, sys\n"
        f"for name in {list(modules)!r}: importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)
    loaded = json.loads(done.stdout)
    heavy = sorted(m for m in loaded
                   if any(m == h or m.startswith(h + ".") or
                          (h in ("langchain", "llama_index") and m.startswith(h))
                          for h in HEAVY))
    assert heavy == []


#: What ``import toolstream_core`` leaves for first use (issue 30): JSON Schema validation
#: (``jsonschema`` and its ``referencing`` / ``rpds``, about 65 ms) until a schema is compiled,
#: ``asyncio`` until ``aassemble`` runs, OpenSSL's ``hashlib`` until a call needs a synthesized
#: id, ``pathlib`` until a config file is read.
FIRST_USE = ("jsonschema", "referencing", "rpds", "asyncio", "hashlib", "_hashlib", "pathlib")


def _loaded_after(code: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", code + "\nimport json, sys\n"
                           "print(json.dumps(sorted(sys.modules)))"],
                          capture_output=True, text=True, check=True, timeout=120)
    return [m for m in json.loads(done.stdout) if m.split(".")[0] in FIRST_USE]


def test_importing_the_core_leaves_schema_validation_and_asyncio_for_first_use() -> None:
    assert _loaded_after("from toolstream_core import Assembler, assemble, aassemble") == []
    # ... and the first schema loads the validator, which still rejects an invalid schema
    assert "jsonschema" in _loaded_after(
        "from toolstream_core import Assembler\n"
        "try:\n    Assembler(tools={'t': {'type': 'no such type'}})\n"
        "except ValueError as exc:\n    assert 'invalid JSON Schema' in str(exc), exc\n"
        "else:\n    raise SystemExit('an invalid schema was accepted')\n")


def _type_checking_imports(package: str) -> dict[str, str]:
    """``name -> module`` of the imports under ``if TYPE_CHECKING:`` in a package's __init__."""
    path = PACKAGE.parent.joinpath(*package.split("."), "__init__.py")
    found: dict[str, str] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                assert isinstance(stmt, ast.ImportFrom) and stmt.level == 1, ast.dump(stmt)
                found.update((alias.name, stmt.module or "") for alias in stmt.names)
    return found


@pytest.mark.parametrize("package", ["toolstream_core", "toolstream_core.testing"])
def test_the_lazy_names_are_the_typed_names_and_all_of_them_load(package: str) -> None:
    """The package's public names load on first use (``toolstream_core._lazy``): the import
    under ``TYPE_CHECKING``, the ``_HOME`` table and ``__all__`` must name the same things."""
    import importlib

    module = importlib.import_module(package)
    typed = _type_checking_imports(package)
    assert typed == module._HOME
    assert sorted(typed) == sorted(module.__all__)
    for name in module.__all__:
        assert getattr(module, name) is getattr(importlib.import_module(f"{package}.{typed[name]}"), name)
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        module.no_such_name  # noqa: B018
