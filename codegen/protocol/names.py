"""Part of validation: the Python names that schema text turns into.

Property names become model attributes and method keys become handler method names.
A property name that cannot be an attribute is mangled by datamodel-code-generator
(``class`` -> ``class_``, ``json`` -> ``json_``, ``tricky"Name`` -> ``tricky_name``);
``model_field_name`` asks the same resolver, with the options ``render`` uses, so the IR
knows each field's Python name. What that resolver would settle by numbering
(``foo_bar``, ``foo_bar_1``, in an order that depends on the schema) is refused here
instead, with its JSON pointer: two properties of one object (or of it and its bases)
that become one name, and names that are not ASCII (Python applies NFKC to identifiers,
so ``\uff46oo`` *is* ``foo``).
"""

from __future__ import annotations

import functools
import keyword
from typing import Any

from ..errors import Problem, pointer
from ..schema_terms import ref_target, schema_nodes
from .load import Source


def _inherited(schema: dict[str, Any], defs: dict[str, Any], seen: frozenset[str] = frozenset()) -> list[str]:
    """Property names an object inherits through ``allOf: [{"$ref": ...}]`` (its model's bases)."""
    names: list[str] = []
    for part in schema.get("allOf", []) if isinstance(schema.get("allOf"), list) else []:
        target = ref_target(part.get("$ref")) if isinstance(part, dict) else None
        base = defs.get(target) if target is not None and target not in seen else None
        if isinstance(base, dict):
            names += _inherited(base, defs, seen | {str(target)})
            names += list(base.get("properties", {})) if isinstance(base.get("properties"), dict) else []
    return names


@functools.cache
def _resolver() -> Any:
    from datamodel_code_generator import PythonVersion
    from datamodel_code_generator.model.field_name import PydanticFieldNameResolver

    # The options render.models.call_datamodel_codegen passes (snake_case_field, remove_special_field_name_prefix).
    return PydanticFieldNameResolver(
        snake_case_field=True, remove_special_field_name_prefix=True, target_python_version=PythonVersion.PY_310
    )


@functools.cache
def model_field_name(wire: str) -> str:
    """The attribute name the generated model gives a property (before any numbering)."""
    return str(_resolver().get_valid_name(wire))


def property_name_problems(src: Source, defs: dict[str, Any]) -> list[Problem]:
    """Each property maps to an ASCII attribute, distinct within its object and its bases."""
    problems: list[Problem] = []
    for path, schema in schema_nodes(src.data):
        if not isinstance(schema.get("properties"), dict):
            continue
        taken = {model_field_name(n): n for n in _inherited(schema, defs)}
        for name in schema["properties"]:
            here = pointer(*path, "properties", name)
            py = model_field_name(name)
            if not py.isascii():
                problems.append(Problem(src.name, here, f"property name {name!r} becomes {py!r}, not ASCII; rename it"))
                continue
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
