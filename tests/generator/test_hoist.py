"""The naming stage: every anonymous class gets a name by rule, never a number."""

from __future__ import annotations

from typing import Any

import pytest

from codegen.cli import main
from codegen.errors import SchemaError
from codegen.hoist import hoist


def _tagged(tag: str, value: str, extends: str | None = None, **extra: Any) -> dict[str, Any]:
    variant: dict[str, Any] = {
        "type": "object",
        "properties": {tag: {"type": "string", "const": value}},
        "required": [tag],
        **extra,
    }
    if extends:
        variant["allOf"] = [{"$ref": f"#/$defs/{extends}"}]
    return variant


def _run(defs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    files = dict.fromkeys(defs, "schema/v1/schema.json")
    out, derived = hoist(defs, files)
    assert set(derived) <= set(files)  # every new definition knows its file
    return out, {name: d.rule for name, d in derived.items()}


OBJ = {"type": "object", "properties": {"x": {"type": "string"}}}


def test_variants_take_their_discriminator_constant_or_title():
    defs = {"Update": {"oneOf": [_tagged("kind", "agent_message_chunk"), {**OBJ, "title": "Plain"}]}}
    out, rules = _run(defs)
    assert rules == {"AgentMessageChunk": "discriminator", "Plain": "title"}
    assert out["Update"]["oneOf"] == [{"$ref": "#/$defs/AgentMessageChunk"}, {"$ref": "#/$defs/Plain"}]
    assert "title" not in out["Plain"]  # a title left in place would rename the class again


def test_a_name_claimed_by_two_unions_is_prefixed_in_both_whatever_the_order():
    first = {"A": {"anyOf": [{**OBJ, "title": "other"}]}, "B": {"anyOf": [{**OBJ, "title": "other"}]}}
    second = dict(reversed(list(first.items())))
    for defs in (first, second):
        _, rules = _run(defs)
        assert rules == {"AOther": "union-prefixed", "BOther": "union-prefixed"}


def test_a_name_the_models_module_reserves_is_prefixed():
    _, rules = _run({"Kind": {"anyOf": [_tagged("type", "literal"), _tagged("type", "field")]}})
    assert rules == {"KindLiteral": "union-prefixed", "KindField": "union-prefixed"}


def test_a_name_that_is_already_a_definition_is_prefixed_then_suffixed():
    defs = {
        "Terminal": OBJ,
        "AuthTerminal": OBJ,
        "Auth": {"anyOf": [_tagged("type", "terminal", "AuthTerminal")]},
        "Update": {"anyOf": [_tagged("type", "terminal")]},
    }
    _, rules = _run(defs)
    assert rules == {"AuthTerminalVariant": "suffixed", "UpdateTerminal": "union-prefixed"}


def test_an_object_with_shared_properties_becomes_a_union_of_complete_objects():
    defs = {
        "Option": {
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "required": ["id"],
            "oneOf": [_tagged("type", "select", "Select"), _tagged("type", "boolean")],
            "discriminator": {"propertyName": "type"},
            "x-method": "m",
        },
        "Select": OBJ,
    }
    out, rules = _run(defs)
    assert rules == {"OptionBoolean": "flattened", "OptionSelect": "flattened"}
    assert out["Option"] == {
        "x-method": "m",
        "oneOf": [{"$ref": "#/$defs/OptionSelect"}, {"$ref": "#/$defs/OptionBoolean"}],
        "discriminator": {"propertyName": "type"},
    }
    assert out["OptionSelect"]["required"] == ["id", "type"]
    assert set(out["OptionSelect"]["properties"]) == {"id", "type"}
    assert out["OptionSelect"]["allOf"] == [{"$ref": "#/$defs/Select"}]


def test_a_variant_extending_a_union_is_distributed_over_its_variants():
    defs = {
        "State": {"anyOf": [_tagged("state", "running"), _tagged("state", "idle")]},
        "Update": {"anyOf": [_tagged("kind", "state_update", "State")]},
    }
    out, rules = _run(defs)
    assert out["Update"]["anyOf"] == [
        {"$ref": "#/$defs/UpdateStateUpdateRunning"},
        {"$ref": "#/$defs/UpdateStateUpdateIdle"},
    ]
    assert rules["UpdateStateUpdateRunning"] == "flattened"
    assert out["UpdateStateUpdateRunning"]["properties"]["state"]["const"] == "running"


def test_nested_variants_append_their_labels():
    defs = {
        "Mode": {
            "type": "object",
            "properties": {"schema": {"type": "string"}},
            "anyOf": [
                {"title": "Session", "allOf": [{"$ref": "#/$defs/S"}]},
                {"title": "Request", "allOf": [{"$ref": "#/$defs/R"}]},
            ],
        },
        "Ask": {
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "anyOf": [_tagged("mode", "form", "Mode")],
        },
        "S": OBJ,
        "R": OBJ,
    }
    out, rules = _run(defs)
    assert out["Ask"]["anyOf"] == [{"$ref": "#/$defs/AskFormSession"}, {"$ref": "#/$defs/AskFormRequest"}]
    assert out["AskFormSession"]["allOf"] == [{"$ref": "#/$defs/ModeSession"}]
    assert {rules[n] for n in ("AskFormSession", "ModeSession", "ModeRequest")} == {"flattened"}


@pytest.mark.parametrize(
    ("prop", "expected"),
    [
        ({"type": "object", "properties": {"line": {"type": "integer"}}}, "EntryPosition"),
        (
            {"type": "array", "items": {"type": "object", "properties": {"line": {"type": "integer"}}}},
            "EntryPositionItem",
        ),
        (
            {"anyOf": [{"type": "object", "properties": {"line": {"type": "integer"}}}, {"type": "null"}]},
            "EntryPosition",
        ),
    ],
    ids=["object", "array-items", "nullable"],
)
def test_inline_objects_in_properties_are_named_after_owner_and_property(prop, expected):
    out, rules = _run({"Entry": {"type": "object", "properties": {"position": prop}}})
    assert rules == {expected: "property"}
    assert "properties" in out[expected]


def test_a_schema_no_rule_can_name_is_an_error_naming_its_place():
    defs = {
        "U": {"anyOf": [_tagged("t", "x")]},
        "UX": OBJ,
        "X": OBJ,
        "UXVariant": OBJ,
    }
    with pytest.raises(SchemaError) as caught:
        _run(defs)
    assert str(caught.value).startswith("schema/v1/schema.json: /$defs/U/anyOf/0: cannot name this schema")


def test_generate_reports_how_many_names_it_derived(tmp_path, capsys):
    assert main(["generate", "--out", str(tmp_path / "out")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "derived class names: v1: 1 (union-prefixed 1); v2: 1 (union-prefixed 1)"
