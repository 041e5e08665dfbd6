"""Request pieces every chat API spells the same way (each API module builds the rest)."""

from __future__ import annotations

from typing import Any

__all__ = ["add_tools_and_headers", "user_turn"]


def user_turn(contents: str | list[Any]) -> list[Any]:
    """``contents`` as a message list: a plain prompt is one user message with that text."""
    return [{"role": "user", "content": contents}] if isinstance(contents, str) else contents


def add_tools_and_headers(kwargs: dict[str, Any], tools: list[Any] | None,
                          extra_headers: dict[str, str]) -> dict[str, Any]:
    """``kwargs`` with ``tools`` and the SDK's ``extra_headers``, each only when given."""
    if tools:
        kwargs["tools"] = tools
    if extra_headers:
        kwargs["extra_headers"] = extra_headers
    return kwargs
