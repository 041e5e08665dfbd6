"""The rules both shims share for what they read off a framework's objects (issue 39): the
``tools=`` registry (``ToolSpec.registry``) and the output-token limit of the next request
(``settings_limit`` over the places a framework keeps its settings)."""

from __future__ import annotations

from typing import Any

from toolstream_core import ToolSpec
from toolstream_core.integration import settings_limit


def _read(tool: Any) -> tuple[str, Any] | None:
    """A framework's reader, as a shim gives one: here, ``(name, schema)`` tuples are tools and
    anything else is a vendor built-in."""
    return tool if isinstance(tool, tuple) else None


def test_no_tools_is_no_registry_and_a_mapping_is_one_already() -> None:
    seen: list[Any] = []
    assert ToolSpec.registry(None, seen.append) is None
    given = {"a": {"type": "object"}, "b": ToolSpec("b")}
    registry = ToolSpec.registry(given, seen.append)
    assert registry == given and registry is not given
    assert seen == []  # a ready registry is not read tool by tool


def test_a_sequence_is_read_tool_by_tool_and_a_tool_spec_stands_for_itself() -> None:
    spec = ToolSpec("write_file", {"type": "object"}, sensitive=True)
    registry = ToolSpec.registry([("get_time", None), {"type": "web_search"}, spec,
                                  ("get_weather", {"type": "object"})], _read)
    assert registry == {"get_time": None, "write_file": spec,
                        "get_weather": {"type": "object"}}
    assert list(registry or {}) == ["get_time", "write_file", "get_weather"]


class _Odd:
    """A settings object whose attributes raise (a class built differently)."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(name)


def test_the_first_place_that_carries_a_limit_wins() -> None:
    call, model_kwargs = {"max_tokens": 7}, {"max_completion_tokens": 9}
    assert settings_limit(call, model_kwargs) == 7
    assert settings_limit(None, {}, model_kwargs) == 9
    assert settings_limit({"generation_config": {"max_output_tokens": 5}}) == 5
    assert settings_limit({}, None) is None
    assert settings_limit() is None


def test_an_object_that_cannot_be_read_gives_no_limit_not_a_failure() -> None:
    assert settings_limit(_Odd(), {"max_tokens": 3}) is None
