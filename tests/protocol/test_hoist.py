"""The naming stage: every anonymous class gets a name by rule, never a number."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from acp_codegen.cli import main
from acp_codegen.errors import SchemaError
from acp_codegen.protocol.features import select
from acp_codegen.protocol.hoist import Derived, hoist
from acp_codegen.protocol.sources import load_sources
from hypothesis import given, settings
from hypothesis import strategies as st
from support import ROOT, SHARED_UPSTREAM
from support.reference_data import require


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


def test_variants_are_the_union_name_plus_their_discriminator_constant_or_title():
    ref = {"$ref": "#/$defs/Other", "title": "ref"}  # a $ref keeps the name of what it refers to
    defs = {"Update": {"oneOf": [_tagged("kind", "agent_message_chunk"), {**OBJ, "title": "Plain"}, ref]}, "Other": OBJ}
    out, rules = _run(defs)
    assert rules == {"UpdateAgentMessageChunk": "discriminator", "UpdatePlain": "title"}
    assert out["Update"]["oneOf"] == [
        {"$ref": "#/$defs/UpdateAgentMessageChunk"},
        {"$ref": "#/$defs/UpdatePlain"},
        ref,
    ]
    assert "title" not in out["UpdatePlain"]  # a title left in place would rename the class again


def test_a_titled_variant_with_a_constraint_is_an_alias_named_like_a_class_variant():
    """datamodel-code-generator writes such a variant as an alias of its own and numbers it
    (2026-11 v2: ``SessionConfigSelectOptions1``); its name follows its title instead, so
    it does not depend on the variant's place."""
    grouped = {"title": "Grouped", "type": "array", "items": {"$ref": "#/$defs/Group"}, "minItems": 1}
    flat = {"title": "Ungrouped", "type": "array", "items": {"type": "string"}, "minItems": 1}
    plain = {"title": "Plain", "type": "array", "items": {"type": "string"}}  # no constraint: inline
    for variants in ([flat, grouped, plain], [plain, grouped, flat]):
        out, rules = _run({"Options": {"anyOf": variants}, "Group": OBJ})
        assert rules == {"OptionsUngrouped": "title", "OptionsGrouped": "title"}
        assert out["OptionsUngrouped"] == {"type": "array", "items": {"type": "string"}, "minItems": 1}
        assert plain in out["Options"]["anyOf"]
    untitled = {"type": "string", "minLength": 1}  # nothing to name it by: left as it is
    assert _run({"Name": {"anyOf": [untitled, {"type": "null"}]}})[1] == {}


def test_a_label_that_begins_with_the_union_name_is_not_doubled():
    defs = {"Update": {"anyOf": [{**OBJ, "title": "UpdatePlain"}, {**OBJ, "title": "Updated"}, _tagged("k", "update")]}}
    _, rules = _run(defs)
    # "Updated" does not begin with the word "Update"; a label equal to the union's name is doubled.
    assert set(rules) == {"UpdatePlain", "UpdateUpdated", "UpdateUpdate"}


def test_two_unions_with_one_label_and_a_definition_named_like_it_leave_each_other_alone():
    # The names hoisting gave before: bare, then prefixed only where the bare name was taken.
    defs = {
        "A": {"anyOf": [{**OBJ, "title": "other"}, _tagged("type", "field")]},
        "B": {"anyOf": [{**OBJ, "title": "other"}]},
        "Other": OBJ,
        "Field": OBJ,
    }
    for order in (defs, dict(reversed(list(defs.items())))):
        _, rules = _run(dict(order))
        assert rules == {"AOther": "title", "AField": "discriminator", "BOther": "title"}


def test_a_variant_tagging_the_definition_its_name_would_be_is_named_tagged():
    defs = {"Auth": {"anyOf": [_tagged("type", "terminal", "AuthTerminal"), _tagged("type", "agent", "Agent")]}}
    out, rules = _run({**defs, "AuthTerminal": OBJ, "Agent": OBJ})
    assert rules == {"AuthTerminalTagged": "tagged", "AuthAgent": "discriminator"}
    assert out["AuthTerminalTagged"]["allOf"] == [{"$ref": "#/$defs/AuthTerminal"}]


