"""``acp-codegen adopt`` takes over the repository's own regeneration command
(codegen/adopt/regen.py), in process, on test_adopt.py's SDK with an old pipeline of its
own: a driver script that a Makefile target (the one its README names) runs, and a step
script beside it that writes the schema module. After adopt that command runs acp-codegen;
run again, it changes no byte, and ``acp-codegen check`` finds nothing to do. Then ``generate``
over a newer base that dropped a class the SDK named. The official SDK's own command (``make
gen-all``, ``scripts/gen_all.py``) is taken over from the built wheel in
tests/adopt/test_sdk_rfd.py.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from acp_codegen.adopt.regen import take_over
from acp_codegen.cli import main
from acp_codegen.style import Style
from test_adopt import SDK_MODULE, sdk_repository, snapshot, table_of

# The old pipeline: a step that writes the module, and the driver that calls it, then the
# repository's formatter, as the official SDK's scripts/gen_all.py does.
STEP = """\
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "oldsdk" / "models.py"


def generate() -> None:
    OUT.write_text("# the old pipeline's module\\n", encoding="utf-8")
"""
DRIVER = '''\
"""Regenerates the models."""

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))

from scripts import gen_models  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-format", dest="format_output", action="store_false")
    args = parser.parse_args()
    gen_models.generate()
    if args.format_output:
        subprocess.check_call([sys.executable, "-m", "ruff", "format", str(ROOT / "src")])
    print("regenerated")


if __name__ == "__main__":
    main()
'''
MAKEFILE = (
    "install:\n\tuv sync\n\n.PHONY: gen\ngen: ## regenerate the models\n\t@uv run {script}\n\t@uv run ruff format .\n"
)
README = (
    "# oldsdk\n\n- `make install` sets it up.\n- `make gen` regenerates the schema models when the schema advances.\n"
)


def with_pipeline(repo: Path, makefile: str | None = MAKEFILE.format(script="scripts/regen.py")) -> Path:
    (repo / "scripts").mkdir(parents=True)
    (repo / "scripts" / "__init__.py").write_text("", encoding="utf-8")
    (repo / "scripts" / "gen_models.py").write_text(STEP, encoding="utf-8")
    (repo / "scripts" / "regen.py").write_text(DRIVER, encoding="utf-8")
    (repo / "README.md").write_text(README, encoding="utf-8")
    if makefile is not None:
        (repo / "Makefile").write_text(makefile, encoding="utf-8")
    return repo


def acp_codegen(repo: Path, *args: str) -> tuple[int, str]:
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out):
        patch.chdir(repo)
        code = main(list(args))
    return code, out.getvalue()


@pytest.fixture(scope="module")
def adopted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    repo = with_pipeline(sdk_repository(tmp_path_factory.mktemp("regen") / "sdk"))
    code, report = acp_codegen(repo, "adopt", "src/oldsdk/models.py")
    assert code == 0, report
    return repo, report


def regenerate(repo: Path, *args: str) -> str:
    """The driver, as the Makefile target runs it (``uv run`` puts the environment first)."""
    env = {**os.environ, "RUFF_NO_CACHE": "true"}  # (no .ruff_cache in the tree)
    done = subprocess.run(
        [sys.executable, "scripts/regen.py", *args], cwd=repo, capture_output=True, text=True, check=False, env=env
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def test_the_command_the_readme_names_runs_acp_codegen(adopted: tuple[Path, str]) -> None:
    repo, report = adopted
    assert "regeneration: `make gen` runs acp-codegen" in report
    assert "  scripts/regen.py: gen_models.generate() -> acp-codegen generate" in report
    driver = (repo / "scripts" / "regen.py").read_text(encoding="utf-8")
    assert "gen_models" not in driver  # the step's call and its import are gone
    assert 'subprocess.call([sys.executable, "-m", "acp_codegen", "generate"], cwd=ROOT)' in driver
    assert "ruff" in driver and "argparse" in driver  # the rest is the repository's own
    assert table_of(repo)["regenerate"] == "make gen"
    header = (repo / "src" / "oldsdk" / "generated" / "v1" / "models.py").read_text(encoding="utf-8")
    assert "Do not edit: run `make gen`." in header
    # The repository's ruff leaves the output alone (the target runs `ruff format .`).
    assert 'extend-exclude = ["src/oldsdk/generated"]' in (repo / "pyproject.toml").read_text(encoding="utf-8")


@pytest.mark.parametrize("args", [["--no-format"], []], ids=["no-format", "formatted"])
def test_regenerating_changes_no_byte_and_check_is_clean(adopted: tuple[Path, str], args: list[str]) -> None:
    repo, _ = adopted
    before = snapshot(repo)
    out = regenerate(repo, *args)
    assert "regenerated" in out and "up to date, nothing written" in out, out
    assert snapshot(repo) == before
    assert acp_codegen(repo, "check")[0] == 0
    # adopt run again finds the command taken over already: nothing changes either.
    code, report = acp_codegen(repo, "adopt", "src/oldsdk/models.py")
    assert code == 0 and "regeneration: `make gen` runs acp-codegen" in report
    assert snapshot(repo) == before


def test_dry_run_shows_the_change_and_writes_nothing(tmp_path: Path) -> None:
    repo = with_pipeline(sdk_repository(tmp_path / "sdk"))
    before = snapshot(repo)
    code, report = acp_codegen(repo, "adopt", "src/oldsdk/models.py", "--dry-run")
    assert code == 0
    assert snapshot(repo) == before
    diff = report[report.index("--- a/scripts/regen.py") :]
    assert "-    gen_models.generate()\n" in diff and "-from scripts import gen_models  # noqa: E402\n" in diff
    assert '+    if subprocess.call([sys.executable, "-m", "acp_codegen", "generate"], cwd=ROOT):\n' in diff


def test_a_driver_written_for_the_old_import_name_runs_acp_codegen_by_its_own(tmp_path: Path) -> None:
    """A driver adopt wrote while the package was installed as ``codegen`` (a name another
    package on the index installs) is moved to ``-m acp_codegen``, and nothing else changes."""
    repo = with_pipeline(sdk_repository(tmp_path / "sdk"))
    old = DRIVER.replace(
        "    gen_models.generate()\n", '    subprocess.call([sys.executable, "-m", "codegen", "generate"])\n'
    )
    (repo / "scripts" / "regen.py").write_text(old, encoding="utf-8")
    found = take_over(repo, [repo / "src" / "oldsdk" / "models.py"], Style("black", 88))
    assert found.problem is None and found.command == "make gen"
    assert found.after == old.replace('"-m", "codegen"', '"-m", "acp_codegen"')
    assert found.changes == ["runs acp-codegen by its import name acp_codegen (`-m codegen` is another package's)"]


def test_a_target_that_runs_a_step_itself_is_named_exit_1(tmp_path: Path) -> None:
    repo = with_pipeline(sdk_repository(tmp_path / "sdk"), MAKEFILE.format(script="scripts/gen_models.py"))
    (repo / "scripts" / "regen.py").unlink()
    code, report = acp_codegen(repo, "adopt", "src/oldsdk/models.py")
    assert code == 1
    assert (
        "not taken over: make gen: it runs scripts/gen_models.py, which writes what acp-codegen writes now itself;"
        " make it run `acp-codegen generate` in its place"
    ) in report
    assert (repo / "scripts" / "gen_models.py").read_text(encoding="utf-8") == STEP
    assert "regenerate" not in table_of(repo)  # its command does not regenerate through acp-codegen


def owned(repo: Path) -> list[Path]:
    return [repo / "src" / "oldsdk" / "models.py"]


@pytest.mark.parametrize(
    ("files", "command"),
    [
        ({"noxfile.py": 'import nox\n\n\n@nox.session(name="gen-models")\ndef gen(session):\n'
          '    session.run("python", "scripts/regen.py")\n'}, "nox -s gen-models"),
        ({"tox.ini": "[testenv:gen]\ncommands =\n    python -m scripts.regen --no-format\n"}, "tox -e gen"),
        # An sdist: the README names the target, but the Makefile is not shipped; the script is.
        ({}, "python scripts/regen.py"),
    ],
    ids=["nox", "tox", "script"],
)  # fmt: skip
def test_nox_tox_or_the_script_itself(tmp_path: Path, files: dict[str, str], command: str) -> None:
    repo = with_pipeline(tmp_path, makefile=None)
    (repo / "src" / "oldsdk").mkdir(parents=True)
    for name, text in files.items():
        (repo / name).write_text(text, encoding="utf-8")
    found = take_over(repo, owned(repo), Style("ruff", 100))
    assert (found.command, found.problem) == (command, None)
    assert found.script == repo / "scripts" / "regen.py" and "gen_models" not in found.after


def test_a_driver_that_uses_a_step_otherwise_and_a_repository_without_one(tmp_path: Path) -> None:
    repo = with_pipeline(tmp_path / "uses", makefile=None)
    (repo / "src" / "oldsdk").mkdir(parents=True)
    driver = repo / "scripts" / "regen.py"
    driver.write_text(DRIVER.replace("    gen_models.generate()\n", "    print(gen_models.OUT)\n"), encoding="utf-8")
    found = take_over(repo, owned(repo), Style("ruff", 100))
    assert found.command == "python scripts/regen.py"
    assert found.problem == (
        "scripts/regen.py uses gen_models of the old pipeline otherwise than by calling it;"
        " make it run `acp-codegen generate` in their place"
    )
    bare = tmp_path / "bare"
    (bare / "src" / "oldsdk").mkdir(parents=True)
    (bare / "README.md").write_text(README, encoding="utf-8")
    found = take_over(bare, owned(bare), Style("ruff", 100))
    assert (found.command, found.problem) == (None, None)
    assert found.report() == [
        "regeneration: the README names `make gen`, but there is no Makefile here;"
        " no command found that regenerates the schema module"
    ]


def test_a_driver_without_a_root_of_its_own_gains_what_it_needs(tmp_path: Path) -> None:
    """No ``ROOT``, no ``sys`` or ``subprocess`` imported, the step imported in ``main()``: the
    run of acp-codegen still runs in the repository's root, from any directory (an ``acp_codegen``
    of the test's records it)."""
    repo = with_pipeline(tmp_path / "sdk", makefile=None)
    (repo / "src" / "oldsdk").mkdir(parents=True)
    (repo / "scripts" / "regen.py").write_text(
        "def main():\n    import gen_models\n\n    gen_models.generate()\n\n\nif __name__ == '__main__':\n    main()\n",
        encoding="utf-8",
    )
    found = take_over(repo, owned(repo), Style("black", 88))
    assert found.problem is None, found.problem
    found.write()
    fake = tmp_path / "fake" / "acp_codegen"
    fake.mkdir(parents=True)
    (fake / "__main__.py").write_text(
        "import json, os, sys\nprint(json.dumps([os.getcwd(), sys.argv[1:]]))\n", encoding="utf-8"
    )
    done = subprocess.run(
        [sys.executable, str(repo / "scripts" / "regen.py")], cwd=tmp_path, capture_output=True, text=True,
        env={"PYTHONPATH": str(fake.parent), "PATH": ""}, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [str(repo), ["generate"]]
    assert found.after.startswith("from pathlib import Path\nimport subprocess\nimport sys\n")
    assert "gen_models" not in found.after


def test_a_new_base_without_a_class_the_sdk_named(tmp_path: Path) -> None:
    """The SDK's ``Farewell`` is the base's ``FarewellNotice``; the next base drops it: its
    class-names entry is taken out and said so, never pointed at another class; the second
    run changes nothing, check is clean. A name no output ever had stays an error (exit 2)."""
    farewell = "\n\nclass Farewell(BaseModel):\n    reason: str\n"
    repo = sdk_repository(tmp_path / "sdk", SDK_MODULE + farewell)
    base = repo / "schema" / "base.json"
    data = json.loads(base.read_text(encoding="utf-8"))
    notice = {"type": "object", "properties": {"reason": {"type": "string"}}, "required": ["reason"]}
    base.write_text(json.dumps({"$defs": {**data["$defs"], "FarewellNotice": notice}}), encoding="utf-8")
    code, report = acp_codegen(repo, "adopt", "src/oldsdk/models.py")
    assert code == 0, report
    assert table_of(repo)["v1"]["class-names"]["FarewellNotice"] == "Farewell"
    base.write_text(json.dumps(data), encoding="utf-8")  # the next release: no FarewellNotice
    code, report = acp_codegen(repo, "generate")
    assert code == 0, report
    assert (
        "pyproject.toml: [tool.acp-codegen.v1.class-names] FarewellNotice = 'Farewell' taken out:"
        " the base has no FarewellNotice any more"
    ) in report
    assert "v1: no longer generated (not in the base): Farewell\n" in report
    names = table_of(repo)["v1"]["class-names"]
    assert "FarewellNotice" not in names and names["SessionInfo"] == "Summary"  # the others carry over
    pyproject = repo / "pyproject.toml"
    before = snapshot(repo)
    assert acp_codegen(repo, "generate")[0] == 0
    assert snapshot(repo) == before
    assert acp_codegen(repo, "check")[0] == 0
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(text.replace('SessionInfo = "Summary"', 'SessionInfo = "Summary"\nSessionNope = "Nope"'))
    with contextlib.redirect_stderr(io.StringIO()) as err:
        assert acp_codegen(repo, "generate")[0] == 2
    assert "class-names/SessionNope: no generated class is named 'SessionNope'" in err.getvalue()


def test_a_dropped_class_another_setting_names_stops_the_run_and_writes_nothing(tmp_path: Path) -> None:
    """Where the generation without the dropped class's class-names entry fails too (here
    required-null names it), the run stops naming it, and pyproject.toml and the output are
    left as they were: the entry is taken out only with the files it gives."""
    farewell = "\n\nclass Farewell(BaseModel):\n    reason: str\n"
    repo = sdk_repository(tmp_path / "sdk", SDK_MODULE + farewell)
    base = repo / "schema" / "base.json"
    data = json.loads(base.read_text(encoding="utf-8"))
    notice = {"type": "object", "properties": {"reason": {"type": ["string", "null"]}}, "required": ["reason"]}
    base.write_text(json.dumps({"$defs": {**data["$defs"], "FarewellNotice": notice}}), encoding="utf-8")
    assert acp_codegen(repo, "adopt", "src/oldsdk/models.py")[0] == 0
    pyproject = repo / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(
        text.replace("[tool.acp-codegen.v1]\n", '[tool.acp-codegen.v1]\nrequired-null = ["Farewell"]\n')
    )
    assert acp_codegen(repo, "generate")[0] == 0, "required-null names a class of this base"
    base.write_text(json.dumps(data), encoding="utf-8")  # the next release: no FarewellNotice
    before = snapshot(repo)
    with contextlib.redirect_stderr(io.StringIO()) as err:
        assert acp_codegen(repo, "generate")[0] == 2
    assert "required-null/0: no generated class is named 'Farewell'" in err.getvalue()
    assert snapshot(repo) == before
