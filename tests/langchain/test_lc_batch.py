"""``with_toolstream(model)`` keeps what the wrapped model does outside tool calls (issue 36):
its own ``batch`` / ``abatch`` order, and the content of an answer that is not an
``AIMessage``. Real LangChain fakes, through the real wrapper."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel, FakeListChatModel, ParrotFakeChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from langchain_toolstream import with_toolstream


def test_batch_keeps_the_wrapped_models_order() -> None:
    for _ in range(10):  # the wrapped batch is ordered every time, not by luck
        gated = with_toolstream(FakeListChatModel(responses=["a", "b", "c"]))
        assert [m.text for m in gated.batch(["1", "2", "3"])] == ["a", "b", "c"]


async def test_abatch_keeps_the_wrapped_models_order() -> None:
    for _ in range(10):
        gated = with_toolstream(FakeListChatModel(responses=["a", "b", "c"]))
        assert [m.text for m in await gated.abatch(["1", "2", "3"])] == ["a", "b", "c"]


def test_a_test_doubles_non_ai_answer_is_returned_as_given() -> None:
    answer = with_toolstream(ParrotFakeChatModel()).invoke("meow")
    assert isinstance(answer, HumanMessage) and answer.content == "meow"


class _Echo(BaseChatModel):
    """A model (not a test double) that answers whole with the last message it was sent."""

    @property
    def _llm_type(self) -> str:
        return "echo"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=messages[-1])])


def test_a_non_ai_answer_keeps_its_content() -> None:
    answer = with_toolstream(_Echo()).invoke("meow")
    assert answer.content == "meow"
