"""Both versions' IRs compared under the declarations: every difference must be declared,
and every declaration must cover a difference. Over full upstream bases, the comparison
covers what the methods both versions define reach (``method_scope``)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ...errors import Problem, pointer
from ...protocol.ir import Field, Protocol, TypeDef, TypeExpr, shape
from .annotations import flat_fields
from .declarations import CONVERSIONS_FILE, VALUE_RULES, VERSIONS, Declarations, FieldDecl


@dataclass(frozen=True)
class FieldPair:
    """A field and its counterpart; None on the side where it does not exist."""

    v1: Field | None
    v2: Field | None
    decl: FieldDecl | None

    def field(self, version: int) -> Field | None:
        return self.v1 if version == 1 else self.v2


@dataclass
class Comparison:
    """Compares two protocols under the declarations; collects problems and the plan."""

    decl: Declarations
    v1: Protocol
    v2: Protocol
    problems: list[Problem] = field(default_factory=list)
    used: set[tuple[str, int]] = field(default_factory=set)  # (section, index) of declarations that cover something
    # Over a base, a declaration may find the versions agreeing (an older release has no
    # difference there); the fragments' own generation checks that each one is needed.
    over_base: bool = False
    one_way: list[tuple[TypeDef, TypeDef]] = field(default_factory=list)  # converted v1 -> v2 only
    flat: set[str] = field(default_factory=set)  # v1 names of pairs compared (and converted) flattened
    # Each version's every type (before the method scope): what nested paths and the variants
    # that do not convert are looked up in.
    whole: dict[int, Protocol] = field(default_factory=dict)

    def lookup(self, version: int) -> Protocol:
        return self.whole.get(version) or (self.v1 if version == 1 else self.v2)

    def problem(self, td: TypeDef, ptr: str, message: str) -> None:
        self.problems.append(Problem(td.file, ptr, message))

    def declared(self, section: str, index: int, message: str) -> None:
        name, local = self.decl.where(section, index)
        self.problems.append(Problem(name, pointer(section, local), message))

    def fields_of(self, td: TypeDef, version: int, flat: bool) -> tuple[Field, ...]:
        """Its own fields, or with its bases' where the pair is compared flattened."""
        proto = self.v1 if version == 1 else self.v2
        if not flat:
            return td.fields
        return tuple(f for b in td.bases if b in proto.types for f in flat_fields(proto.types[b], proto)) + td.fields

    def decl_why(self, section: str, index: int) -> str:
        return self.decl.whys.get((section, index), "")

    def v1_name(self, v2_name: str) -> str:
        return next((k for k, v in self.decl.renames.items() if v == v2_name), v2_name)

    def other_names(self, version: int) -> dict[str, str]:
        """Type names of ``version`` as the other version names them (both kinds of rename)."""
        if version == 1:
            return {**self.decl.one_way, **self.decl.renames}
        return {v: k for k, v in self.decl.renames.items()}

    def pairs(self) -> list[tuple[TypeDef, TypeDef]]:
        out = []
        v2_names = {self.decl.type_name(2, n) for n in self.v1.types}
        one_way = list(self.decl.one_way)
        for name, td1 in self.v1.types.items():
            if name in self.decl.one_way:
                td2 = self.v2.types.get(self.decl.one_way[name])
                if td2 is not None:
                    self.one_way.append((td1, td2))
                    self.used.add(("renamedTypes", self._rename_index(name)))
                    continue
                del one_way[one_way.index(name)]
            name2 = self.decl.type_name(2, name)
            td2 = self.v2.types.get(name2)
            if td2 is not None:
                out.append((td1, td2))
                if name in self.decl.renames:
                    self.used.add(("renamedTypes", self._rename_index(name)))
                continue
            self._only_in(td1, 1)
        for name2, td2 in self.v2.types.items():
            if name2 not in v2_names:
                self._only_in(td2, 2)
        return out

    def _rename_index(self, v1_name: str) -> int:
        """Its place in renamedTypes (-1: a rename the chosen class names make, not a declaration)."""
        return next((i for i, r in enumerate(self.decl.renamed_types) if r == v1_name), -1)

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

    def compare_types(self, td1: TypeDef, td2: TypeDef) -> list[FieldPair]:
        """Problems for type-level differences; for objects, the matched field pairs."""
        rename = self.other_names(1)
        label = f"{td1.name}" if td1.name == td2.name else f"{td1.name} (v2 {td2.name})"
        transformed = [self.decl.transform(1, td1.name), self.decl.transform(2, td2.name)]
        for t in transformed:
            if t is not None:
                self.used.add(("transforms", t.index))
        if all(transformed):  # converted by functions (or refused) both ways: nothing to match
            return []
        if td1.kind != td2.kind:
            self.problem(td2, td2.pointer, f"type {label}: {td1.kind} in v1, {td2.kind} in v2")
            return []
        if td1.kind == "enum":
            if [v.value for v in td1.values] != [v.value for v in td2.values] or td1.open != td2.open:
                index = self.decl.enums.get(td1.name)
                if index is None:
                    self.problem(
                        td2,
                        td2.pointer,
                        f"type {label}: enum values differ between v1 and v2 "
                        f"(declare it in enums of {CONVERSIONS_FILE})",
                    )
                else:
                    self.used.add(("enums", index))
            return []
        if td1.kind == "alias":
            if shape(td1.target, rename, nullable=False) != shape(td2.target, nullable=False) or (
                td1.target and td2.target and td1.target.nullable != td2.target.nullable
            ):
                self.problem(
                    td2, td2.pointer, f"type {label}: v1 is {_describe(td1.target)}, v2 is {_describe(td2.target)}"
                )
            return []
        if td1.kind == "union":
            # Variants one version only has are declared with their types; the rest must match.
            mine = {shape(v, rename) for v in td1.variants if not self._only(v, 1)}
            theirs = {shape(v) for v in td2.variants if not self._only(v, 2)}
            if mine != theirs and td1.name in self.decl.enums:  # a set of values (or spellings) declared
                self.used.add(("enums", self.decl.enums[td1.name]))
            elif mine != theirs:
                self.problem(td2, td2.pointer, f"type {label}: union variants differ between v1 and v2")
            return []
        if tuple(rename.get(b, b) for b in td1.bases) != td2.bases:
            # Another hierarchy (a variant that gained a tag, one that became another's):
            # compared, and converted, field by field over the bases.
            self.flat.add(td1.name)
        if td1.extra_allowed != td2.extra_allowed:
            self.problem(td2, td2.pointer, f"type {label}: unknown properties allowed in one version only")
        return self.compare_fields(td1, td2, label)

    def _only(self, e: TypeExpr, version: int) -> bool:
        """A variant of this version only (not one a v1 type becomes one way)."""
        return (
            e.kind == "ref"
            and e.ref is not None
            and (version, e.ref) in self.decl.only_in
            and not (version == 2 and e.ref in self.decl.one_way.values())
        )

    def compare_fields(self, td1: TypeDef, td2: TypeDef, label: str) -> list[FieldPair]:  # noqa: C901 (one walk over both sides)
        decls = [d for d in self.decl.fields if d.type == td1.name]
        by_v1 = {d.v1: d for d in decls if d.v1 is not None}
        by_v2 = {d.v2: d for d in decls if d.v2 is not None}
        # A field of a version's type that a declared path goes through (`plan` of `plan.entries`).
        through = {v: {d.top(v) for d in decls if "." in (d.name(v) or "")} for v in VERSIONS}
        flat = td1.name in self.flat
        fields1, fields2 = self.fields_of(td1, 1, flat), self.fields_of(td2, 2, flat)
        names1, names2 = {f.name for f in fields1}, {f.name for f in fields2}
        pairs: list[FieldPair] = []
        matched2: set[str] = set()
        for f1 in fields1:
            d = by_v1.get(f1.name)
            if d is not None and d.v2 is not None and d.v2 not in names2 and "." not in d.v2 and f1.name in names2:
                d = replace(d, v2=f1.name)  # a rename this pair does not have: both kept the name
            if d is not None and d.v2 is None and f1.name in names2:
                d = None  # declared v1-only for pairs that lack it in v2 (one file, several pairs): this one has it
            name2 = d.v2 if d is not None else f1.name
            if d is not None and name2 is not None and "." in name2:  # moved into a nested object
                if name2.split(".")[0] in names2:
                    self.used.add(("fields", d.index))
                pairs.append(FieldPair(f1, None, d))
                continue
            f2 = next((f for f in fields2 if f.name == name2), None) if name2 is not None else None
            if d is not None and d.v2 is None:
                self.used.add(("fields", d.index))
                pairs.append(FieldPair(f1, None, d))
                continue
            if f2 is None:
                if f1.name in through[1]:
                    continue
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
            pairs.append(FieldPair(f1, f2, d))
            self._compare_pair(td1, td2, label, f1, f2, d)
        for d in decls:  # read from a nested object of v2, or written into one of v1
            if d.v2 is not None and "." in d.v2 and d.v1 is None and d.top(2) in names2:
                self.used.add(("fields", d.index))
                pairs.append(FieldPair(None, None, d))
            elif d.v1 is not None and "." in d.v1 and d.top(1) in names1:
                self.used.add(("fields", d.index))
                pairs.append(FieldPair(None, next((f for f in fields2 if f.name == d.v2), None), d))
                matched2.add(d.v2 or "")
        for f2 in fields2:
            if f2.name in matched2:
                continue
            d = by_v2.get(f2.name)
            if d is not None and d.v1 is None:
                if f2.name in names1:
                    self.declared("fields", d.index, f"{td2.name}.{f2.name} is declared v2-only, but v1 has it too")
                else:
                    self.used.add(("fields", d.index))
                    pairs.append(FieldPair(None, f2, d))
                continue
            if f2.name in through[2]:
                continue
            self.problem(
                td2,
                f2.pointer,
                f"{label}.{f2.name} exists only in v2 and no declaration in {CONVERSIONS_FILE} covers it "
                '(declare a rename, or v2-only with "v1": null)',
            )
        return pairs

    def _compare_pair(self, td1: TypeDef, td2: TypeDef, label: str, f1: Field, f2: Field, d: FieldDecl | None) -> None:
        where = f"{label}.{f1.name}" + (f" (v2 {f2.name})" if f2.name != f1.name else "")
        accept = set(d.accept) if d else set()
        if d is not None and d.value == "marker":  # a marker object is nullable where a boolean is not
            accept.add("nullable")
        if d is not None and (d.supply or d.fill):  # the target's value comes from the caller or the fill
            accept.add("required")
        if shape(f1.type, self.other_names(1), nullable=False) != shape(f2.type, nullable=False):
            if d is None or d.value is None:
                self.problem(
                    td2,
                    f2.pointer,
                    f"{where}: v1 is {f1.type.describe()}, v2 is {f2.type.describe()}, and no value rule in "
                    f'{CONVERSIONS_FILE} covers the difference ("value": one of {", ".join(sorted(VALUE_RULES))})',
                )
            else:
                self.used.add(("fields", d.index))
        elif d is not None and d.value not in (None, "tag") and not self.over_base:
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


