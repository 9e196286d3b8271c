"""Types compared: their kind, bases, fields, enum values, union variants and
expressions, in the IR's normalised form (references compare by name, through the renames
found)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from ..protocol.ir import Field, Protocol, TypeDef, TypeExpr
from .changes import ChangeKind, Recorder, Where, Which, variant_place


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


class DefinitionComparer(Recorder):
    def compare_type(self, o: TypeDef, n: TypeDef) -> None:
        w = Where(n.name, self._uses(o.name, n.name), o, n, n.feature, self.location(n))
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

    def _feature_marker(self, w: Where, old: str | None, new: str | None, path: str, kind: str, **kw: Any) -> None:
        if old != new:
            rule = "feature-stabilised" if new is None else "feature-gated"
            detail = f"feature marker `{old or 'none'}` -> `{new or 'none'}`"
            self.at(w, rule, kind, path, "changed", detail, feature=new or old, **kw)

    def compare_fields(
        self, w: Where, old: tuple[Field, ...], new: tuple[Field, ...], owner: str, top: bool = False
    ) -> None:
        by_old = {f.name: f for f in old}
        by_new = {f.name: f for f in new}
        for name in sorted(set(by_old) | set(by_new)):
            o, n = by_old.get(name), by_new.get(name)
            path = f"{owner}.{name}"
            tail = ("properties", name) if top else ()
            if o is None and n is not None:
                kind = "required" if n.required else "optional"
                rule = f"property-added-{kind}"
                if top and not w.old_def.extra_allowed:
                    rule = "property-added-required-closed" if n.required else "property-added-closed"
                self.at(
                    w,
                    rule,
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

    def compare_enum(self, w: Where, o: TypeDef, n: TypeDef) -> None:
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
        self, w: Where, old: list[TypeExpr], new: list[TypeExpr], path: str, top: bool = False
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
                    union_key, at_index = variant_place(definition, variant)
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

    def compare_expr(self, w: Where, o: TypeExpr, n: TypeExpr, path: str) -> None:  # noqa: C901 - one decision table over the IR's expression kinds
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
