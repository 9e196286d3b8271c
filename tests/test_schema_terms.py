"""The shared schema vocabulary: the one walk every traversal uses, and its helpers."""

from __future__ import annotations

from acp_codegen.protocol.features import _prune
from acp_codegen.schema_terms import copy_json, features_inside, iter_refs, ref_target, schema_nodes, variants_key

DOC = {
    "$defs": {
        "Form": {
            "type": "object",
            "properties": {
                # Properties named like keywords: names, not keywords.
                "required": {"type": "array", "items": {"$ref": "#/$defs/Name"}},
                "properties": {"type": "object", "x-feature": "forms"},
                "$ref": {"type": "string"},
            },
            "required": ["required"],
            "default": {"$ref": "#/$defs/NotARef", "x-feature": "in_a_value"},
            "examples": [{"$ref": "#/$defs/AlsoNot"}],
        },
        "Name": {"anyOf": [{"type": "string"}, {"const": {"x-feature": "data"}}]},
    }
}


def test_walk_visits_schemas_with_their_paths_and_skips_values() -> None:
    paths = [path for path, _ in schema_nodes(DOC)]
    assert paths == [
        (),
        ("$defs", "Form"),
        ("$defs", "Form", "properties", "required"),
        ("$defs", "Form", "properties", "required", "items"),
        ("$defs", "Form", "properties", "properties"),
        ("$defs", "Form", "properties", "$ref"),
        ("$defs", "Name"),
        ("$defs", "Name", "anyOf", 0),
        ("$defs", "Name", "anyOf", 1),
    ]


def test_refs_and_features_are_found_outside_values_only() -> None:
    assert list(iter_refs(DOC)) == [(("$defs", "Form", "properties", "required", "items"), "#/$defs/Name")]
    assert features_inside(DOC) == {"forms"}


def test_walk_follows_changes_made_to_the_node_it_handed_out() -> None:
    doc = {"anyOf": [{"type": "string"}, {"anyOf": [{"type": "null"}]}]}
    seen = []
    for path, node in schema_nodes(doc):
        seen.append(path)
        if path == ():
            node["anyOf"] = node["anyOf"][:1]
    assert seen == [(), ("anyOf", 0)]


def test_variants_key_and_ref_target() -> None:
    assert variants_key({"oneOf": [], "anyOf": {}}) == "oneOf"
    assert variants_key({"anyOf": []}) == "anyOf"
    assert variants_key({"type": "string"}) is None
    assert variants_key(["anyOf"]) is None
    assert ref_target("#/$defs/A~1B") == "A/B"
    assert ref_target("#/$defs/A/properties/b") is None
    assert ref_target("other.json#/$defs/A") is None


def test_pruning_leaves_properties_named_like_keywords_alone() -> None:
    schema = {
        "type": "object",
        "properties": {
            "required": {"type": "array", "items": {"type": "string"}},
            "properties": {"type": "object"},
            "gone": {"type": "string", "x-feature": "off"},
        },
        "required": ["required", "gone"],
    }
    pruned = _prune(schema, frozenset())
    assert pruned["properties"] == {
        "required": {"type": "array", "items": {"type": "string"}},
        "properties": {"type": "object"},
    }
    assert pruned["required"] == ["required"]


def test_copy_json_is_deep_and_equal() -> None:
    data = {"$defs": {"A": {"type": "object", "required": ["x"], "properties": {"x": {"enum": [1, None]}}}}, "n": 1.5}
    copied = copy_json(data)
    assert copied == data
    copied["$defs"]["A"]["required"].append("y")
    copied["$defs"]["A"]["properties"]["x"]["enum"][0] = 2
    assert data["$defs"]["A"]["required"] == ["x"]
    assert data["$defs"]["A"]["properties"]["x"]["enum"] == [1, None]
