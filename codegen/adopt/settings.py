"""The ``[tool.acp-codegen]`` settings that give the matched generated
types the module's public names, attributes and Python types.

Everything here is derived from the match and the module; nothing is read from a
table written before, so that running adopt again derives the same settings.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..protocol.ir import Field, TypeExpr
from ..protocol.names import model_field_name
from .read import Module, SdkName
from .shapes import Generated, Matching

# Suffix for a generated class whose name the SDK gives to another one (the untagged part
# of a session update, whose name the tagged variant takes).
FREED_SUFFIX = "Fields"
# pydantic types the module may use for a formatted string (string-formats' values).
FORMAT_TYPES = ("AnyUrl", "AwareDatetime", "NaiveDatetime", "datetime", "date", "time", "UUID")


@dataclass
class Derived:
    """Model settings for one protocol version, in TOML's terms, and what was decided."""

    values: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    chosen: dict[str, str] = field(default_factory=dict)  # generated name -> public name


def chosen_names(matching: Matching, gen: Generated) -> tuple[dict[str, str], list[str]]:
    """Generated name -> the module's name; a generated class left with a name the module
    gives to another is renamed out of the way."""
    chosen = {m.generated: sdk for sdk, m in [*matching.classes.items(), *matching.types.items()]}
    notes = []
    public = set(chosen.values()) | set(matching.unions) | set(matching.enums) | set(matching.commons)
    public |= set(matching.second)
    for name in sorted(gen.protocol.types):
        if name in public and name not in chosen:
            freed = name + FREED_SUFFIX
            chosen[name] = freed
            notes.append(f"{name}: generated under another name ({freed}): the module's {name} is another class")
    return {g: s for g, s in sorted(chosen.items()) if g != s}, notes


def derive(module: Module, matching: Matching, gen: Generated) -> Derived:
    out = Derived()
    renames, out.notes = chosen_names(matching, gen)
    out.chosen = renames

    def public(generated: str) -> str:
        return renames.get(generated, generated)

    values: dict[str, Any] = {}
    if renames:
        values["class-names"] = renames
    names = _field_names(module, matching, gen, public)
    if names:
        values["field-names"] = names
    aliases: dict[str, Any] = {}
    for second, first in sorted(matching.second.items()):
        aliases[second] = first
    for name, members in sorted(matching.unions.items()):
        aliases[name] = [public(g) for g in members]
    for name, targets in sorted(matching.commons.items()):
        aliases[name] = {"common": [public(g) for g in targets]}
        keys = module.names[name].keys()
        if keys != frozenset.intersection(*(gen.keys(g) for g in targets)):
            aliases[name]["keys"] = sorted(keys)  # fewer than its classes share
    if aliases:
        values["aliases"] = aliases
    roots = sorted(sdk for sdk in [*matching.types, *matching.unions] if module.names[sdk].kind == "root")
    if roots:
        values["root-models"] = roots
    enums = {n: dict(module.names[n].enum_members) for n, m in matching.types.items() if module.names[n].kind == "enum"}
    enums |= {n: dict(members) for n, members in matching.enums.items()}
    for name, enum_members in sorted(matching.enums.items()):
        known = {v for _, v in enum_members}
        opened = sorted(g for g, t in gen.protocol.types.items() if t.open and {v.value for v in t.values} == known)
        if opened:
            out.notes.append(
                f"{name}: an Enum of its own; {opened[0]} takes any string besides these values, so its fields"
                " stay strings"
            )
    if enums:
        values["enums"] = dict(sorted(enums.items()))
    formats = _string_formats(module, matching, gen)
    if formats:
        values["string-formats"] = formats
    values["unknown-properties"] = _unknown_properties(module, matching)
    values["default-on-null"] = _default_on_null(module, matching, gen)
    nulls = _required_null(module, matching, gen)
    if nulls != "required":
        values["required-null"] = nulls if isinstance(nulls, str) else sorted(public(g) for g in nulls)
    out.values = values
    return out


