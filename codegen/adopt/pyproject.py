"""Stage 6 of adopt: the settings written into the repository's ``pyproject.toml``, in
place (tomlkit), keeping its comments, its order and every other table.

Model settings go into ``[tool.acp-codegen.v<N>]`` (the version adopted; the other
versions keep theirs); ``formatter`` and ``line-length`` into ``[tool.acp-codegen]``.
Adopt owns the model settings of the version table: a key it no longer derives is
removed. A value equal to the one written is left as it is, so that a second run
changes no byte.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
import tomlkit.exceptions
from tomlkit.items import Table

from ..config import SECTION, Config, ConfigError, parse_config

# What adopt derives for a version table; the version's other keys are the user's.
OWNED = (
    "class-names",
    "field-names",
    "aliases",
    "root-models",
    "enums",
    "string-formats",
    "mixins",
    "base-class",
    "unknown-properties",
    "default-on-null",
    "required-null",
    "sdk",
)
# Written as a table of their own ([tool.acp-codegen.v1.class-names]) rather than inline.
_TABLES = ("class-names", "field-names", "aliases", "enums", "mixins", "string-formats", "sdk")


@dataclass
class TableEdit:
    path: Path
    before: str
    after: str
    config: Config  # the settings the new text gives
    shown: str  # the version table, as TOML, for the report and --dry-run

    def write(self) -> None:
        if self.after != self.before:
            temporary = self.path.with_name(f".{self.path.name}.adopt")
            temporary.write_text(self.after, encoding="utf-8")
            temporary.replace(self.path)


def _item(key: str, value: Any) -> Any:
    if isinstance(value, dict) and key in _TABLES:
        table = tomlkit.table()
        for k, v in value.items():
            table[k] = _inline(v)
        return table
    return _inline(value)


def _inline(value: Any) -> Any:
    if isinstance(value, dict):
        table = tomlkit.inline_table()
        for k, v in value.items():
            table[k] = _inline(v)
        return table
    return value


def _plain(item: Any) -> Any:
    return item.unwrap() if hasattr(item, "unwrap") else item


def edit_table(
    config: Config,
    version: int,
    values: dict[str, Any],
    style: dict[str, Any],
    unset: dict[str, Any],
    out: str | None = None,
) -> TableEdit:
    """``values``: the version's model settings; ``style``: formatter, line length and
    ``regenerate``, set in [tool.acp-codegen]; ``unset``: keys of [tool.acp-codegen] set only
    where the table has none (``conversions = false``); ``out``: the output directory, which
    the repository's own ruff is told to leave alone (see ``_excluded``)."""
    if config.file is None:
        raise ConfigError("no pyproject.toml here: adopt writes its settings into [tool.acp-codegen]")
    before = config.file.read_text(encoding="utf-8")
    try:
        doc = tomlkit.parse(before)
    except tomlkit.exceptions.ParseError as exc:
        raise ConfigError(f"{config.file}: {exc}") from None
    table = doc["tool"][SECTION]  # load_config has read it: it exists
    assert isinstance(table, Table)
    for key, value in style.items():
        if _plain(table.get(key)) != value:
            table[key] = value
    for key, value in unset.items():
        if key not in table:
            table[key] = value
    if out is not None:
        _excluded(doc, out)
    name = f"v{version}"
    if name not in table:
        table.append(name, tomlkit.table())
    versioned = table[name]
    assert isinstance(versioned, Table)
    for key in OWNED:
        if key not in values and key in versioned:
            del versioned[key]
    # Scalars first: TOML puts keys after a sub-table into that sub-table.
    for key in sorted(values, key=lambda k: (k in _TABLES, OWNED.index(k) if k in OWNED else len(OWNED))):
        if _plain(versioned.get(key)) != values[key]:
            if key in versioned:
                del versioned[key]
            versioned.append(key, _item(key, values[key]))
    after = tomlkit.dumps(doc)
    if not after.endswith("\n"):
        after += "\n"
    tool, section = tomlkit.table(is_super_table=True), tomlkit.table(is_super_table=True)
    section.append(name, versioned)
    tool.append(SECTION, section)
    shown = tomlkit.document()
    shown.append("tool", tool)
    return TableEdit(config.file, before, after, parse_config(config.file, after), tomlkit.dumps(shown))


def _excluded(doc: tomlkit.TOMLDocument, out: str) -> None:
    """The output directory in ``extend-exclude`` of the repository's ``[tool.ruff]``: acp-codegen
    lays the output out itself (its formatter, line length); the repository's ruff run over
    the whole tree (``ruff check --fix``, ``ruff format .``, as the official SDK's ``make
    gen-all`` does) would lint and re-lay it in the repository's own rules, and ``acp-codegen
    check`` would find it changed."""
    ruff = doc["tool"].get("ruff")
    if not isinstance(ruff, Table):
        return
    listed = [*_plain(ruff.get("exclude", [])), *_plain(ruff.get("extend-exclude", []))]
    if any(str(p).strip("/") == out for p in listed):
        return
    if "extend-exclude" in ruff:
        ruff["extend-exclude"].append(out)
    else:
        ruff["extend-exclude"] = [out]


def stale_class_names(config: Config, problems: list[Any]) -> dict[tuple[str, str], str]:
    """The class-names entries a new base made stale, from a generation's problems: the
    entry's generated name is no class of the base any more, and the public name it gave was
    generated last time (it is in ``out``'s models: not a typo, a class the base dropped).
    (table, generated name) -> the public name; empty unless every problem is such an entry."""
    stale: dict[tuple[str, str], str] = {}
    for problem in problems:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in problem.pointer.split("/")[1:]]
        if parts[:2] != ["tool", SECTION] or len(parts) not in (4, 5) or parts[-2] != "class-names":
            return {}
        table = parts[2] if len(parts) == 5 else ""
        values = config.versions.get(int(table[1:]), {}) if table else config.values
        public = values.get("class-names", {}).get(parts[-1])
        versions = [int(table[1:])] if table else [1, 2]
        if public is None or not any(public in generated_names(config.out, v) for v in versions):
            return {}
        stale[(table, parts[-1])] = public
    return stale


def generated_names(out: Path, version: int) -> set[str]:
    """``__all__`` of the models of one version in the output, as it is on disk."""
    try:
        return all_names((out / f"v{version}" / "models.py").read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return set()


def all_names(models: str) -> set[str]:
    """``__all__`` of a generated models module: what its star import provides."""
    for node in ast.parse(models).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return set(ast.literal_eval(node.value))
    return set()


def without_class_names(config: Config, stale: dict[tuple[str, str], str]) -> TableEdit:
    """pyproject.toml without the stale class-names entries, and the settings it gives: an
    edit the caller writes once the generation with them has succeeded."""
    assert config.file is not None
    before = config.file.read_text(encoding="utf-8")
    doc = tomlkit.parse(before)
    section = doc["tool"][SECTION]
    for table, key in stale:
        names = (section[table] if table else section)["class-names"]
        del names[key]
    after = tomlkit.dumps(doc)
    return TableEdit(config.file, before, after, parse_config(config.file, after), "")
