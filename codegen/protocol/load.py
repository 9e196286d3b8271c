"""Load: read a version directory (schema fragments plus ``meta.json``) as data.

Nothing here interprets the schema; it only turns bytes into JSON values, refusing
what JSON cannot say unambiguously (duplicate keys, NaN, invalid UTF-8).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import MissingPath, Problem, SchemaError, fail, pointer
from ..resources import display_name

META_FILE = "meta.json"
VERSION_DIR = re.compile(r"v[1-9][0-9]*\Z")
MAX_DEPTH = 64
# JSON's \ud800 escapes can spell text that no UTF-8 file (the output) can hold.
LONE_SURROGATE = "string holds a lone surrogate (\\ud800-\\udfff escape): not Unicode text"


@dataclass(frozen=True)
class Source:
    """One input file: where it came from (as shown to users), its bytes' hash and its value."""

    name: str
    sha256: str
    data: Any


@dataclass(frozen=True)
class VersionSources:
    directory: str
    schemas: tuple[Source, ...]
    meta: Source
    extra_inputs: tuple[Source, ...] = ()  # further files the output depends on (a base's meta)
    notes: tuple[Problem, ...] = ()  # overlay: fragment context that differs from the base (the base wins)
    fragments: VersionSources | None = None  # overlay: the fragments as loaded, before the base took them

    @property
    def overlaid(self) -> bool:
        """Whether the fragments were laid over a full upstream base."""
        return self.fragments is not None


def _reject_constant(token: str) -> Any:
    raise ValueError(f"{token} is not valid JSON")


def parse_json(text: str, name: str) -> Any:
    """Parse JSON text, reporting duplicate keys with their JSON pointer."""
    duplicates: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(items)
        if len(obj) != len(items):  # a repeated key (where: _find_duplicates says)
            duplicates.extend(k for k, n in Counter(k for k, _ in items).items() if n > 1)
        return obj

    try:
        data = json.loads(text, object_pairs_hook=pairs, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise fail(name, "", f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:
        raise fail(name, "", f"invalid JSON: {exc}") from None
    if duplicates:
        problems = [
            Problem(name, p, "duplicate key (JSON objects must not repeat a name)") for p in _find_duplicates(text)
        ]
        raise SchemaError(problems or [Problem(name, "", f"duplicate key {duplicates[0]!r}")])
    odd = _odd_values(data, (), [])
    if odd:
        raise SchemaError([Problem(name, ptr, reason) for ptr, reason in odd])
    return data


def _odd_values(node: Any, path: tuple[str | int, ...], found: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(pointer, reason) of every value later stages cannot take."""
    if len(path) > MAX_DEPTH:
        # Every later stage (meta-schema, pruning, the model generator) recurses per level.
        found.append((pointer(*path), f"nested deeper than {MAX_DEPTH} levels"))
    elif isinstance(node, str):
        if not _is_text(node):
            found.append((pointer(*path), LONE_SURROGATE))
    elif isinstance(node, dict):
        for key, value in node.items():
            if not _is_text(key):
                found.append((pointer(*path, key), "name " + LONE_SURROGATE.removeprefix("string ")))
            _odd_values(value, (*path, key), found)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            _odd_values(item, (*path, i), found)
    return found


def _is_text(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _find_duplicates(text: str) -> list[str]:
    """Second pass that knows the path, used only when the first found a duplicate."""
    found: list[str] = []

    def walk(node: Any, path: tuple[str | int, ...]) -> None:
        if isinstance(node, _Pairs):
            keys: set[str] = set()
            for key, value in node.items:
                if key in keys:
                    found.append(pointer(*path, key))
                keys.add(key)
                walk(value, (*path, key))
        elif isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, (*path, i))

    walk(json.loads(text, object_pairs_hook=_Pairs), ())
    return found


class _Pairs:
    def __init__(self, items: list[tuple[str, Any]]) -> None:
        self.items = items


def read_json(path: Path, root: Path | None = None) -> Source:
    name = display_name(path, root)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise fail(name, "", f"cannot read: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(name, "", f"not UTF-8 at byte {exc.start}") from None
    return Source(name, hashlib.sha256(raw).hexdigest(), parse_json(text, name))


def load_version(directory: Path, root: Path | None = None) -> VersionSources:
    """Read every ``*.json`` fragment in a version directory and its ``meta.json``."""
    shown = display_name(directory, root)
    if not directory.is_dir():
        raise MissingPath(shown, "schema directory")
    files = sorted(p for p in directory.glob("*.json") if p.name != META_FILE)
    if not files:
        raise fail(shown, "", "no schema fragments (*.json) in this directory")
    meta = directory / META_FILE
    if not meta.is_file():
        raise fail(display_name(meta, root), "", "missing: every version directory needs a meta.json")
    return VersionSources(shown, tuple(read_json(p, root) for p in files), read_json(meta, root))


def find_version_dirs(schema_dir: Path, root: Path | None = None) -> list[Path]:
    """Version directories are named ``v<N>``; they are returned in numeric order."""
    if not schema_dir.is_dir():
        raise MissingPath(display_name(schema_dir, root), "schema directory")
    dirs = [p for p in schema_dir.iterdir() if p.is_dir() and p.name[:1] == "v" and p.name[1:].isdigit()]
    # str.isdigit also accepts "01" and non-ASCII digits ("v\u0661" is 1 to int()): two
    # directories could then claim one version and one output package; refuse instead.
    odd = sorted(p for p in dirs if not VERSION_DIR.match(p.name))
    if odd:
        raise fail(
            display_name(odd[0], root), "", "a version directory must be named v<N> (ASCII digits, no leading 0)"
        )
    if not dirs:
        raise fail(display_name(schema_dir, root), "", "no version directories (v1, v2, ...) found")
    return sorted(dirs, key=lambda p: int(p.name[1:]))
