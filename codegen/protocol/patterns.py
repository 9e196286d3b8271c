"""Part of validation: ``pattern`` keywords that the generated models can compile.

A ``pattern`` becomes ``Field(pattern=...)``, which pydantic compiles when the models
module is imported, with its own regex engine (no look-around, no backreferences). A
pattern it cannot compile would make the generated package fail on import, far from the
schema that caused it; so each one is compiled here, by the same engine, and refused with
its JSON pointer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic_core import SchemaError as CoreSchemaError
from pydantic_core import SchemaValidator, core_schema

from ..errors import Problem, pointer
from ..schema_terms import Path, schema_nodes
from .load import Source


def _patterns(node: Any) -> Iterator[tuple[Path, Any]]:
    """Every ``pattern`` value and ``patternProperties`` key, with its path."""
    for path, obj in schema_nodes(node):
        if "pattern" in obj:
            yield (*path, "pattern"), obj["pattern"]
        if isinstance(obj.get("patternProperties"), dict):
            yield from (((*path, "patternProperties", p), p) for p in obj["patternProperties"])


def pattern_error(pattern: str) -> str | None:
    """pydantic's complaint about a regular expression, or None when it compiles."""
    try:
        SchemaValidator(core_schema.str_schema(pattern=pattern))
    except CoreSchemaError as exc:
        return str(exc).strip().splitlines()[-1].removeprefix("error: ")
    return None


def pattern_problems(src: Source) -> list[Problem]:
    problems = []
    for path, pattern in _patterns(src.data):
        if isinstance(pattern, str):  # other types are the meta-schema's to report
            error = pattern_error(pattern)
            if error is not None:
                problems.append(Problem(src.name, pointer(*path), f"pydantic cannot compile this pattern: {error}"))
    return problems
