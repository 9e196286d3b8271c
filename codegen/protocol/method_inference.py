"""For upstream releases: the types of the methods a release's meta file lists
but its schema does not mark, found by upstream's naming convention.

Releases up to v0.0.31 mark no type with ``x-method``, and later ones up to v0.2.3 mark
only some. Their types are named after their method instead (``session/new`` ->
``NewSessionRequest``, ``session/update`` -> ``SessionNotification``), and a method whose
result is empty has no type at all, only a variant of its side's response union
(``{"title": "AuthenticateResponse", "type": "null"}``). ``infer_method_types`` marks what
the convention matches and adds those empty results as definitions, in memory, before
validation; each method it completes gets a note. What it cannot match is left to
validation, which refuses it.

The convention: a method's words (its path split at ``/``, ``_`` and camelCase,
lowercased) must include every word of a type's stem (its name less ``Request``,
``Response`` or ``Notification``); the largest such stem wins, a tie is an error. The
candidates are the unmarked members of upstream's union for the method's side and role:
an agent method's request is a ``ClientRequest`` (the requests a client sends), its
response an ``AgentResponse``, its notification a ``ClientNotification``; a client
method's are an ``AgentRequest``, a ``ClientResponse`` and an ``AgentNotification``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from ..errors import Problem, SchemaError, pointer
from ..schema_terms import DEFS, copy_json, message_role, method_sections, ref_target, sides_of, variants_key
from .load import Source, VersionSources
from .validate import is_class_name

# (side of the method, role of the type) -> the union of upstream that lists such types.
UNIONS = {
    ("agent", "request"): "ClientRequest",
    ("agent", "response"): "AgentResponse",
    ("agent", "notification"): "ClientNotification",
    ("client", "request"): "AgentRequest",
    ("client", "response"): "ClientResponse",
    ("client", "notification"): "AgentNotification",
}
_SUFFIXES = {"request": "Request", "response": "Response", "notification": "Notification"}
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def _words(text: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _WORD.findall(text))


@dataclass(frozen=True)
class _Candidate:
    name: str
    role: str
    union: str
    added: dict[str, Any] | None = None  # a union variant that becomes this definition

    @property
    def stem(self) -> frozenset[str]:
        return _words(self.name.removesuffix(_SUFFIXES[self.role]))

    def describe(self) -> str:
        if self.added is None:
            return f"{self.role} {self.name}"
        what = "null" if self.added.get("type") == "null" else "an empty object"
        return f"{self.role} {self.name} ({what}, as the variant of {self.union} of that title says)"


def _empty(variant: dict[str, Any]) -> bool:
    """A titled union variant that says a result is null or an empty object."""
    shape = {k: v for k, v in variant.items() if k not in ("title", "description")}
    return shape == {"type": "null"} or (
        shape.get("type") == "object" and not shape.get("properties") and set(shape) <= {"type", "properties"}
    )


def _candidates(defs: dict[str, Any], side: str, role: str) -> list[_Candidate]:
    union_name = UNIONS.get((side, role), "")
    union: Any = defs.get(union_name)
    key = variants_key(union)
    out = []
    for variant in union[key] if key else ():
        if not isinstance(variant, dict):
            continue
        target, title = ref_target(variant.get("$ref")), variant.get("title")
        if target is not None:
            if isinstance(defs.get(target), dict) and "x-method" not in defs[target] and message_role(target) == role:
                out.append(_Candidate(target, role, union_name))
        elif isinstance(title, str) and is_class_name(title) and title not in defs and message_role(title) == role:
            if _empty(variant):
                out.append(_Candidate(title, role, union_name, {k: v for k, v in variant.items() if k != "title"}))
    return [c for c in out if c.stem]


def _best(method: str, candidates: list[_Candidate]) -> list[_Candidate]:
    """The candidates with the largest stem the method's words include (one, or a tie)."""
    words = _words(method)
    fits = [c for c in candidates if c.stem <= words]
    top = max((len(c.stem) for c in fits), default=0)
    return [c for c in fits if len(c.stem) == top]


def _marked_roles(defs: dict[str, Any]) -> dict[tuple[str, str], set[str | None]]:
    """(method, side) -> the roles of the types marked for it."""
    roles: dict[tuple[str, str], set[str | None]] = {}
    for name, d in defs.items():
        if isinstance(d, dict) and isinstance(d.get("x-method"), str):
            for side in sides_of(d.get("x-side")):
                roles.setdefault((d["x-method"], side), set()).add(message_role(name))
    return roles


def _matches(meta: Source, defs: dict[str, Any]) -> dict[tuple[str, str, str], list[_Candidate]]:
    """(section, key, side) of each listed method that lacks types -> those found by name."""
    roles = _marked_roles(defs)
    found: dict[tuple[str, str, str], list[_Candidate]] = {}
    problems = []
    for section, side in method_sections(meta.data):
        listed = meta.data.get(section)
        for key, method in listed.items() if isinstance(listed, dict) and (side, "request") in UNIONS else ():
            have, chosen = set(roles.get((method, side), ())), []
            for step in (("request", "notification"), ("response",)):
                if not isinstance(method, str) or have & set(step) or (step == ("response",) and "request" not in have):
                    continue
                best = _best(method, [c for role in step for c in _candidates(defs, side, role)])
                if len(best) > 1:
                    names = " and ".join(sorted(c.name for c in best))
                    problems.append(
                        Problem(meta.name, pointer(section, key), f"{method!r} is named like {names} alike")
                    )
                elif best:
                    chosen.append(best[0])
                    have.add(best[0].role)
            if chosen:
                found[(section, key, side)] = chosen
    claimed: dict[str, str] = {}
    for (section, key, _), chosen in sorted(found.items()):
        for c in chosen:
            if c.name in claimed:
                message = f"{c.name} is named like this method and {claimed[c.name]!r}"
                problems.append(Problem(meta.name, pointer(section, key), message))
            claimed.setdefault(c.name, meta.data[section][key])
    if problems:
        raise SchemaError(problems)
    return found


def infer_method_types(sources: VersionSources) -> VersionSources:
    """``sources`` with the types of every listed method that lacks them marked (see the
    module docstring); the same object where nothing is missing or nothing matches. Runs
    before validation: input it cannot read is left to validation to report."""
    if not isinstance(sources.meta.data, dict):
        return sources
    files = [src.data.get(DEFS) if isinstance(src.data, dict) else None for src in sources.schemas]
    defs = [d if isinstance(d, dict) else {} for d in files]
    owner = {name: i for i, file_defs in enumerate(defs) for name in file_defs}
    found = _matches(sources.meta, {name: defs[i][name] for name, i in owner.items()})
    if not found:
        return sources
    data = [copy_json(src.data) for src in sources.schemas]
    notes = []
    for (section, key, side), chosen in sorted(found.items()):
        markers = {"x-method": sources.meta.data[section][key], "x-side": side}
        for c in chosen:
            if c.added is not None:  # the definition goes beside the union that names it
                data[owner[c.union]][DEFS][c.name] = {**c.added, **markers}
            else:
                here = data[owner[c.name]][DEFS]
                here[c.name] = {**here[c.name], **markers}
        by_name = ", ".join(c.describe() for c in chosen)
        notes.append(Problem(sources.meta.name, pointer(section, key), f"no type is marked for it; by name: {by_name}"))
    schemas = tuple(Source(src.name, src.sha256, d) for src, d in zip(sources.schemas, data, strict=True))
    return replace(sources, schemas=schemas, notes=(*sources.notes, *notes))
