"""Validate: check the loaded fragments against JSON Schema's meta-schema and
this project's rules, so that later stages may rely on them.

Every problem is reported as ``file: /json/pointer: message``; all problems found are
reported together, sorted, so that one run shows everything to fix.
"""

from __future__ import annotations

import builtins
import keyword
import re
from typing import Any

import jsonschema_rs

from ..errors import Problem, SchemaError, pointer
from ..schema_terms import (
    DEFS,
    KNOWN_SIDES,
    LENIENT_MARKERS,
    METHODS_SUFFIX,
    REF_PREFIX,
    SIDES,
    alias_target,
    is_side,
    iter_refs,
    message_role,
    method_sections,
    ref_target,
    schema_nodes,
    sides_of,
    unknown_sides,
)
from .load import Source, VersionSources
from .names import method_key_problem, property_name_problems
from .patterns import pattern_problems

# What may name a type, a method, a method key and a feature. Anything else is refused
# rather than mangled: these names become Python identifiers and dictionary keys.
TYPE_NAME = re.compile(r"[A-Z][A-Za-z0-9]*\Z")
METHOD_NAME = re.compile(r"(\$/)?[a-z][A-Za-z0-9_]*(/[a-z][A-Za-z0-9_]*)*\Z")
METHOD_KEY = re.compile(r"[a-z][a-z0-9_]*\Z")
FEATURE_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
# Names the generated models module imports or defines itself, pydantic's best-known own
# names, and Python's builtin classes and constants (``Exception``, ``None``): a class so
# named would shadow them or read as them in users' imports.
RESERVED_TYPE_NAMES = frozenset(
    {
        "Annotated",
        "Any",
        "BaseModel",
        "ConfigDict",
        "Field",
        "Lenient",
        "Literal",
        "NotOneOf",
        "PrivateAttr",
        "RootModel",
        "StrictBool",
        "StrictFloat",
        "StrictInt",
        "StrictStr",
        "TAG",
        "Tagged",
        "TypeAdapter",
        "TypeAlias",
        "TypeAliasType",
        "ValidationError",
        *(name for name in dir(builtins) if name[:1].isupper()),
        # Builtins of newer Pythons than some in range: the same names refused on any of them.
        "BaseExceptionGroup",
        "ExceptionGroup",
        "PythonFinalizationError",
    }
)


def is_class_name(name: str) -> bool:
    """Whether ``name`` can be a generated class's name (or an extra public one)."""
    return bool(TYPE_NAME.match(name)) and not keyword.iskeyword(name) and name not in RESERVED_TYPE_NAMES


META_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["version"],
    "additionalProperties": False,
    "properties": {
        "version": {"type": "integer", "minimum": 1},
        "features": {"type": "object", "additionalProperties": {"type": "string"}},
        **{section: {"type": "object", "additionalProperties": {"type": "string"}} for section in SIDES},
    },
    # A table for a side this tool does not know yet (a base's ``proxyMethods``).
    "patternProperties": {
        f"^[a-z][a-z0-9_]*{METHODS_SUFFIX}$": {"type": "object", "additionalProperties": {"type": "string"}}
    },
}


# jsonschema-rs carries the draft 2020-12 meta-schema and checks a full upstream schema in
# milliseconds (the pure-Python validator needs seconds for the same document).
_META_SCHEMA_CHECK = jsonschema_rs.Draft202012Validator({"$ref": "https://json-schema.org/draft/2020-12/schema"})
_META_JSON_CHECK = jsonschema_rs.Draft202012Validator(META_SCHEMA)


def _meta_schema_problems(src: Source) -> list[Problem]:
    return [
        Problem(src.name, pointer(*err.instance_path), f"not valid JSON Schema: {err.message}")
        for err in _META_SCHEMA_CHECK.iter_errors(src.data)
    ]