def _field_names(module: Module, matching: Matching, gen: Generated, public: Any) -> dict[str, str]:
    """Wire name -> attribute where the module's attribute is not the generated default:
    one entry for every class where they agree, ``Class.wire`` entries where one differs."""
    attrs: dict[str, dict[str, str]] = {}  # wire -> {public class: attribute}
    for sdk, m in matching.classes.items():
        generated = gen.fields[m.generated]
        for f in module.names[sdk].fields:
            if f.wire in generated:
                attrs.setdefault(f.wire, {})[sdk] = f.attr
    out: dict[str, str] = {}
    for wire, by_class in sorted(attrs.items()):
        default = model_field_name(wire)
        common, _ = Counter(sorted(by_class.values())).most_common(1)[0]
        if common != default:
            out[wire] = common
        for cls, attr in sorted(by_class.items()):
            if attr != common:
                out[f"{cls}.{wire}"] = attr
    return out


def _formats(expr: TypeExpr | None) -> set[str]:
    if expr is None:
        return set()
    found = {expr.format} if expr.kind == "string" and expr.format else set()
    for inner in (expr.items, expr.additional, *expr.variants):
        found |= _formats(inner)
    return found


def _prims(term: dict[str, Any]) -> set[str]:
    found = {term["prim"]} if "prim" in term else set()
    for inner in (*term.get("union", ()), term.get("list"), term.get("dict")):
        if isinstance(inner, dict):
            found |= _prims(inner)
    return found


def _string_formats(module: Module, matching: Matching, gen: Generated) -> dict[str, str]:
    """Where the module types a formatted string as a pydantic type (``format: uri`` as
    ``AnyUrl``), the format -> that type, when the module does so every time."""
    seen: dict[str, Counter[str]] = {}
    for sdk, m in matching.classes.items():
        generated = gen.fields[m.generated]
        for f in module.names[sdk].fields:
            g = generated.get(f.wire)
            if g is None:
                continue
            for fmt in _formats(g.type):
                kinds = _prims(f.type) - {"none"}
                typed = sorted(kinds & set(FORMAT_TYPES))
                seen.setdefault(fmt, Counter())[typed[0] if typed else "str"] += 1
    return {
        fmt: kinds.most_common(1)[0][0] for fmt, kinds in sorted(seen.items()) if kinds.most_common(1)[0][0] != "str"
    }


def _unknown_properties(module: Module, matching: Matching) -> str:
    """``keep`` where the module's classes keep unknown properties (``extra="allow"``), else
    ``drop`` (pydantic's default, ``ignore``). Catch-all variants keep theirs either way."""
    extras = Counter(str(module.names[s].config.get("extra", "ignore")) for s in matching.classes)
    return "keep" if extras.most_common(1)[0][0] == "allow" else "drop"


def _takes_none(d: SdkName, wire: str) -> bool:
    f = next(f for f in d.fields if f.wire == wire)
    return f.null_absent or "none" in _prims(f.type)


def _default_on_null(module: Module, matching: Matching, gen: Generated) -> str:
    """``all`` where the module's optional fields take ``None`` though the schema does not
    let them be null (datamodel-code-generator's ``Optional[X] = None``), else ``marked``."""
    votes = Counter(
        _takes_none(d, wire)
        for d, wire, g in _shared_fields(module, matching, gen)
        if not (g.required or g.type.nullable or g.type.kind in ("any", "null"))
    )
    return "all" if votes[True] > votes[False] else "marked"


def _shared_fields(module: Module, matching: Matching, gen: Generated) -> Iterator[tuple[SdkName, str, Field]]:
    """Each matched class's fields that the module's class has too: (its class, wire key,
    the generated field)."""
    for sdk, m in matching.classes.items():
        d = module.names[sdk]
        keys = d.keys()
        for wire, g in gen.fields[m.generated].items():
            if wire in keys:
                yield d, wire, g


def _required_null(module: Module, matching: Matching, gen: Generated) -> str | list[str]:
    """Whether the module's classes leave out, as not required, the required properties
    whose schema admits null (datamodel-code-generator without its strict-nullable option),
    class by class (the majority of a class's such fields): ``"optional"`` where every class
    that has such a field does, ``"required"`` where none does, else the generated names of
    the classes that do (the official SDK 0.12.0: its response classes, not its requests)."""
    votes: dict[str, Counter[bool]] = {}
    for sdk, m in matching.classes.items():
        d = module.names[sdk]
        for wire in gen.required_null(m.generated) & d.keys():
            votes.setdefault(m.generated, Counter())[wire not in d.required_keys()] += 1
    optional = sorted(name for name, v in votes.items() if v[True] > v[False])
    if not optional:
        return "required"
    return "optional" if len(optional) == len(votes) else optional
