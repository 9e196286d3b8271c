"""The conversion plan: for each shared type and direction, a converter class whose
annotations check a source-version value on its way to the target version."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...code_text import Code, py_literal
from ...errors import Problem, SchemaError
from ...protocol.class_names import NO_CLASS_NAMES, ClassNames
from ...protocol.features import select
from ...protocol.ir import Field, Protocol, TypeDef, TypeExpr, build
from ...protocol.load import Source, VersionSources
from .annotations import (
    annotation,
    attr_name,
    class_name,
    common_tag,
    dotted,
    field_annotation,
    flat_fields,
    function_name,
    nested_field,
    schema_node,
    skips_items,
    states,
    tag_value,
    value_shape,
)
from .compare import Comparison, FieldPair, compare, field_names, stale
from .declarations import (
    LEAF_RULES,
    STATED_BY,
    TRANSFORMS,
    VALUE_RULES,
    VERSIONS,
    TransformDecl,
    load_declarations,
)
from .methods import check_methods, every_kind, method_scope, refused_methods
from .plan_types import ConversionPlan, Converter, ConvField, Fill, Invariant, Supplied


@dataclass(frozen=True)
class _Direction:
    """One direction of conversion (``source`` -> ``target``) over a comparison."""

    cmp: Comparison
    source: int
    target: int
    shared: frozenset[str]  # the source version's names of the types that convert
    narrow: Mapping[str, tuple[Any, ...]]  # source enums whose target is closed: the values both have
    messages: frozenset[str] = frozenset()  # the source's params and result types of methods
    # v2's schema files (name -> document) and their definitions, where the rules a field's
    # schema states are read (``states``): the value rules say what v2 requires.
    documents: Mapping[str, Any] = field(default_factory=dict)
    defs: Mapping[str, Any] = field(default_factory=dict)

    @property
    def proto(self) -> Protocol:
        return self.cmp.v1 if self.source == 1 else self.cmp.v2

    @property
    def target_proto(self) -> Protocol:
        return self.cmp.v1 if self.target == 1 else self.cmp.v2

    def annotation(self, e: TypeExpr, leaf: str | None = None) -> Code:
        # (looked up among every type: an alias a scope left out still names its values)
        return annotation(e, self.cmp.lookup(self.source), self.source, self.target, leaf, self.shared, self.narrow)

    def v1_name(self, name: str) -> str:
        return name if self.source == 1 else self.cmp.v1_name(name)

    def states(self, rule: str, v2_field: Field, v2_type: TypeDef) -> bool:
        """Whether v2's schema states a checking value rule at the field (what a v1 value
        must become, or a v2 value must be); without the schema files (a plan made from IRs
        alone) every declared rule holds."""
        if not self.documents:
            return True
        node = schema_node(self.documents, (v2_type.file, *self.documents), v2_field.pointer)
        return states(node, self.defs, STATED_BY[rule], rule in LEAF_RULES)

    def transform(self, td: TypeDef) -> TransformDecl | None:
        """The transform converting this source type, its own or its nearest base's."""
        found = self.cmp.decl.transform(self.source, td.name)
        for base in td.bases:
            if found is None and base in self.proto.types:
                found = self.transform(self.proto.types[base])
        return found


def _narrowed(cmp: Comparison, pairs: list[tuple[TypeDef, TypeDef]], source: int) -> dict[str, tuple[Any, ...]]:
    out = {}
    for td1, td2 in pairs:
        src, dst = (td1, td2) if source == 1 else (td2, td1)
        if src.kind == dst.kind == "enum" and not dst.open:
            theirs = {v.value for v in dst.values}
            if src.open or any(v.value not in theirs for v in src.values):
                out[src.name] = tuple(v.value for v in src.values if v.value in theirs)
    return out