def _x_keyword_problems(src: Source, features: set[str]) -> list[Problem]:
    problems: list[Problem] = []
    for path, node in schema_nodes(src.data):
        for key, value in node.items():
            if not key.startswith("x-"):
                continue
            here = pointer(*path, key)
            if key == "x-feature":
                if not isinstance(value, str) or not FEATURE_NAME.match(value):
                    problems.append(
                        Problem(src.name, here, f"feature name must match {FEATURE_NAME.pattern}: {value!r}")
                    )
                elif value not in features:
                    problems.append(
                        Problem(src.name, here, f'unknown feature {value!r}; declare it under "features" in meta.json')
                    )
            elif key == "x-method" and (not isinstance(value, str) or not METHOD_NAME.match(value)):
                problems.append(Problem(src.name, here, f"method name must match {METHOD_NAME.pattern}: {value!r}"))
            elif key == "x-side" and not is_side(value):
                problems.append(
                    Problem(src.name, here, f"x-side must be one of {KNOWN_SIDES} or another side's name: {value!r}")
                )
            elif key in LENIENT_MARKERS and not isinstance(value, bool):
                problems.append(Problem(src.name, here, f"{key} must be a boolean"))
    return problems


# The x-* keywords this tool knows: it acts on them, or (x-docs-ignore: documentation
# only) knows they need nothing. Upstream's others are carried through without effect
# and named in generate's summary.
UNDERSTOOD_KEYWORDS = frozenset(
    {
        "x-feature",
        "x-method",
        "x-side",
        *LENIENT_MARKERS,
        "x-docs-ignore",
    }
)


def not_understood(src: Source) -> list[str]:
    """What of upstream's extension vocabulary in one schema this tool does not act on."""
    keywords: dict[str, int] = {}
    sides: dict[str, set[str]] = {}

    for _, node in schema_nodes(src.data):
        for key in node:
            if key.startswith("x-") and key not in UNDERSTOOD_KEYWORDS:
                keywords[key] = keywords.get(key, 0) + 1
        for side in unknown_sides(node.get("x-side")) if "x-method" in node else ():
            sides.setdefault(side, set()).add(str(node["x-method"]))
    return [
        *(f"x-side {s!r} ({', '.join(sorted(m))}: generated, routed by nobody)" for s, m in sorted(sides.items())),
        *(f"{key} ({n} use{'' if n == 1 else 's'}, ignored)" for key, n in sorted(keywords.items())),
    ]


def declared_features(meta: Source) -> dict[str, str]:
    features = meta.data.get("features", {}) if isinstance(meta.data, dict) else {}
    return dict(features) if isinstance(features, dict) else {}


