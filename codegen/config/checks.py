"""The settings an SDK chooses for its models beyond class names (``[tool.acp-codegen]``):
how a null reads, what happens to unknown properties, Python names of fields, extra
public names of classes, the models' base class and the command that regenerates.

``ModelOptions`` is part of every generated file's inputs (``render.Inputs``); ``Settings``
holds them with the class names, for every protocol version or per version (a
``[tool.acp-codegen.v<N>]`` table). The name tables are checked here against the built IR,
every problem naming its key under ``/tool/acp-codegen/...`` and the closest valid name.
"""

from __future__ import annotations

import functools
import json
import keyword
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import Problem, SchemaError, did_you_mean, pointer
from .hoist import NO_CLASS_NAMES, ClassNames
from .ir import Protocol, TypeDef, model_fields
from .models_schema import string_format
from .schema_terms import schema_nodes
from .validate import TYPE_NAME, is_class_name

DEFAULT_REGENERATE = "nox -s generate"
# Python attributes pydantic's BaseModel has (model_config, model_dump, ...): a field so
# named would shadow them. dir() of a class is not taken: pydantic needs importing then.
_PYDANTIC_PREFIXES = ("model_", "_")
_PYDANTIC_NAMES = frozenset({"copy", "dict", "json", "parse_obj", "parse_raw", "parse_file", "schema", "schema_json"})
_PYDANTIC_NAMES |= {"construct", "from_orm", "update_forward_refs", "validate", "fields", "Config"}
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# string-formats values: the type a string of that format becomes ("str": the string as it
# was sent, the default), as the import datamodel-code-generator writes (customTypePath).
STRING_TYPES = {
    "str": None,
    "AnyUrl": "pydantic.AnyUrl",
    "AwareDatetime": "pydantic.AwareDatetime",
    "NaiveDatetime": "pydantic.NaiveDatetime",
    "datetime": "datetime.datetime",
    "date": "datetime.date",
    "time": "datetime.time",
    "timedelta": "datetime.timedelta",
    "UUID": "uuid.UUID",
}
_BASE_CLASS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class ModelOptions:
    default_on_null: str = "marked"  # "marked": upstream's markers only; "all": every not-null optional field
    unknown_properties: str = "keep"  # "keep": extra="allow"; "drop": extra="ignore"
    # "optional": a required property that admits null may be absent; a tuple of public class
    # names: so in those classes only
    required_null: str | tuple[str, ...] = "required"
    field_names: Mapping[str, str] = field(default_factory=dict)  # wire or "Class.wire" -> attribute
    # extra public name -> a class, a list of them (their union), or {common = [...]} (a class
    # of the fields they share, from which each of them derives)
    aliases: Mapping[str, str | list[str] | dict[str, list[str]]] = field(default_factory=dict)
    root_models: tuple[str, ...] = ()  # named non-object types written as RootModel classes
    base_class: str | None = None  # "package.module:Name"
    regenerate: str = DEFAULT_REGENERATE
    string_formats: Mapping[str, str] = field(default_factory=dict)  # JSON Schema format -> a STRING_TYPES key
    # public class name -> "package.module:Name" or a list of them: its first bases
    mixins: Mapping[str, str | list[str]] = field(default_factory=dict)
    # Enum class name -> member name -> value, in order: a closed enum of that name, or a class of its own
    enums: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    origin: str = field(default="pyproject.toml", compare=False)  # where the tables were written, for errors
    # key -> the table it was written in where that is a version's ("v2": [tool.acp-codegen.v2])
    tables: Mapping[str, str] = field(default_factory=dict, compare=False)

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
            # (settings added later contribute only when set: the digests above stay as they were)
            + [f"string-format={k}={v}" for k, v in sorted(self.string_formats.items())]
            + [f"mixin={k}={v!r}" for k, v in sorted(self.mixins.items())]
            + [f"enum={k}={v!r}" for k, v in sorted(self.enums.items())]  # (members in order: their order is output)
            + ([f"required-null={_listed(self.required_null)}"] if self.required_null != "required" else [])
        )

    def nulls_optional(self, name: str) -> bool:
        """Whether class ``name``'s required properties that admit null are optional (``required-null``)."""
        nulls = self.required_null
        return nulls == "optional" or (isinstance(nulls, tuple) and name in nulls)

    @property
    def string_types(self) -> dict[str, str]:
        """JSON Schema format -> the import path of its type, where that is not ``str``."""
        return {k: path for k, v in sorted(self.string_formats.items()) if (path := STRING_TYPES.get(v))}

    @property
    def base_import(self) -> str | None:
        """The base class as datamodel-code-generator takes it (``package.module.Name``)."""
        return self.base_class.replace(":", ".") if self.base_class else None

    def problem(self, message: str, key: str, *entry: str) -> Problem:
        """A problem of the setting ``key`` (at ``entry`` in its table), where it was written."""
        table = [self.tables[key]] if key in self.tables else []
        return Problem(self.origin, pointer("tool", "acp-codegen", *table, key, *entry), message)


