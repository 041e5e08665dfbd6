"""The session behind a ``ChatResponse`` is found from the response itself, with no registry.

Each response the gate hands on carries a handle to its stream under ``STREAM_KEY`` in
``additional_kwargs`` (LlamaIndex's place for a response's extras; the identity-keyed module
registry it replaces was issue 39's). These check what that must guarantee: no attribute is
added to the response and it still dumps to JSON, an equal response is not mistaken for it, a
pickled or deep-copied one holds only the string (never the live stream), and the stream goes
away with its responses.
"""

from __future__ import annotations

import copy
import gc
import json
import pickle
import weakref

from li_helpers import Recorder, make_llm
from llama_index.core.base.llms.types import ChatMessage, ChatResponse
from toolstream_core.testing import VendorEmulator

from llamaindex_toolstream import ToolstreamLLM
from llamaindex_toolstream._session import STREAM_KEY, stream_of


async def test_responses_carry_their_stream_and_let_it_go(emu: VendorEmulator) -> None:
    emu.queue("anthropic", "single_call")
    llm = ToolstreamLLM(make_llm("anthropic", emu.base_url))
    gen = await llm.astream_chat_with_tools(Recorder().tools(), user_msg="go")
    responses = [response async for response in gen]
    last = responses[-1]

    session = stream_of(last)
    assert session is not None and session.gate.turn is not None
    assert all(stream_of(r) is session for r in responses)
    assert set(last.__dict__) <= set(type(last).model_fields)  # nothing added to it
    assert json.loads(last.model_dump_json())["additional_kwargs"][STREAM_KEY]
    assert stream_of(ChatResponse(message=ChatMessage(role="assistant"))) is None
    assert stream_of(copy.deepcopy(last)) is None
    assert stream_of(pickle.loads(pickle.dumps(last))) is None

    gone = weakref.ref(session)
    del responses, last, gen, session
    gc.collect()
    assert gone() is None
