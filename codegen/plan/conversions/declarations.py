"""The declarations file, ``conversions.json``: its schema, and its loading into typed
records (checked against the schema, then for contradictions between entries)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from dataclasses import field as dataclass_field
from typing import Any

import jsonschema_rs

from ...errors import Problem, SchemaError, pointer
from ...protocol.load import Source

CONVERSIONS_FILE = "conversions.json"
# The differences between upstream's published v1 and v2 schemas, shipped beside the fragments.
UPSTREAM_DECLARATIONS = "upstream-conversions.json"
VERSIONS = (1, 2)

# Value rules: how a field's value changes between versions, as the annotation that
# checks (and, for some, rewrites) a source value on its way to the target. Directions
# without an entry copy the value unchanged (it is checked as the source version types
# it). The annotations are defined by the runtime (codegen/runtime/_convert_runtime.py).
# String rules replace every string leaf of the field's type; whole-value rules
# (WHOLE_VALUE_RULES) replace the field's annotation.
VALUE_RULES: dict[str, dict[tuple[int, int], str]] = {
    "same": {},
    # (v2 -> v1: a v2 value must be what v2 types it, as its date-times are checked)
    "absolute-path": {(1, 2): "_AbsolutePathIn", (2, 1): "_AbsolutePathIn"},
    "date-time": {(1, 2): "_Iso8601In"},
    "uri": {(1, 2): "_UriIn", (2, 1): "_UriIn"},
    "regex": {(1, 2): "_RegexIn"},
    "currency": {(1, 2): "_CurrencyIn"},  # an ISO 4217 code, as v2 spells it
    "marker": {(1, 2): "_MarkerIn", (2, 1): "_MarkerOut"},
    "env-list": {(1, 2): "_EnvListIn", (2, 1): "_EnvMapIn"},
    "tag": {},  # a discriminator constant: the source's is read, the target's written
    "non-empty": {(1, 2): "_NON_EMPTY"},  # a list the target requires to have an item
    "unit-interval": {(1, 2): "_UNIT_INTERVAL"},  # a number the target bounds to 0..1
    "non-negative": {(1, 2): "_NON_NEGATIVE"},  # a number the target requires to be >= 0
    "positive": {(1, 2): "_POSITIVE"},  # a number the target requires to be >= 1 (a line number)
}


def _number(value: Any, otherwise: float = 0) -> float:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else otherwise


# A checking rule holds where the target version's schema states it at the field (one file
# declares several release pairs: 2026-11's v2 has no `format: date-time` on an annotation's
# `lastModified`, alpha.3's has): the keyword a schema node states it by. A rule of string
# leaves is looked for in the items and values the field holds too.
STATED_BY: dict[str, Callable[[Mapping[str, Any]], bool]] = {
    "absolute-path": lambda node: str(node.get("$ref", "")).rsplit("/", 1)[-1] == "AbsolutePath",
    "date-time": lambda node: node.get("format") == "date-time",
    "uri": lambda node: node.get("format") == "uri",
    "regex": lambda node: node.get("format") == "regex",
    "currency": lambda node: "pattern" in node,
    "non-empty": lambda node: _number(node.get("minItems")) >= 1,
    "unit-interval": lambda node: "minimum" in node and "maximum" in node,
    "non-negative": lambda node: _number(node.get("minimum"), -1) >= 0,
}
LEAF_RULES = frozenset({"absolute-path", "date-time", "uri", "regex", "currency"})
WHOLE_VALUE_RULES = frozenset({"marker", "env-list", "tag"})
# Checks added to the field's own annotation.
WRAPPING_RULES = frozenset({"non-empty", "unit-interval", "non-negative", "positive"})

# Transforms: a type whose shape differs beyond fields, converted by a function of the
# runtime (by direction: the declaration names the source version).
TRANSFORMS: dict[str, str] = {"git-patch": "_diff_to_git_patch"}

_NAME = {"type": "string", "pattern": "^[A-Za-z_$][A-Za-z0-9_$]*$"}
# A field's wire name, or a dotted path into objects the target nests (`session.prompt`).
_FIELD_NAME = {"type": ["string", "null"], "minLength": 1}
_METHOD = {"type": "string", "minLength": 1}
_WHY = {"type": "string"}
_LOSSY = {"type": "boolean"}
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
                "properties": {
                    "v1": _NAME,
                    "v2": _NAME,
                    # v1 -> v2 only: the v2 type converts back to its own v1 namesake
                    "oneWay": {"type": "boolean"},
                    "why": _WHY,
                },
            },
        },
        "typesOnlyIn": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["type", "version"],
                "properties": {"type": _NAME, "version": {"enum": list(VERSIONS)}, "why": _WHY},
            },
        },
        "enums": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["type"],
                "properties": {"type": _NAME, "why": _WHY},
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
                        "required": ["value"],
                        "properties": {"when": {"type": "string"}, "value": {}},
                    },
                    "supply": {"type": "string", "minLength": 1},
                    "from": {"type": "string", "minLength": 1},
                    "lossy": _LOSSY,
                    "upstream": {"type": "boolean"},
                    "why": _WHY,
                },
            },
        },
        "transforms": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["type", "from"],
                "properties": {
                    "type": _NAME,
                    "from": {"enum": list(VERSIONS)},
                    "function": {"enum": sorted(TRANSFORMS)},
                    "refuse": {"type": "string", "minLength": 1},
                    "lossy": _LOSSY,
                    "why": _WHY,
                },
                "oneOf": [{"required": ["function"]}, {"required": ["refuse"]}],
            },
        },
        "renamedMethods": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["v1", "v2"],
                "properties": {"v1": _METHOD, "v2": _METHOD, "why": _WHY},
            },
        },
        "methodsOnlyIn": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["method", "version", "why"],
                "properties": {
                    "method": _METHOD,
                    # one kind of a method both versions define in another (mcp/message: a
                    # request and a notification); without it, the whole method
                    "kind": {"enum": ["request", "notification"]},
                    "version": {"enum": list(VERSIONS)},
                    "why": _WHY,
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
                    "why": _WHY,
                },
            },
        },
    },
}
SECTIONS = tuple(k for k in DECLARATIONS_SCHEMA["properties"] if k not in ("$comment", "versions"))


@dataclass(frozen=True)
class FillDecl:
    """Set a target-only field to ``value`` (when the field ``when`` is non-null, where
    given); on a field both versions have, the value the target takes when it is absent."""

    when: str | None
    value: Any


@dataclass(frozen=True)
class InvariantDecl:
    """In one version's ``type``: when ``if_field`` is non-null, ``then_field`` must be too."""

    index: int
    version: int
    type: str
    if_field: str
    then_field: str
    why: str


