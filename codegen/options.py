"""The settings an SDK chooses for its models beyond class names (``[tool.acp-codegen]``):
how a null reads, what happens to unknown properties, Python names of fields, extra
public names of classes, the models' base class and the command that regenerates.

``ModelOptions`` is part of every generated file's inputs (``render.Inputs``). The name
tables are checked here against the built IR, every problem naming its key under
``/tool/acp-codegen/...`` and the closest valid name.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import Problem, SchemaError, did_you_mean, pointer
from .ir import Protocol, model_fields
from .schema_terms import DEFS
from .validate import TYPE_NAME, is_class_name

DEFAULT_REGENERATE = "nox -s generate"
# Python attributes pydantic's BaseModel has (model_config, model_dump, ...): a field so
# named would shadow them. dir() of a class is not taken: pydantic needs importing then.
_PYDANTIC_PREFIXES = ("model_", "_")
_PYDANTIC_NAMES = frozenset({"copy", "dict", "json", "parse_obj", "parse_raw", "parse_file", "schema", "schema_json"})
_PYDANTIC_NAMES |= {"construct", "from_orm", "update_forward_refs", "validate", "fields", "Config"}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_BASE_CLASS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class ModelOptions:
    default_on_null: str = "marked"  # "marked": upstream's markers only; "all": every not-null optional field
    unknown_properties: str = "keep"  # "keep": extra="allow"; "drop": extra="ignore"
    field_names: Mapping[str, str] = field(default_factory=dict)  # wire or "Class.wire" -> attribute
    # extra public name -> a class, a list of them (their union), or {common = [...]} (a class
    # of the fields they share, from which each of them derives)
    aliases: Mapping[str, str | list[str] | dict[str, list[str]]] = field(default_factory=dict)
    root_models: tuple[str, ...] = ()  # named non-object types written as RootModel classes
    base_class: str | None = None  # "package.module:Name"
    regenerate: str = DEFAULT_REGENERATE
    origin: str = field(default="pyproject.toml", compare=False)  # where the tables were written, for errors

    def parts(self) -> list[str]:
        """What the settings contribute to an input digest: nothing when all are defaults,
        so that the digests of output made with them stay as they were."""
        if self == DEFAULT_OPTIONS:
            return []
        return (
            [f"default-on-null={self.default_on_null}", f"unknown-properties={self.unknown_properties}"]
            + [f"field-name={k}={v}" for k, v in sorted(self.field_names.items())]
            + [f"alias={k}={v!r}" for k, v in sorted(self.aliases.items())]
            + [f"root-model={n}" for n in sorted(self.root_models)]
            + [f"base-class={self.base_class or ''}", f"regenerate={self.regenerate}"]
        )

    @property
    def base_import(self) -> str | None:
        """The base class as datamodel-code-generator takes it (``package.module.Name``)."""
        return self.base_class.replace(":", ".") if self.base_class else None

    def problem(self, message: str, *key: str) -> Problem:
        """A problem of the setting at ``key`` (the table's key, and the entry's)."""
        return Problem(self.origin, pointer("tool", "acp-codegen", *key), message)


DEFAULT_OPTIONS = ModelOptions()


def check_options(
    options: ModelOptions, protocols: tuple[Protocol, ...], complete: Callable[[], tuple[Protocol, ...]]
) -> None:
    """Exit-2 problems of the settings: ``protocols`` are the ones generated, ``complete()``
    the same with every feature (a key that only a left-out feature has is fine), built
    only where a name table needs it."""
    problems: list[Problem] = []
    if options.base_class is not None and not _BASE_CLASS.match(options.base_class):
        problems.append(options.problem(f"{options.base_class!r} is not 'package.module:Name'", "base-class"))
    if options.field_names or options.aliases or options.root_models:
        every = complete()
        problems += _field_name_problems(options, protocols, every)
        problems += _alias_problems(options, every)
        problems += _root_model_problems(options, every)
    if problems:
        raise SchemaError(problems)


def _field_name_problems(
    options: ModelOptions, protocols: tuple[Protocol, ...], complete: tuple[Protocol, ...]
) -> list[Problem]:
    problems = []
    wires: set[str] = set()
    scoped: set[str] = set()
    for p in complete:
        for n in p.types:
            for f in model_fields(p, n):
                wires.add(f.name)
                scoped.add(f"{n}.{f.name}")
    for key, value in sorted(options.field_names.items()):
        known = scoped if "." in key else wires
        if not _IDENTIFIER.match(value) or keyword.iskeyword(value):
            problems.append(options.problem(f"{value!r} is not a Python identifier", "field-names", key))
        elif value.startswith(_PYDANTIC_PREFIXES) or value in _PYDANTIC_NAMES:
            problems.append(
                options.problem(f"{value!r} would shadow an attribute of pydantic's BaseModel", "field-names", key)
            )
        elif key not in known:
            what = "no class has a field" if "." in key else "no field has the wire name"
            problems.append(options.problem(f"{what} {key!r}" + did_you_mean(key, known), "field-names", key))
    if problems:
        return problems
    for p in protocols:  # clashes: two fields of one class under one attribute
        for name in p.types:
            taken: dict[str, str] = {}
            for f in model_fields(p, name):
                other = taken.setdefault(f.py_name, f.name)
                if other != f.name:
                    key = next(
                        (k for k in (f"{name}.{f.name}", f.name, f"{name}.{other}", other) if k in options.field_names),
                        f.name,
                    )
                    problems.append(
                        options.problem(
                            f"{name}: {other!r} and {f.name!r} would both be {f.py_name!r}", "field-names", key
                        )
                    )
    return problems


def _alias_problems(options: ModelOptions, complete: tuple[Protocol, ...]) -> list[Problem]:
    problems = []
    every = {n for p in complete for n in p.types}
    derived: set[str] = set()  # the classes of {common = [...]} aliases so far: one base each
    for alias, value in sorted(options.aliases.items()):
        targets = alias_targets(value)
        if not targets or not all(isinstance(t, str) for t in targets):
            problems.append(
                options.problem(
                    f"must be a class name, a list of them or {{common = [...]}}, not {value!r}", "aliases", alias
                )
            )
        elif not is_class_name(alias):
            message = f"{alias!r} cannot be a public name: it must match {TYPE_NAME.pattern}"
            problems.append(options.problem(message, "aliases", alias))
        elif alias in every:
            problems.append(options.problem(f"{alias!r} is already the name of a generated class", "aliases", alias))
        elif isinstance(value, dict) and (twice := sorted({str(t) for t in targets} & derived)):
            problems.append(options.problem(f"{twice[0]!r} derives from another common class", "aliases", alias))
        else:
            problems += [
                options.problem(f"no generated class is named {t!r}" + did_you_mean(str(t), every), "aliases", alias)
                for t in targets
                if t not in every
            ]
        if isinstance(value, dict):
            derived |= {str(t) for t in targets}
    return problems


def alias_targets(value: object) -> list[object]:
    """The class names an ``aliases`` value names (empty when it is malformed)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict) and set(value) == {"common"}:
        value = value["common"]
    return list(value) if isinstance(value, list) else []