DEFAULT_OPTIONS = ModelOptions()


def _listed(value: str | tuple[str, ...]) -> str:
    return value if isinstance(value, str) else "[" + ", ".join(sorted(value)) + "]"


def required_null(value: str | list[str]) -> str | tuple[str, ...]:
    """``required-null`` as written (a string, or a list of class names) as ``ModelOptions``
    holds it: a list as a tuple, an empty one as the default."""
    if isinstance(value, str):
        return value
    return tuple(value) or "required"


@dataclass(frozen=True)
class Settings:
    """The model settings of a run: class names and options for every protocol version,
    and in ``versions`` those of the versions that have their own (a ``[tool.acp-codegen.v2]``
    table: each entry is complete, the table's keys in place of the top-level ones)."""

    class_names: ClassNames = NO_CLASS_NAMES
    options: ModelOptions = DEFAULT_OPTIONS
    versions: Mapping[int, Settings] = field(default_factory=dict)

    def of(self, version: int) -> Settings:
        """The settings of one protocol version."""
        return self.versions.get(version, self)

    def value(self, key: str) -> object:
        """The value of a setting (``class-names``, or a ``ModelOptions`` field by its key)."""
        return dict(self.class_names.chosen) if key == "class-names" else getattr(self.options, key.replace("-", "_"))

    def table(self, key: str) -> str:
        """The version table a setting was written in ("v2"), or "" for the top-level one."""
        return self.class_names.table if key == "class-names" else self.options.tables.get(key, "")


DEFAULT_SETTINGS = Settings()


def shared_by(settings: Settings, versions: Iterable[int], key: str) -> list[tuple[Settings, tuple[int, ...]]]:
    """The versions that take one value of ``key`` from one table, each group with its
    settings: a key is checked against the versions it applies to (a top-level key that a
    version's table replaces applies to the other versions only)."""
    groups: dict[tuple[str, str], list[int]] = {}
    for version in versions:
        of = settings.of(version)
        groups.setdefault((of.table(key), repr(of.value(key))), []).append(version)
    return [(settings.of(group[0]), tuple(group)) for group in groups.values()]


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


def alias_targets(value: object) -> list[object]:
    """The class names an ``aliases`` value names (empty when it is malformed)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict) and set(value) in ({"common"}, {"common", "keys"}):
        value = value["common"]
    return list(value) if isinstance(value, list) else []


def common_keys(value: object) -> list[object] | None:
    """The wire keys a ``{common = [...], keys = [...]}`` class has (None: every key its
    classes have alike)."""
    keys = value.get("keys") if isinstance(value, dict) else None
    return list(keys) if isinstance(keys, list) else keys


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


def mixin_paths(value: object) -> list[str]:
    """The classes a ``mixins`` value names (empty when it is malformed)."""
    paths: list[object] = [value] if isinstance(value, str) else list(value) if isinstance(value, list) else []
    unique = all(isinstance(p, str) for p in paths) and len(set(map(str, paths))) == len(paths)
    return [str(p) for p in paths] if unique else []


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


def json_text(value: object) -> str:
    """A JSON scalar as text, to compare values as JSON does (1 is not true, nor "1")."""
    return json.dumps(value)


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