def field_names(td: TypeDef, proto: Protocol) -> list[str]:
    names = [n for b in td.bases if b in proto.types for n in field_names(proto.types[b], proto)]
    return names + [f.name for f in td.fields]


def compare(
    decl: Declarations,
    v1: Protocol,
    v2: Protocol,
    over_base: bool = False,
    whole: dict[int, Protocol] | None = None,
) -> tuple[Comparison, list[tuple[TypeDef, TypeDef]], dict[str, list[FieldPair]]]:
    """Compare two versions: the comparison (with its problems), the type pairs, and per
    v1 type the matched field pairs. ``whole``: each version before a scope limited it."""
    cmp = Comparison(decl, v1, v2, over_base=over_base, whole=dict(whole or {}))
    pairs = cmp.pairs()
    field_pairs = {td1.name: cmp.compare_types(td1, td2) for td1, td2 in pairs + cmp.one_way}
    return cmp, pairs, field_pairs


def stale(decl: Declarations, full: Comparison) -> list[Problem]:
    """Declarations that cover nothing even with every feature enabled."""
    problems = []
    data = decl.source.data
    upstream_only = {
        f.index
        for f in decl.fields
        if f.upstream
        and not any(
            (td := p.types.get(decl.type_name(v, f.type))) is not None and f.name(v) in field_names(td, p)
            for v, p in ((1, full.v1), (2, full.v2))
        )
    }
    for section in ("renamedTypes", "typesOnlyIn", "enums", "fields", "transforms", "renamedMethods", "methodsOnlyIn"):
        for index, _ in enumerate(data.get(section, [])):
            if section == "fields" and index in upstream_only:
                continue  # a field of full upstream schemas only: these fragments do not have it
            if (section, index) not in full.used:
                problems.append(
                    Problem(decl.source.name, pointer(section, index), "covers no difference between the versions")
                )
    for inv in decl.invariants:
        proto = full.v1 if inv.version == 1 else full.v2
        td = proto.types.get(decl.type_name(inv.version, inv.type))
        names = set(field_names(td, proto)) if td else set()
        for key, name in (("type", inv.type), ("if", inv.if_field), ("then", inv.then_field)):
            if td is None or (key != "type" and name not in names):
                problems.append(
                    Problem(decl.source.name, pointer("invariants", inv.index, key), f"v{inv.version} has no {name}")
                )
                break
    for f in decl.fields:
        # A fill condition naming no field would silently never fill (issue 7: hostile names).
        if f.fill is not None and f.fill.when is not None and (f.v1 is None) != (f.v2 is None):
            version = 1 if f.v1 is not None else 2
            proto = full.v1 if version == 1 else full.v2
            td = proto.types.get(decl.type_name(version, f.type))
            if td is not None and f.fill.when not in set(field_names(td, proto)):
                problems.append(
                    Problem(
                        decl.source.name, pointer("fields", f.index, "fill", "when"), f"v{version} has no {f.fill.when}"
                    )
                )
    return problems
