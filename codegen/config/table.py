"""Defaults from ``[tool.acp-codegen]`` in the nearest ``pyproject.toml``.

Every key is listed in ``KEYS`` with its type and default; paths are relative to that
``pyproject.toml``. A key that is not listed, or a table whose name is a near miss of
``acp-codegen`` (``[tool.acp_codegen]``), is an error naming the file, the key and the
closest valid one: silently ignoring it would generate without the intended settings
and replace the output. A table ``[tool.acp-codegen.v<N>]`` holds model settings of
protocol version N (the keys marked ``model``), each in place of the top-level one.
"""

from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import ConfigError, did_you_mean
from ..protocol.class_names import ClassNames
from ..resources import BUILTIN_FRAGMENTS, BUILTIN_PREFIX, display_name
from ..style import Style
from .settings import DEFAULT_REGENERATE, ModelOptions, Settings, required_null

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

SECTION = "acp-codegen"


@dataclass(frozen=True)
class Key:
    kind: type | tuple[type, ...]  # the TOML value's Python type (or types: a string or a list)
    default: Any
    item: type | None = None  # for lists: the type of every item
    path: bool = False  # a path relative to pyproject.toml
    choices: tuple[Any, ...] = ()  # the allowed values, when only some are
    bounds: tuple[int, int] | None = None  # for integers (and lists of them): the allowed range, inclusive
    model: bool = False  # a model setting: a [tool.acp-codegen.v<N>] table may hold it for one version


# Every key of [tool.acp-codegen]. Adding a key is one line here (read it as config[key]).
KEYS: dict[str, Key] = {
    "schema-dir": Key(str, BUILTIN_FRAGMENTS, path=True),  # "builtin:..." names fragments shipped in the package
    "out": Key(str, "generated", path=True),
    "features": Key(list, [], item=str),
    # the protocol versions generated (none listed: every v<N> directory of schema-dir)
    "versions": Key(list, [], item=int, bounds=(1, 99)),
    "base-v1": Key(str, None, path=True),  # an upstream schema file the v1 fragments are overlaid on
    "base-v2": Key(str, None, path=True),
    # the base's stable meta.json (methods outside it are wired with the SDK's unstable marker)
    "stable-meta-v1": Key(str, None, path=True),
    "stable-meta-v2": Key(str, None, path=True),
    "conversions": Key(bool, True),  # false: no convert.py even when the fragments declare conversions
    # Files of declared v1/v2 differences laid over those of upstream's releases (a newer draft's).
    "declarations": Key(list, [], item=str),
    "formatter": Key(str, "black", choices=("black", "ruff")),  # lays out the generated code
    "line-length": Key(int, 88, bounds=(40, 320)),
    # generated class name -> the name an SDK keeps public (checked against the schema later)
    "class-names": Key(dict, {}, item=str, model=True),
    # "all": null (and Python's None) reads as "not given" in every optional not-null field
    "default-on-null": Key(str, "marked", choices=("marked", "all"), model=True),
    "unknown-properties": Key(str, "keep", choices=("keep", "drop"), model=True),  # "drop": extra="ignore"
    # "optional": a required property whose schema admits null is optional, None when absent
    # (as datamodel-code-generator writes it without its strict-nullable option); a list of
    # public class names: in those classes only (checked against the schema later)
    "required-null": Key((str, list), "required", item=str, choices=("required", "optional"), model=True),
    # wire name (every class) or "Class.wireName" -> the Python attribute (checked against the schema later)
    "field-names": Key(dict, {}, item=str, model=True),
    # extra public name -> a generated class, a list of them (a union), or {common = [...]} (a
    # class of their shared fields); written into the models
    "aliases": Key(dict, {}, model=True),
    # named unions and other type aliases written as RootModel classes
    "root-models": Key(list, [], item=str, model=True),
    "base-class": Key(str, None, model=True),  # "package.module:Name", a subclass of pydantic.BaseModel
    # JSON Schema format -> the Python type its strings become (settings.STRING_TYPES; checked later)
    "string-formats": Key(dict, {}, item=str, model=True),
    # public class name -> "package.module:Name" or a list of them, its first bases (checked later)
    "mixins": Key(dict, {}, model=True),
    # Enum class name -> {member = value, ...}: a closed enum of that name, or a class of its own (checked later)
    "enums": Key(dict, {}, model=True),
    "regenerate": Key(str, DEFAULT_REGENERATE),  # the command headers and `check` name
    # the SDK template set (a shipped one by name, or a folder) and the SDK files it makes or
    # wires: {templates = "python-sdk", meta = "src/acp/meta.py", ...} (acp_codegen.generate.sdk.wire)
    "sdk": Key(dict, {}, item=str, model=True),
    # wire name -> the Python name an SDK's wiring gives a method it adds ("session/delete" = "delete_session")
    "method-names": Key(dict, {}, item=str),
}
MODEL_KEYS = tuple(key for key, spec in KEYS.items() if spec.model)
_VERSION_TABLE = re.compile(r"v([1-9][0-9]*)\Z")  # [tool.acp-codegen.v2]
_TYPE_NAMES = {str: "a string", list: "a list", int: "an integer", bool: "true or false", dict: "a table"}
_PLURALS = {str: "strings", int: "integers"}


