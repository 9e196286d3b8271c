"""The conversion plan: for each shared type and direction, a converter class whose
annotations check a source-version value on its way to the target version."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ...code_text import Code, identifier, py_literal
from ...errors import Problem, SchemaError
from ...protocol.class_names import NO_CLASS_NAMES, ClassNames
from ...protocol.features import select
from ...protocol.ir import Protocol, TypeDef, TypeExpr, build, python_field_name
from ...protocol.load import Source, VersionSources
from .compare import Comparison, FieldPair, archive_scope, check_methods, compare, field_names, stale
from .declarations import VALUE_RULES, VERSIONS, load_declarations
from .plan_types import ConversionPlan, Converter, ConvField, Fill, Invariant


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
    e: TypeExpr, proto: Protocol, source: int, target: int, leaf: str | None, shared: frozenset[str]
) -> Code:
    """The Python annotation that checks a source-version value of this expression.
    Refs to shared object and union types become the converter of that type (a type of
    one version only can only appear in a dropped field: it is checked as a JSON object);
    ``leaf`` (a value rule's annotation) replaces every string leaf."""
    if leaf is not None and _is_string(e, proto):
        text = leaf
    elif e.kind == "ref" and e.ref in proto.types:
        td = proto.types[e.ref]
        if td.kind in ("object", "union") and td.name not in shared:
            text = "dict[str, Any]" if td.kind == "object" else "Any"
        elif td.kind in ("object", "union"):
            text = class_name(source, target, td.name)
        elif td.kind == "enum":
            text = " | ".join(
                [f"Literal[{', '.join(py_literal(v.value) for v in td.values)}]"] + (["str"] if td.open else [])
            )
        else:
            assert td.target is not None
            text = annotation(td.target, proto, source, target, leaf, shared)
    elif e.kind == "string":
        text = "_Rfc3339" if e.format == "date-time" else "str"
    elif e.kind in ("integer", "number", "boolean", "null"):
        text = {"integer": "int", "number": "float", "boolean": "bool", "null": "None"}[e.kind]
    elif e.kind == "const":
        text = f"Literal[{py_literal(e.const)}]"
    elif e.kind == "array":
        inner = annotation(e.items, proto, source, target, leaf, shared) if e.items else "Any"
        text = f"list[{inner}]"
    elif e.kind == "object":
        inner = (
            annotation(e.additional, proto, source, target, leaf, shared) if e.additional and not e.fields else "Any"
        )
        text = f"dict[str, {inner}]"
    elif e.kind == "union":
        text = " | ".join(annotation(v, proto, source, target, leaf, shared) for v in e.variants)
    else:
        text = "Any"
    if e.nullable and text not in ("Any", "None"):
        text = f"{text} | None"
    return Code(text)


def _attr(wire: str, taken: set[str]) -> str:
    base = "f_" + "".join(c if c.isascii() and c.isalnum() else "_" for c in python_field_name(wire))
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return identifier(name)


@dataclass(frozen=True)
class _Direction:
    """One direction of conversion (``source`` -> ``target``) over a comparison."""

    cmp: Comparison
    source: int
    target: int
    shared: frozenset[str]  # the source version's names of the types both versions have

    @property
    def proto(self) -> Protocol:
        return self.cmp.v1 if self.source == 1 else self.cmp.v2

    @property
    def target_proto(self) -> Protocol:
        return self.cmp.v1 if self.target == 1 else self.cmp.v2


def _converters(
    cmp: Comparison, pairs: list[tuple[TypeDef, TypeDef]], field_pairs: dict[str, list[FieldPair]]
) -> list[Converter]:
    """Both directions' converters, each direction's in the order a module defines them."""
    out: list[Converter] = []
    for source, target in ((1, 2), (2, 1)):
        shared = frozenset(p[0 if source == 1 else 1].name for p in pairs)
        out += _direction_converters(_Direction(cmp, source, target, shared), pairs, field_pairs)
    return out


def _direction_converters(
    way: _Direction, pairs: list[tuple[TypeDef, TypeDef]], field_pairs: dict[str, list[FieldPair]]
) -> list[Converter]:
    """One direction's converters: built base first (a converter extends its bases'), then
    placed objects first, unions after the types they name."""
    built: dict[str, Converter] = {}
    for td1, td2 in sorted(pairs, key=lambda p: _depth(p[0], way.cmp.v1)):
        src, dst = (td1, td2) if way.source == 1 else (td2, td1)
        common: dict[str, Any] = dict(
            source=way.source,
            target=way.target,
            source_type=src.name,
            target_type=dst.name,
            cls=class_name(way.source, way.target, src.name),
            function=function_name(way.source, way.target, src.name),
        )
        if src.kind == "union":
            union = " | ".join(annotation(v, way.proto, way.source, way.target, None, way.shared) for v in src.variants)
            built[src.name] = Converter(kind="union", union=Code(union), **common)
        elif src.kind == "object":
            built[src.name] = _object_converter(way, src, dst, field_pairs[td1.name], td1.name, built, common)
    # Objects first (their annotations resolve late); unions after the types they name.
    order = {c.source_type: (c.kind != "object", _union_depth(c.source_type, way.proto)) for c in built.values()}
    placed: dict[str, Converter] = {}
    for converter in sorted(built.values(), key=lambda c: (order[c.source_type], c.source_type)):
        _place(converter, built, way.proto, placed)
    return list(placed.values())


def _object_converter(
    way: _Direction,
    src: TypeDef,
    dst: TypeDef,
    pairs: list[FieldPair],
    v1_name: str,
    built: Mapping[str, Converter],
    common: dict[str, Any],
) -> Converter:
    """An object's converter: its own fields after its bases', the fills and invariants it
    keeps, and the target names a dump must not collide with."""
    base_convs = [built[b] for b in src.bases if b in built]
    own, fills = _own_fields(way, dst, pairs, base_convs)
    all_fields = tuple(f for b in base_convs for f in b.all_fields) + tuple(own)
    by_wire = {f.source: f for f in all_fields}
    written = {f.target for f in all_fields if f.target is not None}
    target_fields = field_names(dst, way.target_proto)
    collisions = {f.target for f in all_fields if f.target is not None and f.target != f.source}
    collisions |= {fl.key for fl in fills}
    collisions |= {n for n in target_fields if n not in written and n not in by_wire}
    return Converter(
        kind="object",
        bases=tuple(built[b].cls for b in src.bases if b in built),
        fields=tuple(own),
        all_fields=all_fields,
        fills=tuple(fills),
        invariants=tuple(_invariants(way, v1_name, by_wire, base_convs)),
        collisions=tuple(sorted(collisions)),
        extra_allowed=src.extra_allowed,
        **common,
    )


def _own_fields(
    way: _Direction, dst: TypeDef, pairs: list[FieldPair], base_convs: list[Converter]
) -> tuple[list[ConvField], list[Fill]]:
    """The fields an object's converter adds to its bases', and the target-only fields it
    fills (with the bases' fills)."""
    taken = {f.attr for b in base_convs for f in b.all_fields}
    own = []
    fills = [fl for b in base_convs for fl in b.fills]
    for pair in pairs:
        fs, ft = (pair.v1, pair.v2) if way.source == 1 else (pair.v2, pair.v1)
        d = pair.decl
        if fs is None:  # exists in the target only
            fill = d.fill if d is not None else None
            # (a fill whose condition field was pruned has nothing to fill)
            if fill is not None and ft is not None and dst.field(fill.when) is not None:
                fills.append(Fill(ft.name, fill.when, py_literal(fill.value)))
            continue
        rule = VALUE_RULES.get(d.value or "same", {}).get((way.source, way.target)) if d else None
        own.append(
            ConvField(
                attr=_attr(fs.name, taken),
                source=fs.name,
                target=ft.name if ft is not None else None,
                annotation=annotation(fs.type, way.proto, way.source, way.target, rule, way.shared),
                required=fs.required,
                target_requires=ft is not None and ft.required and (not fs.required or fs.type.nullable),
                null_to_absent=ft is not None and fs.type.nullable and not ft.type.nullable,
            )
        )
    return own, fills


def _invariants(
    way: _Direction, v1_name: str, by_wire: Mapping[str, ConvField], base_convs: list[Converter]
) -> list[Invariant]:
    """The bases' invariants, and those declared for this type in the source version whose
    fields the converter has."""
    out = [i for b in base_convs for i in b.invariants]
    for inv in way.cmp.decl.invariants:
        if inv.version == way.source and inv.type == v1_name and inv.if_field in by_wire and inv.then_field in by_wire:
            then = by_wire[inv.then_field]
            out.append(Invariant(by_wire[inv.if_field].attr, then.attr, inv.then_field, inv.why or "invariant"))
    return out


def _place(converter: Converter, built: dict[str, Converter], proto: Protocol, placed: dict[str, Converter]) -> None:
    """Append a converter after those of its bases (a class statement needs its bases
    defined; names alone do not order them once a user has chosen class names)."""
    if converter.source_type in placed:
        return
    for base in proto.types[converter.source_type].bases:
        if base in built:
            _place(built[base], built, proto, placed)
    placed[converter.source_type] = converter


def _union_depth(name: str, proto: Protocol, seen: frozenset[str] = frozenset()) -> int:
    td = proto.types[name]
    if td.kind != "union" or name in seen:
        return 0
    refs = [v.ref for v in td.variants if v.kind == "ref" and v.ref in proto.types]
    return 1 + max((_union_depth(r, proto, seen | {name}) for r in refs), default=0)


def _depth(td: TypeDef, proto: Protocol) -> int:
    return 0 if not td.bases else 1 + max(_depth(proto.types[b], proto) for b in td.bases if b in proto.types)


SWITCH_OFF = (
    "over an upstream base, conversions cover the archive surface; declare the differences reported here,"
    " or switch conversions off: --no-conversions on the command line, conversions = false in [tool.acp-codegen]"
)


def plan(
    protocols: Iterable[Protocol],
    sources: Iterable[VersionSources],
    source: Source | None,
    fragments: Mapping[int, set[str]] | None = None,
    class_names: Mapping[int, ClassNames] | None = None,
) -> ConversionPlan | None:
    """Check the declared differences (``source``, the conversions file as read) against
    both versions; None without a conversions file.

    ``fragments`` (over a full upstream base): per version, the types the fragments define
    with or around a feature's items; conversions are limited to what they reach.
    ``class_names``: per version, the names chosen for classes (the protocols already carry them)."""
    if source is None:
        return None
    names = dict(class_names or {})
    decl = load_declarations(source).under({v: n.chosen for v, n in names.items()})
    by_version = {p.version: p for p in protocols}
    sources_by_version = {int(s.meta.data["version"]): s for s in sources}
    if set(by_version) != set(VERSIONS):
        raise SchemaError(
            Problem(source.name, "/versions", f"declares versions 1 and 2, but the schema has {sorted(by_version)}")
        )
    # With every declared feature on, nothing is pruned: a declaration that covers nothing
    # there is stale; one that covers something there but not here was pruned (skipped).
    full = {}
    for v, s in sorted(sources_by_version.items()):
        every = frozenset(s.meta.data.get("features", {}))
        full[v] = (
            by_version[v]
            if set(by_version[v].features) == every
            else build(select(s, every), names.get(v, NO_CLASS_NAMES))
        )
    if fragments is not None:
        full = archive_scope(full, fragments, decl)
        by_version = archive_scope(by_version, fragments, decl)
    over_base = fragments is not None
    full_cmp, _, _ = compare(decl, full[1], full[2], over_base)
    cmp, pairs, field_pairs = compare(decl, by_version[1], by_version[2], over_base)
    methods = check_methods(cmp)
    # Over a base, a declaration may cover nothing inside the archive surface (the base
    # already agrees there); the fragments' own generation checks that each one is needed.
    unused = stale(decl, full_cmp) if fragments is None else []
    problems = sorted(set(full_cmp.problems + cmp.problems + unused))
    if problems:
        if fragments is not None:
            problems.append(Problem(source.name, "", SWITCH_OFF))
        raise SchemaError(problems)
    return ConversionPlan(source, tuple(_converters(cmp, pairs, field_pairs)), tuple(methods))
