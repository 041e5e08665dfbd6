"""The table of private contact points (``toolstream_core.integration._private.PRIVATE_CONTACTS``).

Each row names a private name of another library that toolstream touches. Here:
- every row is checked on the installed versions: the name exists with the kind (and leading
  parameters) the code relies on, so an upgrade that moves one fails this file in CI rather
  than a user's call; rows run in every env that installs the owner (LangChain rows in both,
  LlamaIndex rows in the llamaindex env), and a row installed in neither fails;
- the table is complete: the sources are scanned for private names of other libraries (an
  attribute read or call, a ``super()`` call, a private module imported, a private name given
  as a string), and each class of the shims that overrides a private method of a framework
  class is found at run time; each must be in the table, and each row's name must still be
  in the files it lists;
- ``docs/shims.md`` shows the table as the module renders it;
- the helpers a shim makes its tapped copy with touch only what the table lists.
"""

from __future__ import annotations

import ast
import enum
import functools
import importlib
import importlib.util
import inspect
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, PrivateAttr
from toolstream_core._contacts import PrivateContact, contacts_of
from toolstream_core.integration import TapUnavailableError
from toolstream_core.integration._private import PRIVATE_CONTACTS, private_copy, rebuilt, tap_unavailable

ROOT = Path(__file__).resolve().parents[2]
# What is scanned: everything that stands between toolstream and another library. The core's
# sans-I/O internals import no other library and are left out.
SCANNED = ("langchain_toolstream", "llamaindex_toolstream", "core/toolstream_core/vendors",
           "core/toolstream_core/integration", "core/toolstream_core/app",
           "core/toolstream_core/testing", "benchmarks")
OUR_PACKAGES = ("toolstream_core", "langchain_toolstream", "llamaindex_toolstream", "benchmarks")
# Names with a leading underscore that are documented public API of the standard library.
# (``os._exit`` is the documented way for a worker process to die without cleanup.)
DOCUMENTED = frozenset({"_replace", "_asdict", "_fields", "_make", "_field_defaults", "_exit"})


def _installed(distribution: str) -> bool:
    try:
        version(distribution)
    except PackageNotFoundError:
        return False
    return True


INSTALLED = [c for c in PRIVATE_CONTACTS if _installed(c.distribution)]


def _id(contact: PrivateContact) -> str:
    return f"{contact.owner}.{contact.name}"


def test_every_row_is_checked_in_one_of_the_two_envs() -> None:
    """The latest env has no LlamaIndex (its integrations pin older SDKs); every other owner
    is installed in both, so a row missing here is never checked anywhere."""
    missing = sorted({c.distribution for c in PRIVATE_CONTACTS} - {c.distribution for c in INSTALLED})
    if _installed("llama-index-core"):
        assert missing == []
    else:
        assert all(name.startswith("llama-index-") for name in missing), missing


def _member(contact: PrivateContact) -> Any:
    module = importlib.import_module(contact.module)
    if contact.kind == "module":
        return module
    if contact.class_name is None:
        return inspect.getattr_static(module, contact.name)
    cls = getattr(module, contact.class_name)
    if contact.kind == "private_attr":
        return cls.__private_attributes__.get(contact.name)
    return inspect.getattr_static(cls, contact.name)


def _parameters(member: Any) -> list[str]:
    function = member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
    return list(inspect.signature(function).parameters)


@pytest.mark.parametrize("contact", INSTALLED, ids=_id)
def test_the_private_name_is_still_where_the_table_says(contact: PrivateContact) -> None:
    member = _member(contact)
    if contact.kind == "module":
        # a module the code names: classes are defined in it (not merely re-exported)
        assert any(inspect.isclass(v) and v.__module__ == member.__name__ for v in vars(member).values()), \
            f"{contact.owner} defines no class of its own"
    elif contact.kind == "private_attr":
        assert member is not None, f"{contact.owner} has no pydantic private attribute {contact.name}"
    elif contact.kind == "cached_property":
        assert isinstance(member, functools.cached_property), f"{_id(contact)} is {member!r}"
    elif contact.kind == "property":
        assert isinstance(member, property), f"{_id(contact)} is {member!r}"
    else:  # a method or a module-level function
        assert inspect.isfunction(getattr(member, "__func__", member)), f"{_id(contact)} is {member!r}"
        leading = _parameters(member)[: len(contact.params)]
        assert leading == list(contact.params), f"{_id(contact)} now takes {leading}"


@pytest.mark.parametrize("contact", PRIVATE_CONTACTS, ids=_id)
def test_each_row_names_files_that_still_touch_it(contact: PrivateContact) -> None:
    assert contact.where
    for where in contact.where:
        text = (ROOT / where).read_text(encoding="utf-8")
        assert contact.name in text, f"{where} no longer touches {contact.label}: drop the row"


