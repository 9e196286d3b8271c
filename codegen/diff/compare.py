"""Schema diff: what changed between two schema sets, in protocol terms, and whom it breaks.

Both sides go through the normal pipeline (load, validate, feature selection with every
declared feature kept so that feature markers stay visible, IR) and are compared as IR:
types by name, their fields, enum values, union variants, aliases, and the method tables.
Expressions are compared in the IR's normalised form, so respellings (``type: [X, "null"]``
vs ``anyOf: [X, {type: null}]``) are not changes, and a change inside a referenced type is
reported once, at its definition (references compare by name). A type that disappears
while another with the same shape appears is a rename.

Whether a change breaks anyone follows ``RULES`` (also the table in docs/diff.md). On the
wire: per rule and per direction (an old sender's message read by a new receiver, a new
sender's read by an old receiver), the message roles in which it breaks; which roles reach
a type, and who sends and receives them, comes from ``usage``. In code: whether code
written against the generated package still imports, type-checks and behaves.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..protocol.ir import Protocol, shape
from .changes import Change, Where, code_breaks
from .definitions import DefinitionComparer
from .methods import MethodComparer
from .rules import RULES
from .usage import DIRECTIONS


class _Comparer(DefinitionComparer, MethodComparer):
    """Both protocols compared: types added, removed and renamed, then each type and the
    method tables (``definitions``, ``methods``)."""

    def run(self) -> list[Change]:
        old_types, new_types = self.old.types, self.new.types
        removed = sorted(set(old_types) - set(new_types))
        added = sorted(set(new_types) - set(old_types))
        self._find_renames(removed, added)
        for name in added:
            t = new_types[name]
            w = Where(name, self._uses(None, name), t, t, t.feature, self.location(t))
            if name not in self.renames.values():
                self.at(w, "type-added", "type", name, "added", f"new {t.kind} type")
        for name in removed:
            t = old_types[name]
            w = Where(name, self._uses(name, None), t, t, t.feature, self.location(t, side="old"))
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
            who = ("peers that speak only this version",) if r.wire else ()
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
                    directions=tuple(d for d in DIRECTIONS if r.roles(d)),
                    code_breaks=code_breaks(r, "version", frozenset()),
                )
            )
            continue
        changes += _Comparer(
            o, n, old_files or {}, new_files or {}, (old_raw or {}).get(version), (new_raw or {}).get(version)
        ).run()
    return sorted(changes, key=lambda c: (c.version, c.group == "methods", c.group, c.path, c.rule))