def _converters(
    cmp: Comparison,
    pairs: list[tuple[TypeDef, TypeDef]],
    field_pairs: dict[str, list[FieldPair]],
    sources: Mapping[int, VersionSources] | None = None,
) -> list[Converter]:
    """Both directions' converters, each direction's in the order a module defines them."""
    out: list[Converter] = []
    # A one-way rename converts back too where the v2 type has no v1 namesake (v1's stable
    # schema has `plan` alone: v2's `plan_update` becomes it).
    back = [(td1, td2) for td1, td2 in cmp.one_way if cmp.v1_name(td2.name) not in cmp.lookup(1).types]
    for source, target in ((1, 2), (2, 1)):
        way_pairs = pairs + cmp.one_way if source == 1 else pairs + back
        shared = frozenset(p[0 if source == 1 else 1].name for p in way_pairs)
        proto = cmp.v1 if source == 1 else cmp.v2
        messages = frozenset(t for m in proto.methods for t in (m.params, m.result) if t)
        files = sources[2].schemas if sources and 2 in sources else ()
        documents = {f.name: f.data for f in files}
        defs = {k: v for f in reversed(files) if isinstance(f.data, dict) for k, v in f.data.get("$defs", {}).items()}
        way = _Direction(cmp, source, target, shared, _narrowed(cmp, way_pairs, source), messages, documents, defs)
        out += _direction_converters(way, way_pairs, field_pairs)
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
        transform = way.transform(src) if src.kind == "object" else None
        if transform is not None:
            function = TRANSFORMS[transform.function] if transform.function else None
            built[src.name] = Converter(
                kind="function",
                union=Code(function or f"_refuse({py_literal(transform.refuse)})"),
                **common,
            )
        elif src.kind == "union":
            built[src.name] = _union_converter(way, src, common)
        elif src.kind == "alias" and src.target is not None and src.name in way.messages:
            # A method's params or result that names another type (2026-11's
            # InitializeProxyRequest) or any value (mcp/message's result): converted as that.
            built[src.name] = Converter(kind="union", union=way.annotation(src.target), typed=False, **common)
        elif src.kind == "object":
            built[src.name] = _object_converter(way, src, dst, field_pairs[td1.name], td1.name, built, common)
    # Objects first (their annotations resolve late); unions after the types they name.
    order = {c.source_type: (c.kind != "object", _union_depth(c.source_type, way.proto)) for c in built.values()}
    placed: dict[str, Converter] = {}
    for converter in sorted(built.values(), key=lambda c: (order[c.source_type], c.source_type)):
        _place(converter, built, way.proto, placed)
    return list(placed.values())


def _union_converter(way: _Direction, src: TypeDef, common: dict[str, Any]) -> Converter:
    """A union's converter: the variants that convert; the tag of one that cannot is refused
    with the reason its declaration gives."""
    whole = way.cmp.lookup(way.source)
    types = whole.types
    # A variant converts where it is a value (an alias, an enum) or has a converter.
    converting = [
        v
        for v in src.variants
        if not (
            v.kind == "ref"
            and (v.ref not in types or types[v.ref].kind in ("object", "union"))
            and v.ref not in way.shared
        )
    ]
    # A value the target's union does not have (v1's null request id) does not convert: it is
    # refused as what it is, not as a mismatch of every member that does.
    target = _target_union(way, src)
    dropped: list[TypeExpr] = []
    if target is not None:
        theirs = {value_shape(v, way.cmp.lookup(way.target)) for v in target.variants}
        dropped = [v for v in converting if v.kind != "ref" and value_shape(v, whole) not in theirs]
        converting = [v for v in converting if v not in dropped]
    union = (
        " | ".join(
            [way.annotation(v) for v in converting]
            + [
                f"Annotated[{way.annotation(v)}, AfterValidator(_refuse({py_literal(_no_form(v, way.target))}))]"
                for v in dropped
            ]
        )
        or "None"
    )
    tag = src.discriminator or common_tag(src, whole)
    refused: list[tuple[str, str]] = []
    tags: list[str] = []
    if tag is not None:
        for v in src.variants:
            value = tag_value(v, tag, whole)
            if value is None:
                continue
            if v in converting:
                tags.append(value)
            else:
                index = way.cmp.decl.only_in.get((way.source, v.ref or ""))
                why = way.cmp.decl_why("typesOnlyIn", index) if index is not None else ""
                if value not in dict(refused):  # (v2's state updates share one tag)
                    refused.append((value, why or f"it has no v{way.target} form"))
    # The tags are checked first only where a variant is declared not to convert (its reason then
    # is the error, not every variant's mismatch, and an unknown variant of an open union is refused).
    declared = any(v.kind == "ref" and (way.source, v.ref) in way.cmp.decl.only_in for v in src.variants)
    # (so is an open union's catch-all variant that does not convert: any other tag is refused)
    declared = declared or (tag is not None and any(v not in converting and v.kind == "ref" for v in src.variants))
    # Variants each told by a tag of its own are validated by that tag alone (a tagged union:
    # one variant tried, not every one, where a union has several).
    by_tag = {tag_value(v, tag, whole): v for v in converting} if tag is not None else {}
    if len(converting) > 1 and None not in by_tag and len(by_tag) == len(converting):
        union = " | ".join(f"Annotated[{way.annotation(v)}, Tag({py_literal(t)})]" for t, v in by_tag.items())
    return Converter(
        kind="union",
        union=Code(union),
        tagged=tuple((way.annotation(v), str(t)) for t, v in by_tag.items())
        if len(by_tag) == len(converting) > 1 and None not in by_tag
        else (),
        tag=tag,
        refused_tags=tuple(refused),
        tags=tuple(tags) if refused or declared else (),
        typed=bool(converting) and all(v.kind == "ref" and v.ref in way.shared for v in converting),
        **common,
    )


