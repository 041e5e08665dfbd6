"""Re-point a runnable built around the wrapped model at the gated one.

Why: ``bind_tools`` and ``with_structured_output`` are implemented by each integration (they
know its tool format, its ``response_format`` and ``strict`` rules). The wrapper lets the
integration build the runnable, then swaps every use of the raw model inside it for the gated
model, so the integration's formatting is kept and every model call still passes the gate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableBinding
from pydantic import BaseModel

__all__ = ["rebind"]

RegistryFn = Callable[[Sequence[Any] | None], Any]


def rebind(node: Any, inner: Any, gated: Any, registry_fn: RegistryFn | None = None) -> Any:
    """``node`` with ``inner`` replaced by ``gated``; raises if ``inner`` was never found.

    An integration may hand the call to another chat model it builds for the purpose
    (``ChatBedrock(beta_use_converse_api=True)`` binds a new ``ChatBedrockConverse`` around
    its own client): when ``inner`` is not in ``node`` but exactly one chat model is, that
    delegate is the model that calls the vendor, and the gate goes around it instead.
    """
    found: list[bool] = []
    result = _walk(node, inner, gated, registry_fn, found)
    delegates = _distinct(_chat_models(node)) if not found else []
    if len(delegates) == 1:
        (delegate,) = delegates
        result = _walk(node, delegate, gated.model_copy(update={"chat_model": delegate}),
                       registry_fn, found)
    if not found:
        raise TypeError(
            f"toolstream: {type(inner).__name__} built a runnable that does not call the model "
            "directly; cannot gate it"
        )
    return result


def _distinct(models: list[BaseChatModel]) -> list[BaseChatModel]:
    """``models`` with each object once (one model bound in several places is one delegate);
    by identity, not equality: two equal models are still two calls to make."""
    kept: list[BaseChatModel] = []
    for model in models:
        if not any(model is seen for seen in kept):
            kept.append(model)
    return kept


def _chat_models(node: Any) -> list[BaseChatModel]:
    """Every chat model a ``RunnableBinding`` in ``node`` binds (the calls it would make)."""
    if isinstance(node, RunnableBinding) and isinstance(node.bound, BaseChatModel):
        return [node.bound]
    if isinstance(node, (list, tuple)):
        return [m for v in node for m in _chat_models(v)]
    if isinstance(node, dict):
        return [m for v in node.values() for m in _chat_models(v)]
    if isinstance(node, Runnable) and isinstance(node, BaseModel):
        return [m for name in type(node).model_fields for m in _chat_models(getattr(node, name, None))]
    return []


def _target(kwargs: dict[str, Any], gated: Any, registry_fn: RegistryFn | None) -> Any:
    if registry_fn is None or not kwargs.get("tools"):
        return gated
    registry = registry_fn(kwargs["tools"])
    if registry is None:
        return gated
    return gated.model_copy(update={"bound_registry": registry})


def _walk(node: Any, inner: Any, gated: Any, registry_fn: RegistryFn | None,
          found: list[bool]) -> Any:
    if node is inner:
        found.append(True)
        return gated
    if isinstance(node, RunnableBinding) and node.bound is inner:
        found.append(True)
        return node.model_copy(update={"bound": _target(dict(node.kwargs), gated, registry_fn)})
    if isinstance(node, (list, tuple)):
        items = [_walk(v, inner, gated, registry_fn, found) for v in node]
        changed = any(a is not b for a, b in zip(items, node, strict=True))
        return type(node)(items) if changed else node
    if isinstance(node, dict):
        values = {k: _walk(v, inner, gated, registry_fn, found) for k, v in node.items()}
        changed = any(values[k] is not node[k] for k in node)
        return values if changed else node
    if isinstance(node, Runnable) and isinstance(node, BaseModel):
        updates: dict[str, Any] = {}
        for name in type(node).model_fields:
            value = getattr(node, name, None)
            if isinstance(value, (Runnable, list, tuple, dict)):
                new = _walk(value, inner, gated, registry_fn, found)
                if new is not value:
                    updates[name] = new
        return node.model_copy(update=updates) if updates else node
    return node
