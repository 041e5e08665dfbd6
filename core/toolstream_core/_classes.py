"""Which row of a table of another library's classes an object's class is, without importing it.

Why this exists: each shim keeps tables keyed by another library's classes (which partner
class keeps its SDK client where, which converter needs which outgoing rule, which classes
are the framework's own test doubles). The libraries are optional, so a table names its
classes by module and class name rather than importing them, and a subclass (a user's
``ChatOpenAI`` subclass, ``AzureChatOpenAI``) takes its base's row. That search along the
class's MRO was written once per table (issue 39: four times); it is written here once, and
each shim's tables are `ClassTable` values. Data and a lookup only: no framework, no SDK.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Generic, TypeVar

__all__ = ["ANY_CLASS", "ClassTable"]

#: A row's class name that matches every class of the row's module (a module of test doubles).
ANY_CLASS = "*"

Row = TypeVar("Row", bound=tuple[Any, ...])


def _in_module(module: str, prefix: str) -> bool:
    """``module`` is ``prefix`` or a module under it (``langchain_openai.chat_models.base``
    is under ``langchain_openai``; ``llama_index.llms.openai_like`` is not under
    ``llama_index.llms.openai``)."""
    return module == prefix or module.startswith(prefix + ".")


class ClassTable(Generic[Row]):
    """Rows ``(module, class name, ...)``: `row` finds the one for an object's class.

    The class itself and then its bases in MRO order are tried, each against the rows in
    order: the nearest class that has a row decides, so a specific class's row wins over its
    base's wherever either is listed. The answer is cached per class (classes are few and
    live as long as their module).
    """

    __slots__ = ("_found", "rows")

    def __init__(self, rows: Iterable[Row]) -> None:
        self.rows: tuple[Row, ...] = tuple(rows)
        self._found: dict[type, Row | None] = {}

    def __iter__(self) -> Iterator[Row]:
        return iter(self.rows)

    def row(self, cls: type) -> Row | None:
        """The row of ``cls`` or of its nearest listed base, or ``None``."""
        try:
            return self._found[cls]
        except KeyError:
            pass
        found = next((row for base in cls.__mro__ for row in self.rows
                      if row[1] in (base.__name__, ANY_CLASS)
                      and _in_module(base.__module__, row[0])), None)
        self._found[cls] = found
        return found

    def get(self, cls: type, column: int = 2) -> Any:
        """``column`` of `row` ``cls`` (by default the first after the class name), or
        ``None`` when no row is found."""
        found = self.row(cls)
        return None if found is None else found[column]

    def __contains__(self, cls: object) -> bool:
        return isinstance(cls, type) and self.row(cls) is not None
