"""Public names that load on first use (PEP 562), for the package ``__init__`` modules.

``toolstream_core`` and ``toolstream_core.testing`` name their public API in ``__all__`` and
import it under ``TYPE_CHECKING`` for readers and type checkers; at run time each name's
module is imported the first time the name is read, and the name is then kept in the
package's namespace, so the second read is an ordinary attribute. Importing a package (or a
submodule of it, such as the pytest plugin) therefore costs nothing until a name is used.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from importlib import import_module
from typing import Any

__all__ = ["load"]


def load(namespace: MutableMapping[str, Any], home: Mapping[str, str], name: str) -> Any:
    """``name`` from its module ``home[name]`` (relative to the package), kept in ``namespace``."""
    module = home.get(name)
    package = namespace["__name__"]
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    value = getattr(import_module(f"{package}.{module}"), name)
    namespace[name] = value
    return value
