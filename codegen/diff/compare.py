"""Schema diff: what changed between two schema sets, in protocol terms, and whom it breaks.

Both sides go through the normal pipeline (load, validate, feature selection with every
declared feature kept so that feature markers stay visible, IR) and are compared as IR:
types by name, their fields, enum values, union variants, aliases, and the method tables.
Expressions are compared in the IR's normalised form, so respellings (``type: [X, "null"]``
vs ``anyOf: [X, {type: null}]``) are not changes, and a change inside a referenced type is
reported once, at its definition (references compare by name). A type that disappears
while another with the same shape appears is a rename.

Whether a change breaks anyone follows ``RULES`` (also the table in docs/diff.md). On the
wire: per rule, whether it breaks the sender of a request that uses the type, and whether
it breaks the receiver of a response or notification that uses it; which of the two
applies comes from where each type is reachable from (``usage``). In code: whether code
written against the generated package still imports, type-checks and behaves.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from dataclasses import dataclass, replace
from typing import Any, Literal

from ..errors import pointer
from ..ir import Field, Method, Protocol, TypeDef, TypeExpr, shape
from ..write import strip_header
from .rules import RULES
from .usage import OTHER, RECEIVER, SELF, SENDER, Use, usage

ChangeKind = Literal["added", "removed", "changed"]
Which = Literal["old", "new"]


@dataclass(frozen=True)
class Change:
    version: int
    path: str  # "Type", "Type.property", "Type[\"value\"]", "Type|Variant", method name
    change: ChangeKind
    kind: str  # version, type, property, capability, enum-value, variant, method
    rule: str
    detail: str
    feature: str | None = None
    location: str = ""  # file#/json/pointer
    old: str | None = None
    new: str | None = None
    breaks: tuple[str, ...] = ()  # who on the wire, in words; empty when nobody
    group: str = ""  # the type (or "methods") the change is listed under
    side: str | None = None  # methods: the side that handles it
    code: bool = False  # breaks code written against the generated package
    surface: str = ""  # upstream's layout: "stable" (schema.json) or "unstable" (only schema.unstable.json)

    @property
    def wire_breaking(self) -> bool:
        """An old peer no longer interoperates."""
        return bool(self.breaks)

    @property
    def breaking(self) -> bool:
        return self.wire_breaking or self.code

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "version": self.version,
            "path": self.path,
            "change": self.change,
            "breaking": self.breaking,
            "wireBreaking": self.wire_breaking,
            "codeBreaking": self.code,
            "detail": self.detail,
            "kind": self.kind,
            "rule": self.rule,
            "breaks": list(self.breaks),
            "feature": self.feature,
            "location": self.location,
        }
        if self.old is not None:
            data["old"] = self.old
        if self.new is not None:
            data["new"] = self.new
        if self.side is not None:
            data["side"] = self.side
        if self.surface:
            data["surface"] = self.surface
        return data


@dataclass(frozen=True)
class FileChange:
    path: str
    status: Literal["added", "removed", "changed"]
    added: int
    removed: int


@dataclass
class Report:
    old_label: str
    new_label: str
    changes: list[Change]
    files: list[FileChange] | None = None  # None: generated files were not compared
    files_note: str = ""
    texts: dict[str, str] = dataclasses.field(default_factory=dict)  # schema file as shown -> its text
    counterparts: dict[str, str] = dataclasses.field(default_factory=dict)  # old side's file -> new side's
    old_prefix: str = ""  # how the old input's file names start (shown relative to it)
    new_prefix: str = ""

    @property
    def breaking(self) -> list[Change]:
        return [c for c in self.changes if c.breaking]


# --- comparison ------------------------------------------------------------------------------


def _map_refs(e: TypeExpr, renames: dict[str, str]) -> TypeExpr:
    if not renames:
        return e
    return replace(
        e,
        ref=renames.get(e.ref, e.ref) if e.ref else None,
        base=renames.get(e.base, e.base) if e.base else None,
        items=_map_refs(e.items, renames) if e.items else None,
        additional=_map_refs(e.additional, renames) if e.additional else None,
        variants=tuple(_map_refs(v, renames) for v in e.variants),
        fields=tuple(replace(f, type=_map_refs(f.type, renames)) for f in e.fields),
    )


def _variant_pointer(protocol: Protocol, name: str, as_written: dict[str, Any]) -> str | None:
    """Where the inline union variant that the IR hoisted as ``name`` is written: its place in
    the union when hoisting kept the union's length, else the union's list."""
    for union in protocol.types.values():
        for variant in union.variants:
            if variant.kind == "ref" and variant.ref == name:
                key, index = _variant_place(union, variant)
                written = as_written.get(union.name, {}).get(key)
                same = isinstance(written, list) and len(written) == len(union.variants)
                return f"{union.pointer}/{key}" + (f"/{index}" if same else "")
    return None


def _variant_place(union: TypeDef, variant: TypeExpr) -> tuple[str, str]:
    """(``anyOf`` or ``oneOf``, index) of a definition's variant, from its IR pointer."""
    key, _, index = variant.pointer[len(union.pointer) + 1 :].partition("/")
    return key or "anyOf", index


