"""The two sides adopt matches, as wire shapes: what one protocol version generates
(``Generated``) and the SDK module's names (``Sdk``), each type read as a set of members
(classes, primitive kinds, constant values, arrays of members), and the record of what
matched what (``Matching``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..plan.markers import takes_null
from ..protocol.ir import Field, Protocol, TypeExpr, model_fields
from .read import Module, SdkField, SdkName

_PRIMS = {"str": "string", "int": "integer", "float": "number", "bool": "boolean", "none": "null"}
# pydantic's scalar types that stand for a formatted string.
_FORMATTED = {"AnyUrl", "AnyHttpUrl", "HttpUrl", "AwareDatetime", "NaiveDatetime", "datetime", "date", "time", "UUID"}


@dataclass(frozen=True)
class Matched:
    sdk: str
    generated: str
    level: str = "exact"
    gained: tuple[str, ...] = ()  # wire keys the generated class has and the SDK's lacks
    others: tuple[str, ...] = ()  # candidates the order passed over (an ambiguity)


@dataclass(frozen=True)
class Missing:
    sdk: str
    reason: str
    nearest: str | None = None


@dataclass
class Matching:
    classes: dict[str, Matched] = field(default_factory=dict)  # SDK class -> generated object
    commons: dict[str, tuple[str, ...]] = field(default_factory=dict)  # SDK class -> generated objects
    types: dict[str, Matched] = field(default_factory=dict)  # SDK union/alias/root/enum -> generated type
    unions: dict[str, tuple[str, ...]] = field(default_factory=dict)  # SDK union no type has -> its SDK members
    enums: dict[str, tuple[tuple[str, Any], ...]] = field(default_factory=dict)  # SDK Enum -> members
    second: dict[str, str] = field(default_factory=dict)  # SDK name -> the SDK name of the same object
    missing: dict[str, Missing] = field(default_factory=dict)

    def generated_of(self, sdk: str) -> str | None:
        found = self.classes.get(sdk) or self.types.get(sdk)
        return found.generated if found else None


# -- the generated side ----------------------------------------------------------------


class Generated:
    """What one protocol version generates, as the matcher reads it."""

    def __init__(self, protocol: Protocol) -> None:
        self.protocol = protocol
        self.objects = {n: t for n, t in protocol.types.items() if t.kind == "object"}
        self.fields: dict[str, dict[str, Field]] = {
            n: {f.name: f for f in model_fields(protocol, n)} for n in self.objects
        }
        self._keys = {n: frozenset(fields) for n, fields in self.fields.items()}
        self._required = {n: frozenset(w for w, f in fs.items() if f.required) for n, fs in self.fields.items()}
        self._tags = {
            n: {w: f.type.const for w, f in fs.items() if f.required and f.type.kind == "const"}
            for n, fs in self.fields.items()
        }
        self.having: dict[str, set[str]] = {}  # wire key -> the classes that have it
        for n, keys in self._keys.items():
            for key in keys:
                self.having.setdefault(key, set()).add(n)

    def keys(self, name: str) -> frozenset[str]:
        return self._keys[name]

    def required(self, name: str) -> frozenset[str]:
        return self._required[name]

    def tags(self, name: str) -> dict[str, Any]:
        return self._tags[name]

    def required_null(self, name: str) -> frozenset[str]:
        """The required keys whose schema admits null: an SDK may leave them optional
        (``required-null``)."""
        fields = self.fields[name]
        return frozenset(w for w in self._required[name] if takes_null(self.protocol, fields[w].type, explicit=True))

    def over(self, keys: frozenset[str]) -> list[str]:
        """The classes that have every one of ``keys``, by name."""
        if not keys:
            return sorted(self.objects)
        return sorted(set.intersection(*(self.having.get(k, set()) for k in keys)))

    def members(self, expr: TypeExpr | None, seen: frozenset[str] = frozenset()) -> frozenset[tuple[Any, ...]]:
        """A type as a set of members: ``("ref", object or enum)``, ``("kind", string...)``,
        ``("lit", value)``, ``("array", members)``; named unions and aliases flattened."""
        if expr is None:
            return frozenset({("kind", "any")})
        out: set[tuple[Any, ...]] = set()
        if expr.nullable:
            out.add(("kind", "null"))
        if expr.kind == "ref" and expr.ref in self.protocol.types and expr.ref not in seen:
            target = self.protocol.types[expr.ref]
            if target.kind == "union":
                for v in target.variants:
                    out |= self.members(v, seen | {expr.ref})
            elif target.kind == "alias":
                out |= self.members(target.target, seen | {expr.ref})
            elif target.kind == "enum" and not target.open:
                out |= {("lit", hashable(v.value)) for v in target.values}
            else:
                out.add(("ref", expr.ref))
        elif expr.kind == "union":
            for v in expr.variants:
                out |= self.members(v, seen)
        elif expr.kind == "const":
            out.add(("lit", hashable(expr.const)))
        elif expr.kind == "array":
            out.add(("array", self.members(expr.items, seen)))
        elif expr.kind == "object" and not expr.fields:
            out.add(("kind", "object"))
        elif expr.kind != "null" or not out:
            out.add(("kind", expr.kind))
        return frozenset(out)

    def constants(self) -> frozenset[tuple[str, str]]:
        """(wire key, JSON value) of the optional properties that can hold one value only."""
        out = set()
        for fields in self.fields.values():
            for wire, f in fields.items():
                members = self.members(f.type) - {("kind", "null")}
                if not f.required and len(members) == 1:
                    (member,) = members
                    if member[0] == "lit":
                        out.add((wire, json.dumps(member[1])))
        return frozenset(out)

    def type_members(self, name: str) -> frozenset[tuple[Any, ...]]:
        t = self.protocol.types[name]
        if t.kind == "enum":
            return frozenset(
                {("lit", hashable(v.value)) for v in t.values} | ({("kind", "string")} if t.open else set())
            )
        return self.members(TypeExpr("ref", ref=name))

    def refs(self, expr: TypeExpr) -> frozenset[str]:
        """The objects a field's type reaches (through unions, aliases, arrays, maps)."""
        out: set[str] = set()
        for member in self.members(expr):
            if member[0] == "ref":
                out.add(member[1])
            elif member[0] == "array":
                out |= {m[1] for m in member[1] if m[0] == "ref"}
        if expr.kind == "object" and expr.additional is not None:
            out |= self.refs(expr.additional)
        return frozenset(out)


