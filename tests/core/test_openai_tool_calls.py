"""One OpenAI ``tool_calls`` entry for both shims' converter rules (issue 39).

LangChain's ``ChatNVIDIA`` rule and LlamaIndex's ``LiteLLM`` rule both write a turn's calls
into ``additional_kwargs["tool_calls"]``; they wrote the entry twice and the arguments text
differed (LangChain escaped non-ASCII, LlamaIndex did not). The end-to-end request bodies are
read in tests/langchain/test_lc_partners.py and tests/llamaindex/test_li_families.py; this
pins the shared shape and the one arguments rule.
"""

from __future__ import annotations

import json

from toolstream_core.integration._private import openai_tool_calls


def test_an_entry_is_the_openai_chat_shape_in_order() -> None:
    entries = openai_tool_calls([("call_1", "get_weather", {"city": "Zürich"}),
                                 ("call_2", "lookup", {})])
    assert [e["id"] for e in entries] == ["call_1", "call_2"]
    assert entries[0] == {"id": "call_1", "type": "function",
                          "function": {"name": "get_weather", "arguments": '{"city": "Zürich"}'}}
    assert json.loads(entries[1]["function"]["arguments"]) == {}


def test_arguments_text_is_history_safe() -> None:
    """A rejected call's raw text stays when it is a JSON object, else goes as ``{}``."""
    kept, cut, missing = openai_tool_calls([("a", "t", '{"x": 1}'), ("b", "t", '{"x": '),
                                            ("c", "t", None)])
    assert kept["function"]["arguments"] == '{"x": 1}'
    assert cut["function"]["arguments"] == "{}"
    assert missing["function"]["arguments"] == "{}"
