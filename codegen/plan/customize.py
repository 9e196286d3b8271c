"""What an SDK's model settings (``acp_codegen.config.settings``) make of the models module: the schema
and template data datamodel-code-generator is given for them, and the public names written
after the classes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..code_text import Code, identifier, py_literal
from ..config.settings import ModelOptions, alias_targets, common_keys, json_text, mixin_paths
from ..protocol.ir import Protocol, model_fields
from ..schema_terms import DEFS
from .markers import takes_null


def aliases_for(options: ModelOptions, protocol: Protocol) -> list[tuple[str, tuple[str, ...], bool]]:
    """The aliases a version's models module gets (name, the classes it names, whether it
    is a class of their common fields): those whose classes it has."""
    out = []
    for alias, value in sorted(options.aliases.items()):
        targets = tuple(str(t) for t in alias_targets(value))
        if all(t in protocol.types for t in targets):
            out.append((alias, targets, isinstance(value, dict)))
    return out


def _as_written(schema: Any) -> Any:
    return schema


def _without_prose(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return schema
    return {k: v for k, v in schema.items() if k not in ("description", "title")}


def with_common_classes(
    options: ModelOptions, protocol: Protocol, template_data: dict[str, dict[str, Any]], payload: Iterable[str]
) -> dict[str, Any]:
    """The schema to render, with a class for each ``{common = [...]}`` alias: the properties
    all of its classes have alike (required where all require them), read as the first
    class reads them. Each of its classes derives from it (``acp_base``), so ``isinstance``
    holds; unlike a union, it can be constructed. Parsing still goes through the union."""
    defs = dict(protocol.schema[DEFS])
    for alias, targets, common in aliases_for(options, protocol):
        if not common:
            continue
        schemas = [defs[t] for t in targets]
        keys = common_keys(options.aliases[alias])
        # Alike in every class, under the attribute every class has (no class's own name);
        # keys listed by name need only be alike but for their prose.
        text = _as_written if keys is None else _without_prose
        shared = {
            k: v
            for k, v in schemas[0].get("properties", {}).items()
            if all(text(s.get("properties", {}).get(k)) == text(v) for s in schemas[1:])
            and not any(f"{t}.{k}" in options.field_names for t in targets)
            and (keys is None or k in keys)
        }
        defs[alias] = {
            "type": "object",
            "description": f"What {' and '.join(targets)} have in common: each of them derives from this class.",
            "properties": shared,
            "required": [k for k in shared if all(k in s.get("required", ()) for s in schemas)],
        }
        first = template_data.get(targets[0], {})
        names = {f.py_name for f in model_fields(protocol, targets[0]) if f.name in shared}
        data = template_data.setdefault(alias, {})
        data["acp_annotations"] = {k: v for k, v in first.get("acp_annotations", {}).items() if k in names}
        tags = {k: v for k, v in first.get("acp_tags", {}).items() if k in names}  # a tag defaults to its constant
        if tags:
            data["acp_tags"] = tags
        if "acp_extra" in first and set(targets) <= set(payload):  # a catch-all's payload is kept
            data["acp_extra"] = first["acp_extra"]
        for t in targets:
            template_data.setdefault(t, {})["acp_base"] = alias
    return {**protocol.schema, DEFS: defs} if len(defs) > len(protocol.schema[DEFS]) else protocol.schema


def with_mixins(options: ModelOptions, protocol: Protocol, template_data: dict[str, dict[str, Any]]) -> list[str]:
    """Each class's ``mixins`` as its first bases (``acp_mixins``, read by the class
    templates), and the imports they need: under private names (``_Name``, ``_Name2`` where
    two share a name), which no generated name can take."""
    classes = set(protocol.types) | {alias for alias, _, common in aliases_for(options, protocol) if common}
    chosen = {name: mixin_paths(value) for name, value in sorted(options.mixins.items()) if name in classes}
    local: dict[str, str] = {}
    for path in sorted({path for paths in chosen.values() for path in paths}):
        alias = stem = "_" + path.rpartition(":")[2]
        count = 1
        while alias in local.values():
            count += 1
            alias = f"{stem}{count}"
        local[path] = alias
    for name, paths in chosen.items():
        template_data.setdefault(name, {})["acp_mixins"] = [Code(identifier(local[p])) for p in paths]
    imports = []
    for path, alias in local.items():
        module, _, name = path.partition(":")
        dotted = ".".join(identifier(part) for part in module.split("."))
        imports.append(f"from {dotted} import {identifier(name)} as {identifier(alias)}")
    return imports


def enum_classes(options: ModelOptions, protocol: Protocol) -> list[str]:
    """The closed enums of a version that ``enums`` makes Enum classes."""
    return [name for name in sorted(options.enums) if name in protocol.types]


def with_enums(options: ModelOptions, protocol: Protocol, schema: dict[str, Any]) -> dict[str, Any]:
    """The schema to render, each enum that ``enums`` names written as datamodel-code-generator
    makes an Enum class of it: its values in the table's order, under the table's member
    names (those this generation has: a feature may leave some out)."""
    names = enum_classes(options, protocol)
    if not names:
        return schema
    defs = dict(schema[DEFS])
    for name in names:
        present = {json_text(v.value) for v in protocol.types[name].values}
        members = [(m, v) for m, v in options.enums[name].items() if json_text(v) in present]
        defs[name] = {
            "enum": [v for _, v in members],
            "x-enum-varnames": [m for m, _ in members],
            "x-enum-field-as-literal": False,
            **({"description": protocol.types[name].description} if protocol.types[name].description else {}),
        }
    return {**schema, DEFS: defs}


def with_optional_nulls(options: ModelOptions, protocol: Protocol, schema: dict[str, Any]) -> dict[str, Any]:
    """The schema to render, where ``required-null = "optional"`` (every class) or names the
    class: a required property whose schema admits null is no longer required there (nor in
    the ``allOf`` parts a class is made of), so that its field is ``X | None = None``, as
    datamodel-code-generator writes it without its strict-nullable option (the official
    SDK's early modules: ``id`` of ``AgentResponse``, a ``RequestId``; 0.12.0's response
    classes only). The protocol itself, and so the router and the conversions, still
    require it."""
    if options.required_null == "required":
        return schema
    defs = dict(schema[DEFS])
    for name, definition in sorted(defs.items()):
        if name not in protocol.types or protocol.types[name].kind != "object" or not isinstance(definition, dict):
            continue
        if not options.nulls_optional(name):
            continue
        fields = model_fields(protocol, name)
        nullable = {f.name for f in fields if f.required and takes_null(protocol, f.type, explicit=True)}
        if not nullable:
            continue
        defs[name] = _not_requiring(definition, nullable)
        if isinstance(definition.get("allOf"), list):
            defs[name]["allOf"] = [_not_requiring(part, nullable) for part in definition["allOf"]]
    return {**schema, DEFS: defs}


def _not_requiring(part: Any, names: set[str]) -> Any:
    if not isinstance(part, dict) or not isinstance(part.get("required"), list):
        return dict(part) if isinstance(part, dict) else part
    return {**part, "required": [r for r in part["required"] if r not in names]}


def public_names(protocol: Protocol, options: ModelOptions) -> str:
    """The chosen extra names of classes (``aliases``), the Enum classes of ``enums`` that
    name no type of the version (with every feature), and ``__all__``: a star import of the
    models takes them and nothing that the module imports (``BaseModel``, ``Field``...)."""
    aliases = aliases_for(options, protocol)
    # One class: the same class under another name; several: their union (a type alias, or
    # a RootModel class where root-models names it). ({common = [...]}: a class rendered
    # with the models, see with_common_classes.)
    lines = []
    for alias, targets, common in aliases:
        union = " | ".join(identifier(t) for t in targets)
        if common:
            continue
        if len(targets) > 1 and alias in options.root_models:
            lines += ["", "", f"class {identifier(alias)}(RootModel[{union}]):", f"    root: {union}", "", ""]
        else:
            lines.append(f"{identifier(alias)} = {union}" + ("" if len(targets) == 1 else "  # a union of classes"))
    # (a type only a left-out feature has is no class of its own)
    standalone = [name for name in sorted(options.enums) if name not in {*protocol.types, *protocol.every_type}]
    for name in standalone:
        members = options.enums[name].items()
        lines += [
            "",
            "",
            f"class {identifier(name)}(Enum):",
            *(f"    {identifier(m)} = {py_literal(v)}" for m, v in members),
        ]
    public = sorted([*protocol.types, *(alias for alias, _, _ in aliases), *standalone])
    lines.append("__all__ = [" + ", ".join(py_literal(n) for n in public) + "]")
    return "\n\n" + "\n".join(lines) + "\n"