@pytest.mark.parametrize(
    ("defs", "message"),
    [
        (
            {"U": {"anyOf": [_tagged("t", "x")]}, "UX": OBJ},
            "schema/v1/schema.json: /$defs/U/anyOf/0: this schema would be named UX, which is already"
            " schema/v1/schema.json: /$defs/UX; give one of them a distinct title",
        ),
        (
            {"Value": {"type": "object", "properties": {"error": OBJ}}},
            "schema/v1/schema.json: /$defs/Value/properties/error: this schema would be named ValueError, which is"
            " already a name Python or pydantic means; give one of them a distinct title",
        ),
        (
            {"Base": {"anyOf": [{**OBJ, "title": "model"}]}},
            "schema/v1/schema.json: /$defs/Base/anyOf/0: this schema would be named BaseModel, which is already"
            " a name Python or pydantic means; give one of them a distinct title",
        ),
        (
            {"U": {"anyOf": [{**OBJ, "title": "y"}, _tagged("t", "y")]}},
            "schema/v1/schema.json: /$defs/U/anyOf/1: this schema would be named UY, which is already"
            " schema/v1/schema.json: /$defs/U/anyOf/0; give one of them a distinct title",
        ),
        (
            {"U": {"anyOf": [OBJ]}},
            "schema/v1/schema.json: /$defs/U/anyOf/0: this union variant has no title, tag or required property"
            " to name it by; give it a title",
        ),
        (  # a tag that names nothing is not passed over for what the variant requires
            {"U": {"anyOf": [_tagged("t", "-"), _tagged("t", "y")]}},
            "schema/v1/schema.json: /$defs/U/anyOf/0: this union variant has no title, tag or required property"
            " to name it by; give it a title",
        ),
    ],
    ids=["definition", "builtin", "pydantic", "two-variants", "no-label", "empty-tag"],
)
def test_a_name_taken_is_an_error_naming_both_places(defs, message):
    with pytest.raises(SchemaError) as caught:
        _run(defs)
    assert str(caught.value) == message
    assert "Variant" not in str(caught.value)


def _requiring(*required: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {p: {"type": "string"} for p in ("id", *required)},
        "required": list(required),
    }


def test_an_untitled_untagged_variant_is_named_by_what_it_alone_requires():
    """Upstream v0.10.3's ``AgentResponse``: newer releases title the same variants Result and Error."""
    defs = {"AgentResponse": {"anyOf": [_requiring("id", "result"), _requiring("id", "error")]}}
    out, rules = _run(defs)
    assert rules == {"AgentResponseResult": "required", "AgentResponseError": "required"}
    assert out["AgentResponse"]["anyOf"] == [
        {"$ref": "#/$defs/AgentResponseResult"},
        {"$ref": "#/$defs/AgentResponseError"},
    ]


def test_a_variant_requiring_nothing_of_its_own_is_named_by_all_it_requires():
    """Upstream v0.0.16's ``SessionUpdate``: a tool call and its update, both tagged by
    ``kind`` without a constant; the call alone requires ``label`` and ``status``."""
    tagged = _tagged("kind", "plan")
    defs = {
        "Update": {
            "oneOf": [tagged, _requiring("kind", "toolCallId", "label", "status"), _requiring("kind", "toolCallId")]
        }
    }
    _, rules = _run(defs)
    assert rules == {"UpdatePlan": "discriminator", "UpdateLabelStatus": "required", "UpdateKindToolCallId": "required"}


def test_what_a_variant_requires_labels_it_in_a_flattened_object_too():
    """v0.5.0's ``AgentOutgoingMessage``: a response with ``{result}`` or ``{error}``."""
    defs = {
        "Out": {
            "type": "object",
            "properties": {"id": {"type": "integer"}},
            "oneOf": [_requiring("result"), _requiring("error")],
        }
    }
    out, rules = _run(defs)
    assert out["Out"]["oneOf"] == [{"$ref": "#/$defs/OutResult"}, {"$ref": "#/$defs/OutError"}]
    assert rules == {"OutResult": "flattened", "OutError": "flattened"}