# -- completeness: the sources touch no private name the table does not list ---------------


def _sources() -> list[Path]:
    paths: list[Path] = []
    for entry in SCANNED:
        path = ROOT / entry
        paths.extend([path] if path.is_file() else sorted(path.rglob("*.py")))
    return paths


def _private(name: str) -> bool:
    return len(name) > 1 and name.startswith("_") and not name.startswith("__") and name not in DOCUMENTED


def _members(tree: ast.AST) -> set[str]:
    """The private members our own classes define: methods and class attributes, attributes
    set on ``self`` / ``cls``, slots. (A module's own private functions are reached through
    the module, which `_our_modules` tells.)"""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names.add(item.name)
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    names.add(item.target.id)
                elif isinstance(item, ast.Assign):
                    names.update(t.id for t in item.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            names.add(node.attr)  # an attribute of our own objects (a patch of a module is not)
        elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets):
            names.update(c.value for c in ast.walk(node.value)
                         if isinstance(c, ast.Constant) and isinstance(c.value, str))
    return {n for n in names if n.startswith("_")}


def _our_modules(tree: ast.AST) -> set[str]:
    """The names a file binds to modules of our own packages (``from benchmarks import report``)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names
                         if not _foreign_module(a.name))
        elif isinstance(node, ast.ImportFrom) and (node.level or not _foreign_module(node.module or "")):
            names.update(a.asname or a.name for a in node.names)
    return names


def _foreign_module(module: str) -> bool:
    return module.split(".")[0] not in OUR_PACKAGES


def _named_by_string(node: ast.AST) -> list[str]:
    """Private names given as strings: ``getattr(obj, "_x")`` and its kin, a dict key
    (``{"_client": ...}``), an element of a tuple or list literal (names looped over)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id in ("getattr", "hasattr", "setattr", "delattr") and len(node.args) > 1:
        strings = [node.args[1]]
    elif isinstance(node, ast.Dict):
        strings = [k for k in node.keys if k is not None]
    elif isinstance(node, (ast.Tuple, ast.List)):
        strings = list(node.elts)
    else:
        return []
    texts = [s.value for s in strings if isinstance(s, ast.Constant) and isinstance(s.value, str)]
    # a private name, or a private module of another package (``"openai._client"``)
    return [part for text in texts if all(p.isidentifier() for p in text.split("."))
            and (text.count(".") == 0 or _foreign_module(text))
            for part in text.split(".") if _private(part)]


def _touched(tree: ast.AST, ours: set[str]) -> set[str]:
    """The private names of other libraries ``tree`` touches (``ours``: our classes' members)."""
    modules = _our_modules(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _private(node.attr):
            receiver = node.value.id if isinstance(node.value, ast.Name) else None
            on_super = isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name) \
                and node.value.func.id == "super"  # the base's, even where we override it
            if on_super or (node.attr not in ours and receiver not in modules):
                found.add(node.attr)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level \
                and _foreign_module(node.module):
            found.update(part for part in node.module.split(".") if _private(part))
            found.update(a.name for a in node.names if _private(a.name))
        elif isinstance(node, ast.Import):
            found.update(part for a in node.names if _foreign_module(a.name)
                         for part in a.name.split(".") if _private(part))
        else:
            found.update(name for name in _named_by_string(node) if name not in ours)
    return found


# A row's name, and the private parts of its owner's module path (``_messages`` in
# ``anthropic.lib.streaming._messages``), are what the scan may meet.
TABLE_NAMES = frozenset({c.name for c in PRIVATE_CONTACTS}
                        | {p for c in PRIVATE_CONTACTS for p in c.module.split(".") if _private(p)})


def _scan(paths: list[Path]) -> dict[str, list[str]]:
    trees = {path: ast.parse(path.read_text(encoding="utf-8"), str(path)) for path in paths}
    ours = set().union(*(_members(tree) for tree in trees.values()))
    touched: dict[str, list[str]] = {}
    for path, tree in trees.items():
        for name in _touched(tree, ours):
            touched.setdefault(name, []).append(str(path.relative_to(ROOT)) if path.is_relative_to(ROOT)
                                                else path.name)
    return touched


