"""DESIGN §3 ``AssembleConfig``: defaults, the ``agent_stream_assemble:`` YAML section, errors.

A typo in a safety setting must never fall back to a default silently, so every unknown key
and every bad value is a ``ValueError`` whose message names the key.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from toolstream_core import AssembleConfig

DEFAULTS: dict[str, Any] = {
    "mode": "strict",
    "max_tool_argument_bytes": 262144,
    "max_tool_calls_in_flight_assemble": 32,
    "assemble_idle_timeout_s": 60,
    "execute_before_stream_end": False,
    "ui_forward_partial_args": True,
    "arguments_must_be_object": True,
    "on_invalid_json": "error_result",
    "on_args_overflow": "error_result",
    "finalize_order": "provider_index",
    "allow_pipelined_execute": [],
    "trace_tool_arguments": None,
    "sensitive_tools": (),
    "tenant": None,
    "max_tool_calls_per_run": None,
}

FULL_YAML = """\
# a service config with other sections around ours
service:
  name: agent
agent_stream_assemble:
  mode: lenient
  max_tool_argument_bytes: 1048576
  max_tool_calls_in_flight_assemble: 8
  assemble_idle_timeout_s: 2.5
  execute_before_stream_end: true
  ui_forward_partial_args: false
  arguments_must_be_object: false
  on_invalid_json: drop_with_protocol_repair
  on_args_overflow: error_result
  finalize_order: arrival
  allow_pipelined_execute: [read_file, search]
  trace_tool_arguments: true
  sensitive_tools:
    login: true
    http_request: [headers.Authorization, password]
  tenant: acme
  max_tool_calls_per_run: 2
logging:
  level: info
