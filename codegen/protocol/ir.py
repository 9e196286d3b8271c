"""The intermediate representation every renderer reads.

A protocol version is a set of named types and a set of methods. Types are one of
four kinds (object, enum, union, alias); every schema expression inside them is
normalised into a ``TypeExpr`` so that consumers (conversions, dispatch, the schema
diff) compare shapes rather than JSON Schema spellings: ``allOf: [{$ref}]``,
``anyOf: [X, {type: null}]`` and ``type: [X, "null"]`` all become "X, nullable".
Templates never read raw JSON; they read these dataclasses.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from typing import Any, Literal

from ..errors import pointer
from ..schema_terms import (
    DEFS,
    FEATURE_KEY,
    LENIENT,
    NULL_AS_DEFAULT,
    SKIP_INVALID,
    UNION_KEYWORDS,
    message_role,
    ref_target,
    sides_of,
    variants_key,
)
from .class_names import NO_CLASS_NAMES, ClassNames, rename
from .features import Selection
from .hoist import Derived, hoist
from .models_schema import models_schema
from .names import model_field_name

Kind = Literal["ref", "string", "integer", "number", "boolean", "null", "object", "array", "any", "const", "union"]
PRIMITIVES = ("string", "integer", "number", "boolean", "null", "object", "array")


@dataclass(frozen=True)
class TypeExpr:
    """A normalised schema expression."""

    kind: Kind
    ref: str | None = None  # kind "ref": the type referred to
    format: str | None = None
    const: Any = None  # kind "const"
    items: TypeExpr | None = None  # kind "array": the type of the items
    variants: tuple[TypeExpr, ...] = ()  # kind "union"
    fields: tuple[Field, ...] = ()  # kind "object", inline properties
    nullable: bool = False
    base: str | None = None  # kind "object": the type an inline object extends (``allOf``)
    additional: TypeExpr | None = None  # kind "object": the type of additional property values
    # A union variant of a definition: its own x-feature and where it is written. Not part
    # of the shape, so two spellings of one type still compare equal.
    feature: str | None = dataclass_field(default=None, compare=False)
    pointer: str = dataclass_field(default="", compare=False)

    def refs(self) -> Iterator[str]:
        """Every type this expression names, at any depth."""
        for name in (self.ref, self.base):
            if name:
                yield name
        for inner in (self.items, self.additional, *self.variants, *(f.type for f in self.fields)):
            if inner is not None:
                yield from inner.refs()

    def describe(self) -> str:
        """Human-readable spelling, used in messages and the schema diff."""
        if self.kind == "ref":
            text = str(self.ref)
        elif self.kind == "const":
            text = _json_literal(self.const)
        elif self.kind == "array":
            text = f"array[{self.items.describe() if self.items else 'any'}]"
        elif self.kind == "union":
            text = " | ".join(v.describe() for v in self.variants)
        elif self.kind == "object" and self.base:
            text = f"{self.base} & {{{', '.join(f.name for f in self.fields)}}}"
        else:
            text = self.kind + (f"<{self.format}>" if self.format else "")
        return text + (" | null" if self.nullable else "")


@dataclass(frozen=True)
class Field:
    name: str  # the wire name
    type: TypeExpr
    required: bool
    description: str = ""
    feature: str | None = None
    default: Any = None
    has_default: bool = False
    lenient: bool = False  # x-deserialize-default-on-error
    skip_invalid_items: bool = False  # x-deserialize-skip-invalid-items
    null_as_default: bool = False  # x-deserialize-default-on-null
    # The tag of a catch-all variant: the values the other variants carry (see _excluded_tags).
    not_one_of: tuple[Any, ...] = ()
    pointer: str = ""
    # The attribute an SDK chose ([tool.acp-codegen.field-names]; set by model_fields).
    attr: str | None = dataclass_field(default=None, compare=False)

    @property
    def py_name(self) -> str:
        """The model's attribute for this field (validation refuses names that would collide)."""
        return self.attr or model_field_name(self.name)


@dataclass(frozen=True)
class EnumValue:
    value: Any
    description: str = ""
    feature: str | None = None


@dataclass(frozen=True)
class TypeDef:
    name: str
    kind: Literal["object", "enum", "union", "alias"]
    file: str
    pointer: str
    description: str = ""
    feature: str | None = None
    fields: tuple[Field, ...] = ()  # object
    bases: tuple[str, ...] = ()  # object: types it extends (allOf references)
    extra_allowed: bool = True  # object: unknown properties are kept
    values: tuple[EnumValue, ...] = ()  # enum
    open: bool = False  # enum: any other string is accepted too
    variants: tuple[TypeExpr, ...] = ()  # union
    discriminator: str | None = None  # union
    target: TypeExpr | None = None  # alias
    method: str | None = None
    side: str | None = None

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)


