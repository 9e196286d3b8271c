"""Configuration and the tool's own surface: [tool.acp-codegen] keys, the built-in
fragments, --version, the config line, and the permissions of the output folder."""

from __future__ import annotations

import argparse
import os
import re
import stat
from pathlib import Path

import pytest
from acp_codegen import __version__
from acp_codegen.cli import _parser, main
from acp_codegen.config.table import KEYS, load_config
from acp_codegen.errors import ConfigError
from acp_codegen.generate.pipeline import generate
from acp_codegen.resources import BUILTIN_FRAGMENTS
from acp_codegen.write.headers import CONTENT_LINE
from support import ROOT

ARCHIVE = "unstable_session_archive"


def write_pyproject(directory: Path, text: str) -> Path:
    path = directory / "pyproject.toml"
    path.write_text(text, encoding="utf-8")
    return path


def body(text: str) -> str:
    """A generated file without its header (which names and hashes the inputs)."""
    return text.split(CONTENT_LINE, 1)[1].split("\n", 1)[1]


@pytest.mark.parametrize(
    ("key", "closest"),
    [("feature", "features"), ("schema_dir", "schema-dir"), ("base_v1", "base-v1"), ("output", "out")],
)
def test_unknown_key_names_file_key_and_closest_valid_key(tmp_path: Path, key: str, closest: str) -> None:
    pyproject = write_pyproject(tmp_path, f'[tool.acp-codegen]\n{key} = "x"\n')
    with pytest.raises(ConfigError) as error:
        load_config(tmp_path)
    assert str(error.value) == f"{pyproject}: [tool.acp-codegen]: unknown key {key!r}; did you mean {closest!r}?"


def test_unknown_key_without_a_close_match_lists_the_valid_keys(tmp_path: Path) -> None:
    write_pyproject(tmp_path, "[tool.acp-codegen]\nzzz = 1\n")
    with pytest.raises(ConfigError, match="unknown key 'zzz'; valid keys: " + ", ".join(KEYS)):
        load_config(tmp_path)


@pytest.mark.parametrize("table", ["acp_codegen", "acp-codgen", "acpcodegen", "ACP-codegen"])
def test_a_near_miss_table_name_is_an_error_not_silently_ignored(
    tmp_path: Path, table: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject = write_pyproject(tmp_path, f'[tool.{table}]\nout = "gen"\nfeatures = ["{ARCHIVE}"]\n')
    with pytest.raises(ConfigError) as error:
        load_config(tmp_path)
    assert str(error.value) == f"{pyproject}: [tool.{table}] is not read; did you mean [tool.acp-codegen]?"
    monkeypatch.chdir(tmp_path)
    assert main(["generate"]) == 2
    assert f"[tool.{table}] is not read" in capsys.readouterr().err
    assert not (tmp_path / "gen").exists() and not (tmp_path / "generated").exists()


def test_other_tools_tables_are_left_alone(tmp_path: Path) -> None:
    write_pyproject(tmp_path, "[tool.ruff]\nline-length = 100\n[tool.acp-sdk]\nx = 1\n[tool.acp-codegen]\n")
    assert load_config(tmp_path).has_table


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('features = "unstable_session_archive"', "features must be a list, not 'unstable_session_archive'"),
        ("features = [1]", "features must be a list of strings, not [1]"),
        ("versions = [true]", "versions must be a list of integers, not [True]"),  # (TOML's true is no 1)
        ("versions = [1, 0]", "versions must hold integers from 1 to 99, not [1, 0]"),
        ("out = true", "out must be a path string, not True"),
        ('out = ""', "out must not be empty"),
        ("[tool.acp-codegen.out]", "out must be a path string, not {}"),
    ],
)
def test_values_of_the_wrong_type_are_errors(tmp_path: Path, line: str, message: str) -> None:
    pyproject = write_pyproject(tmp_path, f"[tool.acp-codegen]\n{line}\n")
    with pytest.raises(ConfigError) as error:
        load_config(tmp_path)
    assert str(error.value) == f"{pyproject}: [tool.acp-codegen].{message}"