def validate_version(sources: VersionSources, expected_version: int | None = None) -> None:  # noqa: C901 - one pass collecting every problem of a version, in reading order
    """Raise SchemaError listing every problem in one version's fragments and meta.

    Upstream's extension vocabulary grows with each release, so an ``x-side`` (and a meta
    method table) for a side this tool does not know is carried through, not refused:
    generation and diff must work on every release. A typo is still caught where it
    matters: when the meta lists the method for a known side (see ``_method_problems``);
    elsewhere ``generate`` names the unknown side in its summary.
    """
    problems: list[Problem] = []
    meta = sources.meta
    for err in _META_JSON_CHECK.iter_errors(meta.data):
        problems.append(Problem(meta.name, pointer(*err.instance_path), err.message))
    if problems:
        raise SchemaError(problems)
    if expected_version is not None and meta.data["version"] != expected_version:
        problems.append(
            Problem(meta.name, "/version", f"is {meta.data['version']}, but the directory says v{expected_version}")
        )
    features = declared_features(meta)
    for name in features:
        if not FEATURE_NAME.match(name):
            problems.append(
                Problem(meta.name, pointer("features", name), f"feature name must match {FEATURE_NAME.pattern}")
            )
        elif keyword.iskeyword(name):
            # Feature names become keyword arguments (the router's runtime gates).
            problems.append(Problem(meta.name, pointer("features", name), f"feature name {name!r} is a Python keyword"))

    # Where each definition lives, across all fragments of this version.
    defs: dict[str, tuple[Source, Any]] = {}
    for src in sources.schemas:
        found = _meta_schema_problems(src)
        if not isinstance(src.data, dict) or not isinstance(src.data.get(DEFS), dict) or not src.data[DEFS]:
            found.append(Problem(src.name, "", f"a fragment must have a non-empty {DEFS} object"))
        problems += found
        if found:
            continue
        problems += _x_keyword_problems(src, set(features))
        for name, schema in src.data[DEFS].items():
            here = pointer(DEFS, name)
            if name in defs:
                problems.append(Problem(src.name, here, f"{name} is also defined in {defs[name][0].name}"))
                continue
            if not TYPE_NAME.match(name) or keyword.iskeyword(name):
                problems.append(
                    Problem(
                        src.name, here, f"type name must match {TYPE_NAME.pattern} (it becomes a Python class name)"
                    )
                )
            elif name in RESERVED_TYPE_NAMES:
                problems.append(Problem(src.name, here, f"type name {name!r} is reserved by the generated module"))
            defs[name] = (src, schema)
    if problems:
        raise SchemaError(problems)

    for src in sources.schemas:
        for path, ref in iter_refs(src.data):
            target = ref_target(ref)
            if target is None:
                problems.append(
                    Problem(
                        src.name,
                        pointer(*path, "$ref"),
                        f"only local references of the form {REF_PREFIX}Name are supported: {ref!r}",
                    )
                )
            elif target not in defs:
                problems.append(Problem(src.name, pointer(*path, "$ref"), f"reference to undefined type {target!r}"))
        problems += property_name_problems(src, {name: schema for name, (_, schema) in defs.items()})
        problems += pattern_problems(src)
    problems += _alias_cycles(defs)
    problems += _method_problems(sources, defs)
    if problems:
        raise SchemaError(problems)


def _alias_cycles(defs: dict[str, tuple[Source, Any]]) -> list[Problem]:
    problems = []
    for start in sorted(defs):
        seen = [start]
        target = alias_target(defs[start][1])
        while target is not None and target in defs:
            if target == start:
                src = defs[start][0]
                problems.append(
                    Problem(src.name, pointer(DEFS, start), "circular reference: " + " -> ".join([*seen, start]))
                )
                break
            if target in seen:
                break
            seen.append(target)
            target = alias_target(defs[target][1])
    return problems


def _method_problems(sources: VersionSources, defs: dict[str, tuple[Source, Any]]) -> list[Problem]:
    """Methods: meta.json and the x-method markers must agree, and each request has a response."""
    listed, declared = _listed_methods(sources.meta)
    marked_problems, marked = _marked_methods(sources.meta, defs, declared)
    return listed + marked_problems + _pairing_problems(sources.meta, marked)


def _listed_methods(meta: Source) -> tuple[list[Problem], set[tuple[str, str]]]:
    """The meta file's method tables: keys and names as the rules say, none listed twice;
    and the (method, side) pairs they declare."""
    problems: list[Problem] = []
    declared: set[tuple[str, str]] = set()  # (method, side)
    for section, side in method_sections(meta.data):
        for key, method in meta.data.get(section, {}).items():
            here = pointer(section, key)
            if not METHOD_KEY.match(key):
                problems.append(Problem(meta.name, here, f"method key must match {METHOD_KEY.pattern}"))
            elif method_key_problem(key):
                problems.append(Problem(meta.name, here, str(method_key_problem(key))))
            if not METHOD_NAME.match(method):
                problems.append(Problem(meta.name, here, f"method name must match {METHOD_NAME.pattern}: {method!r}"))
            elif (method, side) in declared:
                problems.append(Problem(meta.name, here, f"method {method!r} is listed twice"))
            declared.add((method, side))
    return problems, declared