def _no_form(e: TypeExpr, target: int) -> str:
    return f"{'null' if e.kind == 'null' else e.describe()} has no form in v{target} here"


def _target_union(way: _Direction, src: TypeDef) -> TypeDef | None:
    decl = way.cmp.decl
    name = decl.type_name(2, src.name) if way.source == 1 else way.cmp.v1_name(src.name)
    found = way.target_proto.types.get(name)
    return found if found is not None and found.kind == "union" else None


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
    keeps, and the target names a dump must not collide with. A pair compared flattened is
    converted flat, its bases' fields its own."""
    flat = v1_name in way.cmp.flat
    base_convs = [] if flat else [built[b] for b in src.bases if b in built]
    own, fills, supplied = _own_fields(way, src, dst, pairs, base_convs)
    all_fields = tuple(f for b in base_convs for f in b.all_fields) + tuple(own)
    by_wire = {f.source: f for f in all_fields}
    written = {f.target for f in all_fields if f.target is not None}
    target_fields = field_names(dst, way.target_proto)
    collisions = {f.target for f in all_fields if f.target is not None and f.target != f.source}
    collisions |= {fl.key for fl in fills} | {s.path[0] for s in supplied} | {f.nest[0] for f in all_fields if f.nest}
    collisions |= {n for n in target_fields if n not in written and n not in by_wire}
    return Converter(
        kind="object",
        bases=tuple(c.cls for c in base_convs),
        fields=tuple(own),
        all_fields=all_fields,
        fills=tuple(fills),
        supplied=tuple(supplied),
        invariants=tuple(_invariants(way, v1_name, by_wire, base_convs)),
        collisions=tuple(sorted(collisions - {f.source for f in all_fields if not f.read})),
        extra_allowed=src.extra_allowed,
        **common,
    )


def _own_fields(
    way: _Direction, src: TypeDef, dst: TypeDef, pairs: list[FieldPair], base_convs: list[Converter]
) -> tuple[list[ConvField], list[Fill], list[Supplied]]:
    """The fields an object's converter adds to its bases', and the target-only fields it
    fills or takes from the caller (with the bases')."""
    taken = {f.attr for b in base_convs for f in b.all_fields}
    own = []
    fills = [fl for b in base_convs for fl in b.fills]
    supplied = [s for b in base_convs for s in b.supplied]
    dst_names = {f.name for f in flat_fields(dst, way.target_proto)}
    for pair in pairs:
        fs, ft = pair.field(way.source), pair.field(way.target)
        d = pair.decl
        source_name = d.name(way.source) if d is not None else (fs.name if fs else None)
        target_name = d.name(way.target) if d is not None else (ft.name if ft else None)
        if fs is None and source_name is not None and "." in source_name:
            fs = nested_field(way.cmp.lookup(way.source), src, dotted(source_name))  # read from a nested object
        if fs is None:  # exists in the target only
            if target_name is None or d is None:
                continue
            path = dotted(target_name)
            if d.supply is not None:
                read = dotted(d.source_path) if d.source_path else ()
                supplied.append(Supplied(attr_name(d.supply, taken), path, d.supply, read))
            elif d.fill is not None and (d.fill.when is None or d.fill.when in dst_names):
                # (a fill whose condition field was pruned has nothing to fill)
                fills.append(Fill(path, d.fill.when, py_literal(d.fill.value)))
            continue
        rule_name = d.value if d is not None else None
        rule = VALUE_RULES.get(rule_name or "same", {}).get((way.source, way.target))
        v2_field, v2_type = (ft, dst) if way.target == 2 else (fs, src)
        checking = rule is not None and rule_name in STATED_BY
        if checking and not (v2_field is not None and way.states(str(rule_name), v2_field, v2_type)):
            rule = None  # v2 does not state it here: the value is the source's
        # Where the target reads an invalid value as its default, a value the rule refuses is
        # omitted (an item, where it skips invalid items): what the target would read.
        lenient = (
            way.target == 2 and rule is not None and rule_name in STATED_BY
            and ft is not None and ft.lenient and not ft.required
        )  # fmt: skip
        text = field_annotation(way.annotation, fs, ft, rule_name, rule, lenient)
        if fs.not_one_of:  # the catch-all variant of an open union: not a value a variant of its own has
            text = Code(f"Annotated[{text}, _not_one_of(({''.join(py_literal(v) + ', ' for v in fs.not_one_of)}))]")
        nest = dotted(target_name) if target_name is not None and "." in target_name else ()
        read = dotted(source_name) if source_name is not None and "." in source_name else ()
        supply = d.supply if d is not None and ft is not None else None
        default = py_literal(d.fill.value) if d is not None and d.fill is not None and ft is not None else None
        # (a value read from a nested object is absent where the object is)
        requires = ft is not None and ft.required and (not fs.required or fs.type.nullable or bool(read))
        if default is not None and requires and ft is not None:  # the target's value where the source has none
            fills.append(Fill((ft.name,), None, default))
        own.append(
            ConvField(
                attr=attr_name(fs.name if not read else "_".join(read), taken),
                source=fs.name if not read else source_name or fs.name,
                target=None if target_name is None else (".".join(nest) if nest else target_name),
                annotation=text,
                required=fs.required and not read,
                target_requires=requires and supply is None and default is None,
                null_to_absent=ft is not None and fs.type.nullable and not ft.type.nullable,
                read=read,
                nest=nest,
                supply=supply if requires else None,
                omitted=lenient and not (ft is not None and ft.skip_invalid_items and skips_items(fs, rule_name)),
                lossy=lenient,
            )
        )
    return own, fills, supplied


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
    "over upstream bases, conversions cover every method both versions define; declare the differences reported"
    " here (declarations in [tool.acp-codegen] adds a file of them),"
    " or switch conversions off: --no-conversions on the command line, conversions = false in [tool.acp-codegen]"
)


