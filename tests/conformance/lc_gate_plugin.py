"""A pytest plugin that adds the gate to every agent LangChain's own suite builds.

Loaded with ``-p lc_gate_plugin`` (``tests/conformance`` on ``sys.path``) into a run of the
``langchain`` sdist's ``tests/unit_tests/agents``: it replaces ``create_agent`` in
``langchain.agents`` and ``langchain.agents.factory`` before the suite imports it, so each
agent is built exactly as the README says a user adds the gate: ``ToolstreamMiddleware()``
appended to the agent's middleware, nothing else. Test doubles need no line here (the gate
trusts LangChain's own fakes and asks nothing of a model that makes no tool call); the suite's
own ``FakeToolCallingModel`` gets the one documented conftest line of docs/langchain.md.

``TOOLSTREAM_GATE_FIRST=1`` puts the gate first instead of last, to check either order.
"""

from __future__ import annotations

import functools
import os
from typing import Any

import langchain.agents
import langchain.agents.factory as factory

from langchain_toolstream import ToolstreamMiddleware

_stock = factory.create_agent
_FIRST = os.environ.get("TOOLSTREAM_GATE_FIRST") == "1"


@functools.wraps(_stock)
def create_agent(*args: Any, **kwargs: Any) -> Any:
    """``create_agent`` with ``ToolstreamMiddleware()`` added to its middleware."""
    middleware = list(kwargs.pop("middleware", None) or ())
    gate = ToolstreamMiddleware()
    kwargs["middleware"] = [gate, *middleware] if _FIRST else [*middleware, gate]
    return _stock(*args, **kwargs)


factory.create_agent = create_agent
langchain.agents.create_agent = create_agent


def pytest_configure(config: Any) -> None:
    """The suite's own test double: the one line a user adds to a conftest for theirs."""
    del config
    try:
        from tests.unit_tests.agents.model import FakeToolCallingModel
    except ImportError:  # the langchain-core run has no agents package
        return
    from langchain_toolstream import declare_test_double

    declare_test_double(FakeToolCallingModel)
