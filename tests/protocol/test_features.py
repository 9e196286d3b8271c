"""The feature-selection stage: items marked ``x-feature`` (definitions, properties, union
variants, and so methods) are pruned without their feature and kept, with an UNSTABLE
notice, with it; a stable item may not lean on a pruned one."""

from __future__ import annotations

from typing import Any

import pytest
from acp_codegen.errors import SchemaError
from acp_codegen.protocol.features import select, unstable_notice
from acp_codegen.protocol.load import Source, VersionSources

FEATURE = "unstable_thing"
GATED = {"type": "string", "x-feature": FEATURE}


def _sources(defs: dict[str, Any], agent_methods: dict[str, str] | None = None) -> VersionSources:
    meta = {"version": 1, "features": {FEATURE: "A thing."}, "agentMethods": agent_methods or {}}
    return VersionSources("v1", (Source("v1/schema.json", "", {"$defs": defs}),), Source("v1/meta.json", "", meta))


DEFS: dict[str, Any] = {
    "Info": {
        "type": "object",
        "description": "A session.",
        "properties": {"id": {"type": "string"}, "thing": {**GATED, "description": "The thing."}},
        "required": ["id", "thing"],
        # Data, not schema: an x-feature inside a default is a value and stays.
        "default": {"x-feature": FEATURE},
    },
    "Filter": {"anyOf": [{"const": "all"}, {"const": "things", "x-feature": FEATURE}]},
    "ThingRequest": {
        "type": "object",
        "properties": {},
        "x-method": "thing/do",
        "x-side": "agent",
        "x-feature": FEATURE,
    },
    "ThingResponse": {
        "type": "object",
        "properties": {},
        "x-method": "thing/do",
        "x-side": "agent",
        "x-feature": FEATURE,
    },
}


def test_without_the_feature_every_marked_item_is_pruned() -> None:
    selection = select(_sources(DEFS, {"thing_do": "thing/do"}), frozenset())
    info = selection.defs["Info"]
    assert list(info["properties"]) == ["id"] and info["required"] == ["id"]
    assert info["default"] == {"x-feature": FEATURE}
    assert selection.defs["Filter"]["anyOf"] == [{"const": "all"}]
    assert sorted(selection.defs) == ["Filter", "Info"]
    assert selection.methods == () and selection.features == ()


def test_with_the_feature_marked_items_stay_with_an_unstable_notice() -> None:
    selection = select(_sources(DEFS, {"thing_do": "thing/do"}), frozenset({FEATURE}))
    info = selection.defs["Info"]
    assert info["required"] == ["id", "thing"]
    assert info["properties"]["thing"]["description"] == unstable_notice(FEATURE) + "\n\nThe thing."
    assert info["description"] == "A session."  # unmarked: no notice
    assert selection.defs["Filter"]["anyOf"][1]["description"] == unstable_notice(FEATURE)
    assert [(m.name, m.side, m.feature) for m in selection.methods] == [("thing/do", "agent", FEATURE)]
    assert selection.features == (FEATURE,)


def test_an_upstream_unstable_paragraph_is_replaced_not_doubled() -> None:
    defs = {"Info": {"type": "object", "x-feature": FEATURE, "description": "**UNSTABLE**\n\nA session."}}
    description = select(_sources(defs), frozenset({FEATURE})).defs["Info"]["description"]
    assert description == unstable_notice(FEATURE) + "\n\nA session."


def test_a_stable_item_using_a_pruned_definition_is_refused_with_its_pointer() -> None:
    defs = {
        "Thing": {"type": "string", "x-feature": FEATURE},
        "Info": {"type": "object", "properties": {"thing": {"$ref": "#/$defs/Thing"}}},
    }
    with pytest.raises(SchemaError) as error:
        select(_sources(defs), frozenset())
    assert [str(p) for p in error.value.problems] == [
        "v1/schema.json: /$defs/Info/properties/thing: uses Thing, which is pruned without its feature;"
        " mark this item with the same x-feature"
    ]
    assert "Thing" in select(_sources(defs), frozenset({FEATURE})).defs
