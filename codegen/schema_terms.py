"""The JSON Schema vocabulary every stage shares: where definitions live, how references
are spelled, which sides a method may belong to, and one walk over a schema document.

This module depends on nothing else in ``codegen``, so any stage may import it without
pulling in another stage.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

DEFS = "$defs"
REF_PREFIX = "#/$defs/"
SIDES = {"agentMethods": "agent", "clientMethods": "client", "protocolMethods": "protocol"}
# Upstream marks methods that either peer may call (``mcp/message``) with ``"x-side": "both"``.
BOTH = "both"
KNOWN_SIDES = sorted((*SIDES.values(), BOTH))
# Upstream adds sides over time (2026-11: ``"proxy"``). A side this tool does not know is
# carried through: its methods are listed under ``<side>Methods`` and routed by nobody.
SIDE_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
METHODS_SUFFIX = "Methods"
FEATURE_KEY = "x-feature"
# Keywords whose values are data, not schemas: a walk must not read markers inside them.
VALUE_KEYWORDS = frozenset({"const", "default", "enum", "examples"})
# Keywords whose value maps names to schemas: the map itself is not a schema (a property
# named ``required`` or ``x-feature`` is a name, not a keyword).
SCHEMA_MAPS = frozenset({"$defs", "definitions", "properties", "patternProperties", "dependentSchemas"})
UNION_KEYWORDS = ("anyOf", "oneOf")
# Upstream's lenient-deserialisation markers (boolean keywords on a property).
LENIENT = "x-deserialize-default-on-error"
SKIP_INVALID = "x-deserialize-skip-invalid-items"
NULL_AS_DEFAULT = "x-deserialize-default-on-null"
LENIENT_MARKERS = (LENIENT, SKIP_INVALID, NULL_AS_DEFAULT)

Path = tuple[str | int, ...]


def copy_json(value: Any) -> Any:
    """A deep copy of JSON data (dicts, lists, scalars). A third of ``copy.deepcopy``'s
    time: JSON data has no shared or cyclic parts for a memo to track."""
    if type(value) is dict:
        return {key: copy_json(item) for key, item in value.items()}
    if type(value) is list:
        return [copy_json(item) for item in value]
    return value


def schema_nodes(node: Any, path: Path = ()) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every schema object in a schema document with its path, parents before children.
    Values of ``const``/``default``/``enum``/``examples`` are not entered; the maps of
    ``properties`` (and the like) are entered, but only their values are schemas.

    A caller may change the object it was just handed (replace its values, add keys): its
    children are read after it resumes, so the walk follows the change.
    """
    if isinstance(node, dict):
        yield path, node
        for key, value in node.items():
            if key in SCHEMA_MAPS and isinstance(value, dict):
                for name, schema in value.items():
                    yield from schema_nodes(schema, (*path, key, name))
            elif key not in VALUE_KEYWORDS:
                yield from schema_nodes(value, (*path, key))
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from schema_nodes(item, (*path, i))


def iter_refs(node: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    """Every ``$ref`` value in a JSON value, with the path of the object holding it."""
    for here, obj in schema_nodes(node, path):
        if "$ref" in obj:
            yield here, obj["$ref"]


def features_inside(node: Any) -> set[str]:
    """Every feature marked anywhere in a JSON value."""
    return {obj[FEATURE_KEY] for _, obj in schema_nodes(node) if isinstance(obj.get(FEATURE_KEY), str)}


def variants_key(schema: Any) -> str | None:
    """Which of ``anyOf``/``oneOf`` holds a schema's union variants, if either does."""
    if not isinstance(schema, dict):
        return None
    return next((k for k in UNION_KEYWORDS if isinstance(schema.get(k), list)), None)


def ref_target(ref: Any) -> str | None:
    if isinstance(ref, str) and ref.startswith(REF_PREFIX) and "/" not in ref[len(REF_PREFIX) :]:
        return ref[len(REF_PREFIX) :].replace("~1", "/").replace("~0", "~")
    return None


def alias_target(schema: Any) -> str | None:
    """The one type a definition merely renames, if it is nothing but a reference."""
    if not isinstance(schema, dict):
        return None
    body = {k: v for k, v in schema.items() if k not in ("description", "title") and not k.startswith("x-")}
    if set(body) == {"$ref"}:
        return ref_target(body["$ref"])
    if set(body) == {"allOf"} and isinstance(body["allOf"], list) and len(body["allOf"]) == 1:
        return alias_target(body["allOf"][0])
    return None


def sides_of(marked: object) -> tuple[str, ...]:
    """The meta.json sides an ``x-side`` value stands for."""
    return ("agent", "client") if marked == BOTH else (str(marked),)


def is_side(value: object) -> bool:
    """Could this be an ``x-side`` value at all (known or not)?"""
    return isinstance(value, str) and bool(SIDE_NAME.match(value))


def unknown_sides(marked: object) -> tuple[str, ...]:
    return tuple(s for s in sides_of(marked) if s not in SIDES.values()) if is_side(marked) else ()


def method_sections(meta: dict[str, Any]) -> list[tuple[str, str]]:
    """(section, side) of every method table in a meta: the known ones, then any other
    ``<side>Methods`` table (a base's, or one derived from a base's markers)."""
    extra = sorted(
        (key, key[: -len(METHODS_SUFFIX)])
        for key in meta
        if key.endswith(METHODS_SUFFIX) and key not in SIDES and SIDE_NAME.match(key[: -len(METHODS_SUFFIX)])
    )
    return [*SIDES.items(), *extra]


def message_role(type_name: str) -> str | None:
    """What a method's type is, by its name's suffix: request, response or notification."""
    for suffix, role in (("Request", "request"), ("Response", "response"), ("Notification", "notification")):
        if type_name.endswith(suffix):
            return role
    return None
