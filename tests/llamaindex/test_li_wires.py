"""Every class docs/llamaindex.md's table lists has a test over its real wire.

The table ("How the vendor events are read") is read from the page, and each class it names
maps to the test that drives the real class, with its real SDK client, through
``ToolstreamFunctionAgent`` against the emulator: complete parallel calls commit and run once;
a call cut by the token limit never runs, is answered with its reason (``[stream_truncated]``),
and the next request the class really sends pairs its id (read from the request body the
emulator received). ``test_li_families.py`` holds most; ``Cohere`` (Cohere's v1 chat) has its
own module; ``HuggingFaceInferenceAPI`` is listed as refused, and its refusal is its test.

A class added to the page without a test, or a test whose builder makes another class than
the one listed, fails here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from doc_tables import table_classes
from test_li_cohere_v1 import _cohere
from test_li_families import FAMILIES, NOT_SHOWN
from toolstream_core.testing import VendorEmulator

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning")]

DOCUMENTED = table_classes("llamaindex.md", "LLM class")

#: each class the page lists -> (the module whose tests drive it over its wire, its builder)
WIRE_TESTS: dict[str, tuple[str, Callable[[str], Any]]] = {
    **{name: ("test_li_families", build) for name, (_, build, _) in FAMILIES.items()},
    "Cohere": ("test_li_cohere_v1", _cohere),
}

#: Classes the page lists as refused when the gate is built: the refusal is what is tested.
REFUSED = {"HuggingFaceInferenceAPI": "test_li_provider"}


def test_every_class_the_table_lists_has_a_wire_test() -> None:
    assert len(DOCUMENTED) >= 10, DOCUMENTED  # the table was found and read
    tested = set(WIRE_TESTS) | set(REFUSED)
    assert [c for c in DOCUMENTED if c not in tested] == []
    assert sorted(tested - set(DOCUMENTED)) == []  # nor tests the page forgot


@pytest.mark.parametrize("listed", DOCUMENTED)
def test_the_wire_test_drives_the_listed_class(listed: str, emu: VendorEmulator) -> None:
    """The test's builder makes the very class the page names, and a family in
    ``test_li_families`` is driven through a cut stream (which the module answers and pairs)."""
    if listed in REFUSED:
        _assert_refused(listed)
        return
    assert listed in WIRE_TESTS, f"{listed} is listed in docs/llamaindex.md but has no wire test"
    module, build = WIRE_TESTS[listed]
    if module == "test_li_families":
        pytest.importorskip(FAMILIES[listed][2])
        assert (listed, "truncated_length", True) not in NOT_SHOWN
    llm = build(emu.base_url)
    assert type(llm).__name__ == listed


def _assert_refused(listed: str) -> None:
    hf = pytest.importorskip("llama_index.llms.huggingface_api")
    from llamaindex_toolstream import ProviderMismatchError, ToolstreamLLM

    llm = getattr(hf, listed)(model_name="meta-llama/Llama-3.1-8B-Instruct", token="test")
    assert type(llm).__name__ == listed
    with pytest.raises(ProviderMismatchError):
        ToolstreamLLM(llm)