@dataclass(frozen=True)
class Method:
    name: str  # wire name, e.g. "session/archive"
    key: str  # Python-friendly key from meta.json, e.g. "session_archive"
    side: str  # who handles it: "agent", "client" or "protocol"
    kind: Literal["request", "notification"]
    params: str  # type name of the params
    result: str | None  # type name of the result; None for notifications
    feature: str | None = None


@dataclass(frozen=True)
class Protocol:
    """One protocol version, as generated."""

    version: int
    types: dict[str, TypeDef]
    schema: dict[str, Any]  # the selected JSON Schema document handed to datamodel-code-generator
    methods: tuple[Method, ...]
    features: tuple[str, ...]  # enabled for this generation
    declared_features: dict[str, str] = dataclass_field(default_factory=dict)
    derived_names: dict[str, Derived] = dataclass_field(default_factory=dict)  # class names made by hoist
    chosen_names: dict[str, str] = dataclass_field(default_factory=dict)  # chosen class name -> generated name
    # Attributes an SDK chose: wire name, or "Class.wire", -> attribute (see model_fields).
    field_names: Mapping[str, str] = dataclass_field(default_factory=dict)
    # The version's type names with every feature, where a setting needs them (``enums``).
    every_type: frozenset[str] = frozenset()

    def method(self, name: str, side: str | None = None) -> Method | None:
        return next((m for m in self.methods if m.name == name and (side is None or m.side == side)), None)


_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def python_field_name(wire: str) -> str:
    """snake_case for a wire or type name, for names the generator coins itself (conversion
    functions); model field names follow datamodel-code-generator's rule (``names.py``)."""
    name = _CAMEL_BOUNDARY.sub("_", wire.lstrip("_")).lower()
    return name or wire


