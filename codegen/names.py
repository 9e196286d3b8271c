"""Part of stage 2, validate: the Python names that schema text turns into.

Property names become model attributes and method keys become handler method names.
datamodel-code-generator would mangle a name that cannot be an attribute (``class`` ->
``class_``, ``json`` -> ``json_``) and number colliding ones (``foo_bar``, ``foo_bar_1``),
in an order that depends on the schema; the IR's ``python_field_name`` (which conversions
and dispatch rely on) would then disagree with the model. So every such name is checked
here and refused with its JSON pointer instead: what is accepted maps to exactly one
attribute, the same in the IR and in the model.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Iterator
from typing import Any

from .errors import Problem, pointer
from .load import Source

# What a property's Python name (``ir.python_field_name``) must look like: ASCII only, so
# that NFKC normalisation of identifiers cannot merge two names (``ｆoo`` is ``foo``), and no
# leading underscore (pydantic treats those as private attributes, not fields).
FIELD_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
# Public attributes of pydantic's BaseModel that a field must not shadow (a fixed list, so
# that the rule does not change with the installed pydantic); ``model_*`` is refused as a whole.
BASEMODEL_ATTRIBUTES = frozenset(
    {
        "construct",
        "copy",
        "dict",
        "from_orm",
        "json",
        "parse_file",
        "parse_obj",
        "parse_raw",
        "schema",
        "schema_json",
        "update_forward_refs",
        "validate",
    }
)
SKIPPED_KEYWORDS = ("const", "default", "enum", "examples")


def _objects(node: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple[str | int, ...], dict[str, Any]]]:
    """Every schema object with a ``properties`` object, with its path (values are not schemas)."""
    if isinstance(node, dict):
        if isinstance(node.get("properties"), dict):
            yield path, node
        for key, value in node.items():
            if key not in SKIPPED_KEYWORDS:
                yield from _objects(value, (*path, key))
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _objects(item, (*path, i))


def _inherited(schema: dict[str, Any], defs: dict[str, Any], seen: frozenset[str] = frozenset()) -> list[str]:
    """Property names an object inherits through ``allOf: [{"$ref": ...}]`` (its model's bases)."""
    from .validate import ref_target

    names: list[str] = []
    for part in schema.get("allOf", []) if isinstance(schema.get("allOf"), list) else []:
        target = ref_target(part.get("$ref")) if isinstance(part, dict) else None
        base = defs.get(target) if target is not None and target not in seen else None
        if isinstance(base, dict):
            names += _inherited(base, defs, seen | {str(target)})
            names += list(base.get("properties", {})) if isinstance(base.get("properties"), dict) else []
    return names


def field_name_problem(name: str) -> str | None:
    """Why a property name cannot name a model field, or None when it can."""
    from .ir import python_field_name

    py = python_field_name(name)
    if not FIELD_NAME.match(py):
        return (
            f"property name {name!r} does not map to a Python attribute (its Python name {py!r} must match "
            f"{FIELD_NAME.pattern}); rename it"
        )
    if keyword.iskeyword(py):
        return f"property name {name!r} becomes {py!r}, a Python keyword; rename it"
    if py in BASEMODEL_ATTRIBUTES or py.startswith("model_"):
        return f"property name {name!r} becomes {py!r}, which pydantic's BaseModel reserves; rename it"
    return None


def property_name_problems(src: Source, defs: dict[str, Any]) -> list[Problem]:
    """Each property maps to a valid field name, distinct within its object and its bases."""
    from .ir import python_field_name

    problems: list[Problem] = []
    for path, schema in _objects(src.data):
        taken = {python_field_name(n): n for n in _inherited(schema, defs)}
        for name in schema["properties"]:
            here = pointer(*path, "properties", name)
            reason = field_name_problem(name)
            if reason:
                problems.append(Problem(src.name, here, reason))
                continue
            py = python_field_name(name)
            other = taken.get(py)
            if other is not None and other != name:
                problems.append(
                    Problem(src.name, here, f"properties {other!r} and {name!r} both become the Python field {py!r}")
                )
            taken.setdefault(py, name)
    return problems


def method_key_problem(key: str) -> str | None:
    """Method keys name handler methods in generated code; a keyword cannot."""
    if keyword.iskeyword(key):
        return f"method key {key!r} is a Python keyword (it names a handler method); rename it"
    return None
