"""Which calls a mistyped field could have touched: a ``retype`` mutant's ``scope``.

The fuzz harness lets no call that a poisoned event could have touched commit; this module
makes "could have touched" exact per API, from the fields that still attribute the event to a
call (an index, an id, an item id, a Gemini part's name).
"""

from __future__ import annotations

from typing import Any

from ._fuzz_shape import PART, Path, find, tool_elements

__all__ = ["poison_scope"]


def poison_scope(api: str, event: Any, path: Path) -> tuple[str, Any]:
    """Which calls a mistyped field at ``path`` could have touched ("could have touched" made exact).

    When the fields that attribute the event to a call are still readable (an Anthropic block
    index, a chat tool-call index, a Responses output index, a Gemini part's name), only that
    call: ``("index", n)`` / ``("nth", n)`` (the n-th call the event opens) / ``("id", id)``
    (a chat fragment by its id: with no index, or a new id on a known index, rule 1) /
    ``("key", key)`` (a Responses argument event by its ``item_id``); a Gemini part without a
    name, or a bare chat fragment, continues the latest call: ``("last", None)``. Otherwise every call
    live when the event arrived, and the calls the event opened when it holds no other call:
    ``("all+opened", None)``.
    """
    if api == "anthropic" and path[0] in ("delta", "content_block") and _is_int(event.get("index")):
        return ("index", event["index"])
    if api == "openai-responses" and path[0] in ("delta", "arguments", "item", "item_id") \
            and _is_int(event.get("output_index")):
        return ("index", event["output_index"])
    if api == "openai-responses" and path == ("output_index",) and isinstance(event.get("item_id"), str):
        return ("key", ("item", event["item_id"]))  # an argument event still names its item
    if api == "openai-chat" and len(path) > 5 and path[-1] != "index":
        call = event["choices"][path[1]]["delta"]["tool_calls"][path[4]]
        call_id = call.get("id") if isinstance(call, dict) else None
        # the id attributes the event unless the id itself is the mistyped field
        by_id = path[-1] != "id" and isinstance(call_id, str) and bool(call_id)
        if isinstance(call, dict) and _is_int(call.get("index")):
            return ("id", call_id) if by_id else ("index", call["index"])  # rule 1: new id, new call
        if isinstance(call, dict) and "index" not in call:  # rule 1 without an index
            function = call.get("function")
            named = isinstance(function, dict) and function.get("name")
            if by_id:
                return ("id", call_id)
            if not named:
                return ("last", None)
    if api == "gemini" and len(path) > 6:
        named = [p for p, call in find(event, (*PART, "functionCall"))
                 if isinstance(call, dict) and isinstance(call.get("name"), str) and call["name"]]
        here = tuple(path[:6])
        return ("nth", named.index(here)) if here in named else ("last", None)
    scope = _new_family_scope(api, event, path)
    if scope is not None:
        return scope
    return ("all+opened", None) if tool_elements(api, event) <= 1 else ("all", None)


def _new_family_scope(api: str, event: Any, path: Path) -> tuple[str, Any] | None:
    """Bedrock and Cohere events name their call by index; an Ollama call by its position."""
    if api == "bedrock-converse" and len(path) > 2 and path[1] in ("delta", "start"):
        index = event[path[0]].get("contentBlockIndex")
        return ("index", index) if _is_int(index) else None
    if api == "cohere" and path[0] == "delta" and _is_int(event.get("index")):
        return ("index", event["index"])
    if api == "ollama" and len(path) > 4 and path[-1] not in ("id", "index"):
        assert isinstance(path[2], int)
        return ("nth", path[2])  # a name or the arguments: only the call this entry opens
    return None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