def _json_literal(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def expr(schema: Any) -> TypeExpr:
    """Normalise one schema expression."""
    if schema is True or schema == {}:
        return TypeExpr("any")
    if not isinstance(schema, dict):
        return TypeExpr("any")
    nullable = False
    if "$ref" in schema and not ({"properties", *UNION_KEYWORDS} & set(schema)):
        return TypeExpr("ref", ref=ref_target(schema["$ref"]))
    if "const" in schema:
        return TypeExpr("const", const=schema["const"])
    if "enum" in schema and isinstance(schema["enum"], list):
        values = [v for v in schema["enum"] if v is not None]
        out = _union([TypeExpr("const", const=v) for v in values])
        return replace(out, nullable=len(values) != len(schema["enum"]))
    for key in UNION_KEYWORDS:
        if key in schema and not schema.get("properties"):
            parts = [expr(v) for v in schema[key]]
            out = _union([p for p in parts if p.kind != "null"])
            return replace(out, nullable=out.nullable or any(p.kind == "null" for p in parts))
    all_of = schema.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and not schema.get("properties"):
        return expr(all_of[0])
    types = schema.get("type")
    type_list = types if isinstance(types, list) else [types] if isinstance(types, str) else []
    if "null" in type_list:
        nullable = True
        type_list = [t for t in type_list if t != "null"]
    if len(type_list) > 1:
        return TypeExpr("union", variants=tuple(_primitive(t, schema) for t in type_list), nullable=nullable)
    if type_list:
        return replace(_primitive(type_list[0], schema), nullable=nullable)
    if "properties" in schema:
        return replace(_primitive("object", schema), nullable=nullable)
    return TypeExpr("null") if nullable else TypeExpr("any")


def _union(parts: list[TypeExpr]) -> TypeExpr:
    if len(parts) == 1:
        return parts[0]
    return TypeExpr("union", variants=tuple(parts))


def _primitive(kind: str, schema: dict[str, Any]) -> TypeExpr:
    if kind == "array":
        return TypeExpr("array", items=expr(schema.get("items", {})))
    if kind == "object":
        base = None
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
            base = ref_target(all_of[0].get("$ref"))
        extra = schema.get("additionalProperties")
        return TypeExpr(
            "object",
            base=base,
            fields=tuple(_fields(schema, ())),
            additional=expr(extra) if isinstance(extra, dict) and extra else None,
        )
    if kind in PRIMITIVES:
        return TypeExpr(kind, format=schema.get("format"))  # type: ignore[arg-type]  # kind is in PRIMITIVES
    return TypeExpr("any")


def _excluded_tags(schema: dict[str, Any]) -> dict[str, list[Any]]:
    """Per tag property, the values a catch-all variant must not carry, where its schema
    says so as upstream does: ``not: {anyOf: [{"type": "object", "properties": {tag:
    {"const": value}}, "required": [tag]}, ...]}`` (datamodel-code-generator reads no
    ``not``). Any other ``not`` is left alone."""
    negated = schema.get("not")
    branches = negated.get("anyOf") if isinstance(negated, dict) and set(negated) == {"anyOf"} else None
    if not isinstance(branches, list) or not branches:
        return {}
    excluded: dict[str, list[Any]] = {}
    for branch in branches:
        properties = branch.get("properties") if isinstance(branch, dict) else None
        if not isinstance(properties, dict) or len(properties) != 1:
            return {}
        ((tag, value),) = properties.items()
        if (
            set(branch) - {"type", "properties", "required"}
            or branch.get("type", "object") != "object"
            or branch.get("required") != [tag]
            or not isinstance(value, dict)
            or "const" not in value
            or set(value) - {"type", "const"}
        ):
            return {}
        excluded.setdefault(tag, []).append(value["const"])
    return excluded


def _fields(schema: dict[str, Any], path: tuple[str | int, ...]) -> list[Field]:
    required = set(schema.get("required", []))
    excluded = _excluded_tags(schema)
    out = []
    for name, written in (schema.get("properties") or {}).items():
        prop = written if isinstance(written, dict) else {}
        out.append(
            Field(
                name=name,
                type=expr(prop),
                required=name in required,
                description=str(prop.get("description", "")),
                feature=prop.get(FEATURE_KEY),
                default=prop.get("default"),
                has_default="default" in prop,
                lenient=bool(prop.get(LENIENT)),
                skip_invalid_items=bool(prop.get(SKIP_INVALID)),
                null_as_default=bool(prop.get(NULL_AS_DEFAULT)),
                not_one_of=tuple(excluded.get(name, ())),
                pointer=pointer(*path, "properties", name),
            )
        )
    return out


def _typedef(name: str, schema: dict[str, Any], file: str) -> TypeDef:
    base: dict[str, Any] = dict(
        name=name,
        file=file,
        pointer=pointer(DEFS, name),
        description=str(schema.get("description", "")),
        feature=schema.get(FEATURE_KEY),
        method=schema.get("x-method"),
        side=schema.get("x-side"),
    )
    key = variants_key(schema)
    if key and not schema.get("properties"):
        raw = schema[key]
        consts = [v for v in raw if isinstance(v, dict) and "const" in v]
        catch_all = [
            v
            for v in raw
            if isinstance(v, dict)
            and "const" not in v
            and v.get("type") == "string"
            and len(set(v) - {"type", "title", "description"}) == 0
        ]
        if consts and len(consts) + len(catch_all) == len(raw) and len(catch_all) <= 1:
            values = tuple(EnumValue(v["const"], str(v.get("description", "")), v.get(FEATURE_KEY)) for v in consts)
            return TypeDef(kind="enum", values=values, open=bool(catch_all), **base)
        disc = (
            schema.get("discriminator", {}).get("propertyName")
            if isinstance(schema.get("discriminator"), dict)
            else None
        )
        variants = tuple(
            replace(
                expr(v),
                feature=v.get(FEATURE_KEY) if isinstance(v, dict) else None,
                pointer=pointer(DEFS, name, key, i),
            )
            for i, v in enumerate(raw)
        )
        return TypeDef(kind="union", variants=variants, discriminator=disc, **base)
    if "enum" in schema:
        values = tuple(EnumValue(v) for v in schema["enum"])
        return TypeDef(kind="enum", values=values, **base)
    if schema.get("type") == "object" or "properties" in schema:
        extra = schema.get("additionalProperties", True)
        bases = tuple(
            t for t in (ref_target(p.get("$ref")) for p in schema.get("allOf", []) if isinstance(p, dict)) if t
        )
        return TypeDef(
            kind="object",
            fields=tuple(_fields(schema, (DEFS, name))),
            bases=bases,
            extra_allowed=extra is not False,
            **base,
        )
    return TypeDef(kind="alias", target=expr(schema), **base)


def model_fields(protocol: Protocol, name: str) -> tuple[Field, ...]:
    """The fields of the model class generated for a type. A variant that hoisting named
    is flattened for the models (``models_schema.flatten_variant``): its own fields first,
    then its bases', through chains of them; a field both define is the base's, required
    if either requires it."""
    td = protocol.types.get(name)
    if td is None:
        return ()
    fields = _flattened(protocol, td, frozenset({name})) if name in protocol.derived_names else td.fields
    chosen = protocol.field_names
    if not chosen:
        return fields
    # The class's own entry first, then the one for every class (as datamodel-code-generator
    # reads its `aliases`, which render passes the same table).
    return tuple(replace(f, attr=chosen.get(f"{name}.{f.name}", chosen.get(f.name))) for f in fields)


def _flattened(protocol: Protocol, td: TypeDef, seen: frozenset[str]) -> tuple[Field, ...]:
    fields = list(td.fields)
    required = {f.name for f in fields if f.required}
    for name in td.bases:
        base = protocol.types.get(name)
        if base is None or base.kind != "object" or name in seen:
            continue
        inherited = {f.name: f for f in _flattened(protocol, base, seen | {name})}
        own = {f.name for f in fields}
        required |= {f.name for f in inherited.values() if f.required}
        fields = [inherited.get(f.name, f) for f in fields] + [f for f in inherited.values() if f.name not in own]
    return tuple(replace(f, required=f.name in required) for f in fields)


def shape(e: TypeExpr | TypeDef | None, rename: Mapping[str, str] | None = None, nullable: bool = True) -> Any:
    """What two spellings of one type have in common, as a hashable value: no prose, no
    location, union variants and inline fields in any order. ``rename`` maps the type
    names one side uses to the other's; ``nullable=False`` leaves the outermost
    nullability out (for callers that judge it on its own). A definition's shape is its
    wire contract: everything but its name, place and prose."""
    if e is None:
        return None
    names = rename or {}

    def mapped(name: str | None) -> str | None:
        return names.get(name, name) if name else None

    if isinstance(e, TypeDef):
        return (
            e.kind,
            tuple(
                (
                    f.name,
                    f.required,
                    f.has_default,
                    _json_literal(f.default),
                    f.lenient,
                    f.skip_invalid_items,
                    f.null_as_default,
                    tuple(_json_literal(v) for v in f.not_one_of),
                    f.feature,
                    shape(f.type, names),
                )
                for f in e.fields
            ),
            tuple(mapped(b) for b in e.bases),
            e.extra_allowed,
            tuple((_json_literal(v.value), v.feature) for v in e.values),
            e.open,
            shape(TypeExpr("union", variants=e.variants), names),
            e.discriminator,
            shape(e.target, names),
            (e.method, e.side, e.feature),
        )

    return (
        e.kind,
        mapped(e.ref),
        mapped(e.base),
        e.format,
        _json_literal(e.const) if e.kind == "const" else None,
        shape(e.items, names),
        shape(e.additional, names),
        tuple(sorted(repr(shape(v, names)) for v in e.variants)),
        tuple(sorted((f.name, f.required, repr(shape(f.type, names))) for f in e.fields)),
        e.nullable if nullable else None,
    )


def build(
    selection: Selection, class_names: ClassNames = NO_CLASS_NAMES, field_names: Mapping[str, str] | None = None
) -> Protocol:
    files = dict(selection.def_files)
    defs, derived = hoist(selection.defs, files)
    defs, derived, original = rename(defs, files, derived, class_names)
    types = {name: _typedef(name, schema, files[name]) for name, schema in defs.items()}
    methods = []
    for m in selection.methods:
        carriers = {  # by the schema's names: a chosen class name need not end in "Request"
            message_role(original.get(t.name, t.name)): t.name
            for t in types.values()
            if t.method == m.name and m.side in sides_of(t.side)
        }
        # A method that is a request and a notification at once (upstream's mcp/message)
        # is listed as the request; its notification type is still generated.
        if "notification" in carriers and "request" not in carriers:
            methods.append(Method(m.name, m.key, m.side, "notification", carriers["notification"], None, m.feature))
        else:
            methods.append(
                Method(m.name, m.key, m.side, "request", carriers["request"], carriers.get("response"), m.feature)
            )
    return Protocol(
        version=selection.version,
        types=types,
        # The models get hoisted variants flattened; the IR keeps them as "base + own fields".
        schema=models_schema(defs, set(derived)),
        methods=tuple(methods),
        features=selection.features,
        declared_features=selection.declared_features,
        derived_names=derived,
        chosen_names=original,
        field_names=dict(field_names or {}),
    )
