"""The JSON Schema document the models are generated from (built with the IR).

The IR keeps a hoisted variant as "base + its own properties", so a change to the base is
one change, at the base. The models need every property of a variant on its own class, so
that variants which differ only by what they extend are told apart (upstream's
elicitation scopes: ``sessionId`` or ``requestId`` reached through two ``allOf`` levels).
And a ``discriminator`` is kept only where every variant carries a constant tag: for any
other union, datamodel-code-generator invents one from the class name
(``type: Literal["TitledMultiSelectItems"]``) and refuses the messages the schema accepts.
``for_datamodel_codegen`` then writes that document the way datamodel-code-generator reads
best, meaning the same.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..schema_terms import DEFS, copy_json, ref_target, schema_nodes, variants_key


def flatten_variant(
    variant: dict[str, Any], defs: dict[str, Any], seen: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """A variant that extends base objects (``allOf: [{$ref}]``, through chains of them)
    becomes one object whose own properties (its tag) come first, as tagged unions are
    written on the wire; the bases' properties follow in their order. A property both
    define is the base's, required if either requires it. A part that is no object with
    properties (or a reference cycle) stays in ``allOf``."""
    body = {k: v for k, v in variant.items() if k != "title"}
    parts = body.get("allOf")
    if not isinstance(parts, list):
        return body
    kept: list[Any] = []
    properties = dict(body.get("properties") or {})
    required = list(body.get("required", []))
    for part in parts:
        target = ref_target(part.get("$ref")) if isinstance(part, dict) else None
        base = defs.get(target) if target and target not in seen else None
        if (
            target is None
            or not isinstance(base, dict)
            or not isinstance(base.get("properties"), dict)
            or variants_key(base)
        ):
            kept.append(part)
            continue
        flat = flatten_variant(base, defs, seen | {target})
        properties |= flat["properties"]
        required += [r for r in flat.get("required", []) if r not in required]
        if "additionalProperties" in flat:
            body.setdefault("additionalProperties", flat["additionalProperties"])
        kept += flat.get("allOf", [])
    if len(kept) == len(parts):
        return body
    body["type"] = "object"
    body["properties"] = properties
    body["required"] = required
    if kept:
        body["allOf"] = kept
    else:
        del body["allOf"]
    return body


def _tag(variant: Any, prop: str, defs: dict[str, Any]) -> Any:
    """The constant a union variant carries in a required property, or None."""
    if isinstance(variant, dict) and "$ref" in variant:
        variant = defs.get(ref_target(variant["$ref"]) or "")
    if not isinstance(variant, dict) or prop not in variant.get("required", []):
        return None
    value = (variant.get("properties") or {}).get(prop)
    return value.get("const") if isinstance(value, dict) else None


def usable_discriminator(union: dict[str, Any], defs: dict[str, Any]) -> bool:
    """Whether every variant of ``union`` (after flattening) carries its own constant tag
    in the ``discriminator`` property."""
    prop = (union.get("discriminator") or {}).get("propertyName")
    key = variants_key(union)
    if not isinstance(prop, str) or key is None:
        return False
    tags = [_tag(v, prop, defs) for v in union[key]]
    return None not in tags and len({repr(t) for t in tags}) == len(tags)


def models_schema(defs: dict[str, Any], derived: set[str]) -> dict[str, Any]:
    """The document handed to datamodel-code-generator: derived variants flattened, and
    no discriminator that would need an invented tag."""
    flat = {name: flatten_variant(d, defs) if name in derived else d for name, d in defs.items()}
    for name, schema in flat.items():
        if "discriminator" in schema and not usable_discriminator(schema, flat):
            flat[name] = {k: v for k, v in schema.items() if k != "discriminator"}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", DEFS: flat}


# Keywords that only annotate a schema: beside them, ``allOf: [{"$ref": X}]`` means X.
_ANNOTATIONS = frozenset({"description", "title", "default", "examples", "deprecated", "readOnly", "writeOnly"})
# What constrains a map, moved with it into its own branch (for_datamodel_codegen).
_MAP_KEYWORDS = ("additionalProperties", "propertyNames", "minProperties", "maxProperties")


def string_format(node: dict[str, Any]) -> str | None:
    """The format of a string schema (one that may also be null), if it has one."""
    types = node.get("type")
    kinds = set(types) - {"null"} if isinstance(types, list) else {types}
    form = node.get("format")
    return form if kinds == {"string"} and isinstance(form, str) and not {"enum", "const"} & set(node) else None


def for_datamodel_codegen(schema: dict[str, Any], string_types: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A copy of ``schema`` that datamodel-code-generator reads better, meaning the same:

    * a lone ``allOf: [{"$ref": X}]`` (upstream's way to give a reference a description)
      inside a definition is ``"$ref": X``: the same models, for a good part less of its
      time. (A definition that is one is left alone: it becomes a subclass, a plain
      ``$ref`` an alias.)
    * a map that may be null (``type: ["object", "null"]`` with an ``additionalProperties``
      schema) is ``anyOf: [<the map>, {"type": "null"}]``: from the first it types the
      values ``Any`` (upstream's ``ElicitationAcceptAction.content`` took any value), from
      the second it types them.

    (A discriminator that would need an invented tag is gone already: see models_schema.)

    And a string of a format that ``string_types`` maps (format -> ``module.Name``, from
    ``string-formats``) gets that type as ``customTypePath``, which datamodel-code-generator
    types it by, in arrays, unions and nullable fields alike.
    """
    copied: dict[str, Any] = copy_json(schema)
    for path, node in schema_nodes(copied):
        typed = string_types.get(string_format(node) or "") if string_types else None
        if typed:
            node["customTypePath"] = typed
        parts = node.get("allOf")
        if (
            len(path) > 2
            and isinstance(parts, list)
            and len(parts) == 1
            and isinstance(parts[0], dict)
            and set(parts[0]) == {"$ref"}
            and all(k in _ANNOTATIONS or k.startswith("x-") for k in node if k != "allOf")
        ):
            node["$ref"] = node.pop("allOf")[0]["$ref"]
        types = node.get("type")
        if (
            isinstance(types, list)
            and sorted(types) == ["null", "object"]
            and isinstance(node.get("additionalProperties"), dict)
            and not {"properties", "patternProperties", "anyOf", "oneOf", "allOf"} & set(node)
        ):
            del node["type"]
            the_map = {"type": "object"} | {k: node.pop(k) for k in _MAP_KEYWORDS if k in node}
            node["anyOf"] = [the_map, {"type": "null"}]
    return copied
