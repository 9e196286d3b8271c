"""The command line: generate, check, configuration, and bad input (exit 2, nothing lost)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from acp_codegen import resources
from acp_codegen.cli import main
from acp_codegen.write import headers, strip_header
from support import ROOT, copy_schema, edit_json


def new_project(folder: Path) -> Path:
    """A throwaway SDK-like project: the repo's fragments and a [tool.acp-codegen] table."""
    copy_schema(folder / "schema")
    (folder / "pyproject.toml").write_text(
        '[tool.acp-codegen]\nschema-dir = "schema"\nout = "pkg/generated"\nfeatures = ["unstable_session_archive"]\n'
    )
    return folder


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(new_project(tmp_path))
    return tmp_path


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What ``generate`` writes in a new project, generated once for the tests that start
    from a generated tree (the bytes do not depend on where the project is)."""
    folder = new_project(tmp_path_factory.mktemp("first-run"))
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        assert main(["generate"]) == 0
    return folder / "pkg" / "generated"


@pytest.fixture
def generated(project: Path, first_run: Path) -> Path:
    """``project`` after ``generate``: its generated package."""
    return shutil.copytree(first_run, project / "pkg" / "generated")


def snapshot(directory: Path) -> dict[str, bytes]:
    return {p.relative_to(directory).as_posix(): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


def test_generate_then_check_is_clean(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate"]) == 0
    out = project / "pkg" / "generated"
    assert sorted(snapshot(out)) == [
        "__init__.py", "_convert_rules.py", "_convert_runtime.py", "_router.py", "_runtime.py", "_shared.py",
        "convert.py",
        "v1/__init__.py", "v1/dispatch.py", "v1/methods.py", "v1/models.py",
        "v2/__init__.py", "v2/dispatch.py", "v2/methods.py", "v2/models.py",
    ]  # fmt: skip
    assert "v1: 23 types, 4 methods" in capsys.readouterr().out
    assert main(["check"]) == 0


def test_generated_matches_the_repository_package(generated: Path) -> None:
    # Headers may differ: a file whose content did not change keeps the header of the run
    # that last changed it (see acp_codegen.write.tree.keep_unchanged).
    ours = {k: strip_header(v.decode()) for k, v in snapshot(generated).items()}
    committed = {k: strip_header(v.decode()) for k, v in snapshot(ROOT / "generated").items() if "__pycache__" not in k}
    assert ours == committed


def test_check_catches_a_hand_edit(generated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    models = generated / "v1" / "models.py"
    models.write_text(models.read_text().replace("class SessionInfo(", "class SessionInfoX("))
    capsys.readouterr()
    assert main(["check"]) == 1
    captured = capsys.readouterr()
    assert "-class SessionInfoX(BaseModel):" in captured.out
    assert "+class SessionInfo(BaseModel):" in captured.out
    assert "nox -s generate" in captured.err


def test_check_catches_a_stray_file(generated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (generated / "v1" / "extra.py").write_text("x = 1\n")
    assert main(["check"]) == 1
    assert "v1/extra.py" in capsys.readouterr().out


def test_check_catches_a_schema_edit(project: Path, generated: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit_json(
        project / "schema" / "v2" / "schema.json",
        lambda d: d["$defs"]["SessionInfo"].__setitem__("description", "Changed."),
    )
    capsys.readouterr()
    assert main(["check"]) == 1
    out = capsys.readouterr().out
    assert "+    Changed." in out and "v2/models.py" in out


def test_check_catches_a_template_edit(project: Path, generated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    templates = project / "templates-copy"
    shutil.copytree(resources.TEMPLATES, templates)
    methods = templates / "methods.py.jinja"
    methods.write_text(methods.read_text().replace("Methods an agent handles", "Methods the agent handles"))
    monkeypatch.setattr(resources, "TEMPLATES", templates)
    assert main(["check"]) == 1


def test_no_default_features_gives_the_stable_surface(project: Path) -> None:
    assert main(["generate", "--no-default-features", "--out", "stable"]) == 0
    text = (project / "stable" / "v1" / "models.py").read_text()
    assert "ArchiveSessionRequest" not in text and "Features: (none: stable surface)" in text
    assert main(["check", "--no-default-features", "--out", "stable"]) == 0
    assert main(["check", "--out", "stable"]) == 1  # the default features differ


def test_feature_option_adds_to_defaults(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.acp-codegen]\n")
    assert main(["generate", "--feature", "unstable_session_archive"]) == 0
    assert "ArchiveSessionRequest" in (project / "generated" / "v2" / "models.py").read_text()


BAD_INPUTS = {
    # name: (file to break, how, expected "file: pointer: message" fragment)
    "invalid json": (
        "v1/schema.json",
        lambda p: p.write_text('{"$defs": {'),
        "schema/v1/schema.json: /: invalid JSON at line 1",
    ),
    "unresolved ref": (
        "v2/schema.json",
        lambda p: edit_json(
            p,
            lambda d: d["$defs"]["SessionInfo"]["properties"]["sessionId"].__setitem__(
                "allOf", [{"$ref": "#/$defs/Nope"}]
            ),
        ),
        "schema/v2/schema.json: /$defs/SessionInfo/properties/sessionId/allOf/0/$ref: reference to undefined type",
    ),
    "keyword of the wrong type": (
        "v1/schema.json",
        lambda p: edit_json(p, lambda d: d["$defs"]["ArchiveSessionRequest"].__setitem__("required", "sessionId")),
        "schema/v1/schema.json: /$defs/ArchiveSessionRequest/required: not valid JSON Schema",
    ),
    "request without response": (
        "v1/schema.json",
        lambda p: edit_json(p, lambda d: d["$defs"].pop("UnarchiveSessionResponse")),
        "schema/v1/meta.json: /agentMethods/session_unarchive: method 'session/unarchive' has a request but no",
    ),
    "method without request": (
        "v2/meta.json",
        lambda p: edit_json(p, lambda d: d["agentMethods"].__setitem__("session_fly", "session/fly")),
        "schema/v2/meta.json: /agentMethods/session_fly: method 'session/fly' has no request type",
    ),
    "unknown feature marker": (
        "v2/schema.json",
        lambda p: edit_json(p, lambda d: d["$defs"]["SessionInfo"].__setitem__("x-feature", "nope")),
        "schema/v2/schema.json: /$defs/SessionInfo/x-feature: unknown feature 'nope'",
    ),
    "duplicate key": (
        "v1/meta.json",
        lambda p: p.write_text(p.read_text().replace('"version": 1,', '"version": 1, "version": 1,')),
        "schema/v1/meta.json: /version: duplicate key",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_exits_2_names_file_and_pointer_and_keeps_output(
    case: str, project: Path, generated: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(generated)
    file, breaker, expected = BAD_INPUTS[case]
    breaker(project / "schema" / file)
    capsys.readouterr()
    assert main(["generate"]) == 2
    err = capsys.readouterr().err
    assert expected in err
    assert "Traceback" not in err
    assert snapshot(generated) == before


def test_unknown_feature_option_is_an_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["generate", "--feature", "unstable_nope"]) == 2
    assert "unknown feature 'unstable_nope'" in capsys.readouterr().err
    assert not (project / "pkg").exists()


def test_refuses_to_replace_a_directory_it_did_not_generate(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    victim = project / "src"
    victim.mkdir()
    (victim / "important.py").write_text("keep = True\n")
    assert main(["generate", "--out", "src"]) == 2
    assert "was not generated by acp-codegen" in capsys.readouterr().err
    assert (victim / "important.py").read_text() == "keep = True\n"


def test_command_line_entry_point_prints_no_traceback(project: Path) -> None:
    (project / "schema" / "v1" / "schema.json").write_text("[1, 2")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "acp_codegen", "generate"], capture_output=True, text=True, env=env)
    assert proc.returncode == 2
    assert proc.stderr.startswith("schema/v1/schema.json: /: invalid JSON")
    assert "Traceback" not in proc.stderr


def test_check_on_an_unchanged_tree_renders_nothing(generated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def must_not_render(*args: object, **kwargs: object) -> str:
        raise AssertionError("check rendered although nothing changed")

    monkeypatch.setattr("acp_codegen.generate.pipeline.render_models", must_not_render)
    assert main(["check"]) == 0
    # A one-character hand edit defeats the recorded content hash, so check renders (and fails here).
    models = generated / "v2" / "models.py"
    models.write_text(models.read_text().replace("camelCase", "camelcase", 1) + " ")
    with pytest.raises(AssertionError, match="check rendered"):
        main(["check"])


# -- a file changes only when its content does ------------------------------------------


def test_an_upgrade_with_the_same_output_leaves_check_green_and_rewrites_nothing(
    project: Path, generated: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in generated.rglob("*.py")}
    # A new acp-codegen (another version, another generator source) and a whitespace-only
    # reformat of a fragment: every header's inputs hash is now stale, no content is.
    monkeypatch.setattr(headers, "__version__", "9.9.9")
    monkeypatch.setattr(headers, "generator_digest", lambda: "f" * 64)
    fragment = project / "schema" / "v1" / "schema.json"
    fragment.write_text(json.dumps(json.loads(fragment.read_text()), indent=4) + "\n")
    capsys.readouterr()
    assert main(["check"]) == 0
    assert main(["generate"]) == 0
    assert "nothing written" in capsys.readouterr().out
    assert {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in generated.rglob("*.py")} == before


def test_a_content_change_rewrites_with_the_new_header(
    project: Path, generated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(headers, "__version__", "9.9.9")
    edit_json(
        project / "schema" / "v1" / "schema.json",
        lambda d: d["$defs"]["SessionInfo"].__setitem__("description", "Changed."),
    )
    assert main(["generate"]) == 0
    models = (project / "pkg" / "generated" / "v1" / "models.py").read_text()
    assert "Changed." in models and models.startswith("# Generated by acp-codegen 9.9.9.")
    # v2's files did not change: they keep the header of the run that wrote them.
    assert (project / "pkg" / "generated" / "v2" / "models.py").read_text().startswith("# Generated by acp-codegen 0.")


def test_check_catches_a_hand_edit_of_the_header(generated: Path) -> None:
    methods = generated / "v1" / "methods.py"
    methods.write_text(methods.read_text().replace("# Features: ", "# Features: my_own, ", 1))
    assert main(["check"]) == 1


def test_strip_header_keeps_only_the_content(generated: Path) -> None:
    from acp_codegen.write import strip_header

    text = (generated / "v1" / "methods.py").read_text()
    body = strip_header(text)
    assert text.endswith(body) and text.startswith("# Generated by acp-codegen")
    assert not body.lstrip().startswith("#") and body.lstrip().startswith('"""JSON-RPC methods')
    assert strip_header(body) == body  # no header: unchanged


