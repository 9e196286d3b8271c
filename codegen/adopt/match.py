"""Stage 2 of adopt, match: each public name of the SDK's module to what acp-codegen
generates over the same base, by what it means on the wire, never by its name.

Classes first. A candidate generated class has the same wire keys, the same required
keys and the same tag constants (``exact``), or more keys, all optional (``gains``: the
report lists them), or the same keys with another required set (``required``). Field
types must agree in kind (a string is no integer). Then nested types narrow the
candidates until nothing changes: a class whose field refers to the SDK's class ``B``
keeps only generated candidates whose field refers to a candidate of ``B``, and a class
left with one candidate narrows the candidates of the classes its fields refer to. What
is still ambiguous is settled by the order (level, the same name, the name) and
reported. A class none matches whose keys all several generated classes have is their
common part (an ``aliases`` ``{common = [...]}`` entry).

Then the names that are not classes: a union, ``RootModel`` or ``Literal`` alias and an
``Enum`` match a generated union, alias or enum of the same members (classes as matched,
primitive types, values); a union no generated type has is written as an alias of its
classes. A second name of one object is an alias of the first.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..ir import Field, Protocol, TypeExpr, model_fields
from .read import Module, SdkField, SdkName

LEVELS = ("exact", "gains", "required")
# A reader term's scalar kinds, as the IR names them.
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
        self.fields: dict[str, dict[str, Field]] = {n: {f.name: f for f in model_fields(protocol, n)} for n in self.objects}

    def keys(self, name: str) -> frozenset[str]:
        return frozenset(self.fields[name])

    def required(self, name: str) -> frozenset[str]:
        return frozenset(w for w, f in self.fields[name].items() if f.required)

    def tags(self, name: str) -> dict[str, Any]:
        return {w: f.type.const for w, f in self.fields[name].items() if f.required and f.type.kind == "const"}

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
                out |= {("lit", _hashable(v.value)) for v in target.values}
            else:
                out.add(("ref", expr.ref))
        elif expr.kind == "union":
            for v in expr.variants:
                out |= self.members(v, seen)
        elif expr.kind == "const":
            out.add(("lit", _hashable(expr.const)))
        elif expr.kind == "array":
            out.add(("array", self.members(expr.items, seen)))
        elif expr.kind == "object" and not expr.fields:
            out.add(("kind", "object"))
        elif expr.kind != "null" or not out:
            out.add(("kind", expr.kind))
        return frozenset(out)

    def type_members(self, name: str) -> frozenset[tuple[Any, ...]]:
        t = self.protocol.types[name]
        if t.kind == "enum":
            return frozenset({("lit", _hashable(v.value)) for v in t.values} | ({("kind", "string")} if t.open else set()))
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


def _hashable(value: Any) -> Any:
    return repr(value) if isinstance(value, (dict, list)) else value


# -- the SDK side -----------------------------------------------------------------------


class Sdk:
    def __init__(self, module: Module) -> None:
        self.module = module
        self.by_ref = module.by_ref()
        self.classes = {
            n: d for n, d in module.names.items() if d.kind == "model" and d.own and d.fields and not _is_root(d)
        }

    def name_of(self, ref: str) -> str | None:
        return self.by_ref.get(ref)

    def tags(self, d: SdkName) -> dict[str, Any]:
        return {f.wire: f.type["lit"][0] for f in d.fields if _single_literal(f)}

    def required(self, d: SdkName) -> frozenset[str]:
        # A tag is required on the wire even where a model defaults it (acp-codegen's do).
        return frozenset(f.wire for f in d.fields if f.required or _single_literal(f))

    def members(self, term: dict[str, Any] | None, matching: Matching, seen: frozenset[str] = frozenset()) -> frozenset[tuple[Any, ...]]:
        """A reader term in ``Generated.members``' terms: classes as matched so far
        (a class not matched yet is ``("sdk", name)``)."""
        if term is None or "any" in term:
            return frozenset({("kind", "any")})
        out: set[tuple[Any, ...]] = set()
        if "union" in term:
            for t in term["union"]:
                out |= self.members(t, matching, seen)
        elif "lit" in term:
            out |= {("lit", _hashable(v)) for v in term["lit"]}
        elif "list" in term:
            out.add(("array", self.members(term["list"], matching, seen)))
        elif "dict" in term:
            out.add(("kind", "object"))
        elif "prim" in term:
            prim = term["prim"]
            out.add(("kind", _PRIMS.get(prim, "string" if prim in _FORMATTED else prim)))
        elif "ref" in term:
            name = self.name_of(term["ref"])
            d = self.module.names.get(name) if name else None
            if d is None:
                out.add(("sdk", term["ref"]))
            elif d.kind in ("root", "alias") or (d.kind == "model" and _is_root(d)):
                out |= self.members(d.type, matching, seen | {name}) if name not in seen else set()
            elif d.kind == "enum":
                out |= {("lit", _hashable(v)) for _, v in d.enum_members}
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
                name = self.name_of(t["ref"])
                d = self.module.names.get(name) if name else None
                if d is None or name in seen:
                    continue
                seen.add(name)
                if d.kind in ("root", "alias") and d.type is not None:
                    stack.append(d.type)
                elif name in self.classes:
                    out.add(name)
        return frozenset(out)


def _is_root(d: SdkName) -> bool:
    return d.kind == "root"


def _single_literal(f: SdkField) -> bool:
    return "lit" in f.type and len(f.type["lit"]) == 1 and isinstance(f.type["lit"][0], str)


def _kinds(members: Iterable[tuple[Any, ...]]) -> set[str]:
    """Coarse kinds, to tell a string from an integer or an object."""
    out = set()
    for m in members:
        if m[0] in ("ref", "sdk"):
            out.add("object")
        elif m[0] == "lit":
            out.add("string" if isinstance(m[1], str) else "integer" if isinstance(m[1], int) else "other")
        elif m[0] == "array":
            out.add("array")
        elif m[1] == "number":
            out.add("integer")  # a float field takes integers: numbers are one kind here
        else:
            out.add(m[1])
    return out - {"null"}


def _fields_agree(sdk: Sdk, d: SdkName, gen: Generated, name: str, matching: Matching) -> bool:
    fields = gen.fields[name]
    for f in d.fields:
        g = fields.get(f.wire)
        if g is None:
            continue
        mine, theirs = _kinds(sdk.members(f.type, matching)), _kinds(gen.members(g.type))
        if "any" in mine or "any" in theirs or not mine or not theirs:
            continue
        if not mine & theirs:
            return False
    return True


# -- the matcher ------------------------------------------------------------------------


def _level(sdk: Sdk, d: SdkName, gen: Generated, name: str) -> str | None:
    keys, gkeys = d.keys(), gen.keys(name)
    tags, gtags = sdk.tags(d), gen.tags(name)
    if {k: v for k, v in gtags.items() if k in keys} != tags:
        return None
    required, grequired = sdk.required(d), gen.required(name)
    if keys == gkeys:
        return "exact" if required == grequired else "required"
    if keys < gkeys and required == grequired:
        return "gains"  # every key it gains is optional
    return None


def match(module: Module, protocol: Protocol) -> Matching:
    sdk, gen = Sdk(module), Generated(protocol)
    matching = Matching()
    for name, d in module.names.items():
        if d.ref and not d.own and sdk.name_of(d.ref) not in (None, name):
            matching.second[name] = str(sdk.name_of(d.ref))
    candidates: dict[str, dict[str, str]] = {}  # SDK class -> {generated: level}
    for name, d in sdk.classes.items():
        if name in matching.second:
            continue
        found = {g: lv for g in gen.objects if (lv := _level(sdk, d, gen, g))}
        candidates[name] = {g: lv for g, lv in found.items() if _fields_agree(sdk, d, gen, g, matching)} or found
    _narrow(sdk, gen, candidates, matching)
    _assign(sdk, gen, candidates, matching)
    _commons(sdk, gen, matching)
    _types(sdk, gen, matching)
    return matching


def _narrow(sdk: Sdk, gen: Generated, candidates: dict[str, dict[str, str]], matching: Matching) -> None:
    """Nested types narrow the candidates, both ways, until nothing changes."""
    changed = True
    while changed:
        changed = False
        for name, found in candidates.items():
            d = sdk.classes[name]
            for f in d.fields:
                inner = sdk.refs(f.type) & set(candidates)
                if not inner:
                    continue
                keep = {}
                for g, level in found.items():
                    field_ = gen.fields[g].get(f.wire)
                    reach = gen.refs(field_.type) if field_ is not None else frozenset()
                    if all(not candidates[r] or reach & set(candidates[r]) for r in inner):
                        keep[g] = level
                if keep and len(keep) < len(found):
                    candidates[name] = found = keep
                    changed = True
                if len(found) == 1:
                    (g,) = found
                    field_ = gen.fields[g].get(f.wire)
                    reach = gen.refs(field_.type) if field_ is not None else frozenset()
                    for r in inner:
                        narrowed = {k: v for k, v in candidates[r].items() if k in reach}
                        if narrowed and len(narrowed) < len(candidates[r]):
                            candidates[r] = narrowed
                            changed = True


# JSON-RPC's words for a request's and a response's payload, as SDK names use them.
_SYNONYMS = {"params": "request", "result": "response", "reply": "response"}
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def _words(name: str) -> set[str]:
    """A class name's words, for telling apart candidates of one shape by name."""
    return {_SYNONYMS.get(w.lower(), w.lower()) for w in _WORD.findall(name)}


