"""Schema diff: each breaking-change rule, pinned by a small fixture pair.

Every case changes a type ``Subject`` that the fixture protocol uses in the params of a
request (``thing/do``: clients send, agents receive), in its result (agents send, clients
receive) or in a notification (``thing/happened``: agents send, clients receive). The test
asserts the rule fires, at the expected path, with nothing else reported, and that its
wire verdict in each direction (an old sender to a new receiver, a new sender to an old
receiver) names exactly the parties the table's roles give, and its code verdict is the table's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from acp_codegen.diff import RULES, compare, rules_markdown
from acp_codegen.diff.usage import DIRECTIONS, NEW_TO_OLD, OLD_TO_NEW, UNREACHED
from acp_codegen.protocol.features import select
from acp_codegen.protocol.ir import Protocol, build
from acp_codegen.protocol.load import Source, VersionSources
from acp_codegen.protocol.validate import validate_version
from support import ROOT

FEATURE = "unstable_thing"

OBJ: dict[str, Any] = {"type": "object", "properties": {}}
A = {"type": "object", "properties": {"a": {"type": "string"}}}
B = {"type": "object", "properties": {"b": {"type": "integer"}}}
C = {"type": "object", "properties": {"c": {"type": "boolean"}}}


def _obj(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


def _req(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": sorted(props)}


def _enum(*values: str, open_: bool = False) -> dict[str, Any]:
    variants: list[dict[str, Any]] = [{"const": v} for v in values]
    return {"oneOf": variants + ([{"type": "string"}] if open_ else [])}


def _message(method: str, side: str, **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {}, "x-method": method, "x-side": side, **extra}


# The methods every fixture has unless a case overrides them.
METHODS = {"agentMethods": {"thing_do": "thing/do"}, "clientMethods": {"thing_happened": "thing/happened"}}
MESSAGES = {
    "DoThingRequest": _message("thing/do", "agent"),
    "DoThingResponse": _message("thing/do", "agent"),
    "ThingHappenedNotification": _message("thing/happened", "client"),
}


def protocol(defs: dict[str, Any], placement: str, methods: dict[str, Any] | None = None, version: int = 1) -> Protocol:
    """Validate and build a one-version protocol whose request or response uses ``Subject``."""
    all_defs = {k: v for k, v in {**MESSAGES, **defs}.items() if v is not None}  # None deletes a definition
    holder = {
        "request": "DoThingRequest",
        "response": "DoThingResponse",
        "notification": "ThingHappenedNotification",
    }.get(placement)
    if "Subject" in all_defs and holder in all_defs:
        all_defs[holder] = {**all_defs[holder], "properties": {"subject": {"$ref": "#/$defs/Subject"}}}
    meta = {"version": version, "features": {FEATURE: "a test feature"}, **(methods or METHODS)}
    sources = VersionSources(
        f"v{version}",
        (Source(f"v{version}/schema.json", "", {"$defs": all_defs}),),
        Source(f"v{version}/meta.json", "", meta),
    )
    validate_version(sources, version)
    return build(select(sources, frozenset({FEATURE})))


@dataclass(frozen=True)
class Case:
    old: dict[str, Any]
    new: dict[str, Any]
    path: str
    also: frozenset[str] = frozenset()  # other rules the same edit legitimately fires
    old_methods: dict[str, Any] | None = None
    new_methods: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


UNDO_METHODS = {**METHODS, "agentMethods": {"thing_do": "thing/do", "thing_undo": "thing/undo"}}
UNDO = {"UndoThingRequest": _message("thing/undo", "agent"), "UndoThingResponse": _message("thing/undo", "agent")}
HAPPENED_AS_REQUEST = {
    "ThingHappenedNotification": None,
    "ThingHappenedRequest": _message("thing/happened", "client"),
    "ThingHappenedResponse": _message("thing/happened", "client"),
}
CLOSED = {"additionalProperties": False}

CASES: dict[str, Case] = {
    "type-added": Case({"Subject": OBJ}, {"Subject": OBJ, "Extra": {"type": "string"}}, "Extra"),
    "type-removed": Case({"Subject": OBJ, "Extra": {"type": "string"}}, {"Subject": OBJ}, "Extra"),
    "type-renamed": Case(
        {"Subject": _obj(x={"$ref": "#/$defs/Label"}), "Label": A},
        {"Subject": _obj(x={"$ref": "#/$defs/Tag"}), "Tag": A},
        "Tag",
    ),
    "type-kind-changed": Case({"Subject": OBJ}, {"Subject": {"type": "string"}}, "Subject"),
    "property-added-optional": Case({"Subject": OBJ}, {"Subject": A}, "Subject.a"),
    "property-added-required": Case({"Subject": OBJ}, {"Subject": _req(a={"type": "string"})}, "Subject.a"),
    "property-added-closed": Case({"Subject": {**OBJ, **CLOSED}}, {"Subject": {**A, **CLOSED}}, "Subject.a"),
    "property-added-required-closed": Case(
        {"Subject": {**OBJ, **CLOSED}}, {"Subject": {**_req(a={"type": "string"}), **CLOSED}}, "Subject.a"
    ),
    "property-removed-optional": Case({"Subject": A}, {"Subject": OBJ}, "Subject.a"),
    "property-removed-required": Case({"Subject": _req(a={"type": "string"})}, {"Subject": OBJ}, "Subject.a"),
    "property-removed-closed": Case({"Subject": {**A, **CLOSED}}, {"Subject": {**OBJ, **CLOSED}}, "Subject.a"),
    "property-removed-required-closed": Case(
        {"Subject": {**_req(a={"type": "string"}), **CLOSED}}, {"Subject": {**OBJ, **CLOSED}}, "Subject.a"
    ),
    "property-made-required": Case({"Subject": A}, {"Subject": _req(a={"type": "string"})}, "Subject.a"),
    "property-made-optional": Case({"Subject": _req(a={"type": "string"})}, {"Subject": A}, "Subject.a"),
    "nullable-added": Case({"Subject": A}, {"Subject": _obj(a={"type": ["string", "null"]})}, "Subject.a"),
    "nullable-removed": Case(
        {"Subject": _obj(a={"anyOf": [{"type": "string"}, {"type": "null"}]})}, {"Subject": A}, "Subject.a"
    ),
    "type-changed": Case({"Subject": A}, {"Subject": _obj(a={"type": "integer"})}, "Subject.a"),
    "format-changed": Case({"Subject": A}, {"Subject": _obj(a={"type": "string", "format": "uri"})}, "Subject.a"),
    "ref-changed": Case(
        {"Subject": _obj(x={"$ref": "#/$defs/A"}), "A": A, "B": B},
        {"Subject": _obj(x={"$ref": "#/$defs/B"}), "A": A, "B": B},
        "Subject.x",
    ),
    "const-changed": Case({"Subject": _obj(k={"const": "x"})}, {"Subject": _obj(k={"const": "y"})}, "Subject.k"),
    "enum-value-added": Case({"Subject": _enum("a", "b")}, {"Subject": _enum("a", "b", "c")}, 'Subject["c"]'),
    "enum-value-removed": Case({"Subject": _enum("a", "b", "c")}, {"Subject": _enum("a", "b")}, 'Subject["c"]'),
    "enum-value-added-open": Case(
        {"Subject": _enum("a", "b", open_=True)}, {"Subject": _enum("a", "b", "c", open_=True)}, 'Subject["c"]'
    ),
    "enum-value-removed-open": Case(
        {"Subject": _enum("a", "b", "c", open_=True)}, {"Subject": _enum("a", "b", open_=True)}, 'Subject["c"]'
    ),
    "enum-opened": Case({"Subject": _enum("a", "b")}, {"Subject": _enum("a", "b", open_=True)}, "Subject"),
    "enum-closed": Case({"Subject": _enum("a", "b", open_=True)}, {"Subject": _enum("a", "b")}, "Subject"),
    "variant-added": Case(
        {"Subject": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]}, "A": A, "B": B, "C": C},
        {
            "Subject": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}, {"$ref": "#/$defs/C"}]},
            "A": A,
            "B": B,
            "C": C,
        },
        "Subject|C",
    ),
    "variant-removed": Case(
        {
            "Subject": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}, {"$ref": "#/$defs/C"}]},
            "A": A,
            "B": B,
            "C": C,
        },
        {"Subject": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]}, "A": A, "B": B, "C": C},
        "Subject|C",
    ),
    "message-variant-added": Case(
        {"Subject": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]}, "A": A, "B": B},
        {
            "Subject": {
                "anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}, {"$ref": "#/$defs/ThingHappenedNotification"}]
            },
            "A": A,
            "B": B,
        },
        "Subject|ThingHappenedNotification",
    ),
    "message-variant-removed": Case(
        {
            "Subject": {
                "anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}, {"$ref": "#/$defs/ThingHappenedNotification"}]
            },
            "A": A,
            "B": B,
        },
        {"Subject": {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]}, "A": A, "B": B},
        "Subject|ThingHappenedNotification",
    ),
    "discriminator-changed": Case(
        {
            "Subject": {
                "oneOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}],
                "discriminator": {"propertyName": "a"},
            },
            "A": A,
            "B": B,
        },
        {
            "Subject": {
                "oneOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}],
                "discriminator": {"propertyName": "b"},
            },
            "A": A,
            "B": B,
        },
        "Subject",
    ),
    "bases-changed": Case(
        {"Subject": {**OBJ, "allOf": [{"$ref": "#/$defs/A"}]}, "A": A, "B": B},
        {"Subject": {**OBJ, "allOf": [{"$ref": "#/$defs/B"}]}, "A": A, "B": B},
        "Subject",
    ),
    "extra-closed": Case({"Subject": A}, {"Subject": {**A, **CLOSED}}, "Subject"),
    "extra-opened": Case({"Subject": {**A, **CLOSED}}, {"Subject": A}, "Subject"),
    "default-changed": Case(
        {"Subject": _obj(a={"type": "string", "default": "x"})},
        {"Subject": _obj(a={"type": "string", "default": "y"})},
        "Subject.a",
    ),
    "default-extended": Case(
        {"Subject": _obj(o={"type": "object", "default": {"p": 1}})},
        {"Subject": _obj(o={"type": "object", "default": {"p": 1, "q": 2}})},
        "Subject.o",
    ),
    "feature-gated": Case({"Subject": A}, {"Subject": _obj(a={"type": "string", "x-feature": FEATURE})}, "Subject.a"),
    "feature-stabilised": Case(
        {"Subject": _obj(a={"type": "string", "x-feature": FEATURE})}, {"Subject": A}, "Subject.a"
    ),
    "method-added": Case(
        {"Subject": OBJ}, {"Subject": OBJ, **UNDO}, "thing/undo", frozenset({"type-added"}), new_methods=UNDO_METHODS
    ),
    "method-removed": Case(
        {"Subject": OBJ, **UNDO}, {"Subject": OBJ}, "thing/undo", frozenset({"type-removed"}), old_methods=UNDO_METHODS
    ),
    "method-side-changed": Case(
        {"Subject": OBJ},
        {"Subject": OBJ, "ThingHappenedNotification": _message("thing/happened", "agent")},
        "thing/happened",
        new_methods={"agentMethods": {"thing_do": "thing/do", "thing_happened": "thing/happened"}},
    ),
    "method-kind-changed": Case(
        {"Subject": OBJ},
        {"Subject": OBJ, **HAPPENED_AS_REQUEST},
        "thing/happened",
        frozenset({"type-added", "type-removed"}),
    ),
    "method-type-changed": Case(
        {"Subject": OBJ},
        {
            "Subject": OBJ,
            "DoThingRequest": None,
            "PerformThingRequest": _message("thing/do", "agent", required=["x"], properties={"x": {"type": "string"}}),
        },
        "thing/do",
        frozenset({"type-added", "type-removed"}),
    ),
}
VERSION_RULES = {"version-added", "version-removed"}


def _side(defs: dict[str, Any], placement: str, methods: dict[str, Any] | None) -> Protocol:
    return protocol(defs, placement, methods)


def test_every_rule_has_a_case() -> None:
    assert set(CASES) | VERSION_RULES == set(RULES)


# Who breaks, per placement of ``Subject`` and direction: the party that sees the failure.
WHO = {
    "request": {
        OLD_TO_NEW: "old clients sending `thing/do` to new agents",
        NEW_TO_OLD: "new clients sending `thing/do` to old agents",
    },
    "response": {
        OLD_TO_NEW: "new clients receiving `thing/do` results from old agents",
        NEW_TO_OLD: "old clients receiving `thing/do` results from new agents",
    },
    "notification": {
        OLD_TO_NEW: "new clients receiving `thing/happened` from old agents",
        NEW_TO_OLD: "old clients receiving `thing/happened` from new agents",
    },
}
# Changes to the method table rework the notification; they are pinned by the other two.
METHOD_TABLE = {"method-side-changed", "method-kind-changed", "message-variant-added", "message-variant-removed"}


@pytest.mark.parametrize(
    ("rule", "placement"),
    [
        (rule, placement)
        for rule in sorted(CASES)
        for placement in ("request", "response", "notification")
        if not (placement == "notification" and rule in METHOD_TABLE)
    ],
)
def test_rule_fires_once_with_the_tables_verdict(rule: str, placement: str) -> None:
    case = CASES[rule]
    old = _side(case.old, placement, case.old_methods)
    new = _side(case.new, placement, case.new_methods)
    changes = compare((old,), (new,))
    assert {c.rule for c in changes} == {rule, *case.also}, [c.as_json() for c in changes]
    fired = [c for c in changes if c.rule == rule]
    assert [c.path for c in fired] == [case.path]
    change, r = fired[0], RULES[rule]
    if change.kind == "method":  # a method change hits its callers or receivers whatever the placement
        role = "request" if change.path in ("thing/do", "thing/undo") else "notification"
        assert all(f"`{change.path}`" in b for b in change.breaks), change.breaks
        expected_directions = [d for d in DIRECTIONS if role in r.roles(d)]
        assert len(change.breaks) == len(expected_directions)
    elif change.path == "Extra":  # used nowhere: every role is assumed
        expected_directions = [d for d in DIRECTIONS if r.roles(d)]
        assert change.breaks == tuple(sorted(UNREACHED[d] for d in expected_directions))
    else:
        expected_directions = [d for d in DIRECTIONS if placement in r.roles(d)]
        assert change.breaks == tuple(sorted(WHO[placement][d] for d in expected_directions))
    assert list(change.directions) == expected_directions
    assert change.wire_breaking is bool(expected_directions)
    assert change.code is r.code
    assert change.breaking is (bool(expected_directions) or r.code)


@pytest.mark.parametrize("rule", sorted(VERSION_RULES))
def test_version_rules(rule: str) -> None:
    v1 = protocol({"Subject": OBJ}, "request")
    v2 = protocol({"Subject": OBJ}, "request", version=2)
    old, new = ((v1,), (v1, v2)) if rule == "version-added" else ((v1, v2), (v1,))
    changes = compare(old, new)
    assert [(c.rule, c.path) for c in changes] == [(rule, "v2")]
    assert changes[0].wire_breaking is RULES[rule].wire
    assert changes[0].code is RULES[rule].code


def test_change_inside_a_shared_type_is_reported_once_at_its_definition() -> None:
    shared = {"Wrapper": _obj(inner={"$ref": "#/$defs/Subject"})}
    old_defs = {**MESSAGES, **shared, "Subject": OBJ}
    new_defs = {**MESSAGES, **shared, "Subject": _req(a={"type": "string"})}
    for defs in (old_defs, new_defs):  # Subject reachable from the request (twice) and the response
        defs["DoThingRequest"] = {**defs["DoThingRequest"], "properties": {"w": {"$ref": "#/$defs/Wrapper"}}}
        defs["DoThingResponse"] = {**defs["DoThingResponse"], "properties": {"s": {"$ref": "#/$defs/Subject"}}}
    changes = compare((protocol(old_defs, "none"),), (protocol(new_defs, "none"),))
    assert [(c.rule, c.path) for c in changes] == [("property-added-required", "Subject.a")]
    assert changes[0].breaks == (  # old senders omit it: old clients' requests, and old agents' results
        "new clients receiving `thing/do` results from old agents",
        "old clients sending `thing/do` to new agents",
    )


def test_rename_is_not_reported_as_removed_and_added_nor_at_its_users() -> None:
    case = CASES["type-renamed"]
    changes = compare((_side(case.old, "request", None),), (_side(case.new, "request", None),))
    assert [(c.change, c.rule, c.old, c.new) for c in changes] == [("changed", "type-renamed", "Label", "Tag")]


def test_renamed_type_that_also_changed_shape_is_removed_and_added() -> None:
    old = _side({"Subject": _obj(x={"$ref": "#/$defs/Label"}), "Label": A}, "request", None)
    new = _side({"Subject": _obj(x={"$ref": "#/$defs/Tag"}), "Tag": B}, "request", None)
    rules = sorted((c.rule, c.path) for c in compare((old,), (new,)))
    assert rules == [("ref-changed", "Subject.x"), ("type-added", "Tag"), ("type-removed", "Label")]


def test_respelling_a_nullable_type_is_not_a_change() -> None:
    old = _side({"Subject": _obj(a={"type": ["string", "null"]})}, "request", None)
    new = _side({"Subject": _obj(a={"anyOf": [{"type": "string"}, {"type": "null"}]})}, "request", None)
    assert compare((old,), (new,)) == []


def test_capability_properties_are_labelled_as_capabilities() -> None:
    old = _side(
        {"Subject": _obj(caps={"$ref": "#/$defs/ThingCapabilities"}), "ThingCapabilities": OBJ}, "response", None
    )
    new_caps = _obj(undo={"type": "boolean", "x-feature": FEATURE})
    new = _side(
        {"Subject": _obj(caps={"$ref": "#/$defs/ThingCapabilities"}), "ThingCapabilities": new_caps}, "response", None
    )
    [change] = compare((old,), (new,))
    assert (change.kind, change.path, change.feature, change.breaking) == (
        "capability",
        "ThingCapabilities.undo",
        FEATURE,
        False,
    )


def test_readme_holds_the_rules_table() -> None:
    assert rules_markdown() in (ROOT / "docs" / "diff.md").read_text(encoding="utf-8")


def test_inline_variants_are_located_inside_their_union() -> None:
    inline = {"type": "object", "title": "Gamma", "properties": {"g": {"type": "string"}}}
    old_union = {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}]}
    new_union = {"anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}, inline]}
    old = _side({"Subject": old_union, "A": A, "B": B}, "response", None)
    new = _side({"Subject": new_union, "A": A, "B": B}, "response", None)
    old_raw = {**MESSAGES, "Subject": old_union, "A": A, "B": B}
    new_raw = {**MESSAGES, "Subject": new_union, "A": A, "B": B}
    changes = compare((old,), (new,), {}, {}, {1: old_raw}, {1: new_raw})
    located = {(c.rule, c.path): c.location for c in changes}
    assert located == {
        ("type-added", "SubjectGamma"): "v1/schema.json#/$defs/Subject/anyOf/2",
        ("variant-added", "Subject|SubjectGamma"): "v1/schema.json#/$defs/Subject/anyOf/2",
    }


def test_markdown_keeps_schema_text_inside_code_spans() -> None:
    from acp_codegen.diff import Report
    from acp_codegen.diff.report import to_markdown

    hostile = "x`\n# injected [link](http://example.invalid)"
    old = _side({"Subject": OBJ}, "request", None)
    new = _side({"Subject": _obj(**{hostile: {"type": "string"}})}, "request", None)
    text = to_markdown(Report("old", "new", compare((old,), (new,))))
    assert not any(line.startswith("# injected") for line in text.splitlines())
    assert "`x' # injected [link](http://example.invalid)`" in text


def test_a_family_renamed_together_is_reported_as_renames() -> None:
    old = _side(
        {"Subject": _obj(w={"$ref": "#/$defs/Wrapper"}), "Wrapper": _obj(l={"$ref": "#/$defs/Label"}), "Label": A},
        "request",
        None,
    )
    new = _side(
        {"Subject": _obj(w={"$ref": "#/$defs/Envelope"}), "Envelope": _obj(l={"$ref": "#/$defs/Tag"}), "Tag": A},
        "request",
        None,
    )
    changes = compare((old,), (new,))
    assert sorted((c.rule, c.old, c.new) for c in changes) == [
        ("type-renamed", "Label", "Tag"),
        ("type-renamed", "Wrapper", "Envelope"),
    ]


def test_variants_of_a_union_that_hoisting_flattened_point_at_the_union() -> None:
    """A tagged variant extending a union (upstream's ``state_update``) becomes one variant per
    member in the IR: its variant indexes are no place in the file, so the union's list is."""
    tagged = {
        "type": "object",
        "properties": {"kind": {"const": "state"}},
        "required": ["kind"],
        "allOf": [{"$ref": "#/$defs/State"}],
    }
    states = {"State": {"anyOf": [{"$ref": "#/$defs/B"}, {"$ref": "#/$defs/C"}]}, "B": B, "C": C}
    old_defs = {"Subject": {"anyOf": [{"$ref": "#/$defs/A"}]}, "A": A, **states}
    new_defs = {"Subject": {"anyOf": [{"$ref": "#/$defs/A"}, tagged]}, "A": A, **states}
    old, new = _side(old_defs, "response", None), _side(new_defs, "response", None)
    assert len(new.types["Subject"].variants) == 3  # A, and the tagged variant once per state
    changes = compare((old,), (new,), {}, {}, {1: {**MESSAGES, **old_defs}}, {1: {**MESSAGES, **new_defs}})
    variants = {c.location for c in changes if c.rule == "variant-added"}
    assert variants == {"v1/schema.json#/$defs/Subject/anyOf"}
