"""The settings written into the repository's ``pyproject.toml``, in
place (tomlkit), keeping its comments, its order and every other table.

Model settings go into ``[tool.acp-codegen.v<N>]`` (the version adopted; the other
versions keep theirs); ``formatter`` and ``line-length`` into ``[tool.acp-codegen]``.
Adopt owns the model settings of the version table: a key it no longer derives is
removed. A value equal to the one written is left as it is, so that a second run
changes no byte.
"""

from __future__ import annotations

from typing import Any

import tomlkit
import tomlkit.exceptions
from tomlkit.items import Table

from ..config.edit import TableEdit
from ..config.table import SECTION, Config, parse_config
from ..errors import ConfigError

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
