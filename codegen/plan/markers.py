"""The annotations of ``_runtime`` (the generated package's runtime module) that each model
field carries in its type, read by the models' class template: upstream's lenient
markers, ``NOT_NULL``, a catch-all variant's ``NotOneOf`` and a tag's ``TAG``. Schema data
reaches them only through ``py_literal``."""

from __future__ import annotations

from typing import Any

from ..code_text import Code, py_literal
from ..protocol.ir import Protocol, TypeExpr, model_fields


def takes_null(protocol: Protocol, expr: TypeExpr, seen: frozenset[str] = frozenset(), explicit: bool = False) -> bool:
    """Whether the schema lets ``expr`` be ``null``; ``explicit``: by naming null (a value
    of any type does not count)."""
    if expr.nullable or expr.kind == "null" or (expr.kind == "const" and expr.const is None):
        return True
    if expr.kind == "any":
        return not explicit
    if expr.kind == "union":
        return any(takes_null(protocol, v, seen, explicit) for v in expr.variants)
    if expr.kind == "ref" and expr.ref in protocol.types and expr.ref not in seen:
        target = protocol.types[expr.ref]
        seen = seen | {expr.ref}
        if target.kind == "alias" and target.target is not None:
            return takes_null(protocol, target.target, seen, explicit)
        if target.kind == "union":
            return any(takes_null(protocol, v, seen, explicit) for v in target.variants)
    return False


# The shared instances of _runtime.Lenient, by their arguments.
_SHARED_LENIENT = {
    ("absent_on_error=True",): "ABSENT_ON_ERROR",
    ("skip_invalid_items=True",): "SKIP_INVALID_ITEMS",
    ("skip_invalid_items=True", "absent_on_error=True"): "SKIP_INVALID_ITEMS_OR_ABSENT",
    ("null_absent=True",): "NULL_ABSENT",
}


def _empty_value(
    protocol: Protocol, expr: TypeExpr, seen: frozenset[str] = frozenset()
) -> list[Any] | dict[str, Any] | None:
    """The empty value of a list or map type (what upstream's ``x-deserialize-default-on-null``
    reads a null as); None for any other type."""
    if expr.kind == "array":
        return []
    if expr.kind == "object":
        return {}
    if expr.kind == "ref" and expr.ref in protocol.types and expr.ref not in seen:
        target = protocol.types[expr.ref]
        if target.kind == "object":
            return {}
        if target.kind == "alias" and target.target is not None:
            return _empty_value(protocol, target.target, seen | {expr.ref})
    return None


def lenient_markers(protocol: Protocol, null_absent: bool = False) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """Per class, the _runtime annotations of its fields, by attribute name (read by our
    BaseModel template): upstream's lenient-deserialisation markers, NOT_NULL on the
    not-null optional fields, NotOneOf on a catch-all variant's tag and TAG on a tag (with
    its constant, the default); and the names of the _runtime module they use.
    ``null_absent`` (``default-on-null = "all"``): a null in an optional field the schema
    does not let be null reads as "not given"."""
    data: dict[str, dict[str, Any]] = {}
    used: set[str] = set()
    for name in protocol.types:
        annotations: dict[str, Code] = {}
        tags: dict[str, Code] = {}
        for f in model_fields(protocol, name):
            names = []
            # A tag (a required single string constant) defaults to it in Python code; TAG
            # marks it for _runtime.Tagged, which keeps it required when reading.
            if f.required and f.type.kind == "const" and not f.type.nullable and isinstance(f.type.const, str):
                tags[f.py_name] = py_literal(f.type.const)
                names.append("TAG")
                used.update(("TAG", "Tagged"))
            if f.not_one_of:  # schema data: through py_literal
                names.append(f"NotOneOf({', '.join(py_literal(v) for v in f.not_one_of)})")
                used.add("NotOneOf")
            # Optional fields the schema does not let be null are typed `X | None = None`
            # (the default is "absent"); an explicit null on the wire must still fail.
            not_null = not f.required and not takes_null(protocol, f.type)
            if not_null and f.default is None:
                names.append("NOT_NULL")
                used.add("NOT_NULL")
            absent = f.lenient and not f.required  # a required lenient field still fails
            args = ("skip_invalid_items=True",) * f.skip_invalid_items + ("absent_on_error=True",) * absent
            empty = _empty_value(protocol, f.type) if f.null_as_default else None
            # A null where upstream gives it no reading of its own (empty is None) is "not given".
            null_absent_here = null_absent and not_null and empty is None
            args += ("null_absent=True",) * null_absent_here
            # A dropped value leaves the field's own default; a null reads as the empty
            # list or map (schema data: through py_literal). Only lists and maps have one.
            if (absent or null_absent_here) and f.default is not None:
                args += (f"default={py_literal(f.default)}",)
            if empty is not None:
                args += (f"null_reads_as={py_literal(empty)}",)
            if args:
                shared = _SHARED_LENIENT.get(args)
                names.append(shared or f"Lenient({', '.join(args)})")
                used.add(shared or "Lenient")
            if names:
                annotations[f.py_name] = Code(", ".join(names))
        if annotations:
            data[name] = {"acp_annotations": annotations}
        if tags:
            data[name] |= {"acp_tags": tags}
    return data, sorted(used)  # (format_modules sorts the import; sorted: deterministic)