@dataclass(frozen=True)
class Config:
    root: Path  # paths are relative to this directory
    file: Path | None  # the pyproject.toml read, if any
    has_table: bool  # whether it holds [tool.acp-codegen]
    values: Mapping[str, Any] = field(default_factory=dict)  # every key of KEYS, defaults filled in
    versions: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)  # [tool.acp-codegen.v<N>], as written
    tools: Mapping[str, Any] = field(default_factory=dict)  # the file's other [tool.*] tables, as read

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    @property
    def fragments(self) -> Path | str:
        """The fragment directory, or the name of the built-in fragments (``builtin:...``)."""
        value = self.values["schema-dir"]
        return value if isinstance(value, str) else Path(value)

    @property
    def schema_dir(self) -> Path:
        """The repository's fragment directory (where ``diff git:REF`` looks): ``schema``
        when the configuration uses the built-in fragments."""
        value = self.fragments
        return self.root / "schema" if isinstance(value, str) else value

    @property
    def out(self) -> Path:
        return Path(self.values["out"])

    @property
    def features(self) -> tuple[str, ...]:
        return tuple(self.values["features"])

    @property
    def chosen_versions(self) -> frozenset[int] | None:
        """The versions ``versions`` lists; None where it lists none (every version)."""
        return frozenset(self.values["versions"]) or None

    @property
    def bases(self) -> dict[int, Path]:
        """Protocol version -> the upstream schema file its fragments are overlaid on."""
        return {v: Path(self.values[f"base-v{v}"]) for v in (1, 2) if self.values[f"base-v{v}"]}

    @property
    def formatter(self) -> str:
        return str(self.values["formatter"])

    @property
    def line_length(self) -> int:
        return int(self.values["line-length"])

    def sdk(self, version: int) -> Mapping[str, str]:
        """The ``sdk`` table that applies to a protocol version (its own, else the top-level one)."""
        return dict(self.versions.get(version, {}).get("sdk", self.values["sdk"]))

    @property
    def conversions(self) -> bool:
        return bool(self.values["conversions"])

    @property
    def declarations(self) -> tuple[Path, ...]:
        """The user's declaration files, relative to the pyproject.toml that names them."""
        return tuple(self.root / p for p in self.values["declarations"])

    def settings(
        self, origin: str, default_on_null: str | None = None, unknown_properties: str | None = None
    ) -> Settings:
        """The model settings: the table's, each version table's keys in place of them for
        that version, and the command line's options (``default_on_null``...) over both.
        ``origin`` names the file in problems."""

        def made(values: Mapping[str, Any], table: str, own: Iterable[str]) -> Settings:
            options = ModelOptions(
                default_on_null=default_on_null or values["default-on-null"],
                unknown_properties=unknown_properties or values["unknown-properties"],
                required_null=required_null(values["required-null"]),
                field_names=values["field-names"],
                aliases=values["aliases"],
                root_models=tuple(values["root-models"]),
                base_class=values["base-class"],
                regenerate=values["regenerate"],
                string_formats=values["string-formats"],
                mixins=values["mixins"],
                enums=values["enums"],
                origin=origin,
                tables={key: table for key in own if key != "class-names"},
            )
            names = ClassNames(values["class-names"], origin, table if "class-names" in own else "")
            return Settings(names, options)

        versions = {v: made({**self.values, **own}, f"v{v}", own) for v, own in self.versions.items()}
        return replace(made(self.values, "", ()), versions=versions)

    def describe(self) -> str:
        """One line saying where the settings came from."""
        if self.file is None:
            return f"config: no pyproject.toml above {self.root}; defaults"
        if not self.has_table:
            return f"config: {self.file} has no [tool.{SECTION}] table; defaults"
        return f"config: [tool.{SECTION}] in {self.file}"


def find_pyproject(start: Path) -> Path | None:
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def _closest(name: str, valid: list[str]) -> str:
    return did_you_mean(name, valid) or f"; valid keys: {', '.join(valid)}"


