"""The IR: explicit fields for what an expression means, union variants with their
feature and place, one shape function, and model fields read from the IR alone."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from acp_codegen.generate.pipeline import load_protocols
from acp_codegen.protocol.ir import TypeExpr, _fields, _typedef, expr, model_fields, shape
from acp_codegen.schema_terms import DEFS
from support import ROOT


def test_object_base_and_additional_values_have_their_own_fields() -> None:
    e = expr(
        {
            "type": "object",
            "allOf": [{"$ref": "#/$defs/Base"}],
            "properties": {"tag": {"const": "a"}},
            "additionalProperties": {"type": "integer"},
        }
    )
    assert (e.kind, e.base, e.ref, e.items) == ("object", "Base", None, None)
    assert e.additional == TypeExpr("integer")
    assert e.describe() == "Base & {tag}"
    assert sorted(e.refs()) == ["Base"]


def test_array_items_are_items() -> None:
    e = expr({"type": "array", "items": {"$ref": "#/$defs/X"}})
    assert e.items == TypeExpr("ref", ref="X") and e.additional is None


def test_shape_ignores_prose_place_and_order_but_not_the_wire() -> None:
    a = expr({"anyOf": [{"type": "string"}, {"$ref": "#/$defs/A"}, {"type": "null"}]})
    b = expr({"type": ["null", "string"]})
    assert shape(a) != shape(b)
    reordered = replace(a, variants=tuple(reversed(a.variants)))
    assert shape(reordered) == shape(a)
    marked = replace(a, variants=tuple(replace(v, feature="f", pointer="/x") for v in a.variants))
    assert marked == a and shape(marked) == shape(a)
    assert shape(a, {"A": "B"}) == shape(replace(a, variants=(a.variants[0], TypeExpr("ref", ref="B"))))
    assert shape(a, nullable=False) == shape(replace(a, nullable=False), nullable=False)
    assert shape(a) != shape(replace(a, nullable=False))


@pytest.fixture(scope="module")
def protocols():
    return load_protocols(ROOT / "schema", frozenset({"unstable_session_archive"}), ROOT)[0]


def test_union_variants_carry_their_feature_and_place(protocols) -> None:
    found = [
        (t.name, v.feature, v.pointer)
        for p in protocols
        for t in p.types.values()
        if t.kind == "union"
        for v in t.variants
    ]
    assert found, "the schemas have unions"
    for name, _, ptr in found:
        assert ptr.startswith(f"/{DEFS}/{name}/anyOf/") or ptr.startswith(f"/{DEFS}/{name}/oneOf/")


def test_a_marked_variant_keeps_its_feature() -> None:
    union = _typedef(
        "Update",
        {"oneOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B", "x-feature": "beta"}]},
        "schema.json",
    )
    assert [(v.ref, v.feature, v.pointer) for v in union.variants] == [
        ("A", None, "/$defs/Update/oneOf/0"),
        ("B", "beta", "/$defs/Update/oneOf/1"),
    ]


def test_model_fields_from_the_ir_match_the_flattened_models_schema(protocols) -> None:
    _same_model_fields(protocols)


@pytest.mark.parametrize("schema", ["schema.json", "schema.unstable.json"])
def test_model_fields_match_over_upstream(upstream: Path, schema: str) -> None:
    bases = {1: upstream / "v1" / schema, 2: upstream / "v2" / schema}
    protocols, _ = load_protocols(ROOT / "schema", frozenset({"unstable_session_archive"}), ROOT, bases)
    _same_model_fields(protocols)


def _same_model_fields(protocols) -> None:
    """What the models are generated from (tagged variants flattened in the JSON) and what
    the IR says their fields are agree, for every type."""
    checked = 0
    for p in protocols:
        for name in p.types:
            want = tuple(_fields(p.schema[DEFS][name], (DEFS, name)))
            got = model_fields(p, name)
            key = [(f.name, f.required, f.lenient, f.skip_invalid_items, f.default, shape(f.type)) for f in got]
            assert key == [
                (f.name, f.required, f.lenient, f.skip_invalid_items, f.default, shape(f.type)) for f in want
            ]
            checked += name in p.derived_names
    assert checked, "some derived variant was compared"


def _model_key(f):
    return (f.name, f.required, f.lenient, f.skip_invalid_items, f.default, shape(f.type))