def _assign(sdk: Sdk, gen: Generated, candidates: dict[str, dict[str, str]], matching: Matching) -> None:
    """One generated class per SDK class: the fewest candidates first; among them the best
    level, then the same name, then the most words in common with the name, then one no
    other SDK class has taken, then the name."""
    taken: dict[str, str] = {}
    # Of two SDK classes of one shape, the one no other class derives from is the class
    # (the other, a base the SDK's generator split off, becomes its second name).
    bases = {ref for d in sdk.classes.values() for ref in d.mro[1:]}
    order_of = {n: (len(found) or 10**6, sdk.classes[n].ref in bases, n) for n, found in candidates.items()}
    for name in sorted(candidates, key=order_of.__getitem__):
        found = candidates[name]
        if not found:
            continue
        words = _words(name)
        order = sorted(
            found, key=lambda g: (LEVELS.index(found[g]), g != name, -len(words & _words(g)), g in taken, g)
        )
        best = order[0]
        if best in taken:
            # Two SDK classes of one shape: the second is the same class under another name.
            matching.second[name] = taken[best]
            continue
        taken[best] = name
        d = sdk.classes[name]
        gained = tuple(sorted(gen.keys(best) - d.keys()))
        others = tuple(g for g in order[1:] if found[g] == found[best] and g not in taken)
        matching.classes[name] = Matched(name, best, found[best], gained, others)


