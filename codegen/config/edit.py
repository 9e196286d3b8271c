"""Edits of ``pyproject.toml`` in place (tomlkit: comments, order and every other table
kept), written only once the run they serve has succeeded (``TableEdit``). ``generate``
takes out the class-names entries a new base made stale; adopt writes its settings with the
same edit. Also the public names a generated models module exports, which tell a stale
entry from a typo."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit

from .table import SECTION, Config, parse_config


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
