"""The tool as users install it. The sdist, and the wheel built from it, hold every file
the generator reads; a non-editable install into a fresh virtualenv generates, checks and
type-checks an SDK repository's package from outside this checkout.

Both build the distribution (once per session) and the second installs it with its
dependencies, so they are marked ``slow``: ``nox -s tests`` (and so CI) runs them, a bare
``pytest`` does not.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from acp_codegen import __version__
from acp_codegen.cli import main
from acp_codegen.config.table import tomllib
from acp_codegen.generate.pipeline import BRIDGE_FILES, PACKAGE_TEMPLATES, RUNTIME_FILES, VERSION_TEMPLATES
from acp_codegen.render.models import MODELS_TEMPLATES
from acp_codegen.resources import BUILTIN_FRAGMENTS
from support import ROOT, fresh_venv

# Checkout folder -> installed package; everything in them ships (bytecode caches aside).
MAPPED = {
    "codegen": "acp_codegen",
    "templates": "acp_codegen/templates",
    "schema": "acp_codegen/fragments",
    "generated": "acp_codegen/reference",
    "generated_upstream": "acp_codegen/upstream",
}


def files_under(directory: Path) -> dict[str, bytes]:
    return {
        p.relative_to(directory).as_posix(): p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.mark.slow
def test_wheel_holds_every_file_the_generator_reads(wheel: Path) -> None:
    """The wheel was built from the sdist, so this holds for both."""
    with zipfile.ZipFile(wheel) as archive:
        content = {
            name: archive.read(name)
            for name in archive.namelist()
            if ".dist-info/" not in name and not name.endswith("/")
        }
        entry_points = archive.read(f"acp_codegen-{__version__}.dist-info/entry_points.txt").decode()
    expected = {
        f"{package}/{rel}": data
        for folder, package in MAPPED.items()
        for rel, data in files_under(ROOT / folder).items()
    }
    assert sorted(content) == sorted(expected)  # nothing missing, nothing stray
    # One top-level name, the project's own: PyPI's `codegen` package installs a `codegen/` too.
    assert {name.split("/")[0] for name in content} == {"acp_codegen"}
    assert content == expected  # byte for byte
    # The names the pipeline asks for, independently of the folder listing above.
    templates = {t for t, _ in (*VERSION_TEMPLATES, *PACKAGE_TEMPLATES)} | set(MODELS_TEMPLATES)
    for name in templates:
        assert f"acp_codegen/templates/{name}" in content, name
    for name in RUNTIME_FILES:  # copied into the outputs, and shipped as the packages' own
        assert f"acp_codegen/runtime/{name}" in content, name
        assert f"acp_codegen/upstream/{name}" in content, name  # (the bridge's package has every one)
        assert (f"acp_codegen/reference/{name}" in content) == (name not in BRIDGE_FILES), name
    for name in ("conversions.json", "v1/schema.json", "v1/meta.json", "v2/schema.json", "v2/meta.json"):
        assert f"acp_codegen/fragments/{name}" in content, name
    assert "acp-codegen = acp_codegen.cli:main" in entry_points


PYPROJECT = """\
[project]
name = "my-sdk"
version = "1.0.0"

[tool.acp-codegen]
base-v1 = "schema/v1/schema.unstable.json"
base-v2 = "schema/v2/schema.unstable.json"
out = "src/my_sdk/generated"
features = ["unstable_session_archive"]

[tool.acp-codegen.class-names]
SessionInfo = "SessionSummary"  # the SDK's public name (both versions)
ContentBlockText = "TextContentBlock"  # a derived name (v2 only; v1 has TextContentBlock already)
"""

IMPORT_CHECK = """\
import acp_codegen, acp_codegen.reference.v1.models
from my_sdk.generated.v1 import methods, models
from my_sdk.generated import v2