def plan(
    protocols: Iterable[Protocol],
    sources: Iterable[VersionSources],
    source: Source | None,
    fragments: Mapping[int, set[str]] | None = None,
    class_names: Mapping[int, ClassNames] | None = None,
    more: Sequence[Source] = (),
) -> ConversionPlan | None:
    """Check the declared differences (``source``, the conversions file as read, and
    ``more`` merged after it) against both versions; None without a conversions file.

    ``fragments`` (over full upstream bases): per version, the types the fragments define
    with or around a feature's items; conversions then cover the methods both versions define.
    ``class_names``: per version, the names chosen for classes (the protocols already carry them)."""
    if source is None:
        return None
    names = dict(class_names or {})
    by_version = {p.version: p for p in protocols}
    decl = load_declarations(source, *more).under({v: n.chosen for v, n in names.items()})
    if len(by_version) == 2:
        decl = decl.applicable(
            by_version[1].every_type or set(by_version[1].types), by_version[2].every_type or set(by_version[2].types)
        )
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
    full = {v: every_kind(p) for v, p in full.items()}
    by_version = {v: every_kind(p) for v, p in by_version.items()}
    whole = dict(by_version)
    if fragments is not None:
        full = method_scope(full, decl)
        by_version = method_scope(by_version, decl)
    over_base = fragments is not None
    full_cmp, _, _ = compare(decl, full[1], full[2], over_base)
    cmp, pairs, field_pairs = compare(decl, by_version[1], by_version[2], over_base, whole)
    methods = check_methods(cmp)
    # Over a base, a declaration may cover nothing inside the archive surface (the base
    # already agrees there); the fragments' own generation checks that each one is needed.
    unused = stale(decl, full_cmp) if fragments is None else []
    problems = sorted(set(full_cmp.problems + cmp.problems + unused))
    if problems:
        if fragments is not None:
            problems.append(Problem(source.name, "", SWITCH_OFF))
        raise SchemaError(problems)
    refused = refused_methods(cmp)
    converters = tuple(_converters(cmp, pairs, field_pairs, sources_by_version))
    return ConversionPlan(
        source,
        converters,
        tuple(methods),
        tuple((v, name, why) for v in VERSIONS for name, why in sorted(refused[v].items())),
        _lossy(cmp, converters),
    )


def _lossy(cmp: Comparison, converters: Iterable[Converter]) -> tuple[tuple[int, int, str, tuple[str, ...]], ...]:
    """Per direction and source type, the fields a round trip may not give back as they were:
    those declared so, and those a value rule may drop (read as the target's default)."""
    out: dict[tuple[int, int, str], set[str]] = {}
    for c in converters:
        for f in c.all_fields:  # (a variant's, its base's too)
            if f.lossy:
                out.setdefault((c.source, c.target, c.source_type), set()).add(f.read[0] if f.read else f.source)
    for d in cmp.decl.fields:
        if d.lossy:
            for source in VERSIONS:
                name = d.top(source)
                if name is not None:
                    out.setdefault((source, 3 - source, cmp.decl.type_name(source, d.type)), set()).add(name)
    for t in cmp.decl.transforms:
        if t.lossy:
            out.setdefault((t.source, 3 - t.source, t.type), set()).add("*")
    return tuple((s, t, name, tuple(sorted(fields))) for (s, t, name), fields in sorted(out.items()))
