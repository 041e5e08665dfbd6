"""The session behind a ``ChatResponse`` is found without writing into the response.

``stream_of`` is a registry keyed by the response object (``ChatResponse`` is unhashable,
so by ``id`` with a weak reference); these check what that must guarantee: the response's
own fields are untouched, a copy or an equal response is not mistaken for it, and an entry
goes away with its response.
"""

from __future__ import annotations

import gc

from li_helpers import Recorder, make_llm
from llama_index.core.base.llms.types import ChatMessage, ChatResponse
from toolstream_core.testing import VendorEmulator

from llamaindex_toolstream import ToolstreamLLM
from llamaindex_toolstream._session import _STREAMS, stream_of


async def test_registry_keeps_responses_clean_and_forgets_them(
        emu: VendorEmulator) -> None:
    emu.queue("anthropic", "single_call")
    llm = ToolstreamLLM(make_llm("anthropic", emu.base_url))
    gen = await llm.astream_chat_with_tools(Recorder().tools(), user_msg="go")
    responses = [response async for response in gen]
    last = responses[-1]

    session = stream_of(last)
    assert session is not None and session.turn is not None
    assert set(last.__dict__) <= set(type(last).model_fields)  # nothing added to it
    assert stream_of(last.model_copy()) is None
    assert stream_of(ChatResponse(message=ChatMessage(role="assistant"))) is None

    before = len(_STREAMS._entries)
    del responses, last, gen
    gc.collect()
    assert len(_STREAMS._entries) < before