def test_a_title_in_the_fragments_settles_a_collision():
    defs = {"U": {"anyOf": [{**_tagged("t", "x"), "title": "plain x"}]}, "UX": OBJ}
    _, rules = _run(defs)
    assert rules == {"UPlainX": "title"}


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


def test_generate_reports_how_many_names_it_derived(tmp_path, capsys):
    assert main(["generate", "--out", str(tmp_path / "out")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-1] == "derived class names: v1: 1 (discriminator 1); v2: 1 (discriminator 1)"


# -- stability: a name is a function of its own place ------------------------------------

ARCHIVE = "unstable_session_archive"
BASES = {
    "fragments": None,
    "upstream 2026-11": SHARED_UPSTREAM / "2026-11" / "v1" / "schema.unstable.json",
    # Untitled, untagged variants named by what they require (AgentResponseResult...).
    "upstream v0.10.3": SHARED_UPSTREAM / "history" / "v0.10.3" / "schema.json",
}


@functools.cache
def _base(name: str) -> tuple[dict[str, Any], dict[str, str], dict[str, Derived], tuple[str, ...]]:
    """What the naming stage reads for v1 (fragments, laid over the base if any), what it
    names, and the words a later release might reuse: labels, derived names, definitions."""
    path = BASES[name]
    if path is not None:
        require(path)
    sources = load_sources(
        ROOT / "schema", ROOT, {1: path} if path else None, validate=True, features=frozenset({ARCHIVE})
    )
    selection = select(sources[0], frozenset({ARCHIVE}))
    _, derived = hoist(selection.defs, dict(selection.def_files))
    words = {d.label for d in derived.values()} | set(derived) | set(selection.defs)
    return selection.defs, selection.def_files, derived, tuple(sorted(words))


@st.composite
def _extras(draw: st.DrawFn, words: tuple[str, ...]) -> dict[str, Any]:
    """Unrelated definitions and unions, named like what the base already has."""
    out: dict[str, Any] = {}
    labelled = {
        "title": lambda w: {**OBJ, "title": w},
        "tag": lambda w: _tagged("type", w),
        "required": lambda w: {"type": "object", "properties": {w: OBJ}, "required": [w]},
    }
    for name in draw(st.lists(st.sampled_from(words), min_size=1, max_size=4, unique=True)):
        labels = draw(st.lists(st.sampled_from(words), max_size=3, unique=True))
        if not labels:
            out[name] = OBJ
        else:  # a union whose variants are labelled like the base's: by title, tag or what they require
            out[name] = {"anyOf": [labelled[draw(st.sampled_from(sorted(labelled)))](w) for w in labels]}
    return out


@pytest.mark.parametrize("base", sorted(BASES))
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_no_class_changes_its_name_when_unrelated_definitions_are_added(base: str, data: st.DataObject) -> None:
    defs, files, before, words = _base(base)
    extras = {n: s for n, s in data.draw(_extras(words)).items() if n not in defs}
    try:
        _, after = hoist({**defs, **extras}, {**files, **dict.fromkeys(extras, "extra.json")})
    except SchemaError as error:
        # Refused, never renamed: one of the two places named is an added definition.
        assert "extra.json: /$defs/" in str(error) and str(error).count("/$defs/") == 2, str(error)
        return
    assert not set(extras) & set(before)  # a definition named like a derived name is refused
    assert {n: after[n].origin for n in before} == {n: d.origin for n, d in before.items()}


def test_the_issue_example_a_definition_named_boolean_renames_nothing() -> None:
    defs, files, before, _ = _base("upstream 2026-11")
    assert before["ElicitationPropertySchemaBoolean"].label == "Boolean"
    _, after = hoist({**defs, "Boolean": OBJ}, {**files, "Boolean": "extra.json"})
    assert after == before
