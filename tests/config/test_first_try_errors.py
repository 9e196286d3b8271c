"""What a newcomer's first mistakes get: each error names the file and the setting to change
(issue 52), never a JSON pointer into a schema that is not at fault."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp_codegen.cli import _parser, main
from acp_codegen.config.table import load_config
from acp_codegen.errors import ConfigError
from support import SHARED_UPSTREAM
from support.reference_data import require

ARCHIVE = "unstable_session_archive"


def test_every_unknown_key_is_reported_at_once(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.acp-codegen]\nfeaturs = ["x"]\nfooo = 1\nzzz = 2\n', encoding="utf-8")
    with pytest.raises(ConfigError) as error:
        load_config(tmp_path)
    message = str(error.value)
    assert message.startswith(f"{pyproject}: [tool.acp-codegen]: unknown keys 'featurs' (did you mean 'features'?)")
    assert "'fooo'" in message and "'zzz'" in message and "valid keys: schema-dir, out, features" in message


def test_a_misspelt_feature_in_pyproject_names_the_file_the_key_and_the_closest_feature(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.acp-codegen]\nfeatures = ["unstable_session_archiv"]\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["generate"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"acp-codegen: {pyproject}: [tool.acp-codegen] features: unknown feature")
    assert f"did you mean {ARCHIVE!r}?" in err and "schema:" not in err and ": /:" not in err
    assert not (tmp_path / "generated").exists()


def test_a_misspelt_feature_on_the_command_line_names_the_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "--feature", "unstable_sesion_archive"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("acp-codegen: --feature: unknown feature 'unstable_sesion_archive'")
    assert f"did you mean {ARCHIVE!r}?" in err


def test_a_missing_schema_directory_is_called_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "--schema-dir", "nowhere"]) == 2
    assert capsys.readouterr().err == "acp-codegen: nowhere: missing: no such schema directory\n"


def test_adopt_of_a_file_that_does_not_exist_says_it_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "schema.json").write_text("{}", encoding="utf-8")
    table = '[tool.acp-codegen]\nbase-v1 = "schema.json"\nout = "src/acp/_generated"\n'
    (tmp_path / "pyproject.toml").write_text(table, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["adopt", "src/acp/nope.py"]) == 2
    err = capsys.readouterr().err
    assert "src/acp/nope.py: missing: no such file" in err and "not a Python module" not in err


@pytest.mark.parametrize("command", [None, "generate", "diff", "adopt", "conformance", "polyfill"])
def test_help_is_plain_text_naming_nothing_the_wheel_lacks(command: str | None) -> None:
    parser = _parser(command)
    sub = parser._subparsers._group_actions[0].choices[command] if command else parser  # type: ignore[union-attr]
    text = sub.format_help()
    assert "``" not in text and ":func:" not in text
    assert "docs/" not in text  # the wheel carries no docs folder


def test_generate_over_a_base_with_the_feature_off_says_so_and_how_to_turn_it_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base = SHARED_UPSTREAM / "schema-v1.19.0" / "v1" / "schema.unstable.json"
    require(base)
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "--base-v1", str(base), "--no-conversions", "--out", "out"]) == 0
    off = [line for line in capsys.readouterr().out.splitlines() if line.startswith("off: ")]
    assert off == [
        f'off: {ARCHIVE} (nothing it adds is generated); turn it on with features = ["{ARCHIVE}"]'
        f" in [tool.acp-codegen] of pyproject.toml, or --feature {ARCHIVE}"
    ]
    assert main(["generate", "--base-v1", str(base), "--no-conversions", "--out", "out", "--feature", ARCHIVE]) == 0
    assert not [line for line in capsys.readouterr().out.splitlines() if line.startswith("off: ")]


def test_generate_over_the_bundled_fragments_with_the_feature_off_says_so_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No base, no table: the fragments shipped inside the tool, and the archive feature off
    by default. A run that generates nearly nothing says why, and how to turn it on."""
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "--out", "out"]) == 0
    out = capsys.readouterr().out
    assert "features: none" in out
    assert [line for line in out.splitlines() if line.startswith("off: ")] == [
        f'off: {ARCHIVE} (nothing it adds is generated); turn it on with features = ["{ARCHIVE}"]'
        f" in [tool.acp-codegen] of pyproject.toml, or --feature {ARCHIVE}"
    ]
    assert main(["generate", "--out", "out", "--feature", ARCHIVE]) == 0
    assert not [line for line in capsys.readouterr().out.splitlines() if line.startswith("off: ")]
