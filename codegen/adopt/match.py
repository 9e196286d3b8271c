"""Match: each public name of the SDK's module to what acp-codegen
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
from typing import Any

from ..protocol.ir import Protocol
from .read import Module, SdkName
from .shapes import Generated, Matched, Matching, Missing, Sdk, hashable

LEVELS = ("exact", "gains", "required")


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
    if any(tags.get(k) != v for k, v in gtags.items() if k in keys):
        return None  # another tag
    fields = gen.fields[name]
    for k, v in tags.items():  # a single constant the generated class has, but does not require
        if k not in gtags and k in fields and gen.members(fields[k].type) - {("kind", "null")} != {("lit", v)}:
            return None
    grequired = gen.required(name)
    # A tag is required on the wire even where a model defaults it (acp-codegen's do).
    required = d.required_keys() | {k for k in tags if k in grequired}
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
        found = {g: lv for g in gen.over(d.keys()) if (lv := _level(sdk, d, gen, g))}
        candidates[name] = {g: lv for g, lv in found.items() if _fields_agree(sdk, d, gen, g, matching)} or found
    _narrow(sdk, gen, candidates, matching)
    _assign(sdk, gen, candidates, matching)
    _commons(sdk, gen, matching)
    _types(sdk, gen, matching)
    _generated_aliases(gen, matching)
    for name, first in sorted(matching.second.items()):
        if first in matching.missing:  # (no alias of it is written: it would name no class)
            del matching.second[name]
            matching.missing[name] = Missing(name, f"a second name of {first}, which is not reproduced")
    return matching


def _generated_aliases(gen: Generated, matching: Matching) -> None:
    """A second name of a class that the schema has too, as an alias of that class
    (upstream's ``InitializeProxyRequest`` is ``InitializeRequest``), is that alias."""
    for name, first in sorted(matching.second.items()):
        target = matching.generated_of(first)
        alias = gen.protocol.types.get(name)
        if target and alias is not None and alias.kind == "alias" and gen.type_members(name) == {("ref", target)}:
            del matching.second[name]
            matching.types[name] = Matched(name, name)


def _narrow(sdk: Sdk, gen: Generated, candidates: dict[str, dict[str, str]], matching: Matching) -> None:
    """Nested types narrow the candidates, both ways, until nothing changes."""
    # (class, wire key, the SDK classes its type reaches): the fields that can narrow.
    nested = [
        (name, f.wire, inner)
        for name in candidates
        for f in sdk.classes[name].fields
        if (inner := sdk.refs(f.type) & set(candidates))
    ]

    def reach(g: str, wire: str) -> frozenset[str]:
        field_ = gen.fields[g].get(wire)
        return gen.refs(field_.type) if field_ is not None else frozenset()

    changed = True
    while changed:
        changed = False
        for name, wire, inner in nested:
            found = candidates[name]
            keep = {
                g: level
                for g, level in found.items()
                if all(not candidates[r] or reach(g, wire) & set(candidates[r]) for r in inner)
            }
            if keep and len(keep) < len(found):
                candidates[name] = found = keep
                changed = True
            if len(found) == 1:
                reached = reach(next(iter(found)), wire)
                for r in inner:
                    narrowed = {k: v for k, v in candidates[r].items() if k in reached}
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

    def own_name_first(name: str) -> bool:  # a candidate of its own name (and best level) goes first
        found = candidates[name]
        return name in found and found[name] == min(found.values(), key=LEVELS.index)

    order_of = {
        n: (not own_name_first(n), len(found) or 10**6, sdk.classes[n].ref in bases, n)
        for n, found in candidates.items()
    }
    for name in sorted(candidates, key=order_of.__getitem__):
        found = candidates[name]
        if not found:
            continue
        words = _words(name)
        order = sorted(found, key=lambda g: (LEVELS.index(found[g]), g != name, -len(words & _words(g)), g in taken, g))
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
        if over and ((below and over == below) or len(over) >= 2):
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
    # Names that a generated type has too go first, so that no other name takes that type.
    for name, d in sorted(sdk.module.names.items(), key=lambda item: (item[0] not in named, item[0])):
        if name in matching.second or name in matching.classes or name in matching.commons:
            continue
        if d.kind == "enum":
            members = frozenset(("lit", hashable(v)) for _, v in d.enum_members)
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
        elif cover := _unions_of(members, {g: sig for g, sig in signatures.items() if named[g].kind == "union"}):
            matching.unions[name] = cover
        else:
            matching.missing[name] = Missing(name, "no generated type has its members", None)


def _unions_of(members: frozenset[tuple[Any, ...]], unions: dict[str, frozenset[tuple[Any, ...]]]) -> tuple[str, ...]:
    """Generated unions whose members are ``members`` together, the largest first and none
    inside one taken (datamodel-code-generator's ``Model`` of the schema root: the union of
    the message unions, whose catch-all variants are ``Any``); empty where there are none such."""
    inside = {g: sig for g, sig in sorted(unions.items()) if len(sig) > 1 and sig <= members}
    parts: list[str] = []
    for g, sig in sorted(inside.items(), key=lambda item: (-len(item[1]), item[0])):
        if not any(sig <= inside[p] for p in parts):  # (one of the same members, or fewer, is in)
            parts.append(g)
    together = frozenset().union(*(inside[g] for g in parts))
    return tuple(sorted(parts)) if parts and together == members else ()


def reverse(mapping: Mapping[str, Matched]) -> dict[str, str]:
    return {m.generated: sdk for sdk, m in mapping.items()}