request = models.ListSessionsRequest.model_validate({"cwd": "/p", "archived": "only"})
assert request.model_dump(mode="json", by_alias=True, exclude_unset=True) == {"cwd": "/p", "archived": "only"}
assert models.InitializeRequest.__name__ == "InitializeRequest"  # the upstream base is there
assert v2.models.ArchiveSessionRequest.model_validate({"sessionId": "s"}).session_id == "s"
# The chosen class names, everywhere: models, the list response that holds them, convert.
assert not hasattr(models, "SessionInfo") and not hasattr(v2.models, "ContentBlockText")
assert v2.models.TextContentBlock.model_validate({"type": "text", "text": "t"}).text == "t"
listed = models.ListSessionsResponse.model_validate({"sessions": [{"sessionId": "s", "cwd": "/p", "archived": True}]})
assert type(listed.sessions[0]) is models.SessionSummary
from my_sdk.generated import convert
moved = convert.list_sessions_response_v1_to_v2(listed)
assert type(moved.sessions[0]) is v2.models.SessionSummary and moved.sessions[0].archived is True
print(acp_codegen.__file__)
"""


@pytest.mark.slow
def test_installed_wheel_serves_an_sdk_repository(wheel: Path, upstream: Path, tmp_path: Path) -> None:
    """From a fresh virtualenv holding only the wheel, in a repository that keeps an upstream
    base but no fragments: generate, import, check, edit, check. (The same render passes
    mypy --strict in test_upstream.py: the output does not depend on where the tool is.)"""
    venv = tmp_path / "venv"
    bin_dir = fresh_venv(venv, wheel)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}

    def run(*command: str | Path, cwd: Path, code: int = 0) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, check=False)
        assert done.returncode == code, f"{command}: exit {done.returncode}\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        return done

    sdk = tmp_path / "sdk"
    for version in ("v1", "v2"):
        (sdk / "schema" / version).mkdir(parents=True)
        for name in ("schema.unstable.json", "meta.unstable.json"):
            shutil.copyfile(upstream / version / name, sdk / "schema" / version / name)
    (sdk / "src" / "my_sdk").mkdir(parents=True)
    (sdk / "src" / "my_sdk" / "__init__.py").write_text("", encoding="utf-8")
    (sdk / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
    out = sdk / "src" / "my_sdk" / "generated"

    version = run(bin_dir / "acp-codegen", "--version", cwd=tmp_path).stdout
    assert version.startswith(f"acp-codegen {__version__} from {venv}"), version
    # From a subdirectory: the repository's pyproject.toml is found above it.
    done = run(bin_dir / "acp-codegen", "generate", cwd=sdk / "src")
    assert f"wrote 15 files to {out}" in done.stdout  # convert.py and its two runtime modules: two bases
    assert f"config: [tool.acp-codegen] in {sdk / 'pyproject.toml'}" in done.stdout
    header = (out / "v1" / "models.py").read_text(encoding="utf-8").split("# Content sha256:")[0]
    assert "#   schema/v1/schema.unstable.json\n" in header
    assert f"#   {BUILTIN_FRAGMENTS}/v1/schema.json\n" in header
    for text in files_under(out).values():
        assert str(tmp_path).encode() not in text  # no machine-specific path in the output

    installed = run(bin_dir / "python", "-c", IMPORT_CHECK, cwd=sdk / "src").stdout
    assert installed.startswith(str(venv)), installed  # the wheel's copy, not this checkout

    assert "up to date" in run(bin_dir / "acp-codegen", "check", cwd=sdk).stdout
    models = out / "v2" / "models.py"
    models.write_text(models.read_text(encoding="utf-8").replace("class ArchiveSessionRequest(", "class Edited("))
    stale = run(bin_dir / "acp-codegen", "check", cwd=sdk, code=1)
    assert "-class Edited(BaseModel):" in stale.stdout and "+class ArchiveSessionRequest(BaseModel):" in stale.stdout
    run(bin_dir / "acp-codegen", "generate", cwd=sdk)
    assert "up to date" in run(bin_dir / "acp-codegen", "check", cwd=sdk).stdout


def test_pre_commit_hooks_run_commands_the_package_installs(capsys: pytest.CaptureFixture[str]) -> None:
    yaml = pytest.importorskip("yaml")
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert [h["id"] for h in hooks] == ["acp-codegen-check", "acp-codegen-generate"]
    for hook in hooks:
        script, command = hook["entry"].split()
        assert scripts[script] == "acp_codegen.cli:main"
        # pre-commit installs this repository (language: python); the command takes no file names.
        assert (hook["language"], hook["pass_filenames"]) == ("python", False)
        with pytest.raises(SystemExit) as done:
            main([command, "--help"])
        assert done.value.code == 0 and capsys.readouterr().out.startswith(f"usage: acp-codegen {command}")
