"""What a converter's field is in Python: the annotation that checks a source value (value
rules applied), the names of converter classes and functions, and the lookups in a
version's types that converters need (a type's fields over its bases, a field behind a
dotted path, a union's tag)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from typing import Any

from ...code_text import Code, identifier, py_literal
from ...protocol.ir import Field, Protocol, TypeDef, TypeExpr, python_field_name
from .declarations import LEAF_RULES, WHOLE_VALUE_RULES, WRAPPING_RULES


def class_name(source: int, target: int, type_name: str) -> str:
    return f"_V{source}ToV{target}{identifier(type_name)}"


def function_name(source: int, target: int, type_name: str) -> str:
    return identifier(f"{python_field_name(type_name)}_v{source}_to_v{target}")


def _is_string(e: TypeExpr, proto: Protocol) -> bool:
    seen = set()
    while e.kind == "ref" and e.ref in proto.types and e.ref not in seen:
        seen.add(e.ref)
        td = proto.types[e.ref]
        if td.kind != "alias" or td.target is None:
            return False
        e = td.target
    return e.kind == "string"


def annotation(
    e: TypeExpr,
    proto: Protocol,
    source: int,
    target: int,
    leaf: str | None,
    shared: frozenset[str],
    narrow: Mapping[str, tuple[Any, ...]] | None = None,
) -> Code:
    """The Python annotation that checks a source-version value of this expression.
    Refs to shared object and union types become the converter of that type (a type of
    one version only can only appear in a dropped field: it is checked as a JSON object);
    ``leaf`` (a value rule's annotation) replaces every string leaf."""
    if leaf is not None and _is_string(e, proto):
        text = leaf
    elif e.kind == "ref" and e.ref in proto.types:
        td = proto.types[e.ref]
        converting = [v for v in td.variants if v.kind == "ref" and v.ref in shared] if td.kind == "union" else []
        if td.kind == "union" and td.name not in shared and converting:
            # A union of one version only (2026-11's open AvailableCommand): its variants that convert.
            text = " | ".join(annotation(v, proto, source, target, leaf, shared, narrow) for v in converting)
        elif td.kind in ("object", "union") and td.name not in shared:
            text = "dict[str, Any]" if td.kind == "object" else "Any"
        elif td.kind in ("object", "union"):
            text = class_name(source, target, td.name)
        elif td.kind == "enum" and narrow is not None and td.name in narrow:
            # The target's enum is closed: only the values it has convert.
            text = f"Literal[{', '.join(py_literal(v) for v in narrow[td.name])}]" if narrow[td.name] else "None"
        elif td.kind == "enum":
            text = " | ".join(
                [f"Literal[{', '.join(py_literal(v.value) for v in td.values)}]"] + (["str"] if td.open else [])
            )
        else:
            assert td.target is not None
            text = annotation(td.target, proto, source, target, leaf, shared, narrow)
    elif e.kind == "string":
        text = "_Rfc3339" if e.format == "date-time" else "str"
    elif e.kind in ("integer", "number", "boolean", "null"):
        text = {"integer": "int", "number": "float", "boolean": "bool", "null": "None"}[e.kind]
    elif e.kind == "const":
        text = f"Literal[{py_literal(e.const)}]"
    elif e.kind == "array":
        inner = annotation(e.items, proto, source, target, leaf, shared, narrow) if e.items else "Any"
        text = f"list[{inner}]"
    elif e.kind == "object":
        inner = (
            annotation(e.additional, proto, source, target, leaf, shared, narrow)
            if e.additional and not e.fields
            else "Any"
        )
        text = f"dict[str, {inner}]"
    elif e.kind == "union":
        text = " | ".join(annotation(v, proto, source, target, leaf, shared, narrow) for v in e.variants)
    else:
        text = "Any"
    if e.nullable and text not in ("Any", "None"):
        text = f"{text} | None"
    return Code(text)


def field_annotation(
    annotate: Callable[[TypeExpr, str | None], Code],
    fs: Field,
    ft: Field | None,
    rule_name: str | None,
    rule: str | None,
    lenient: bool,
) -> Code:
    """The annotation of a source field's value: the value rule applied (a rule of string
    leaves to each), or refusals omitted where the target reads them as its default
    (``lenient``). ``annotate``: a type's annotation in the direction converted, a string
    leaf's replaced where given."""

    def checked(e: TypeExpr) -> Code:
        if rule_name == "tag" and ft is not None and ft.type.kind == "const" and e.kind == "const":
            return Code(f"Annotated[Literal[{py_literal(e.const)}], _to({py_literal(ft.type.const)}), _AS_IS]")
        if rule is not None and rule_name in WHOLE_VALUE_RULES:
            return Code(f"{rule} | None" if e.nullable else rule)
        if rule is not None and rule_name in WRAPPING_RULES:
            return Code(f"Annotated[{annotate(e, None)}, {rule}]")
        return annotate(e, rule)

    items = fs.type.items
    if lenient and ft is not None and ft.skip_invalid_items and skips_items(fs, rule_name) and items is not None:
        text = f"list[{_or_default(annotate, items, annotate(items, rule))}]"
        return Code(f"{text} | None" if fs.type.nullable else text)
    if lenient:
        return _or_default(annotate, fs.type, checked(replace(fs.type, nullable=False)))
    return checked(fs.type)


def skips_items(fs: Field, rule_name: str | None) -> bool:
    """A list whose items a rule of string leaves checks: where the target skips invalid
    items, those the rule refuses are left out, not the list."""
    return fs.type.kind == "array" and fs.type.items is not None and rule_name in LEAF_RULES


def _or_default(annotate: Callable[[TypeExpr, str | None], Code], e: TypeExpr, checked: Code) -> Code:
    """A value of ``e`` the rule checks (``checked``, of ``e`` without null) or, where it
    refuses it, the value as the source types it, omitted: the target reads it as its
    default. A null stays null."""
    plain = annotate(replace(e, nullable=False), None)
    null = " | None" if e.nullable else ""
    return Code(f"Annotated[{checked} | Annotated[{plain}, _DEFAULT_OMITTED]{null}, _FIRST_VALID]")


def attr_name(wire: str, taken: set[str]) -> str:
    base = "f_" + "".join(c if c.isascii() and c.isalnum() else "_" for c in python_field_name(wire))
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return identifier(name)


def value_shape(e: TypeExpr, proto: Protocol) -> Any:
    """A union variant's kind of value, through aliases (``integer``, ``array``, ``null``...)."""
    while e.kind == "ref" and e.ref in proto.types and proto.types[e.ref].kind == "alias":
        target = proto.types[e.ref].target
        if target is None:
            break
        e = target
    return (e.kind, e.const) if e.kind != "ref" else ("ref", e.ref)


def tag_value(e: TypeExpr, tag: str, proto: Protocol) -> str | None:
    if e.kind != "ref" or e.ref not in proto.types:
        return None
    found = next((f for f in flat_fields(proto.types[e.ref], proto) if f.name == tag), None)
    return found.type.const if found is not None and found.type.kind == "const" else None


def common_tag(td: TypeDef, proto: Protocol) -> str | None:
    """The field every tagged variant of a union names itself by (a constant, or, in an open
    union's catch-all variant, any value but the others'), if any."""
    counts: dict[str, int] = {}
    tagged = 0
    for v in td.variants:
        if v.kind == "ref" and v.ref in proto.types:
            fields = flat_fields(proto.types[v.ref], proto)
            consts = [f.name for f in fields if f.type.kind == "const" or f.not_one_of]
            tagged += bool(consts)
            for name in consts:
                counts[name] = counts.get(name, 0) + 1
    return next((n for n, c in sorted(counts.items()) if c == tagged and tagged > 1), None)


def flat_fields(td: TypeDef, proto: Protocol) -> tuple[Field, ...]:
    return tuple(f for b in td.bases if b in proto.types for f in flat_fields(proto.types[b], proto)) + td.fields


def dotted(name: str) -> tuple[str, ...]:
    return tuple(name.split("."))


def nested_field(proto: Protocol, td: TypeDef, path: tuple[str, ...]) -> Field | None:
    """The field a dotted path names, through objects (and the variants of unions)."""
    found = next((f for f in flat_fields(td, proto) if f.name == path[0]), None)
    if found is None or len(path) == 1:
        return found
    for name in found.type.refs():
        inner = proto.types.get(name)
        if inner is None:
            continue
        candidates = (
            [inner]
            if inner.kind == "object"
            else [proto.types[r] for v in inner.variants for r in v.refs() if r in proto.types]
        )
        for c in candidates:
            hit = nested_field(proto, c, path[1:])
            if hit is not None:
                return hit
    return None


def schema_node(documents: Mapping[str, Any], files: Iterable[str], at: str) -> Any:
    """The node a JSON pointer names in the first of ``files`` (names of ``documents``) that has it."""
    for name in files:
        node = documents.get(name)
        for token in at.split("/")[1:]:
            key = token.replace("~1", "/").replace("~0", "~")
            node = node.get(key) if isinstance(node, dict) else None
        if node is not None:
            return node
    return None


def states(node: Any, defs: Mapping[str, Any], stated: Callable[[Mapping[str, Any]], bool], leaf: bool) -> bool:
    """Whether a schema node states a rule (``stated`` tells by one node's keywords): itself,
    what it refers to (in ``defs``) or extends, every branch but null of a union, and, for a
    rule of string leaves, the items and values it holds."""
    seen: set[int] = set()

    def walk(node: Any) -> bool:
        if not isinstance(node, dict) or id(node) in seen:
            return False
        seen.add(id(node))
        if stated(node):
            return True
        more: list[Any] = list(node.get("allOf", ()))
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            more.append(defs.get(ref.rsplit("/", 1)[-1]))
        if leaf:
            more += [node.get("items"), node.get("additionalProperties")]
        if any(walk(n) for n in more):
            return True
        branches = [b for b in (*node.get("anyOf", ()), *node.get("oneOf", ())) if b != {"type": "null"}]
        return bool(branches) and all(walk(b) for b in branches)

    return walk(node)