@dataclass(frozen=True)
class FieldDecl:
    """One entry of ``fields``: a field's names in both versions and how its value converts.
    A name may be a dotted path: the field lives in an object nested in the type."""

    index: int
    type: str  # v1 type name
    v1: str | None
    v2: str | None
    value: str | None
    accept: frozenset[str]
    fill: FillDecl | None
    why: str
    upstream: bool = False  # about a field only full upstream schemas have: the fragments may lack it
    supply: str | None = None  # the caller's `supply` key that gives a value the target requires
    source_path: str | None = None  # ("from") where else in the source the value may be read
    lossy: bool = False  # the value may not survive a round trip

    def name(self, version: int) -> str | None:
        return self.v1 if version == 1 else self.v2

    def top(self, version: int) -> str | None:
        """The field of the type itself that the name is, or that the path goes through."""
        name = self.name(version)
        return name.split(".")[0] if name is not None else None


@dataclass(frozen=True)
class TransformDecl:
    """A type converted from version ``source`` by a runtime function, or refused."""

    index: int
    type: str  # the type's name in the source version
    source: int
    function: str | None
    refuse: str | None
    lossy: bool
    why: str


@dataclass(frozen=True)
class Declarations:
    """Loaded and checked declarations (one file, or several merged: see ``where``)."""

    source: Source
    renames: dict[str, str]  # v1 type -> v2 type
    only_in: dict[tuple[int, str], int]  # (version, type) -> index
    fields: tuple[FieldDecl, ...]
    invariants: tuple[InvariantDecl, ...]
    one_way: dict[str, str] = dataclass_field(default_factory=dict)  # v1 type -> v2 type, v1 -> v2 only
    enums: dict[str, int] = dataclass_field(default_factory=dict)  # v1 enum name -> index
    transforms: tuple[TransformDecl, ...] = ()
    method_renames: dict[str, str] = dataclass_field(default_factory=dict)  # v1 method -> v2 method
    methods_only_in: dict[tuple[int, str], tuple[int, str]] = dataclass_field(default_factory=dict)  # -> (index, why)
    # (version, method, kind) -> (index, why): a kind of a method that version alone has
    kinds_only_in: dict[tuple[int, str, str], tuple[int, str]] = dataclass_field(default_factory=dict)
    renamed_types: tuple[str, ...] = ()  # the v1 names of renamedTypes, in order
    whys: dict[tuple[str, int], str] = dataclass_field(default_factory=dict)  # (section, index) -> why
    # Per section, the files merged: (name, entries) in order, to locate an entry.
    parts: tuple[tuple[str, dict[str, int]], ...] = ()

    def type_name(self, version: int, v1_name: str) -> str:
        return self.renames.get(v1_name, v1_name) if version == 2 else v1_name

    def where(self, section: str, index: int) -> tuple[str, int]:
        """The file an entry (by its index over the merged files) comes from, and its index there."""
        for name, counts in self.parts:
            count = counts.get(section, 0)
            if index < count:
                return name, index
            index -= count
        return self.source.name, index

    def applicable(self, v1_types: Iterable[str], v2_types: Iterable[str]) -> Declarations:
        """Without what a release pair does not have: renames whose types are not both there,
        types declared of one version only that both have (one file declares several pairs)."""
        ones, twos = set(v1_types), set(v2_types)

        def keep(table: Mapping[str, str]) -> dict[str, str]:
            return {a: b for a, b in table.items() if a in ones and b in twos}

        renames = keep(self.renames)
        back = {b: a for a, b in renames.items()}
        # A type declared of one version only that this pair has in both keeps its counterpart.
        paired = {
            1: {t for t in ones if renames.get(t, t) in twos and (t in renames or t not in back)},
            2: {t for t in twos if back.get(t, t) in ones and (t in back or t not in renames)},
        }
        only_in = {key: i for key, i in self.only_in.items() if key[1] not in paired[key[0]]}
        return replace(self, renames=renames, one_way=keep(self.one_way), only_in=only_in)

    def transform(self, source: int, type_name: str) -> TransformDecl | None:
        return next((t for t in self.transforms if t.source == source and t.type == type_name), None)

    def under(self, class_names: Mapping[int, Mapping[str, str]]) -> Declarations:
        """The same declarations, naming types by the class names a user chose for them in
        each version. A type both versions name alike in the schema but that a version's
        choice names otherwise is renamed too (after the declared renames, whose indexes
        are their places in the file)."""

        def name(version: int, type_name: str) -> str:
            return class_names.get(version, {}).get(type_name, type_name)

        renames = {name(1, v1): name(2, v2) for v1, v2 in self.renames.items()}
        declared = {*self.renames, *self.renames.values()}
        for schema_name in sorted({n for v in VERSIONS for n in class_names.get(v, {})} - declared):
            if name(1, schema_name) != name(2, schema_name):
                renames.setdefault(name(1, schema_name), name(2, schema_name))
        return replace(
            self,
            renames=renames,
            one_way={name(1, v1): name(2, v2) for v1, v2 in self.one_way.items()},
            renamed_types=tuple(name(1, t) for t in self.renamed_types),
            only_in={(version, name(version, t)): i for (version, t), i in self.only_in.items()},
            enums={name(1, t): i for t, i in self.enums.items()},
            fields=tuple(replace(f, type=name(1, f.type)) for f in self.fields),
            invariants=tuple(replace(inv, type=name(inv.version, inv.type)) for inv in self.invariants),
            transforms=tuple(replace(t, type=name(t.source, t.type)) for t in self.transforms),
        )