def _extends(old: Any, new: Any) -> bool:
    """Whether ``new`` is ``old`` with keys added (at any depth) and nothing else changed."""
    if isinstance(old, dict) and isinstance(new, dict):
        return all(k in new and (old[k] == new[k] or _extends(old[k], new[k])) for k in old)
    return False


def _c(text: object) -> str:
    """Schema text as a Markdown code span that nothing can break out of."""
    return "`" + str(text).replace("`", "'").replace("\r", " ").replace("\n", " ") + "`"


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True)
class _Where:
    """Where a comparison is: the type it is listed under and what a change there hits."""

    group: str
    uses: frozenset[Use]
    old_def: TypeDef
    new_def: TypeDef
    feature: str | None
    location: str


class _Comparer:
    def __init__(
        self,
        old: Protocol,
        new: Protocol,
        old_files: dict[str, str],
        new_files: dict[str, str],
        old_raw: dict[str, Any] | None = None,
        new_raw: dict[str, Any] | None = None,
    ) -> None:
        self.old, self.new = old, new
        self.old_files, self.new_files = old_files, new_files
        self.old_raw, self.new_raw = old_raw, new_raw
        self.changes: list[Change] = []
        self.renames: dict[str, str] = {}
        self.uses_old, self.uses_new = usage(old), usage(new)

    def _uses(self, old_name: str | None, new_name: str | None) -> frozenset[Use]:
        """Who a change hits: the type's uses on both sides."""
        found: set[Use] = set()
        if old_name:
            found |= self.uses_old.get(old_name, set())
        if new_name:
            found |= self.uses_new.get(new_name, set())
        return frozenset(found)

    def emit(
        self,
        rule: str,
        kind: str,
        path: str,
        change: ChangeKind,
        detail: str,
        *,
        group: str,
        uses: frozenset[Use],
        feature: str | None,
        location: str,
        old: str | None = None,
        new: str | None = None,
        side: str | None = None,
    ) -> None:
        r = RULES[rule]
        breaks: set[str] = set()
        if not uses:  # not reachable from any message: assume both directions
            if r.sender:
                breaks.add("senders of messages that use it (not reachable from any method)")
            if r.receiver:
                breaks.add("receivers of messages that use it (not reachable from any method)")
        for use in uses:
            if (use.position == SENDER and r.sender) or (use.position == RECEIVER and r.receiver):
                breaks.add(use.who)
        if kind == "property" and group.endswith("Capabilities"):
            kind = "capability"
        self.changes.append(
            Change(
                self.new.version,
                path,
                change,
                kind,
                rule,
                detail,
                feature,
                location,
                old,
                new,
                tuple(sorted(breaks)),
                group,
                side,
                r.code,
            )
        )

    def at(self, w: _Where, rule: str, kind: str, path: str, change: ChangeKind, detail: str, **kw: Any) -> None:
        kw.setdefault("feature", w.feature)
        kw.setdefault("location", w.location)
        self.emit(rule, kind, path, change, detail, group=w.group, uses=w.uses, **kw)

    def location(self, t: TypeDef, *tail: str, side: Literal["old", "new"] = "new") -> str:
        files = self.new_files if side == "new" else self.old_files
        protocol, raw = (self.new, self.new_raw) if side == "new" else (self.old, self.old_raw)
        ptr = t.pointer
        if raw is not None and t.name not in raw:  # an inline union variant the IR named: point at it
            ptr = _variant_pointer(protocol, t.name, raw) or ptr
        return f"{files.get(t.file, t.file)}#{ptr}{pointer(*tail)}"

    # -- whole protocol --
    def run(self) -> list[Change]:
        old_types, new_types = self.old.types, self.new.types
        removed = sorted(set(old_types) - set(new_types))
        added = sorted(set(new_types) - set(old_types))
        self._find_renames(removed, added)
        for name in added:
            t = new_types[name]
            w = _Where(name, self._uses(None, name), t, t, t.feature, self.location(t))
            if name not in self.renames.values():
                self.at(w, "type-added", "type", name, "added", f"new {t.kind} type")
        for name in removed:
            t = old_types[name]
            w = _Where(name, self._uses(name, None), t, t, t.feature, self.location(t, side="old"))
            if name in self.renames:
                new_name = self.renames[name]
                w = replace(
                    w, group=new_name, uses=self._uses(name, new_name), location=self.location(new_types[new_name])
                )
                detail = f"renamed from `{name}` to `{new_name}` (same shape)"
                self.at(w, "type-renamed", "type", new_name, "changed", detail, old=name, new=new_name)
            else:
                self.at(w, "type-removed", "type", name, "removed", f"{t.kind} type removed")
        for name in sorted(set(old_types) & set(new_types)):
            self.compare_type(old_types[name], new_types[name])
        for old_name, new_name in sorted(self.renames.items()):
            self.compare_type(old_types[old_name], new_types[new_name])
        self.compare_methods()
        return self.changes

    def _find_renames(self, removed: list[str], added: list[str]) -> None:
        """Pair removed and added types of identical shape, one to one. Repeated until stable,
        so that a family renamed together (a type and the types it refers to) pairs up."""
        while True:
            left = [n for n in removed if n not in self.renames]
            taken = set(self.renames.values())
            shapes_added: dict[Any, list[str]] = {}
            for name in added:
                if name not in taken:
                    shapes_added.setdefault(shape(self.new.types[name]), []).append(name)
            shapes_removed: dict[Any, list[str]] = {}
            for name in left:
                shapes_removed.setdefault(shape(self.old.types[name], self.renames), []).append(name)
            found = {
                olds[0]: shapes_added[key][0]
                for key, olds in shapes_removed.items()
                if len(olds) == 1 and len(shapes_added.get(key, ())) == 1  # ambiguous pairs stay removed + added
            }
            if not found:
                return
            self.renames.update(found)

    # -- one type --
    def compare_type(self, o: TypeDef, n: TypeDef) -> None:
        w = _Where(n.name, self._uses(o.name, n.name), o, n, n.feature, self.location(n))
        self._feature_marker(w, o.feature, n.feature, n.name, "type")
        if o.kind != n.kind:
            self.at(
                w, "type-kind-changed", "type", n.name, "changed", f"was {o.kind}, now {n.kind}", old=o.kind, new=n.kind
            )
            return
        if o.kind == "object":
            old_bases = tuple(self.renames.get(b, b) for b in o.bases)
            if old_bases != n.bases:
                was, now = ", ".join(o.bases) or "nothing", ", ".join(n.bases) or "nothing"
                self.at(w, "bases-changed", "type", n.name, "changed", f"extends {now} (was {was})", old=was, new=now)
            if o.extra_allowed != n.extra_allowed:
                rule = "extra-opened" if n.extra_allowed else "extra-closed"
                detail = "accepts unknown properties" if n.extra_allowed else "refuses unknown properties"
                self.at(w, rule, "type", n.name, "changed", detail)
            self.compare_fields(w, o.fields, n.fields, n.name, top=True)
        elif o.kind == "enum":
            self.compare_enum(w, o, n)
        elif o.kind == "union":
            if o.discriminator != n.discriminator:
                detail = f"discriminator {_c(n.discriminator)} (was {_c(o.discriminator)})"
                self.at(w, "discriminator-changed", "type", n.name, "changed", detail)
            self.compare_variants(w, list(o.variants), list(n.variants), n.name, top=True)
        elif o.target is not None and n.target is not None:
            self.compare_expr(w, o.target, n.target, n.name)

    def _feature_marker(self, w: _Where, old: str | None, new: str | None, path: str, kind: str, **kw: Any) -> None:
        if old != new:
            rule = "feature-stabilised" if new is None else "feature-gated"
            detail = f"feature marker `{old or 'none'}` -> `{new or 'none'}`"
            self.at(w, rule, kind, path, "changed", detail, feature=new or old, **kw)

    def compare_fields(
        self, w: _Where, old: tuple[Field, ...], new: tuple[Field, ...], owner: str, top: bool = False
    ) -> None:
        by_old = {f.name: f for f in old}
        by_new = {f.name: f for f in new}
        for name in sorted(set(by_old) | set(by_new)):
            o, n = by_old.get(name), by_new.get(name)
            path = f"{owner}.{name}"
            tail = ("properties", name) if top else ()
            if o is None and n is not None:
                kind = "required" if n.required else "optional"
                self.at(
                    w,
                    f"property-added-{kind}",
                    "property",
                    path,
                    "added",
                    f"{kind} property {_c(name)}: {_c(n.type.describe())}",
                    feature=n.feature or w.feature,
                    location=self.location(w.new_def, *tail),
                    new=n.type.describe(),
                )
            elif n is None and o is not None:
                if top and not w.old_def.extra_allowed:
                    rule = "property-removed-required-closed" if o.required else "property-removed-closed"
                else:
                    rule = "property-removed-required" if o.required else "property-removed-optional"
                kind = "required" if o.required else "optional"
                self.at(
                    w,
                    rule,
                    "property",
                    path,
                    "removed",
                    f"{kind} property {_c(name)} removed (was {_c(o.type.describe())})",
                    feature=o.feature or w.old_def.feature,
                    location=self.location(w.old_def, *tail, side="old"),
                    old=o.type.describe(),
                )
            elif o is not None and n is not None:
                here = replace(w, feature=n.feature or w.feature, location=self.location(w.new_def, *tail))
                self._feature_marker(here, o.feature, n.feature, path, "property")
                if o.required != n.required:
                    rule = "property-made-required" if n.required else "property-made-optional"
                    self.at(here, rule, "property", path, "changed", "now required" if n.required else "now optional")
                if o.has_default and n.has_default and o.default != n.default:
                    was, now = _json(o.default), _json(n.default)
                    detail = f"default {_c(now)} (was {_c(was)})"
                    rule = "default-extended" if _extends(o.default, n.default) else "default-changed"
                    self.at(here, rule, "property", path, "changed", detail, old=was, new=now)
                self.compare_expr(here, o.type, n.type, path)

    def compare_enum(self, w: _Where, o: TypeDef, n: TypeDef) -> None:
        old_values = {_json(v.value): v for v in o.values}
        new_values = {_json(v.value): v for v in n.values}
        for key in sorted(set(old_values) | set(new_values)):
            ov, nv = old_values.get(key), new_values.get(key)
            path = f"{n.name}[{key}]"
            if ov is None and nv is not None:
                rule = "enum-value-added-open" if n.open else "enum-value-added"
                detail = f"value {_c(key)} added" + (" (open enum)" if n.open else "")
                self.at(w, rule, "enum-value", path, "added", detail, feature=nv.feature or n.feature, new=key)
            elif nv is None and ov is not None:
                rule = "enum-value-removed-open" if o.open else "enum-value-removed"
                detail = f"value {_c(key)} removed" + (" (open enum)" if o.open else "")
                location = self.location(o, side="old")
                feature = ov.feature or o.feature
                self.at(w, rule, "enum-value", path, "removed", detail, feature=feature, location=location, old=key)
            elif ov is not None and nv is not None:
                self._feature_marker(w, ov.feature, nv.feature, path, "enum-value")
        if o.open != n.open:
            detail = "now accepts any other string" if n.open else "no longer accepts other strings"
            self.at(w, "enum-opened" if n.open else "enum-closed", "type", n.name, "changed", detail)

    def _variant_feature(self, union: TypeDef, variant: TypeExpr, protocol: Protocol) -> str | None:
        """The variant's own marker, else its type's, else the union's."""
        marker = variant.feature
        if marker is None and variant.kind == "ref" and variant.ref in protocol.types:
            marker = protocol.types[variant.ref].feature
        return marker if isinstance(marker, str) else union.feature

    def compare_variants(
        self, w: _Where, old: list[TypeExpr], new: list[TypeExpr], path: str, top: bool = False
    ) -> None:
        """Union variants, matched by their normalised spelling; all-constant unions are inline enums."""
        old_keys = {_map_refs(v, self.renames).describe(): (i, v) for i, v in enumerate(old)}
        new_keys = {v.describe(): (i, v) for i, v in enumerate(new)}
        inline_enum = all(v.kind == "const" for v in (*old, *new))
        what, kind = ("value", "enum-value") if inline_enum else ("variant", "variant")
        sides: tuple[tuple[ChangeKind, dict[str, tuple[int, TypeExpr]], set[str], Protocol, TypeDef, Which], ...] = (
            ("removed", old_keys, set(old_keys) - set(new_keys), self.old, w.old_def, "old"),
            ("added", new_keys, set(new_keys) - set(old_keys), self.new, w.new_def, "new"),
        )
        for change, keys, mine, protocol, definition, side in sides:
            for key in sorted(mine):
                _index, variant = keys[key]
                feature = self._variant_feature(definition, variant, protocol) if top else w.feature
                location = w.location
                if top:
                    union_key, at_index = _variant_place(definition, variant)
                    # Hoisting may flatten nested unions: an index is a position in the file
                    # only when the counts agree; otherwise point at the union's list.
                    as_written = self.old_raw if side == "old" else self.new_raw
                    written = as_written.get(definition.name, {}).get(union_key) if as_written else definition.variants
                    same = isinstance(written, (list, tuple)) and len(written) == len(definition.variants)
                    at = (at_index,) if same and at_index else ()
                    location = self.location(definition, union_key, *at, side=side)
                target = protocol.types.get(variant.ref or "") if variant.kind == "ref" else None
                if inline_enum:
                    rule = f"enum-value-{change}"
                elif target is not None and target.method is not None:
                    rule = f"message-variant-{change}"  # a union of messages (upstream's AgentRequest...)
                else:
                    rule = f"variant-{change}"
                self.at(
                    w,
                    rule,
                    kind,
                    f"{path}[{key}]" if inline_enum else f"{path}|{key}",
                    change,
                    f"{what} {_c(key)} {change}",
                    feature=feature,
                    location=location,
                    **({"old": key} if change == "removed" else {"new": key}),
                )

    def compare_expr(self, w: _Where, o: TypeExpr, n: TypeExpr, path: str) -> None:  # noqa: C901 - one decision table over the IR's expression kinds
        o = _map_refs(o, self.renames)
        if o == n:
            return
        kind = "property" if "." in path else "type"

        def emit(rule: str, detail: str, old: str | None = None, new: str | None = None) -> None:
            self.at(w, rule, kind, path, "changed", detail, old=old, new=new)

        if o.nullable != n.nullable:
            emit(
                "nullable-added" if n.nullable else "nullable-removed",
                "may be null" if n.nullable else "no longer null",
            )
            o = replace(o, nullable=n.nullable)
            if o == n:
                return
        # A one-value enum normalises to a constant; compare it as a one-variant union.
        if o.kind == "const" and n.kind == "union" and all(v.kind == "const" for v in n.variants):
            o = TypeExpr("union", variants=(o,), nullable=n.nullable)
        if n.kind == "const" and o.kind == "union" and all(v.kind == "const" for v in o.variants):
            n = TypeExpr("union", variants=(n,), nullable=o.nullable)
        was, now = o.describe(), n.describe()
        if o.kind != n.kind:
            emit("type-changed", f"{_c(now)} (was {_c(was)})", was, now)
        elif o.kind == "ref":
            emit("ref-changed", f"refers to `{n.ref}` (was `{o.ref}`)", o.ref, n.ref)
        elif o.kind == "const":
            emit("const-changed", f"constant {_c(now)} (was {_c(was)})", was, now)
        elif o.kind == "array":
            if o.items is not None and n.items is not None:
                self.compare_expr(w, o.items, n.items, path + "[]")
            else:
                emit("type-changed", f"{_c(now)} (was {_c(was)})", was, now)
        elif o.kind == "union":
            self.compare_variants(w, list(o.variants), list(n.variants), path)
        elif o.kind == "object":
            if o.base != n.base:
                emit("bases-changed", f"extends {n.base or 'nothing'} (was {o.base or 'nothing'})", o.base, n.base)
            self.compare_fields(w, o.fields, n.fields, path)
            if o.additional != n.additional:
                if o.additional is not None and n.additional is not None:
                    self.compare_expr(w, o.additional, n.additional, path + "{}")
                else:
                    emit("type-changed", f"{_c(now)} (was {_c(was)})", was, now)
        elif o.format != n.format:
            emit(
                "format-changed", f"format {_c(n.format or 'none')} (was {_c(o.format or 'none')})", o.format, n.format
            )

    # -- methods --
    def compare_methods(self) -> None:
        old = {(m.name, m.side): m for m in self.old.methods}
        new = {(m.name, m.side): m for m in self.new.methods}
        # A method that left one side and appeared on another (x-side changed) is one change.
        gone = [k for k in sorted(old) if k not in new]
        came = [k for k in sorted(new) if k not in old]
        moved = set()
        for name in {k[0] for k in gone} & {k[0] for k in came}:
            was = [k for k in gone if k[0] == name]
            now = [k for k in came if k[0] == name]
            if len(was) == 1 and len(now) == 1:
                moved |= {was[0], now[0]}
                detail = f"now handled by the {now[0][1]} side (was the {was[0][1]} side)"
                self._method_change("method-side-changed", new[now[0]], "changed", detail, was[0][1], now[0][1])
        for key in sorted(set(old) | set(new)):
            o, n = old.get(key), new.get(key)
            if key in moved:
                continue
            if o is None and n is not None:
                self._method_change("method-added", n, "added", f"new {n.kind} handled by the {n.side} side")
            elif n is None and o is not None:
                self._method_change("method-removed", o, "removed", f"{o.kind} handled by the {o.side} side removed")
            elif o is not None and n is not None:
                if o.feature != n.feature:
                    rule = "feature-stabilised" if n.feature is None else "feature-gated"
                    detail = f"feature marker `{o.feature or 'none'}` -> `{n.feature or 'none'}`"
                    self._method_change(rule, n, "changed", detail)
                if o.kind != n.kind:  # its message types change with it; that is the one change
                    self._method_change("method-kind-changed", n, "changed", f"now a {n.kind} (was a {o.kind})")
                    continue
                for role, old_type, new_type in (("params", o.params, n.params), ("result", o.result, n.result)):
                    if self.renames.get(old_type or "", old_type) != new_type:
                        detail = f"{role} type `{new_type}` (was `{old_type}`)"
                        self._method_change("method-type-changed", n, "changed", detail, old=old_type, new=new_type)

    def _method_change(
        self, rule: str, m: Method, change: ChangeKind, detail: str, old: str | None = None, new: str | None = None
    ) -> None:
        side: Literal["old", "new"] = "old" if change == "removed" else "new"
        carrier = (self.old if side == "old" else self.new).types.get(m.params)
        location = self.location(carrier, side=side) if carrier else ""
        # A request change hits its callers; a notification change hits whoever receives it.
        if m.kind == "request":
            use = Use(SENDER, f"{OTHER.get(m.side, 'peers')} calling `{m.name}`")
        else:
            use = Use(RECEIVER, f"{SELF.get(m.side, 'peers')} receiving `{m.name}`")
        self.emit(
            rule,
            "method",
            m.name,
            change,
            detail,
            group="methods",
            uses=frozenset({use}),
            feature=m.feature,
            location=location,
            old=old,
            new=new,
            side=m.side,
        )