def hashable(value: Any) -> Any:
    return repr(value) if isinstance(value, (dict, list)) else value


# -- the SDK side -----------------------------------------------------------------------


class Sdk:
    def __init__(self, module: Module) -> None:
        self.module = module
        self.by_ref = module.by_ref()
        self.classes = {
            n: d for n, d in module.names.items() if d.kind == "model" and d.own and d.fields and not is_root(d)
        }

    def name_of(self, ref: str) -> str | None:
        return self.by_ref.get(ref)

    def tags(self, d: SdkName) -> dict[str, Any]:
        """Wire key -> the one string a field can hold: a ``Literal`` of one value, or an
        ``Enum`` of one member (datamodel-code-generator's ``Jsonrpc`` for ``"2.0"``)."""
        out = {}
        for f in d.fields:
            if single_literal(f):
                out[f.wire] = f.type["lit"][0]
            elif "ref" in f.type:
                enum = self.module.names.get(self.name_of(f.type["ref"]) or "")
                if enum is not None and enum.kind == "enum" and len(enum.enum_members) == 1:
                    value = enum.enum_members[0][1]
                    if isinstance(value, str):
                        out[f.wire] = value
        return out

    def members(
        self, term: dict[str, Any] | None, matching: Matching, seen: frozenset[str] = frozenset()
    ) -> frozenset[tuple[Any, ...]]:
        """A reader term in ``Generated.members``' terms: classes as matched so far
        (a class not matched yet is ``("sdk", name)``)."""
        if term is None or "any" in term:
            return frozenset({("kind", "any")})
        out: set[tuple[Any, ...]] = set()
        if "union" in term:
            for t in term["union"]:
                out |= self.members(t, matching, seen)
        elif "lit" in term:
            out |= {("lit", hashable(v)) for v in term["lit"]}
        elif "list" in term:
            out.add(("array", self.members(term["list"], matching, seen)))
        elif "dict" in term:
            out.add(("kind", "object"))
        elif "prim" in term:
            prim = term["prim"]
            out.add(("kind", _PRIMS.get(prim, "string" if prim in _FORMATTED else prim)))
        elif "ref" in term:
            name = self.name_of(term["ref"]) or ""
            d = self.module.names.get(name)
            if d is None:
                out.add(("sdk", term["ref"]))
            elif d.kind in ("root", "alias") or (d.kind == "model" and is_root(d)):
                out |= self.members(d.type, matching, seen | {name}) if name not in seen else set()
            elif d.kind == "enum":
                out |= {("lit", hashable(v)) for _, v in d.enum_members}
            elif name in matching.second and name not in seen:
                out |= self.members({"ref": self.module.names[matching.second[name]].ref}, matching, seen | {name})
            elif name in matching.commons:
                out |= {("ref", g) for g in matching.commons[name]}
            elif name in matching.classes:
                out.add(("ref", matching.classes[name].generated))
            else:
                out.add(("sdk", name))
        return frozenset(out)

    def refs(self, term: dict[str, Any]) -> frozenset[str]:
        """The SDK classes a field's type reaches (through unions, lists, maps, aliases)."""
        out: set[str] = set()
        stack = [term]
        seen: set[str] = set()
        while stack:
            t = stack.pop()
            for key in ("union",):
                stack += t.get(key, [])
            for key in ("list", "dict"):
                if key in t:
                    stack.append(t[key])
            if "ref" in t:
                name = self.name_of(t["ref"]) or ""
                d = self.module.names.get(name)
                if d is None or name in seen:
                    continue
                seen.add(name)
                if d.kind in ("root", "alias") and d.type is not None:
                    stack.append(d.type)
                elif name in self.classes:
                    out.add(name)
        return frozenset(out)


def is_root(d: SdkName) -> bool:
    return d.kind == "root"


def single_literal(f: SdkField) -> bool:
    return "lit" in f.type and len(f.type["lit"]) == 1 and isinstance(f.type["lit"][0], str)
