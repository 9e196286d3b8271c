"""The changes a schema comparison finds, the errors that leave it incomplete (a side that
``generate`` refuses), and the recorder every comparer builds on: it judges each change by
``RULES`` (whom it breaks on the wire, in each direction, and in code) and locates it in the
schema files."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import SchemaError, pointer
from ..protocol.ir import Protocol, TypeDef, TypeExpr
from ..schema_terms import DEFS
from .rules import RULES, Rule
from .usage import DIRECTIONS, UNREACHED, Use, usage

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
    directions: tuple[str, ...] = ()  # the wire directions it breaks: "old-to-new", "new-to-old"
    code_breaks: tuple[str, ...] = ()  # whose code breaks, in words: "clients' code that reads it"

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
            "codeBreaks": list(self.code_breaks),
            "directions": list(self.directions),
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


@dataclass(frozen=True)
class Finding:
    """An error that leaves the comparison incomplete: not a change, and never compatible."""

    kind: str  # "generation-failed"
    side: Which  # the input it is in
    file: str  # as shown to users; "" when the error names none
    pointer: str
    message: str
    subject: str = ""  # what it is about, by name: "ListSessionsResponse.nextCursor"
    line: int = 0  # the line of ``file`` the pointer is at (0: not known)

    def as_json(self) -> dict[str, str | int]:
        return dataclasses.asdict(self)


def subject_of(document: Any, json_pointer: str) -> str:
    """What a pointer into a schema or a declaration file is about, by name: ``Type.field``
    (a schema's property, a field declaration), a type, or a method; "" when neither."""
    parts = [p.replace("~1", "/").replace("~0", "~") for p in json_pointer.split("/")[1:]]
    if len(parts) >= 2 and parts[0] == DEFS:
        return f"{parts[1]}.{parts[3]}" if len(parts) >= 4 and parts[2] == "properties" else parts[1]
    entries = document.get(parts[0]) if parts and isinstance(document, dict) else None
    if not (isinstance(entries, list) and len(parts) >= 2 and parts[1].isdigit() and int(parts[1]) < len(entries)):
        return ""
    entry = entries[int(parts[1])]
    names = {k: v for k, v in entry.items() if isinstance(v, str)} if isinstance(entry, dict) else {}
    if "type" in names:  # fields, invariants, enums, transforms, typesOnlyIn (named by the v1 type)
        field = names.get("v1") or names.get("v2") or names.get("if")
        return f"{names['type']}.{field}" if field else names["type"]
    if "method" in names:
        return names["method"]
    old, new = names.get("v1"), names.get("v2")  # renamed types and methods
    return f"{old} (v2: {new})" if old and new and old != new else old or new or ""


def code_breaks(rule: Rule, kind: str, uses: frozenset[Use]) -> tuple[str, ...]:
    """Whose code a change breaks, in words: the code that sets the item (its messages'
    senders', or callers' for a method) and the code that reads it (receivers', handlers')."""
    if not rule.code:
        return ()
    if kind == "version":
        return ("code that imports its package",)
    sets, reads = ("calls", "handles") if kind == "method" else ("sets", "reads")

    def whose(parties: set[str]) -> str:  # "" where some use is any peer's, or none is known
        return "" if not parties or "" in parties else " and ".join(f"{p}'" for p in sorted(parties)) + " "

    writers, readers = whose({u.sender for u in uses}), whose({u.receiver for u in uses})
    hits = rule.code_hits
    if len(hits) == 2 and writers == readers:
        return (f"{writers}code that {sets} or {reads} it",)
    sides = (("sets", writers, sets), ("reads", readers, reads))
    return tuple(f"{who}code that {verb} it" for hit, who, verb in sides if hit in hits)


def generation_failed(side: Which, exc: Exception) -> list[Finding]:
    """``generate`` refused one side: one finding per problem it named."""
    if isinstance(exc, SchemaError) and exc.problems:
        return [Finding("generation-failed", side, p.file, p.pointer, p.message) for p in exc.problems]
    reason = str(exc).splitlines()[0] if str(exc) else ""
    return [Finding("generation-failed", side, "", "", f"{type(exc).__name__}: {reason}".rstrip(": "))]


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
    errors: list[Finding] = dataclasses.field(default_factory=list)

    @property
    def breaking(self) -> list[Change]:
        return [c for c in self.changes if c.breaking]


def _variant_pointer(protocol: Protocol, name: str, as_written: dict[str, Any]) -> str | None:
    """Where the inline union variant that the IR hoisted as ``name`` is written: its place in
    the union when hoisting kept the union's length, else the union's list."""
    for union in protocol.types.values():
        for variant in union.variants:
            if variant.kind == "ref" and variant.ref == name:
                key, index = variant_place(union, variant)
                written = as_written.get(union.name, {}).get(key)
                same = isinstance(written, list) and len(written) == len(union.variants)
                return f"{union.pointer}/{key}" + (f"/{index}" if same else "")
    return None


def variant_place(union: TypeDef, variant: TypeExpr) -> tuple[str, str]:
    """(``anyOf`` or ``oneOf``, index) of a definition's variant, from its IR pointer."""
    key, _, index = variant.pointer[len(union.pointer) + 1 :].partition("/")
    return key or "anyOf", index


@dataclass(frozen=True)
class Where:
    """Where a comparison is: the type it is listed under and what a change there hits."""

    group: str
    uses: frozenset[Use]
    old_def: TypeDef
    new_def: TypeDef
    feature: str | None
    location: str


class Recorder:
    """One protocol version compared: what both sides hold, the renames found, the changes so far."""

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
        directions = []
        for direction in DIRECTIONS:
            roles = r.roles(direction)
            hit = {u.who(direction) for u in uses if u.role in roles}
            if roles and not uses:  # not reachable from any message: assume every role
                hit = {UNREACHED[direction]}
            breaks |= hit
            directions += [direction] if hit else []
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
                directions=tuple(directions),
                code_breaks=code_breaks(r, kind, uses),
            )
        )

    def at(self, w: Where, rule: str, kind: str, path: str, change: ChangeKind, detail: str, **kw: Any) -> None:
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