def merged(sources: Sequence[Source]) -> tuple[dict[str, Any], tuple[tuple[str, dict[str, int]], ...]]:
    """Several declaration files as one: their sections concatenated in order, after each
    file was checked against the schema. A later file's entry overrides an earlier one
    about the same thing (its place is kept, its content replaced)."""
    problems = []
    for source in sources:
        errors = jsonschema_rs.Draft202012Validator(DECLARATIONS_SCHEMA).iter_errors(source.data)
        problems += [Problem(source.name, pointer(*e.instance_path), e.message) for e in errors]
    if problems:
        raise SchemaError(problems)
    data: dict[str, Any] = {"versions": list(VERSIONS)}
    parts = []
    for source in sources:
        counts = {}
        for section in SECTIONS:
            entries = list(data.get(section, []))
            added = 0
            for entry in source.data.get(section, []):
                key = _key(section, entry)
                at = next((i for i, e in enumerate(entries) if _key(section, e) == key), None)
                if at is None:
                    entries.append(entry)
                    added += 1
                else:
                    entries[at] = entry
            data[section] = entries
            counts[section] = added
        parts.append((source.name, counts))
    return data, tuple(parts)


def _key(section: str, entry: Mapping[str, Any]) -> Any:
    """What an entry is about: two entries with one key declare the same thing."""
    if section == "fields":
        return (entry["type"], entry["v1"], entry["v2"])
    if section in ("renamedTypes", "renamedMethods"):
        return entry["v1"]
    if section == "transforms":
        return (entry["type"], entry["from"])
    if section == "methodsOnlyIn":
        return (entry["method"], entry["version"], entry.get("kind"))
    if section == "invariants":
        return (entry["version"], entry["type"], entry["if"], entry["then"])
    return (entry["type"], entry.get("version"))


