"""Stage 4b, conversions: declared v1 <-> v2 differences, checked against the IR.

``schema/conversions.json`` declares, as data, how two protocol versions differ (renamed
types, renamed fields, fields or types that exist in one version only, value rules,
invariants), the way Cadwyn declares version changes. This stage compares both versions'
``Protocol`` IRs structurally and refuses to generate when:

- a difference exists that no declaration covers (the message names type and field), or
- a declaration covers no difference, or names something neither version defines.

Declarations about items that feature selection pruned are skipped. The result is a
``ConversionPlan``: one converter per shared type and direction, read by
``templates/convert.py.jinja``. Without a ``conversions.json`` nothing is planned (and no
``convert.py`` generated): conversions are opt-in per schema directory.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, NamedTuple

import jsonschema_rs

from .code_text import Code, identifier, py_literal
from .errors import Problem, SchemaError, pointer
from .features import select
from .ir import Field, Protocol, TypeDef, TypeExpr, build, python_field_name
from .load import Source, VersionSources, read_json

CONVERSIONS_FILE = "conversions.json"
VERSIONS = (1, 2)

# Value rules: how a field's value changes between versions, as the annotation that
# checks (and, for date-time, rewrites) a source string on its way to the target.
# Directions without an entry copy the value unchanged (it is checked as the source
# version types it). The annotations are defined by templates/convert.py.jinja.
VALUE_RULES: dict[str, dict[tuple[int, int], str]] = {
    "same": {},
    "absolute-path": {(1, 2): "_AbsolutePathIn"},
    "date-time": {(1, 2): "_Iso8601In"},
}

_NAME = {"type": "string", "pattern": "^[A-Za-z_$][A-Za-z0-9_$]*$"}
_FIELD_NAME = {"type": ["string", "null"], "minLength": 1}
DECLARATIONS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["versions"],
    "properties": {
        "$comment": {"type": "string"},
        "versions": {"const": list(VERSIONS)},
        "renamedTypes": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["v1", "v2"],
                "properties": {"v1": _NAME, "v2": _NAME, "why": {"type": "string"}},
            },
        },
        "typesOnlyIn": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["type", "version"],
                "properties": {"type": _NAME, "version": {"enum": list(VERSIONS)}, "why": {"type": "string"}},
            },
        },
        "fields": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["type", "v1", "v2"],
                "properties": {
                    "type": _NAME,
                    "v1": _FIELD_NAME,
                    "v2": _FIELD_NAME,
                    "value": {"enum": sorted(VALUE_RULES)},
                    "accept": {"type": "array", "uniqueItems": True, "items": {"enum": ["nullable", "required"]}},
                    "fill": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": ["when", "value"],
                        "properties": {"when": {"type": "string"}, "value": {}},
                    },
                    "upstream": {"type": "boolean"},
                    "why": {"type": "string"},
                },
            },
        },
        "invariants": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["version", "type", "if", "then"],
                "properties": {
                    "version": {"enum": list(VERSIONS)},
                    "type": _NAME,
                    "if": {"type": "string"},
                    "then": {"type": "string"},
                    "why": {"type": "string"},
                },
            },
        },
    },
}


@dataclass(frozen=True)
class ConvField:
    """One field of a converter: read under ``source``, written under ``target``."""

    attr: str  # attribute of the generated converter class (internal)
    source: str  # wire name read
    target: str | None  # wire name written; None: exists in the source version only, dropped
    annotation: Code  # checks the source value (and applies the value rule)
    required: bool  # in the source version
    target_requires: bool  # the target requires a value the source may omit or null
    null_to_absent: bool  # the target cannot say null: a null is omitted (null and omission are equivalent)


@dataclass(frozen=True)
class Fill:
    """A target-only field set to ``value`` when the written ``when`` field is non-null."""

    key: str
    when: str
    value: Code


@dataclass(frozen=True)
class Invariant:
    """Source-version rule: when ``if_attr`` is non-null, ``then_attr`` must be too."""

    if_attr: str
    then_attr: str
    then_wire: str
    reason: str


@dataclass(frozen=True)
class Converter:
    """One shared type, one direction."""

    source: int
    target: int
    source_type: str
    target_type: str
    kind: Literal["object", "union"]
    cls: str
    function: str
    bases: tuple[str, ...] = ()
    fields: tuple[ConvField, ...] = ()
    union: Code | None = None
    # Effective over the class hierarchy (a subclass's hooks replace its base's).
    all_fields: tuple[ConvField, ...] = ()
    fills: tuple[Fill, ...] = ()
    invariants: tuple[Invariant, ...] = ()
    collisions: tuple[str, ...] = ()
    extra_allowed: bool = True

    @property
    def required_in_target(self) -> tuple[ConvField, ...]:
        return tuple(f for f in self.all_fields if f.target_requires)

    @property
    def nulls_to_absent(self) -> tuple[ConvField, ...]:
        return tuple(f for f in self.all_fields if f.null_to_absent and not f.target_requires)

    @property
    def checks(self) -> bool:
        return bool(self.required_in_target or self.nulls_to_absent or self.invariants or self.collisions)


@dataclass(frozen=True)
class MethodMap:
    version: int
    name: str
    kind: str
    params: str
    result: str | None


@dataclass(frozen=True)
class ConversionPlan:
    source: Source
    converters: tuple[Converter, ...]
    methods: tuple[MethodMap, ...]

    versions: tuple[int, ...] = VERSIONS
    directions: tuple[tuple[int, int], ...] = ((1, 2), (2, 1))

    def direction(self, source: int, target: int) -> tuple[Converter, ...]:
        return tuple(c for c in self.converters if c.source == source and c.target == target)


# ---------------------------------------------------------------------------------------
# Declarations


@dataclass(frozen=True)
class _FieldDecl:
    index: int
    type: str  # v1 type name
    v1: str | None
    v2: str | None
    value: str | None
    accept: frozenset[str]
    fill: tuple[str, Any] | None
    why: str
    upstream: bool = False  # about a field only full upstream schemas have: the fragments may lack it

    def name(self, version: int) -> str | None:
        return self.v1 if version == 1 else self.v2


@dataclass(frozen=True)
class _Declarations:
    source: Source
    renames: dict[str, str]  # v1 type -> v2 type
    only_in: dict[tuple[int, str], int]  # (version, type) -> index
    fields: tuple[_FieldDecl, ...]
    invariants: tuple[tuple[int, int, str, str, str, str], ...]  # index, version, type, if, then, why

    def type_name(self, version: int, v1_name: str) -> str:
        return self.renames.get(v1_name, v1_name) if version == 2 else v1_name


def _load_declarations(source: Source) -> _Declarations:
    data = source.data
    errors = jsonschema_rs.Draft202012Validator(DECLARATIONS_SCHEMA).iter_errors(data)
    problems = [Problem(source.name, pointer(*e.instance_path), e.message) for e in errors]
    if problems:
        raise SchemaError(problems)
    problems = []
    renames: dict[str, str] = {}
    for i, r in enumerate(data.get("renamedTypes", [])):
        if r["v1"] in renames:
            problems.append(Problem(source.name, pointer("renamedTypes", i), f"{r['v1']} is renamed twice"))
        renames[r["v1"]] = r["v2"]
    only_in = {(o["version"], o["type"]): i for i, o in enumerate(data.get("typesOnlyIn", []))}
    fields = []
    seen: set[tuple[str, int, str]] = set()
    for i, f in enumerate(data.get("fields", [])):
        where = pointer("fields", i)
        if f["v1"] is None and f["v2"] is None:
            problems.append(Problem(source.name, where, "names no field: at most one of v1 and v2 may be null"))
            continue
        if "fill" in f and (f["v1"] is None) == (f["v2"] is None):
            problems.append(Problem(source.name, where + "/fill", "only a field of one version can be filled in"))
        if (f["v1"] is None or f["v2"] is None) and ("value" in f or "accept" in f):
            problems.append(Problem(source.name, where, "a field of one version only has no value rule or accept"))
        for version in VERSIONS:
            name = f[f"v{version}"]
            if name is not None:
                key = (f["type"], version, name)
                if key in seen:
                    problems.append(Problem(source.name, where, f"{f['type']}.{name} (v{version}) is declared twice"))
                seen.add(key)
        fill = (f["fill"]["when"], f["fill"]["value"]) if "fill" in f else None
        fields.append(
            _FieldDecl(
                i,
                f["type"],
                f["v1"],
                f["v2"],
                f.get("value"),
                frozenset(f.get("accept", ())),
                fill,
                f.get("why", ""),
                f.get("upstream", False),
            )
        )
    invariants = tuple(
        (i, d["version"], d["type"], d["if"], d["then"], d.get("why", ""))
        for i, d in enumerate(data.get("invariants", []))
    )
    if problems:
        raise SchemaError(problems)
    return _Declarations(source, renames, only_in, tuple(fields), invariants)


# ---------------------------------------------------------------------------------------
# Structural comparison


class _FieldPair(NamedTuple):
    """A field and its counterpart; None on the side where it does not exist."""

    v1: Field | None
    v2: Field | None
    decl: _FieldDecl | None


def _shape(e: TypeExpr | None, rename: Mapping[str, str], top: bool = True) -> Any:
    """A comparable spelling of an expression; v1 refs are mapped to their v2 names.
    Top-level nullability is compared separately (it can be accepted on its own)."""
    if e is None:
        return None
    return (
        e.kind,
        rename.get(e.ref, e.ref) if e.ref else None,
        e.format,
        json.dumps(e.const, sort_keys=True) if e.kind == "const" else None,
        _shape(e.items, rename, False),
        tuple(sorted(repr(_shape(v, rename, False)) for v in e.variants)),
        tuple(sorted((f.name, f.required, repr(_shape(f.type, rename))) for f in e.fields)),
        None if top else e.nullable,
    )


@dataclass
class _Comparison:
    """Compares two protocols under the declarations; collects problems and the plan."""

    decl: _Declarations
    v1: Protocol
    v2: Protocol
    problems: list[Problem] = field(default_factory=list)
    used: set[tuple[str, int]] = field(default_factory=set)  # (section, index) of declarations that cover something
    # Over a base, a declaration may find the versions agreeing (an older release has no
    # difference there); the fragments' own generation checks that each one is needed.
    over_base: bool = False

    def problem(self, td: TypeDef, ptr: str, message: str) -> None:
        self.problems.append(Problem(td.file, ptr, message))

    def declared(self, section: str, index: int, message: str) -> None:
        self.problems.append(Problem(self.decl.source.name, pointer(section, index), message))

    def pairs(self) -> list[tuple[TypeDef, TypeDef]]:
        out = []
        v2_names = {self.decl.type_name(2, n) for n in self.v1.types}
        for name, td1 in self.v1.types.items():
            name2 = self.decl.type_name(2, name)
            td2 = self.v2.types.get(name2)
            if td2 is not None:
                out.append((td1, td2))
                if name in self.decl.renames:
                    self.used.add(("renamedTypes", list(self.decl.renames).index(name)))
                continue
            self._only_in(td1, 1)
        for name2, td2 in self.v2.types.items():
            if name2 not in v2_names:
                self._only_in(td2, 2)
        return out

    def _only_in(self, td: TypeDef, version: int) -> None:
        index = self.decl.only_in.get((version, td.name))
        if index is None:
            other = 3 - version
            self.problem(
                td,
                td.pointer,
                f"type {td.name} exists only in v{version} and no declaration in {CONVERSIONS_FILE} covers it "
                f"(rename it to its v{other} name in renamedTypes, or list it in typesOnlyIn)",
            )
        else:
            self.used.add(("typesOnlyIn", index))

    def compare_types(self, td1: TypeDef, td2: TypeDef) -> list[_FieldPair]:
        """Problems for type-level differences; for objects, the matched field pairs."""
        rename = self.decl.renames
        label = f"{td1.name}" if td1.name == td2.name else f"{td1.name} (v2 {td2.name})"
        if td1.kind != td2.kind:
            self.problem(td2, td2.pointer, f"type {label}: {td1.kind} in v1, {td2.kind} in v2")
            return []
        if td1.kind == "enum":
            if [v.value for v in td1.values] != [v.value for v in td2.values] or td1.open != td2.open:
                self.problem(td2, td2.pointer, f"type {label}: enum values differ between v1 and v2")
            return []
        if td1.kind == "alias":
            if _shape(td1.target, rename) != _shape(td2.target, {}) or (
                td1.target and td2.target and td1.target.nullable != td2.target.nullable
            ):
                self.problem(
                    td2, td2.pointer, f"type {label}: v1 is {_describe(td1.target)}, v2 is {_describe(td2.target)}"
                )
            return []
        if td1.kind == "union":
            if _shape(TypeExpr("union", variants=td1.variants), rename) != _shape(
                TypeExpr("union", variants=td2.variants), {}
            ):
                self.problem(td2, td2.pointer, f"type {label}: union variants differ between v1 and v2")
            return []
        if tuple(rename.get(b, b) for b in td1.bases) != td2.bases:
            self.problem(td2, td2.pointer, f"type {label}: extends {td1.bases} in v1 but {td2.bases} in v2")
        if td1.extra_allowed != td2.extra_allowed:
            self.problem(td2, td2.pointer, f"type {label}: unknown properties allowed in one version only")
        return self.compare_fields(td1, td2, label)

    def compare_fields(self, td1: TypeDef, td2: TypeDef, label: str) -> list[_FieldPair]:
        decls = {(d.v1, d.v2): d for d in self.decl.fields if d.type == td1.name}
        by_v1 = {d.v1: d for d in decls.values() if d.v1 is not None}
        by_v2 = {d.v2: d for d in decls.values() if d.v2 is not None}
        pairs: list[_FieldPair] = []
        matched2: set[str] = set()
        for f1 in td1.fields:
            d = by_v1.get(f1.name)
            name2 = d.v2 if d is not None else f1.name
            f2 = td2.field(name2) if name2 is not None else None
            if d is not None and d.v2 is None:
                if td2.field(f1.name) is not None:
                    self.declared("fields", d.index, f"{td1.name}.{f1.name} is declared v1-only, but v2 has it too")
                else:
                    self.used.add(("fields", d.index))
                    pairs.append(_FieldPair(f1, None, d))
                continue
            if f2 is None:
                self.problem(
                    td1,
                    f1.pointer,
                    f"{label}.{f1.name} exists only in v1 and no declaration in {CONVERSIONS_FILE} covers it "
                    '(declare a rename, or v1-only with "v2": null)',
                )
                continue
            matched2.add(f2.name)
            if d is not None and d.v1 != d.v2:
                self.used.add(("fields", d.index))
            pairs.append(_FieldPair(f1, f2, d))
            self._compare_pair(td1, td2, label, f1, f2, d)
        for f2 in td2.fields:
            if f2.name in matched2:
                continue
            d = by_v2.get(f2.name)
            if d is not None and d.v1 is None:
                if td1.field(f2.name) is not None:
                    self.declared("fields", d.index, f"{td2.name}.{f2.name} is declared v2-only, but v1 has it too")
                else:
                    self.used.add(("fields", d.index))
                    pairs.append(_FieldPair(None, f2, d))
                continue
            self.problem(
                td2,
                f2.pointer,
                f"{label}.{f2.name} exists only in v2 and no declaration in {CONVERSIONS_FILE} covers it "
                '(declare a rename, or v2-only with "v1": null)',
            )
        return pairs

    def _compare_pair(self, td1: TypeDef, td2: TypeDef, label: str, f1: Field, f2: Field, d: _FieldDecl | None) -> None:
        where = f"{label}.{f1.name}" + (f" (v2 {f2.name})" if f2.name != f1.name else "")
        accept = d.accept if d else frozenset()
        if _shape(f1.type, self.decl.renames) != _shape(f2.type, {}):
            if d is None or d.value is None:
                self.problem(
                    td2,
                    f2.pointer,
                    f"{where}: v1 is {f1.type.describe()}, v2 is {f2.type.describe()}, and no value rule in "
                    f'{CONVERSIONS_FILE} covers the difference ("value": one of {", ".join(sorted(VALUE_RULES))})',
                )
            else:
                self.used.add(("fields", d.index))
        elif d is not None and d.value is not None and not self.over_base:
            self.declared("fields", d.index, f"{where}: value rule {d.value!r} declared, but both versions agree")
        for flag, differs in (
            ("required", f1.required != f2.required),
            ("nullable", f1.type.nullable != f2.type.nullable),
        ):
            if differs and flag not in accept:
                self.problem(
                    td2,
                    f2.pointer,
                    f"{where}: {flag} in v{1 if _has_flag(f1, flag) else 2} only; "
                    f'accept it with "accept": ["{flag}"] in {CONVERSIONS_FILE}',
                )
            elif differs and d is not None:
                self.used.add(("fields", d.index))
            elif not differs and flag in accept and d is not None and not self.over_base:
                self.declared("fields", d.index, f"{where}: accepts a {flag} difference both versions lack")


def _has_flag(f: Field, flag: str) -> bool:
    return bool(f.required if flag == "required" else f.type.nullable)


def _describe(e: TypeExpr | None) -> str:
    return e.describe() if e else "nothing"


def _check_methods(cmp: _Comparison) -> list[MethodMap]:
    out = []
    v2_methods = {(m.name, m.side): m for m in cmp.v2.methods}
    v1_keys = set()
    for m in cmp.v1.methods:
        v1_keys.add((m.name, m.side))
        m2 = v2_methods.get((m.name, m.side))
        if m2 is None:
            cmp.problems.append(
                Problem(cmp.decl.source.name, "", f"method {m.name} ({m.side}) exists in v1 only: it cannot convert")
            )
            continue
        expected = (m.kind, cmp.decl.type_name(2, m.params), cmp.decl.type_name(2, m.result) if m.result else None)
        if (m2.kind, m2.params, m2.result) != expected:
            cmp.problems.append(
                Problem(
                    cmp.decl.source.name,
                    "",
                    f"method {m.name}: v1 {m.kind} {m.params} -> {m.result}, v2 {m2.kind} {m2.params} -> {m2.result}",
                )
            )
            continue
        out.append(MethodMap(1, m.name, m.kind, m.params, m.result))
        out.append(MethodMap(2, m2.name, m2.kind, m2.params, m2.result))
    for key, m2 in v2_methods.items():
        if key not in v1_keys:
            cmp.problems.append(
                Problem(cmp.decl.source.name, "", f"method {m2.name} ({m2.side}) exists in v2 only: it cannot convert")
            )
    for version, proto in ((1, cmp.v1), (2, cmp.v2)):
        names = [m.name for m in proto.methods]
        for name in sorted({n for n in names if names.count(n) > 1}):
            cmp.problems.append(
                Problem(cmp.decl.source.name, "", f"v{version} method {name} exists on two sides; messages cannot tell")
            )
    return sorted(out, key=lambda m: (m.version, m.name))


# ---------------------------------------------------------------------------------------
# Converter annotations


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
        inner = annotation(e.items, proto, source, target, leaf, shared) if e.items and not e.fields else "Any"
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


def _converters(
    cmp: _Comparison, pairs: list[tuple[TypeDef, TypeDef]], field_pairs: dict[str, list[_FieldPair]]
) -> list[Converter]:
    out: list[Converter] = []
    protos = {1: cmp.v1, 2: cmp.v2}
    for source, target in ((1, 2), (2, 1)):
        proto = protos[source]
        shared = frozenset(p[0 if source == 1 else 1].name for p in pairs)
        built: dict[str, Converter] = {}
        ordered = sorted(pairs, key=lambda p: _depth(p[0], cmp.v1))
        for td1, td2 in ordered:
            src, dst = (td1, td2) if source == 1 else (td2, td1)
            common: dict[str, Any] = dict(
                source=source,
                target=target,
                source_type=src.name,
                target_type=dst.name,
                cls=class_name(source, target, src.name),
                function=function_name(source, target, src.name),
            )
            if src.kind == "union":
                union = " | ".join(annotation(v, proto, source, target, None, shared) for v in src.variants)
                built[src.name] = Converter(kind="union", union=Code(union), **common)
                continue
            if src.kind != "object":
                continue
            base_convs = [built[b] for b in src.bases if b in built]
            taken = {f.attr for b in base_convs for f in b.all_fields}
            own = []
            fills = [fl for b in base_convs for fl in b.fills]
            for pair in field_pairs[td1.name]:
                f1, f2, d = pair
                fs, ft = (f1, f2) if source == 1 else (f2, f1)
                if fs is None:  # exists in the target only
                    if d is not None and d.fill is not None and ft is not None:
                        when, value = d.fill
                        if dst.field(when) is None:
                            continue  # the condition field was pruned: nothing to fill
                        fills.append(Fill(ft.name, when, py_literal(value)))
                    continue
                rule = VALUE_RULES.get(d.value or "same", {}).get((source, target)) if d else None
                own.append(
                    ConvField(
                        attr=_attr(fs.name, taken),
                        source=fs.name,
                        target=ft.name if ft is not None else None,
                        annotation=annotation(fs.type, proto, source, target, rule, shared),
                        required=fs.required,
                        target_requires=ft is not None and ft.required and (not fs.required or fs.type.nullable),
                        null_to_absent=ft is not None and fs.type.nullable and not ft.type.nullable,
                    )
                )
            all_fields = tuple(f for b in base_convs for f in b.all_fields) + tuple(own)
            by_wire = {f.source: f for f in all_fields}
            invariants = [i for b in base_convs for i in b.invariants]
            for _, version, type_name, if_name, then_name, why in cmp.decl.invariants:
                if version == source and type_name == td1.name:
                    if if_name in by_wire and then_name in by_wire:
                        invariants.append(
                            Invariant(by_wire[if_name].attr, by_wire[then_name].attr, then_name, why or "invariant")
                        )
            written = {f.target for f in all_fields if f.target is not None}
            target_fields = _all_fields(dst, protos[target])
            collisions = {f.target for f in all_fields if f.target is not None and f.target != f.source}
            collisions |= {fl.key for fl in fills}
            collisions |= {n for n in target_fields if n not in written and n not in by_wire}
            built[src.name] = Converter(
                kind="object",
                bases=tuple(built[b].cls for b in src.bases if b in built),
                fields=tuple(own),
                all_fields=all_fields,
                fills=tuple(fills),
                invariants=tuple(invariants),
                collisions=tuple(sorted(collisions)),
                extra_allowed=src.extra_allowed,
                **common,
            )
        # Objects first (their annotations resolve late); unions after the types they name.
        order = {c.source_type: (c.kind != "object", _union_depth(c.source_type, proto)) for c in built.values()}
        out.extend(sorted(built.values(), key=lambda c: (order[c.source_type], c.source_type)))
    return out


def _union_depth(name: str, proto: Protocol, seen: frozenset[str] = frozenset()) -> int:
    td = proto.types[name]
    if td.kind != "union" or name in seen:
        return 0
    refs = [v.ref for v in td.variants if v.kind == "ref" and v.ref in proto.types]
    return 1 + max((_union_depth(r, proto, seen | {name}) for r in refs), default=0)


def _all_fields(td: TypeDef, proto: Protocol) -> list[str]:
    names = [n for b in td.bases if b in proto.types for n in _all_fields(proto.types[b], proto)]
    return names + [f.name for f in td.fields]


def _depth(td: TypeDef, proto: Protocol) -> int:
    return 0 if not td.bases else 1 + max(_depth(proto.types[b], proto) for b in td.bases if b in proto.types)


# ---------------------------------------------------------------------------------------
# Scope over a full upstream base


def _expr_refs(e: TypeExpr | None) -> Iterable[str]:
    if e is None:
        return
    if e.ref:
        yield e.ref
    yield from _expr_refs(e.items)
    for v in e.variants:
        yield from _expr_refs(v)
    for f in e.fields:
        yield from _expr_refs(f.type)


def _reach(proto: Protocol, roots: set[str], decl: _Declarations) -> set[str]:
    """Every type the roots reach. A field declared to exist in this version only is
    dropped on conversion, so what it alone reaches is out of scope."""
    dropped = {
        (d.type, d.name(proto.version))
        for d in decl.fields
        if d.name(proto.version) is not None and d.name(3 - proto.version) is None
    }
    v1_name = {v2: v1 for v1, v2 in decl.renames.items()} if proto.version == 2 else {}
    seen: set[str] = set()
    todo = sorted(r for r in roots if r in proto.types)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        td = proto.types[name]
        refs = [*td.bases, *_expr_refs(td.target)]
        for variant in td.variants:
            refs += _expr_refs(variant)
        for f in td.fields:
            if (v1_name.get(name, name), f.name) not in dropped:
                refs += _expr_refs(f.type)
        todo += [r for r in refs if r in proto.types and r not in seen]
    return seen


def archive_scope(
    protocols: Mapping[int, Protocol], fragments: Mapping[int, set[str]], decl: _Declarations
) -> dict[int, Protocol]:
    """Over a full upstream base, conversions cover the archive surface only: the types the
    fragments define or extend with a feature's items, the messages of methods using them,
    and every type these reach (in either version). The rest of upstream is out of scope."""
    reached: set[str] = set()  # by v1 name
    v1_name = {v2: v1 for v1, v2 in decl.renames.items()}
    for version, proto in protocols.items():
        roots = set(fragments[version])
        for m in proto.methods:
            if m.params in roots or m.result in roots:
                roots |= {m.params, *([m.result] if m.result else [])}
        found = _reach(proto, roots, decl)
        reached |= {v1_name.get(n, n) for n in found} if version == 2 else found
    out = {}
    for version, proto in protocols.items():
        names = {decl.type_name(version, n) for n in reached}
        out[version] = replace(
            proto,
            types={n: t for n, t in proto.types.items() if n in names},
            methods=tuple(m for m in proto.methods if m.params in names),
        )
    return out


# ---------------------------------------------------------------------------------------
# Entry point


def _compare(
    decl: _Declarations, v1: Protocol, v2: Protocol, over_base: bool = False
) -> tuple[_Comparison, list[Any], dict[str, Any]]:
    cmp = _Comparison(decl, v1, v2, over_base=over_base)
    pairs = cmp.pairs()
    field_pairs = {td1.name: cmp.compare_types(td1, td2) for td1, td2 in pairs}
    return cmp, pairs, field_pairs


def _stale(decl: _Declarations, full: _Comparison) -> list[Problem]:
    """Declarations that cover nothing even with every feature enabled."""
    problems = []
    data = decl.source.data
    upstream_only = {
        f.index
        for f in decl.fields
        if f.upstream
        and not any(
            (td := p.types.get(decl.type_name(v, f.type))) is not None and f.name(v) in _all_fields(td, p)
            for v, p in ((1, full.v1), (2, full.v2))
        )
    }
    for section in ("renamedTypes", "typesOnlyIn", "fields"):
        for index, _ in enumerate(data.get(section, [])):
            if section == "fields" and index in upstream_only:
                continue  # a field of full upstream schemas only: these fragments do not have it
            if (section, index) not in full.used:
                problems.append(
                    Problem(decl.source.name, pointer(section, index), "covers no difference between the versions")
                )
    for index, version, type_name, if_name, then_name, _ in decl.invariants:
        proto = full.v1 if version == 1 else full.v2
        td = proto.types.get(decl.type_name(version, type_name))
        names = set(_all_fields(td, proto)) if td else set()
        for key, name in (("type", type_name), ("if", if_name), ("then", then_name)):
            if td is None or (key != "type" and name not in names):
                problems.append(
                    Problem(decl.source.name, pointer("invariants", index, key), f"v{version} has no {name}")
                )
                break
    for f in decl.fields:
        # A fill condition naming no field would silently never fill (issue 7: hostile names).
        if f.fill is not None and (f.v1 is None) != (f.v2 is None):
            version = 1 if f.v1 is not None else 2
            proto = full.v1 if version == 1 else full.v2
            td = proto.types.get(decl.type_name(version, f.type))
            if td is not None and f.fill[0] not in set(_all_fields(td, proto)):
                problems.append(
                    Problem(
                        decl.source.name, pointer("fields", f.index, "fill", "when"), f"v{version} has no {f.fill[0]}"
                    )
                )
    return problems


SWITCH_OFF = (
    "over an upstream base, conversions cover the archive surface; declare the differences reported here,"
    " or switch conversions off: --no-conversions on the command line, conversions = false in [tool.acp-codegen]"
)


def plan(
    protocols: Iterable[Protocol],
    sources: Iterable[VersionSources],
    schema_dir: Path,
    root: Path | None = None,
    fragments: Mapping[int, set[str]] | None = None,
) -> ConversionPlan | None:
    """Check the declared differences against both versions; None without a conversions file.

    ``fragments`` (over a full upstream base): per version, the types the fragments define
    with or around a feature's items; conversions are limited to what they reach."""
    path = schema_dir / CONVERSIONS_FILE
    if not path.is_file():
        return None
    source = read_json(path, root)
    decl = _load_declarations(source)
    by_version = {p.version: p for p in protocols}
    sources_by_version = {int(s.meta.data["version"]): s for s in sources}
    if set(by_version) != set(VERSIONS):
        raise SchemaError(
            Problem(source.name, "/versions", f"declares versions 1 and 2, but the schema has {sorted(by_version)}")
        )
    # With every declared feature on, nothing is pruned: a declaration that covers nothing
    # there is stale; one that covers something there but not here was pruned (skipped).
    full = {
        v: build(select(s, frozenset(s.meta.data.get("features", {})))) for v, s in sorted(sources_by_version.items())
    }
    if fragments is not None:
        full = archive_scope(full, fragments, decl)
        by_version = archive_scope(by_version, fragments, decl)
    over_base = fragments is not None
    full_cmp, _, _ = _compare(decl, full[1], full[2], over_base)
    cmp, pairs, field_pairs = _compare(decl, by_version[1], by_version[2], over_base)
    methods = _check_methods(cmp)
    # Over a base, a declaration may cover nothing inside the archive surface (the base
    # already agrees there); the fragments' own generation checks that each one is needed.
    stale = _stale(decl, full_cmp) if fragments is None else []
    problems = sorted(set(full_cmp.problems + cmp.problems + stale))
    if problems:
        if fragments is not None:
            problems.append(Problem(source.name, "", SWITCH_OFF))
        raise SchemaError(problems)
    return ConversionPlan(source, tuple(_converters(cmp, pairs, field_pairs)), tuple(methods))