def _value(pyproject: Path, root: Path, key: str, value: Any, table: str = SECTION) -> Any:
    spec = KEYS[key]
    kind: Any = spec.kind  # (a plain `type` would narrow value to object)
    where = f"{pyproject}: [tool.{table}].{key}"
    # TOML booleans are Python ints too; an integer key must not take `true`.
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        what = "a path string" if spec.path else " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in kinds)
        raise ConfigError(f"{where} must be {what}, not {value!r}")
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    if spec.item is not None and not all(
        isinstance(item, spec.item) and (spec.item is bool or not isinstance(item, bool)) for item in items
    ):
        container = "a table of" if isinstance(value, dict) else "a list of"
        raise ConfigError(f"{where} must be {container} {_PLURALS.get(spec.item, spec.item.__name__)}, not {value!r}")
    if spec.choices and not isinstance(value, (list, dict)) and value not in spec.choices:
        listed = " (or a list)" if isinstance(kind, tuple) and list in kind else ""
        raise ConfigError(f"{where} must be one of {', '.join(map(repr, spec.choices))}{listed}, not {value!r}")
    if spec.bounds:
        low, high = spec.bounds
        if not all(low <= n <= high for n in (value if isinstance(value, list) else [value])):
            what = "hold integers" if isinstance(value, list) else "be"
            raise ConfigError(f"{where} must {what} from {low} to {high}, not {value!r}")
    if spec.path and not (key == "schema-dir" and value.startswith(BUILTIN_PREFIX)):
        if not value:
            raise ConfigError(f"{where} must not be empty")
        return root / value
    return value


def load_config(start: Path | None = None) -> Config:
    start = (start or Path.cwd()).absolute()
    pyproject = find_pyproject(start)
    if pyproject is None:
        values: dict[str, Any] = {key: spec.default for key, spec in KEYS.items()}
        values["out"] = start / values["out"]
        return Config(start, None, False, values)
    try:
        text = pyproject.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{pyproject}: {exc}") from None
    return parse_config(pyproject, text)


def parse_config(pyproject: Path, text: str) -> Config:
    """The settings ``text`` would give as the content of ``pyproject`` (adopt reads the
    table it is about to write so, before writing it)."""
    root = pyproject.parent
    values: dict[str, Any] = {key: spec.default for key, spec in KEYS.items()}
    values["out"] = root / KEYS["out"].default
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{pyproject}: {exc}") from None
    tools = data.get("tool", {})
    tools = tools if isinstance(tools, dict) else {}
    for name in tools:
        # [tool.acp_codegen], [tool.acp-codgen]...: a near miss would otherwise be ignored.
        if name != SECTION and difflib.get_close_matches(name.lower().replace("_", "-"), [SECTION], cutoff=0.8):
            raise ConfigError(f"{pyproject}: [tool.{name}] is not read; did you mean [tool.{SECTION}]?")
    others = {name: value for name, value in tools.items() if name != SECTION and isinstance(value, dict)}
    table = tools.get(SECTION)
    if table is None:
        return Config(root, pyproject, False, values, tools=others)
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: tool.{SECTION} must be a table")
    versions: dict[int, dict[str, Any]] = {}
    _no_unknown_keys(f"{pyproject}: [tool.{SECTION}]", [k for k in table if not _VERSION_TABLE.match(k)], list(KEYS))
    for key in sorted(table):
        if match := _VERSION_TABLE.match(key):
            versions[int(match[1])] = _version_table(pyproject, root, key, table[key])
        else:
            values[key] = _value(pyproject, root, key, table[key])
    return Config(root, pyproject, True, values, dict(sorted(versions.items())), others)


def _no_unknown_keys(where: str, keys: list[str], valid: list[str]) -> None:
    """Every key of a table that is not in ``valid``, reported at once, each with its closest
    valid key."""
    unknown = sorted(key for key in keys if key not in valid)
    if len(unknown) == 1:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r}{_closest(unknown[0], valid)}")
    if unknown:
        listed = ", ".join(
            f"{key!r}" + (f" ({hint[2:]})" if (hint := did_you_mean(key, valid)) else "") for key in unknown
        )
        raise ConfigError(f"{where}: unknown keys {listed}; valid keys: {', '.join(valid)}")


def _version_table(pyproject: Path, root: Path, name: str, table: Any) -> dict[str, Any]:
    """The model settings of one protocol version (``[tool.acp-codegen.v2]``), as written."""
    where = f"{pyproject}: [tool.{SECTION}.{name}]"
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table of model settings, not {table!r}")
    for key in sorted(table):
        if key in KEYS and not KEYS[key].model:
            raise ConfigError(f"{where}: {key!r} is set for every version, in [tool.{SECTION}]")
    _no_unknown_keys(where, list(table), list(MODEL_KEYS))
    return {key: _value(pyproject, root, key, value, f"{SECTION}.{name}") for key, value in table.items()}


def generation_arguments(config: Config, flags: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``generate.pipeline.generate``'s keyword arguments from the settings; ``flags``, the command
    line's options (``formatter``, ``no_conversions``...), win where they are set."""
    flags = flags or {}
    origin = display_name(config.file, config.root) if config.file else "pyproject.toml"
    return {
        "conversions": config.conversions and not flags.get("no_conversions"),
        "declarations": config.declarations,
        "style": Style(flags.get("formatter") or config.formatter, flags.get("line_length") or config.line_length),
        "settings": config.settings(origin, flags.get("default_on_null"), flags.get("unknown_properties")),
        "versions": config.chosen_versions,
    }
