"""Every class docs/langchain.md's table lists has a test over its real wire.

The table ("How the gate sees the stream") is read from the page, and each class it names
maps to its row of ``test_lc_partners.CLASSES``, whose tests drive the real class over HTTP
against the emulator through ``create_agent`` + ``ToolstreamMiddleware``, ``with_toolstream``
and ``astream``: complete calls commit and run once; a call cut by the token limit is
rejected, answered with its reason, and the next request the class really sends carries the
call with that answer (read from the request body the emulator received).

A class added to the page without a test, or a test whose factory builds another class than
the one the page lists, fails here: ``ChatBedrock`` over InvokeModel was listed, untested,
and refused outright for a round before anyone noticed.
"""

from __future__ import annotations

import ast
import re

import pytest
from doc_tables import table_classes
from test_lc_partners import CASES, CLASSES, WHOLE
from toolstream_core.testing import VendorEmulator

DOCUMENTED = table_classes("langchain.md", "Model class")

#: each class the page lists -> its row in ``test_lc_partners.CLASSES``
WIRE_TESTS: dict[str, str] = {
    "ChatOpenAI": "ChatOpenAI",
    "ChatOpenAI(use_responses_api=True)": "ChatOpenAI-responses",
    "AzureChatOpenAI": "AzureChatOpenAI",
    "ChatDeepSeek": "ChatDeepSeek",
    "ChatXAI": "ChatXAI",
    "ChatTogether": "ChatTogether",
    "ChatAnthropic": "ChatAnthropic",
    "ChatGoogleGenerativeAI": "ChatGoogleGenerativeAI",
    "ChatBedrockConverse": "ChatBedrockConverse",
    "ChatBedrock(beta_use_converse_api=True)": "ChatBedrock-converse-switch",
    "ChatBedrock": "ChatBedrock-invoke-model",
    "ChatOllama": "ChatOllama",
    "ChatCohere": "ChatCohere",
    "ChatLiteLLM": "ChatLiteLLM",
    "ChatLiteLLMRouter": "ChatLiteLLMRouter",
    "ChatNVIDIA": "ChatNVIDIA",
    "ChatMistralAI": "ChatMistralAI",
    "ChatGroq": "ChatGroq",
    "ChatFireworks": "ChatFireworks",
}

#: The scenarios each listed class is driven through: a complete call, a cut one.
REQUIRED = ("parallel_calls", "truncated_length")

_ENTRY = re.compile(r"(\w+)(?:\((\w+)=(.+)\))?")


def test_every_class_the_table_lists_has_a_wire_test() -> None:
    assert len(DOCUMENTED) >= 15, DOCUMENTED  # the table was found and read
    assert [c for c in DOCUMENTED if c not in WIRE_TESTS] == []
    assert [c for c in WIRE_TESTS if c not in DOCUMENTED] == []  # nor tests the page forgot


@pytest.mark.parametrize("listed", DOCUMENTED)
def test_the_wire_test_drives_the_listed_class(listed: str, emulator: VendorEmulator) -> None:
    """The partner row builds the very class (and setting) the page names, and its streamed
    cases include a complete call and a cut one."""
    assert listed in WIRE_TESTS, f"{listed} is listed in docs/langchain.md but has no wire test"
    row = WIRE_TESTS[listed]
    assert row in CLASSES and row not in WHOLE
    assert [s for s in REQUIRED if (row, s) not in CASES] == []
    match = _ENTRY.fullmatch(listed)
    assert match is not None
    name, setting, value = match.groups()
    _, _, factory = CLASSES[row]
    model = factory(emulator.base_url)
    assert type(model).__name__ == name
    if setting is not None:
        assert getattr(model, setting) == ast.literal_eval(value)
    if listed == "ChatBedrock":  # the row without the switch: over InvokeModel
        assert model.beta_use_converse_api is False  # type: ignore[attr-defined]
