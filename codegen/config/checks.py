"""The model settings (``settings``) checked against the built IR: class names that name no
class, field names, aliases, root models, string formats, mixins, enums, required-null.
Every problem names its key under ``/tool/acp-codegen/...`` and the closest valid name."""

from __future__ import annotations

import functools
import keyword
import math
import re
from collections.abc import Callable, Iterable

from ..errors import Problem, SchemaError, did_you_mean
from ..protocol.hoist import VARIANT_RULES
from ..protocol.ir import Protocol, TypeDef, model_fields
from ..protocol.models_schema import string_format
from ..protocol.validate import TYPE_NAME, is_class_name
from ..schema_terms import schema_nodes
from .settings import (
    STRING_TYPES,
    ModelOptions,
    Settings,
    alias_targets,
    common_keys,
    json_text,
    mixin_paths,
    shared_by,
)

# Python attributes pydantic's BaseModel has (model_config, model_dump, ...): a field so
# named would shadow them. dir() of a class is not taken: pydantic needs importing then.
_PYDANTIC_PREFIXES = ("model_", "_")
_PYDANTIC_NAMES = frozenset({"copy", "dict", "json", "parse_obj", "parse_raw", "parse_file", "schema", "schema_json"})
_PYDANTIC_NAMES |= {"construct", "from_orm", "update_forward_refs", "validate", "fields", "Config"}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_BASE_CLASS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*\Z")


Check = Callable[[ModelOptions, tuple[Protocol, ...], Callable[[], tuple[Protocol, ...]]], list[Problem]]


def check_settings(
    settings: Settings, protocols: tuple[Protocol, ...], complete: Callable[[], tuple[Protocol, ...]]
) -> None:
    """Exit-2 problems of the options: ``protocols`` are the ones generated, ``complete()``
    the same with every feature (a key that only a left-out feature has is fine), built
    only where a name table needs it. Each key is checked against the versions it applies to."""
    problems: list[Problem] = []
    for key, check in _CHECKS.items():
        for of, versions in shared_by(settings, (p.version for p in protocols), key):
            if of.value(key):
                generated = tuple(p for p in protocols if p.version in versions)
                problems += check(of.options, generated, functools.partial(_within, versions, complete))
    if problems:
        raise SchemaError(problems)


def _within(versions: tuple[int, ...], complete: Callable[[], tuple[Protocol, ...]]) -> tuple[Protocol, ...]:
    return tuple(p for p in complete() if p.version in versions)


def _base_class_problems(options: ModelOptions, _: tuple[Protocol, ...], __: Callable[[], object]) -> list[Problem]:
    if options.base_class is not None and not _BASE_CLASS.match(options.base_class):
        return [options.problem(f"{options.base_class!r} is not 'package.module:Name'", "base-class")]
    return []


def _field_name_problems(
    options: ModelOptions, protocols: tuple[Protocol, ...], complete: Callable[[], tuple[Protocol, ...]]
) -> list[Problem]:
    problems = []
    wires: set[str] = set()
    scoped: set[str] = set()
    for p in complete():
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