# -- formatter and line length ----------------------------------------------------------


def _formatter_check(tool: str, line_length: int, path: Path) -> subprocess.CompletedProcess[str]:
    command = {
        "black": [sys.executable, "-m", "black", "--check", "--target-version", "py310"],
        "ruff": [sys.executable, "-m", "ruff", "format", "--isolated", "--check", "--target-version", "py310"],
    }[tool]
    return subprocess.run([*command, f"--line-length={line_length}", str(path)], capture_output=True, text=True)


def test_default_output_passes_black_check(generated: Path) -> None:
    assert "# Formatter: black, line length 88" in (generated / "v1" / "models.py").read_text()
    done = _formatter_check("black", 88, generated)
    assert done.returncode == 0, done.stderr


def test_ruff_formatter_and_line_length_from_config_and_flags(project: Path) -> None:
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + 'formatter = "ruff"\nline-length = 100\n')
    assert main(["generate"]) == 0
    out = project / "pkg" / "generated"
    assert "# Formatter: ruff, line length 100" in (out / "v2" / "models.py").read_text()
    done = _formatter_check("ruff", 100, out)
    assert done.returncode == 0, done.stdout
    assert main(["check"]) == 0
    # The flags win over the configuration; the other layout is a different output.
    assert main(["check", "--formatter", "black", "--line-length", "120"]) == 1
    assert main(["generate", "--formatter", "black", "--line-length", "120"]) == 0
    assert _formatter_check("black", 120, out).returncode == 0


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ('formatter = "yapf"', "[tool.acp-codegen].formatter must be"),
        ('line-length = "wide"', "[tool.acp-codegen].line-length must be"),
        ("line-length = 10", "[tool.acp-codegen].line-length must be"),
    ],
)
def test_bad_formatter_settings_exit_2_naming_the_key(
    project: Path, capsys: pytest.CaptureFixture[str], setting: str, message: str
) -> None:
    pyproject = project / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + setting + "\n")
    assert main(["generate"]) == 2
    assert message in capsys.readouterr().err
    assert not (project / "pkg").exists()


def test_bad_line_length_flag_exits_2(project: Path) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["generate", "--line-length", "0"])
    assert exit_.value.code == 2


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path: Path) -> None:
    """`acp-codegen generate | head -1`: the closed pipe ends the run quietly."""
    command = [sys.executable, "-m", "acp_codegen", "generate", "--out", str(tmp_path / "out")]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stderr is not None
    assert process.stdout.readline().startswith("config: ")
    process.stdout.close()  # before the summary lines are written
    error = process.stderr.read()
    assert process.wait() in (0, 1)
    assert "Traceback" not in error and "BrokenPipeError" not in error, error
    assert (tmp_path / "out" / "v1" / "models.py").is_file()  # the work itself was done