"""
FULL_VALUES: dict[str, Any] = {
    "mode": "lenient",
    "max_tool_argument_bytes": 1048576,
    "max_tool_calls_in_flight_assemble": 8,
    "assemble_idle_timeout_s": 2.5,
    "execute_before_stream_end": True,
    "ui_forward_partial_args": False,
    "arguments_must_be_object": False,
    "on_invalid_json": "drop_with_protocol_repair",
    "on_args_overflow": "error_result",
    "finalize_order": "arrival",
    "allow_pipelined_execute": ["read_file", "search"],
    "trace_tool_arguments": True,
    "sensitive_tools": (("login", True), ("http_request", ("headers.Authorization", "password"))),
    "tenant": "acme",
    "max_tool_calls_per_run": 2,
}


def as_dict(config: AssembleConfig) -> dict[str, Any]:
    values = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    values["allow_pipelined_execute"] = list(values["allow_pipelined_execute"])
    return values


def test_defaults_are_the_designed_ones() -> None:
    assert as_dict(AssembleConfig()) == DEFAULTS


def test_the_keys_are_exactly_the_yaml_section_keys() -> None:
    assert {f.name for f in dataclasses.fields(AssembleConfig)} == set(DEFAULTS)


def test_from_yaml_text() -> None:
    assert as_dict(AssembleConfig.from_yaml(FULL_YAML)) == FULL_VALUES


def test_from_yaml_path_object(tmp_path: Path) -> None:
    path = tmp_path / "toolstream.yaml"
    path.write_text(FULL_YAML, encoding="utf-8")
    assert as_dict(AssembleConfig.from_yaml(path)) == FULL_VALUES


def test_from_yaml_file_name_string(tmp_path: Path) -> None:
    path = tmp_path / "toolstream.yml"
    path.write_text(FULL_YAML, encoding="utf-8")
    assert as_dict(AssembleConfig.from_yaml(str(path))) == FULL_VALUES


def test_from_yaml_partial_section_keeps_the_other_defaults() -> None:
    config = AssembleConfig.from_yaml("agent_stream_assemble:\n  mode: lenient\n")
    assert as_dict(config) == {**DEFAULTS, "mode": "lenient"}


def test_from_yaml_empty_section_is_all_defaults() -> None:
    assert as_dict(AssembleConfig.from_yaml("agent_stream_assemble:\n")) == DEFAULTS


@pytest.mark.parametrize(
    "text",
    ["service:\n  name: x\n", "", "just a string", "- a\n- b\n", "agent_stream_assembler:\n  mode: strict\n"],
)
def test_from_yaml_without_the_section_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError, match="agent_stream_assemble"):
        AssembleConfig.from_yaml(text)


def test_from_yaml_missing_file_name_is_not_silently_defaults(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        AssembleConfig.from_yaml(str(tmp_path / "nope.yaml"))


def test_from_yaml_unparsable_yaml_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        AssembleConfig.from_yaml("agent_stream_assemble:\n  mode: [strict\n")


def test_from_yaml_section_that_is_not_a_mapping() -> None:
    with pytest.raises(ValueError, match="agent_stream_assemble"):
        AssembleConfig.from_yaml("agent_stream_assemble:\n  - mode\n")


@pytest.mark.parametrize("key", ["modes", "max_tool_argument_byte", "pipelined", "execute_before_stream_start"])
def test_unknown_key_is_a_value_error_naming_it(key: str) -> None:
    with pytest.raises(ValueError, match=key):
        AssembleConfig.from_yaml(f"agent_stream_assemble:\n  {key}: 1\n")
    with pytest.raises(ValueError, match=key):
        AssembleConfig.from_mapping({key: 1})


BAD_VALUES: list[tuple[str, Any]] = [
    ("mode", "loose"),
    ("mode", "STRICT"),
    ("mode", None),
    ("mode", 1),
    ("max_tool_argument_bytes", 0),
    ("max_tool_argument_bytes", -1),
    ("max_tool_argument_bytes", "big"),
    ("max_tool_argument_bytes", 1.5),
    ("max_tool_argument_bytes", True),
    ("max_tool_argument_bytes", None),
    ("max_tool_calls_in_flight_assemble", 0),
    ("max_tool_calls_in_flight_assemble", "32"),
    ("max_tool_calls_in_flight_assemble", False),
    ("assemble_idle_timeout_s", 0),
    ("assemble_idle_timeout_s", -5),
    ("assemble_idle_timeout_s", "60"),
    ("assemble_idle_timeout_s", True),
    ("assemble_idle_timeout_s", float("nan")),
    ("assemble_idle_timeout_s", None),
    ("execute_before_stream_end", "yes please"),
    ("execute_before_stream_end", 1),
    ("ui_forward_partial_args", "no"),
    ("ui_forward_partial_args", None),
    ("arguments_must_be_object", 0),
    ("on_invalid_json", "ignore"),
    ("on_invalid_json", "repair"),
    ("on_args_overflow", "truncate"),
    ("finalize_order", "random"),
    ("allow_pipelined_execute", "read_file"),
    ("allow_pipelined_execute", 5),
    ("allow_pipelined_execute", [1, 2]),
    ("allow_pipelined_execute", [""]),
    ("allow_pipelined_execute", [None]),
    ("trace_tool_arguments", "yes"),
    ("trace_tool_arguments", 1),
    ("sensitive_tools", "login"),
    ("sensitive_tools", [""]),
    ("sensitive_tools", {"login": "yes"}),
    ("sensitive_tools", {"http_request": ["headers..Authorization"]}),
    ("sensitive_tools", {"http_request": []}),
    ("tenant", ""),
    ("tenant", "  "),
    ("tenant", 7),
    ("tenant", ["acme"]),
    ("max_tool_calls_per_run", 0),
    ("max_tool_calls_per_run", -2),
    ("max_tool_calls_per_run", 1.5),
    ("max_tool_calls_per_run", "2"),
    ("max_tool_calls_per_run", True),
]


@pytest.mark.parametrize(("key", "value"), BAD_VALUES, ids=[f"{k}={v!r}" for k, v in BAD_VALUES])
def test_bad_value_is_a_value_error_naming_the_key(key: str, value: Any) -> None:
    with pytest.raises(ValueError, match=key):
        AssembleConfig.from_mapping({key: value})
    with pytest.raises(ValueError, match=key):
        AssembleConfig(**{key: value})


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("mode: loose", "mode"),
        ("max_tool_argument_bytes: lots", "max_tool_argument_bytes"),
        ("execute_before_stream_end: maybe", "execute_before_stream_end"),
        ("allow_pipelined_execute: read_file", "allow_pipelined_execute"),
        ("assemble_idle_timeout_s: -1", "assemble_idle_timeout_s"),
    ],
)
def test_bad_value_in_yaml_names_the_key(line: str, key: str) -> None:
    with pytest.raises(ValueError, match=key):
        AssembleConfig.from_yaml(f"agent_stream_assemble:\n  {line}\n")


def test_from_mapping_section_and_whole_document() -> None:
    section = {k: v for k, v in FULL_VALUES.items()}
    assert as_dict(AssembleConfig.from_mapping(section)) == FULL_VALUES
    assert as_dict(AssembleConfig.from_mapping({"agent_stream_assemble": section})) == FULL_VALUES
    assert as_dict(AssembleConfig.from_mapping({})) == DEFAULTS


def test_from_mapping_rejects_non_mappings() -> None:
    with pytest.raises(ValueError):
        AssembleConfig.from_mapping(["mode", "strict"])  # type: ignore[arg-type]


def test_allow_pipelined_execute_is_stored_immutably() -> None:
    names = ["a", "b"]
    config = AssembleConfig(allow_pipelined_execute=names)  # type: ignore[arg-type]
    names.append("c")
    assert tuple(config.allow_pipelined_execute) == ("a", "b")


def test_config_is_immutable() -> None:
    config = AssembleConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.mode = "lenient"  # type: ignore[misc]


def test_integer_timeout_and_float_timeout_are_accepted() -> None:
    assert AssembleConfig.from_mapping({"assemble_idle_timeout_s": 1}).assemble_idle_timeout_s == 1
    assert AssembleConfig.from_mapping({"assemble_idle_timeout_s": 0.05}).assemble_idle_timeout_s == 0.05


def test_coerce_accepts_every_form_a_shim_takes(tmp_path: Path) -> None:
    """``AssembleConfig.coerce`` is what both shims' ``config=`` go through."""
    path = tmp_path / "cfg.yaml"
    path.write_text("agent_stream_assemble:\n  mode: lenient\n", encoding="utf-8")
    given = AssembleConfig(mode="lenient")
    assert AssembleConfig.coerce(None) == AssembleConfig()
    assert AssembleConfig.coerce(given) is given
    assert AssembleConfig.coerce({"mode": "lenient"}) == given
    assert AssembleConfig.coerce({"agent_stream_assemble": {"mode": "lenient"}}) == given
    assert AssembleConfig.coerce(path) == given
    assert AssembleConfig.coerce(str(path)) == given
    assert AssembleConfig.coerce("agent_stream_assemble:\n  mode: lenient\n") == given