def _alias_problems(
    options: ModelOptions, _: tuple[Protocol, ...], complete: Callable[[], tuple[Protocol, ...]]
) -> list[Problem]:
    problems = []
    every = {n for p in complete() for n in p.types}
    derived: set[str] = set()  # the classes of {common = [...]} aliases so far: one base each
    for alias, value in sorted(options.aliases.items()):
        targets = alias_targets(value)
        if not targets or not all(isinstance(t, str) for t in targets):
            problems.append(
                options.problem(
                    f"must be a class name, a list of them or {{common = [...]}} (with keys = [...]), not {value!r}",
                    "aliases",
                    alias,
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
            problems += _common_key_problems(options, alias, value, complete)
        if isinstance(value, dict):
            derived |= {str(t) for t in targets}
    return problems


def _common_key_problems(
    options: ModelOptions, alias: str, value: object, complete: Callable[[], tuple[Protocol, ...]]
) -> list[Problem]:
    """``keys`` of a common class: wire keys every one of its classes has."""
    keys = common_keys(value)
    if keys is None:
        return []
    if not all(isinstance(k, str) for k in keys):
        return [options.problem(f"keys must be a list of wire names, not {keys!r}", "aliases", alias, "keys")]
    targets = [str(t) for t in alias_targets(value)]
    having: set[str] | None = None
    for p in complete():
        for t in targets:
            if t in p.types:
                names = {f.name for f in model_fields(p, t)}
                having = names if having is None else having & names
    missing = sorted(set(map(str, keys)) - (having or set()))
    return [
        options.problem(f"not every one of {', '.join(targets)} has the wire key {k!r}", "aliases", alias, "keys")
        for k in missing
    ]


def _root_model_problems(
    options: ModelOptions, _: tuple[Protocol, ...], complete: Callable[[], tuple[Protocol, ...]]
) -> list[Problem]:
    kinds = {n: t.kind for p in complete() for n, t in p.types.items()}
    # An aliases entry that is a union of classes may be a RootModel class too.
    kinds |= {n: "union" for n, v in options.aliases.items() if isinstance(v, list) and len(v) > 1}
    problems = []
    for i, name in enumerate(options.root_models):
        if name not in kinds:
            message = f"no generated type is named {name!r}" + did_you_mean(name, kinds)
            problems.append(options.problem(message, "root-models", str(i)))
        elif kinds[name] == "object":
            message = (
                f"{name!r} is a class already (root-models names unions, other type aliases and"
                " aliases entries that are unions)"
            )
            problems.append(options.problem(message, "root-models", str(i)))
    return problems


def _string_format_problems(
    options: ModelOptions, _: tuple[Protocol, ...], complete: Callable[[], tuple[Protocol, ...]]
) -> list[Problem]:
    protocols = complete()
    formats = {f for p in protocols for _, node in schema_nodes(p.schema) if (f := string_format(node))}
    public = {n for p in protocols for n in p.types} | set(options.aliases) | set(options.enums)
    problems = []
    for key, value in sorted(options.string_formats.items()):
        if value not in STRING_TYPES:
            message = f"{value!r} is not one of {', '.join(STRING_TYPES)}" + did_you_mean(value, STRING_TYPES)
            problems.append(options.problem(message, "string-formats", key))
        elif key not in formats:
            message = f"no string has the format {key!r}" + (
                did_you_mean(key, formats) or f"; formats: {', '.join(sorted(formats)) or 'none'}"
            )
            problems.append(options.problem(message, "string-formats", key))
        elif value in public:  # the import would be shadowed
            message = f"{value!r} is also a name the models define (a class or an alias)"
            problems.append(options.problem(message, "string-formats", key))
    return problems


def _mixin_problems(
    options: ModelOptions, _: tuple[Protocol, ...], complete: Callable[[], tuple[Protocol, ...]]
) -> list[Problem]:
    kinds = {n: t.kind for p in complete() for n, t in p.types.items()}
    classes = {n for n, kind in kinds.items() if kind == "object" or n in options.root_models}
    classes |= {alias for alias, value in options.aliases.items() if isinstance(value, dict)}
    problems = []
    for name, value in sorted(options.mixins.items()):
        paths = mixin_paths(value)
        if not paths:
            message = f"must be 'package.module:Name' or a list of them (each once), not {value!r}"
            problems.append(options.problem(message, "mixins", name))
        elif bad := [p for p in paths if not _BASE_CLASS.match(p)]:
            problems.append(options.problem(f"{bad[0]!r} is not 'package.module:Name'", "mixins", name))
        elif name in options.enums:
            problems.append(options.problem(f"{name!r} is an Enum (enums), which takes no mixins", "mixins", name))
        elif name in classes:
            continue
        elif name in kinds:
            message = f"{name!r} is a type alias, not a class (root-models makes a RootModel class of it)"
            problems.append(options.problem(message, "mixins", name))
        else:
            message = f"no generated class is named {name!r}" + did_you_mean(name, classes)
            problems.append(options.problem(message, "mixins", name))
    return problems


_KINDS = {"object": "a class", "union": "a union", "alias": "a type alias"}


def _enum_problems(
    options: ModelOptions, _: tuple[Protocol, ...], complete: Callable[[], tuple[Protocol, ...]]
) -> list[Problem]:
    types: dict[str, list[tuple[int, TypeDef]]] = {}
    for p in complete():
        for n, t in p.types.items():
            types.setdefault(n, []).append((p.version, t))
    problems = []
    if "Enum" in types:  # it would shadow the import
        problems.append(options.problem("a generated type is named 'Enum', which the Enum classes need", "enums"))
    for name, members in sorted(options.enums.items()):
        found = _member_problems(options, name, members)
        if not found and name not in types:  # a class of its own: a public name
            if not is_class_name(name):
                message = f"{name!r} cannot be a public name: it must match {TYPE_NAME.pattern}"
                found.append(options.problem(message, "enums", name))
            elif name in options.aliases:
                found.append(options.problem(f"{name!r} is also an alias (aliases)", "enums", name))
        for version, td in types.get(name, []) if not found else []:
            if td.kind != "enum":
                found.append(
                    options.problem(f"{name!r} is {_KINDS[td.kind]} of v{version}, not an enum", "enums", name)
                )
            elif td.open:
                message = f"{name!r} is an open enum of v{version} (any other string is valid too): no Enum holds it"
                found.append(options.problem(message, "enums", name))
            elif (have := {json_text(v.value) for v in td.values}) != (want := set(map(json_text, members.values()))):
                differ = []
                if have - want:
                    differ.append(f"v{version} has {', '.join(sorted(have - want))} and the table not")
                if want - have:
                    differ.append(f"the table has {', '.join(sorted(want - have))} and v{version} not")
                found.append(options.problem(f"the values differ: {'; '.join(differ)}", "enums", name))
            elif name in options.root_models:
                found.append(options.problem(f"{name!r} is in root-models too: an Enum or a RootModel", "enums", name))
        problems += dict.fromkeys(found)  # (once, where versions agree)
    return problems


def _member_problems(options: ModelOptions, name: str, members: object) -> list[Problem]:
    """Problems of one ``enums`` entry's members: names Python's Enum takes, distinct JSON scalars."""
    if not isinstance(members, dict) or not members:
        return [options.problem(f"must be a table of member name -> value, not {members!r}", "enums", name)]
    problems = []
    seen: dict[object, str] = {}
    for member, value in members.items():
        named = isinstance(member, str) and _IDENTIFIER.match(member) and not keyword.iskeyword(member)
        if not named or member.startswith("_") or member == "mro":  # (Enum reserves these)
            message = f"{member!r} cannot be a member name: an identifier, no keyword, not '_...' or 'mro'"
            problems.append(options.problem(message, "enums", name, str(member)))
        elif not isinstance(value, (str, int, float)) or (isinstance(value, float) and not math.isfinite(value)):
            message = f"{value!r} is no JSON string, number or boolean"
            problems.append(options.problem(message, "enums", name, member))
        elif value in seen:  # Python's equality: 1, 1.0 and true are one member
            message = f"{value!r} is also the value of {seen[value]!r}: the Enum would make it an alias of that member"
            problems.append(options.problem(message, "enums", name, member))
        else:
            seen[value] = member
    return problems


def _required_null_problems(
    options: ModelOptions, _: tuple[Protocol, ...], complete: Callable[[], tuple[Protocol, ...]]
) -> list[Problem]:
    """A list of ``required-null`` names generated classes (after ``class-names``)."""
    if isinstance(options.required_null, str):
        return []
    kinds = {n: t.kind for p in complete() for n, t in p.types.items()}
    classes = {n for n, kind in kinds.items() if kind == "object"}
    problems = []
    for i, name in enumerate(options.required_null):
        if name in kinds and name not in classes:
            message = f"{name!r} is {_KINDS[kinds[name]]}, not a class"
            problems.append(options.problem(message, "required-null", str(i)))
        elif name not in classes:
            message = f"no generated class is named {name!r}" + did_you_mean(name, classes)
            problems.append(options.problem(message, "required-null", str(i)))
    return problems


# Every option key with a check of its own, run where the key has a value.
_CHECKS: dict[str, Check] = {
    "base-class": _base_class_problems,
    "field-names": _field_name_problems,
    "aliases": _alias_problems,
    "root-models": _root_model_problems,
    "string-formats": _string_format_problems,
    "mixins": _mixin_problems,
    "enums": _enum_problems,
    "required-null": _required_null_problems,
}


def _generated_names(protocols: Iterable[Protocol]) -> set[str]:
    return {p.chosen_names.get(n, n) for p in protocols for n in p.types}


def _labels(protocols: Iterable[Protocol]) -> dict[str, set[str]]:
    """The label of each union variant (see ``hoist.Derived``) -> the name it has in the
    versions where no other variant has that label (where hoisting once named it bare)."""
    out: dict[str, set[str]] = {}
    for p in protocols:
        named: dict[str, list[str]] = {}
        for name, derived in p.derived_names.items():
            if derived.rule in VARIANT_RULES:
                named.setdefault(derived.label, []).append(p.chosen_names.get(name, name))
        for label, names in named.items():
            out.setdefault(label, set()).update(names if len(names) == 1 else ())
    return out


def check_class_names(
    settings: Settings, protocols: tuple[Protocol, ...], complete: Callable[[], tuple[Protocol, ...]]
) -> None:
    """Every chosen name must name a class of some version it applies to, with every feature."""
    problems = []
    for of, versions in shared_by(settings, (p.version for p in protocols), "class-names"):
        names = of.class_names
        if not names.unknown(_generated_names(p for p in protocols if p.version in versions)):
            continue
        every = [p for p in complete() if p.version in versions]
        elsewhere: dict[str, list[str]] = {}  # the classes of the other versions
        for p in complete():
            if p.version not in versions:
                for name in _generated_names([p]):
                    elsewhere.setdefault(name, []).append(f"v{p.version}")
        found = {name: " and ".join(where) for name, where in elsewhere.items()}
        problems += names.unknown(_generated_names(every), _labels(every), found)
    if problems:
        raise SchemaError(problems)
