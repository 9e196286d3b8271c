"""The settings an SDK chooses for its models beyond class names (``[tool.acp-codegen]``):
how a null reads, what happens to unknown properties, Python names of fields, extra
public names of classes, the models' base class and the command that regenerates.

``ModelOptions`` is part of every generated file's inputs (``write.headers.Inputs``);
``Settings`` holds them with the class names, for every protocol version or per version (a
``[tool.acp-codegen.v<N>]`` table). ``checks`` holds them to the built IR.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import Problem, pointer
from ..protocol.class_names import NO_CLASS_NAMES, ClassNames

DEFAULT_REGENERATE = "nox -s generate"


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
    # False: the bases' descriptions are left out (the package acp-codegen ships over upstream's schemas)
    base_descriptions: bool = True
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
            + ([] if self.base_descriptions else ["base-descriptions=false"])
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


def mixin_paths(value: object) -> list[str]:
    """The classes a ``mixins`` value names (empty when it is malformed)."""
    paths: list[object] = [value] if isinstance(value, str) else list(value) if isinstance(value, list) else []
    unique = all(isinstance(p, str) for p in paths) and len(set(map(str, paths))) == len(paths)
    return [str(p) for p in paths] if unique else []


def json_text(value: object) -> str:
    """A JSON scalar as text, to compare values as JSON does (1 is not true, nor "1")."""
    return json.dumps(value)
