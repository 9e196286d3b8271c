"""The declarations file, ``conversions.json``: its schema, and its loading into typed
records (checked against the schema, then for contradictions between entries)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import jsonschema_rs

from ...errors import Problem, SchemaError, pointer
from ...protocol.load import Source

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
class FillDecl:
    """Set a target-only field to ``value`` when the field ``when`` is non-null."""

    when: str
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
    """One entry of ``fields``: a field's names in both versions and how its value converts."""

    index: int
    type: str  # v1 type name
    v1: str | None
    v2: str | None
    value: str | None
    accept: frozenset[str]
    fill: FillDecl | None
    why: str
    upstream: bool = False  # about a field only full upstream schemas have: the fragments may lack it

    def name(self, version: int) -> str | None:
        return self.v1 if version == 1 else self.v2


@dataclass(frozen=True)
class Declarations:
    """A loaded and checked ``conversions.json``."""

    source: Source
    renames: dict[str, str]  # v1 type -> v2 type
    only_in: dict[tuple[int, str], int]  # (version, type) -> index
    fields: tuple[FieldDecl, ...]
    invariants: tuple[InvariantDecl, ...]

    def type_name(self, version: int, v1_name: str) -> str:
        return self.renames.get(v1_name, v1_name) if version == 2 else v1_name

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
            only_in={(version, name(version, t)): i for (version, t), i in self.only_in.items()},
            fields=tuple(replace(f, type=name(1, f.type)) for f in self.fields),
            invariants=tuple(replace(inv, type=name(inv.version, inv.type)) for inv in self.invariants),
        )


def load_declarations(source: Source) -> Declarations:
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
        fill = FillDecl(f["fill"]["when"], f["fill"]["value"]) if "fill" in f else None
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
            )
        )
    invariants = tuple(
        InvariantDecl(i, d["version"], d["type"], d["if"], d["then"], d.get("why", ""))
        for i, d in enumerate(data.get("invariants", []))
    )
    if problems:
        raise SchemaError(problems)
    return Declarations(source, renames, only_in, tuple(fields), invariants)