def _root_model_problems(options: ModelOptions, complete: tuple[Protocol, ...]) -> list[Problem]:
    kinds = {n: t.kind for p in complete for n, t in p.types.items()}
    problems = []
    for i, name in enumerate(options.root_models):
        if name not in kinds:
            message = f"no generated type is named {name!r}" + did_you_mean(name, kinds)
            problems.append(options.problem(message, "root-models", str(i)))
        elif kinds[name] == "object":
            message = f"{name!r} is a class already (root-models names unions and other type aliases)"
            problems.append(options.problem(message, "root-models", str(i)))
    return problems


def aliases_for(options: ModelOptions, protocol: Protocol) -> list[tuple[str, tuple[str, ...], bool]]:
    """The aliases a version's models module gets (name, the classes it names, whether it
    is a class of their common fields): those whose classes it has."""
    out = []
    for alias, value in sorted(options.aliases.items()):
        targets = tuple(str(t) for t in alias_targets(value))
        if all(t in protocol.types for t in targets):
            out.append((alias, targets, isinstance(value, dict)))
    return out


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
        shared = {  # alike in every class, under the attribute every class has (no class's own name)
            k: v
            for k, v in schemas[0].get("properties", {}).items()
            if all(s.get("properties", {}).get(k) == v for s in schemas[1:])
            and not any(f"{t}.{k}" in options.field_names for t in targets)
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
        if "acp_extra" in first and set(targets) <= set(payload):  # a catch-all's payload is kept
            data["acp_extra"] = first["acp_extra"]
        for t in targets:
            template_data.setdefault(t, {})["acp_base"] = alias
    return {**protocol.schema, DEFS: defs} if len(defs) > len(protocol.schema[DEFS]) else protocol.schema