@pytest.mark.parametrize("value", [42, ["mode", "strict"], object()])
def test_coerce_rejects_anything_else_with_a_type_error(value: Any) -> None:
    with pytest.raises(TypeError, match="config: expected AssembleConfig"):
        AssembleConfig.coerce(value)


def test_coerce_keeps_the_mapping_errors() -> None:
    with pytest.raises(ValueError, match="mdoe"):
        AssembleConfig.coerce({"mdoe": "strict"})


def test_sensitive_tools_as_a_list_of_names_is_the_same_as_a_mapping_to_true() -> None:
    listed = AssembleConfig.from_mapping({"sensitive_tools": ["login", "vault_read"]})
    mapped = AssembleConfig.from_mapping({"sensitive_tools": {"login": True, "vault_read": True}})
    assert listed == mapped
    assert listed.sensitive_tools == (("login", True), ("vault_read", True))
    assert hash(listed) == hash(mapped)  # still a frozen, hashable config


def test_sensitive_tools_yaml_list_may_mix_names_and_paths() -> None:
    config = AssembleConfig.from_yaml("""\
agent_stream_assemble:
  sensitive_tools:
    - login
    - http_request: [headers.Authorization]
""")
    assert config.sensitive_tools == (("login", True), ("http_request", ("headers.Authorization",)))


def test_max_tool_calls_per_run_from_every_form() -> None:
    """Issue 26: ``{"max_tool_calls_per_run": 2}`` was an unknown key."""
    expected = AssembleConfig(max_tool_calls_per_run=2)
    assert AssembleConfig.from_mapping({"max_tool_calls_per_run": 2}) == expected
    assert AssembleConfig.from_yaml("agent_stream_assemble:\n  max_tool_calls_per_run: 2\n") == expected
    assert AssembleConfig.coerce({"max_tool_calls_per_run": 2}) == expected
    assert AssembleConfig.from_yaml("agent_stream_assemble:\n  max_tool_calls_per_run: null\n") == AssembleConfig()
