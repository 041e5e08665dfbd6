"""A pytest plugin that gates every fake chat model ``langchain-core``'s own tests build.

Loaded with ``-p lc_core_plugin`` into a run of the ``langchain-core`` sdist's fake chat model
tests: each of LangChain's fakes (``GenericFakeChatModel``, ``FakeMessagesListChatModel``,
``FakeListChatModel``, ``ParrotFakeChatModel``) as the tests import it becomes a constructor
that returns ``with_toolstream(<the fake>)``, the one line a user adds. Nothing is declared:
LangChain's own fakes are test doubles the gate knows.
"""

from __future__ import annotations

from typing import Any

import langchain_core.language_models as models
from langchain_core.language_models import fake_chat_models

from langchain_toolstream import with_toolstream

_FAKES = ("GenericFakeChatModel", "FakeMessagesListChatModel", "FakeListChatModel",
          "ParrotFakeChatModel")


def _gated(stock: type) -> Any:
    def build(*args: Any, **kwargs: Any) -> Any:
        return with_toolstream(stock(*args, **kwargs))

    build.__name__ = build.__qualname__ = stock.__name__
    build.__doc__ = f"``with_toolstream({stock.__name__}(...))``."
    return build


for _name in _FAKES:
    _stock = getattr(fake_chat_models, _name)
    setattr(models, _name, _gated(_stock))