def test_paths_are_relative_to_the_pyproject_and_found_from_a_subdirectory(tmp_path: Path) -> None:
    write_pyproject(tmp_path, '[tool.acp-codegen]\nschema-dir = "fragments"\nout = "src/pkg/gen"\n')
    deep = tmp_path / "src" / "pkg"
    deep.mkdir(parents=True)
    config = load_config(deep)
    assert (config.root, config.fragments, config.out) == (tmp_path, tmp_path / "fragments", tmp_path / "src/pkg/gen")
    assert config.describe() == f"config: [tool.acp-codegen] in {tmp_path / 'pyproject.toml'}"


def test_defaults_use_the_built_in_fragments(tmp_path: Path) -> None:
    write_pyproject(tmp_path, "[project]\nname = 'x'\n")
    config = load_config(tmp_path)
    assert (config.fragments, config.out, config.features, config.bases) == (
        BUILTIN_FRAGMENTS,
        tmp_path / "generated",
        (),
        {},
    )
    assert config.schema_dir == tmp_path / "schema"  # where `diff git:REF` looks
    assert config.describe() == f"config: {tmp_path / 'pyproject.toml'} has no [tool.acp-codegen] table; defaults"


def test_built_in_fragments_generate_the_committed_package_with_stable_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An SDK names no fragments: the shipped ones are used, shown as builtin:... wherever
    the package is installed, and otherwise give exactly what schema/ gives."""
    write_pyproject(tmp_path, f'[tool.acp-codegen]\nout = "gen"\nfeatures = ["{ARCHIVE}"]\n')
    monkeypatch.chdir(tmp_path)
    assert main(["generate"]) == 0
    assert capsys.readouterr().out.startswith(f"config: [tool.acp-codegen] in {tmp_path / 'pyproject.toml'}\n")
    models = (tmp_path / "gen" / "v1" / "models.py").read_text(encoding="utf-8")
    assert f"#   {BUILTIN_FRAGMENTS}/v1/schema.json\n#   {BUILTIN_FRAGMENTS}/v1/meta.json\n" in models
    convert = (tmp_path / "gen" / "convert.py").read_text(encoding="utf-8")
    assert f"#   {BUILTIN_FRAGMENTS}/conversions.json\n" in convert
    for rel in ("v1/models.py", "v2/dispatch.py", "convert.py", "_router.py"):
        committed = (ROOT / "generated" / rel).read_text(encoding="utf-8")
        assert body((tmp_path / "gen" / rel).read_text(encoding="utf-8")) == body(committed), rel
    assert main(["check", "--schema-dir", BUILTIN_FRAGMENTS]) == 0
    # The same files under other names: the same content, and `check` compares content.
    assert main(["check", "--schema-dir", str(ROOT / "schema")]) == 0
    # The names hold only for that run: the repository's own schema/ keeps its name.
    files = generate(ROOT / "schema", frozenset({ARCHIVE}), ROOT).files
    assert "#   schema/v1/schema.json\n" in files["v1/models.py"]


def test_an_unknown_built_in_set_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "--schema-dir", "builtin:nope"]) == 2
    err = capsys.readouterr().err
    assert f"builtin:nope: /: no such built-in fragment set; built in: {BUILTIN_FRAGMENTS}" in err
    assert not (tmp_path / "generated").exists()


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith(f"acp-codegen {__version__} from {ROOT / 'codegen'} (Python ")


def test_verbose_says_which_config_was_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--verbose", "--out", "gen"]) == 1  # nothing generated yet
    assert capsys.readouterr().err.startswith(f"config: no pyproject.toml above {tmp_path}; defaults\n")
    assert main(["generate", "--out", "gen"]) == 0
    capsys.readouterr()
    assert main(["check", "--out", "gen"]) == 0
    assert "config:" not in capsys.readouterr().out  # check stays one line without --verbose


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o002])
def test_output_permissions_follow_the_umask(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, umask: int) -> None:
    monkeypatch.chdir(tmp_path)
    previous = os.umask(umask)
    try:
        assert main(["generate", "--out", "gen"]) == 0
        assert main(["generate", "--out", "gen"]) == 0  # replacing an existing tree, too
    finally:
        os.umask(previous)
    out = tmp_path / "gen"
    for path in (out, out / "v1"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o777 & ~umask, path
    assert stat.S_IMODE((out / "v1" / "models.py").stat().st_mode) == 0o666 & ~umask


# --- the documentation's keys, defaults and options ------------------------------------------

CONFIG_DOCS = ("docs/cli.md", "docs/sdk.md")


def _shown(default: object) -> str:
    """A default as the docs write it."""
    if default in (None, [], {}):
        return "none"
    if isinstance(default, bool):
        return f"`{str(default).lower()}`"
    return str(default) if isinstance(default, int) else f"`{default}`"


def _documented_defaults(text: str) -> dict[str, list[str]]:
    """key -> the defaults written for it: ``key`` (default X) in prose (also ``a`` / ``b``
    (default X)), and the rows of a | key | meaning | default | table."""
    found: dict[str, list[str]] = {}
    prose = " ".join(text.split())
    for keys, default in re.findall(r"((?:`[a-z][a-z0-9-]*` / )*`[a-z][a-z0-9-]*`) \(default (`[^`]*`|[\w.-]+)", prose):
        for key in re.findall(r"`([^`]+)`", keys):
            found.setdefault(key, []).append(default)
    for keys, default in re.findall(r"^\| ((?:`[a-z][a-z0-9-]*`(?:, )?)+) \| [^|]* \| ([^|]*) \|$", text, re.M):
        written = re.match(r"`[^`]*`|[\w.-]+", default.strip())
        for key in re.findall(r"`([^`]+)`", keys):
            found.setdefault(key, []).append(written[0] if written else default)
    return found


@pytest.mark.parametrize("doc", CONFIG_DOCS)
def test_docs_name_every_key_with_the_default_config_gives_it(doc: str) -> None:
    documented = _documented_defaults((ROOT / doc).read_text(encoding="utf-8"))
    assert sorted(documented) == sorted(KEYS), f"{doc}: keys documented with a default vs config.KEYS"
    wrong = {key: shown for key, shown in documented.items() if set(shown) != {_shown(KEYS[key].default)}}
    assert not wrong, f"{doc}: defaults that are not config.KEYS's: {wrong}"


def _generate_options() -> tuple[dict[str, argparse.Action], set[str]]:
    parser = _parser()
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    command = sub.choices["generate"]
    options = {s: a for a in command._actions for s in a.option_strings if s.startswith("--") and s != "--help"}
    return options, {s for a in parser._actions for s in a.option_strings}


def test_the_command_synopsis_lists_every_option_of_the_parser() -> None:
    options, top = _generate_options()
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    synopsis = text[text.index("    acp-codegen generate") : text.index("\n\n", text.index("    acp-codegen generate"))]
    assert set(re.findall(r"--[a-z][a-z0-9-]*", synopsis)) == set(options) | {"--version"}
    assert "--version" in top


@pytest.mark.parametrize("doc", CONFIG_DOCS)
def test_options_the_docs_name_are_the_parsers(doc: str) -> None:
    options, top = _generate_options()
    [sub] = [a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction)]
    # cli.md has a section of each command's own (adopt, conformance, diff, polyfill)
    others = {
        s
        for name in ("adopt", "conformance", "diff", "polyfill")
        for a in sub.choices[name]._actions
        for s in a.option_strings
    }
    named = re.findall(r"`(--[a-z][a-z0-9-]*)", (ROOT / doc).read_text(encoding="utf-8"))
    assert named and not set(named) - set(options) - top - others, f"{doc} names options the parser lacks"


def test_options_of_keys_leave_the_default_to_the_config() -> None:
    # An option named after a key defaults to None, so that the documented default (the
    # key's) holds; where the key has choices, the option has the same.
    options, _ = _generate_options()
    shared = [key for key in KEYS if f"--{key}" in options]
    assert "out" in shared and "formatter" in shared
    for key in shared:
        action = options[f"--{key}"]
        assert action.default is None, key
        assert tuple(action.choices or ()) == KEYS[key].choices, key