def test_the_scan_finds_each_way_of_touching_a_private_name(tmp_path: Path) -> None:
    """The completeness check is worth something only if it sees each spelling."""
    source = tmp_path / "bad.py"
    source.write_text(
        "from vendor._internal import helper\n"
        "import vendor._other\n"
        "from vendor import _hidden\n"
        "class Mine(Base):\n"
        "    def _own(self):\n"
        "        return self._inherited() + self._own()\n"
        "    def go(self, model):\n"
        "        super()._generate()\n"
        "        getattr(model, '_by_string')\n"
        "        return model._reached_into\n", encoding="utf-8")
    assert sorted(_scan([source])) == ["_by_string", "_generate", "_hidden", "_inherited",
                                       "_internal", "_other", "_reached_into"]


def test_every_private_name_the_sources_touch_is_in_the_table() -> None:
    touched = _scan(_sources())
    assert len(touched) > 10  # the scan reads the sources
    missing = {name: files for name, files in touched.items() if name not in TABLE_NAMES}
    assert missing == {}, "private names of other libraries not in PRIVATE_CONTACTS"


def _shim_classes() -> list[type]:
    found: list[type] = []
    for package in ("langchain_toolstream", "llamaindex_toolstream"):
        try:
            root = importlib.import_module(package)
        except ImportError:  # the latest env has no LlamaIndex
            continue
        for path in sorted(Path(root.__file__).parent.glob("_*.py")):  # type: ignore[arg-type]
            module = importlib.import_module(f"{package}.{path.stem}")
            found += [v for v in vars(module).values()
                      if inspect.isclass(v) and v.__module__ == module.__name__]
    return found


def _overrides(cls: type) -> list[tuple[str, type]]:
    """The private members ``cls`` defines over a framework base class's. The standard
    library's ``enum`` is not a framework: the members it writes into every ``Enum`` subclass
    (``_generate_next_value_``) are its documented "sunder" API, not ours."""
    out = []
    if issubclass(cls, enum.Enum):
        return out
    for name, member in vars(cls).items():
        kinds = (property, functools.cached_property, classmethod, staticmethod)
        if not _private(name) or not (isinstance(member, kinds) or inspect.isfunction(member)):
            continue
        base = next((b for b in cls.__mro__[1:] if name in vars(b)
                     and b.__module__.split(".")[0] not in (*OUR_PACKAGES, "builtins")), None)
        if base is not None:
            out.append((name, base))
    return out


def test_every_private_method_a_shim_overrides_is_in_the_table() -> None:
    overrides = [(cls, name, base) for cls in _shim_classes() for name, base in _overrides(cls)]
    assert overrides, "no shim class found"
    listed = {(c.name, c.owner) for c in PRIVATE_CONTACTS if "override" in c.use}
    missing = [f"{cls.__name__}.{name} (over {base.__module__}:{base.__qualname__})"
               for cls, name, base in overrides
               if not any((name, owner) in listed for owner in
                          (f"{b.__module__}:{b.__qualname__}" for b in base.__mro__))]
    assert missing == []


# -- the docs ------------------------------------------------------------------------------


def test_docs_show_the_table_as_the_module_renders_it() -> None:
    from toolstream_core._contacts import contacts_markdown

    assert contacts_markdown() in (ROOT / "docs" / "shims.md").read_text(encoding="utf-8")


# -- the helpers a shim makes its copy with ------------------------------------------------


class _Client:
    """Stands for an SDK client."""


class Holder(BaseModel):
    """A model that keeps its client privately (as LlamaIndex's ``Anthropic`` does)."""

    model: str
    retries: int = 2
    _client: Any = PrivateAttr(default=None)

    def __init__(self, *, model: str, retries: int = 2, client: Any = None) -> None:
        super().__init__(model=model, retries=retries)
        self._client = client


def test_private_copy_refuses_a_name_the_table_does_not_list() -> None:
    with pytest.raises(LookupError, match=r"Holder\._client is not in the table"):
        private_copy(Holder(model="m"), {"_client": _Client()})


def test_rebuilt_goes_through_the_constructor_and_keeps_the_original() -> None:
    original = Holder(model="m", retries=5, client=_Client())
    tapped = _Client()
    copy = rebuilt(original, {"client": tapped})
    assert (copy.model, copy.retries, copy._client) == ("m", 5, tapped)
    assert original._client is not tapped


def test_the_error_names_the_contacts_and_their_versions() -> None:
    if not INSTALLED:
        pytest.fail("no row installed")
    row = next(c for c in INSTALLED if c.class_name is not None and "assign" in c.use)
    cls = getattr(importlib.import_module(row.module), row.class_name or "")
    error = tap_unavailable(cls, AttributeError(row.name), files=row.where)
    assert isinstance(error, TapUnavailableError)
    assert f"{row.label} ({row.distribution} {version(row.distribution)})" in str(error)
    assert row in contacts_of(cls)