def _marked_methods(
    meta: Source, defs: dict[str, tuple[Source, Any]], declared: set[tuple[str, str]]
) -> tuple[list[Problem], dict[tuple[str, str], dict[str, list[str]]]]:
    """The types marked with x-method: each needs x-side and a message role in its name, and
    its method listed for its side; and, per (method, side), the marked types by role."""
    problems: list[Problem] = []
    marked: dict[tuple[str, str], dict[str, list[str]]] = {}
    for name, (src, schema) in sorted(defs.items()):
        if not isinstance(schema, dict) or "x-method" not in schema:
            continue
        marked_method, marked_side = str(schema["x-method"]), schema.get("x-side")
        here = pointer(DEFS, name)
        role = message_role(name)
        if marked_side is None:
            problems.append(Problem(src.name, here, "a type with x-method needs x-side"))
        elif role is None:
            problems.append(
                Problem(src.name, here, "a type with x-method must be named *Request, *Response or *Notification")
            )
        elif is_side(marked_side):  # (an x-side that is no side: reported by _x_keyword_problems)
            problems += _marked_side_problems(meta, src, name, marked_method, marked_side, declared, role, marked)
    return problems, marked


def _marked_side_problems(
    meta: Source,
    src: Source,
    name: str,
    method: str,
    marked_side: Any,
    declared: set[tuple[str, str]],
    role: str,
    marked: dict[tuple[str, str], dict[str, list[str]]],
) -> list[Problem]:
    """One marked type's sides against the meta file's tables; records it in ``marked``."""
    listed_elsewhere = sorted(s for m, s in declared if m == method and s != marked_side)
    if unknown_sides(marked_side) and listed_elsewhere:
        # Upstream's new sides are carried through, but a method the meta gives to a
        # known side and a type gives to another is a typo, not new vocabulary.
        message = (
            f"x-side must be one of {KNOWN_SIDES}: {marked_side!r}"
            f" ({meta.name} lists {method!r} for {', '.join(listed_elsewhere)})"
        )
        return [Problem(src.name, pointer(DEFS, name, "x-side"), message)]
    problems = []
    for side in sides_of(marked_side):
        if side not in SIDES.values() and (method, side) not in declared:
            continue  # an unknown side without a method table: its types are still generated
        if (method, side) not in declared:
            message = f"method {method!r} ({side} side) is not listed in {meta.name}"
            problems.append(Problem(src.name, pointer(DEFS, name, "x-method"), message))
        marked.setdefault((method, side), {}).setdefault(role, []).append(name)
    return problems


def _pairing_problems(meta: Source, marked: dict[tuple[str, str], dict[str, list[str]]]) -> list[Problem]:
    """Each listed method's types: one of each role; a request with its response, or a
    notification."""
    problems: list[Problem] = []
    for section, side in method_sections(meta.data):
        for key, method in meta.data.get(section, {}).items():
            roles = marked.get((method, side), {})
            here = pointer(section, key)
            for role, names in roles.items():
                if len(names) > 1:
                    problems.append(
                        Problem(meta.name, here, f"method {method!r} has several {role} types: {', '.join(names)}")
                    )
            if "notification" in roles:
                # A notification beside a complete request/response pair is a method that may
                # be sent either way (upstream's ``mcp/message``); half a pair is a mistake.
                if ("request" in roles) != ("response" in roles):
                    problems.append(Problem(meta.name, here, f"method {method!r} is both a notification and a request"))
            elif "request" not in roles:
                problems.append(
                    Problem(
                        meta.name,
                        here,
                        f'method {method!r} has no request type (a type with "x-method": {method!r} named *Request)',
                    )
                )
            elif "response" not in roles:
                problems.append(
                    Problem(meta.name, here, f"method {method!r} has a request but no response type (*Response)")
                )
    return problems