def _commons(sdk: Sdk, gen: Generated, matching: Matching) -> None:
    """A class none matched, whose fields several generated classes all have alike: their
    common part. Those classes are the counterparts of the SDK classes that derive from it
    where there are any, else the generated classes no SDK class matched."""
    used = {m.generated for m in matching.classes.values()}
    for name, d in sdk.classes.items():
        if name in matching.classes or name in matching.second:
            continue
        keys, tags = d.keys(), sdk.tags(d)
        below = sorted(m.generated for n, m in matching.classes.items() if d.ref in sdk.classes[n].mro[1:])
        pool = below or [g for g in sorted(gen.objects) if g not in used]
        over = [
            g
            for g in pool
            if keys <= gen.keys(g)
            and {k: v for k, v in gen.tags(g).items() if k in keys} == tags
            and _fields_alike(sdk, d, gen, g, matching)
        ]
        if over and (below and over == below or len(over) >= 2):
            matching.commons[name] = tuple(over)
        else:
            matching.missing[name] = Missing(name, "no generated class has its wire keys", _nearest(d, gen))


def _fields_alike(sdk: Sdk, d: SdkName, gen: Generated, g: str, matching: Matching) -> bool:
    """Every field of ``d`` is of the same members in ``g``: a common class keeps only the
    fields its classes have alike."""
    fields = gen.fields[g]
    return all(
        f.wire in fields and _same(sdk.members(f.type, matching), gen.members(fields[f.wire].type), loose=True)
        for f in d.fields
    )


def _same(mine: frozenset[tuple[Any, ...]], theirs: frozenset[tuple[Any, ...]], loose: bool = False) -> bool:
    """Members alike, ``null`` aside (optional fields are nullable in many SDKs); ``loose``:
    a side that takes anything is alike too."""
    if loose and ("kind", "any") in mine | theirs:
        return True
    return mine - {("kind", "null")} == theirs - {("kind", "null")}


def _nearest(d: SdkName, gen: Generated) -> str | None:
    keys = d.keys()
    scored = sorted(gen.objects, key=lambda g: (-len(keys & gen.keys(g)), len(keys ^ gen.keys(g)), g))
    return scored[0] if scored and keys & gen.keys(scored[0]) else None


def _types(sdk: Sdk, gen: Generated, matching: Matching) -> None:
    """Unions, RootModel classes, Literal aliases and Enums, by their members."""
    named = {n: t for n, t in gen.protocol.types.items() if t.kind != "object"}
    signatures = {n: gen.type_members(n) for n in named}
    taken: dict[str, str] = {}
    for name, d in sorted(sdk.module.names.items()):
        if name in matching.second or name in matching.classes or name in matching.commons:
            continue
        if d.kind == "enum":
            members = frozenset(("lit", _hashable(v)) for _, v in d.enum_members)
        elif d.kind in ("alias", "root") and d.type is not None:
            members = sdk.members(d.type, matching)
        else:
            continue
        if any(m[0] == "sdk" for m in members):
            matching.missing[name] = Missing(name, "it names classes that were not matched")
            continue
        found = sorted(
            (g for g, sig in signatures.items() if _same(sig, members)), key=lambda g: (g != name, g in taken, g)
        )
        if found and found[0] not in taken:
            taken[found[0]] = name
            matching.types[name] = Matched(name, found[0], others=tuple(found[1:]))
        elif found:
            matching.second[name] = taken[found[0]]
        elif d.kind == "enum":
            matching.enums[name] = d.enum_members  # an Enum no generated type has: written as it is
        elif members and all(m[0] == "ref" for m in members - {("kind", "null")}):
            matching.unions[name] = tuple(sorted(str(m[1]) for m in members if m[0] == "ref"))
        else:
            matching.missing[name] = Missing(name, "no generated type has its members", None)


def reverse(mapping: Mapping[str, Matched]) -> dict[str, str]:
    return {m.generated: sdk for sdk, m in mapping.items()}