def compare(
    old: tuple[Protocol, ...],
    new: tuple[Protocol, ...],
    old_files: dict[str, str] | None = None,
    new_files: dict[str, str] | None = None,
    old_raw: dict[int, dict[str, Any]] | None = None,
    new_raw: dict[int, dict[str, Any]] | None = None,
) -> list[Change]:
    """Every change from ``old`` to ``new``, per protocol version, sorted.

    ``*_files`` map the pipeline's file names to the names to show; ``*_raw`` give each
    version's ``$defs`` as written, so that types the IR derived (named inline union
    variants) are located inside their union, and variants at their place in the file."""
    old_by = {p.version: p for p in old}
    new_by = {p.version: p for p in new}
    changes: list[Change] = []
    for version in sorted(set(old_by) | set(new_by)):
        o, n = old_by.get(version), new_by.get(version)
        if o is None or n is None:
            rule = "version-added" if o is None else "version-removed"
            r = RULES[rule]
            who = ("peers that speak only this version",) if r.sender else ()
            changes.append(
                Change(
                    version,
                    f"v{version}",
                    "added" if o is None else "removed",
                    "version",
                    rule,
                    f"protocol version {version} {'added' if o is None else 'removed'}",
                    breaks=who,
                    group="protocol",
                    code=r.code,
                )
            )
            continue
        changes += _Comparer(
            o, n, old_files or {}, new_files or {}, (old_raw or {}).get(version), (new_raw or {}).get(version)
        ).run()
    return sorted(changes, key=lambda c: (c.version, c.group == "methods", c.group, c.path, c.rule))


def file_changes(old: dict[str, str], new: dict[str, str]) -> list[FileChange]:
    """Which generated files differ in content (headers with their hashes left out), with
    added/removed line counts."""
    out = []
    for path in sorted(set(old) | set(new)):
        a, b = old.get(path), new.get(path)
        if a is not None and b is not None and strip_header(a) == strip_header(b):
            continue
        a, b = (strip_header(t) if t is not None else None for t in (a, b))
        if a == b:
            continue
        added = removed = 0
        for line in difflib.unified_diff((a or "").splitlines(), (b or "").splitlines(), n=0, lineterm=""):
            if line.startswith(("+++", "---", "@@")):
                continue
            added += line.startswith("+")
            removed += line.startswith("-")
        status: Literal["added", "removed", "changed"] = "added" if a is None else "removed" if b is None else "changed"
        out.append(FileChange(path, status, added, removed))
    return out
