"""Defaults from ``[tool.acp-codegen]`` in the nearest ``pyproject.toml``.

Keys: ``schema-dir`` (default ``schema``), ``out`` (default ``generated``) and
``features`` (default: none), ``base-v1`` / ``base-v2`` (an upstream ACP schema file the
fragments of that version are overlaid on; default: none), paths relative to that
``pyproject.toml``; ``formatter`` (``black``, the default, or ``ruff``) and
``line-length`` (default 88) for the generated code.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

SECTION = "acp-codegen"


@dataclass(frozen=True)
class Config:
    root: Path
    schema_dir: Path
    out: Path
    features: tuple[str, ...]
    bases: dict[int, Path] = field(default_factory=dict)  # protocol version -> upstream schema file
    formatter: str = "black"
    line_length: int = 88


class ConfigError(Exception):
    pass


def find_pyproject(start: Path) -> Path | None:
    for directory in (start, *start.parents):
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_config(start: Path | None = None) -> Config:
    start = (start or Path.cwd()).absolute()
    pyproject = find_pyproject(start)
    root = pyproject.parent if pyproject else start
    table: dict[str, object] = {}
    if pyproject:
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"{pyproject}: {exc}") from None
        table = data.get("tool", {}).get(SECTION, {})
    unknown = set(table) - {"schema-dir", "out", "features", "base-v1", "base-v2", "formatter", "line-length"}
    if unknown:
        raise ConfigError(f"{pyproject}: [tool.{SECTION}]: unknown key {sorted(unknown)[0]!r}")
    features = table.get("features", [])
    if not isinstance(features, list) or not all(isinstance(f, str) for f in features):
        raise ConfigError(f"{pyproject}: [tool.{SECTION}].features must be a list of strings")
    bases = {}
    for version in (1, 2):
        value = table.get(f"base-v{version}")
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"{pyproject}: [tool.{SECTION}].base-v{version} must be a path string")
        if value:
            bases[version] = root / value
    formatter = table.get("formatter", "black")
    if formatter not in ("black", "ruff"):
        raise ConfigError(f'{pyproject}: [tool.{SECTION}].formatter must be "black" or "ruff", not {formatter!r}')
    line_length = table.get("line-length", 88)
    if not isinstance(line_length, int) or isinstance(line_length, bool) or not 40 <= line_length <= 320:
        raise ConfigError(f"{pyproject}: [tool.{SECTION}].line-length must be an integer from 40 to 320")
    return Config(
        root=root,
        schema_dir=root / str(table.get("schema-dir", "schema")),
        out=root / str(table.get("out", "generated")),
        features=tuple(features),
        bases=bases,
        formatter=str(formatter),
        line_length=line_length,
    )