def load_declarations(source: Source, *more: Source) -> Declarations:
    """The declarations of ``source`` and, merged after it, of ``more`` (see ``merged``)."""
    data, parts = merged((source, *more))
    problems: list[Problem] = []

    def problem(section: str, index: int, message: str, *rest: str | int) -> None:
        name, local = Declarations.where(_where, section, index)
        problems.append(Problem(name, pointer(section, local, *rest), message))

    _where = Declarations(source, {}, {}, (), (), parts=parts)
    renames: dict[str, str] = {}
    one_way: dict[str, str] = {}
    for r in data.get("renamedTypes", []):
        table = one_way if r.get("oneWay") else renames
        table[r["v1"]] = r["v2"]
    only_in = {(o["version"], o["type"]): i for i, o in enumerate(data.get("typesOnlyIn", []))}
    fields = []
    seen: set[tuple[str, int, str]] = set()
    for i, f in enumerate(data.get("fields", [])):
        if f["v1"] is None and f["v2"] is None:
            problem("fields", i, "names no field: at most one of v1 and v2 may be null")
            continue
        one_side = (f["v1"] is None) != (f["v2"] is None)
        if "fill" in f and not one_side and "when" in f["fill"]:
            problem("fields", i, "a fill condition is for a field of one version only", "fill")
        if one_side and ("value" in f or "accept" in f):
            problem("fields", i, "a field of one version only has no value rule or accept")
        for version in VERSIONS:
            name = f[f"v{version}"]
            if name is not None:
                key = (f["type"], version, name)
                if key in seen:
                    problem("fields", i, f"{f['type']}.{name} (v{version}) is declared twice")
                seen.add(key)
        fill = FillDecl(f["fill"].get("when"), f["fill"]["value"]) if "fill" in f else None
        fields.append(
            FieldDecl(
                i,
                f["type"],
                f["v1"],
                f["v2"],
                f.get("value"),
                frozenset(f.get("accept", ())),
                fill,
                f.get("why", ""),
                f.get("upstream", False),
                f.get("supply"),
                f.get("from"),
                f.get("lossy", False),
            )
        )
    invariants = tuple(
        InvariantDecl(i, d["version"], d["type"], d["if"], d["then"], d.get("why", ""))
        for i, d in enumerate(data.get("invariants", []))
    )
    transforms = tuple(
        TransformDecl(
            i, t["type"], t["from"], t.get("function"), t.get("refuse"), t.get("lossy", False), t.get("why", "")
        )
        for i, t in enumerate(data.get("transforms", []))
    )
    alone = list(enumerate(data.get("methodsOnlyIn", [])))
    methods_only_in = {(m["version"], m["method"]): (i, m["why"]) for i, m in alone if "kind" not in m}
    kinds_only_in = {(m["version"], m["method"], m["kind"]): (i, m["why"]) for i, m in alone if "kind" in m}
    method_renames = {m["v1"]: m["v2"] for m in data.get("renamedMethods", [])}
    enums = {e["type"]: i for i, e in enumerate(data.get("enums", []))}
    if problems:
        raise SchemaError(problems)
    return Declarations(
        source,
        renames,
        only_in,
        tuple(fields),
        invariants,
        one_way=one_way,
        enums=enums,
        transforms=transforms,
        method_renames=method_renames,
        methods_only_in=methods_only_in,
        kinds_only_in=kinds_only_in,
        renamed_types=tuple(r["v1"] for r in data.get("renamedTypes", [])),
        whys={(k, i): e.get("why", "") for k in SECTIONS for i, e in enumerate(data.get(k, []))},
        parts=parts,
    )
