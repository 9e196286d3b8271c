"""The generator's own source in every header's inputs hash (``write.headers.generator_digest``):
every codegen module that ``generate`` imports is hashed (the command line aside), and
``generate`` imports no command package (adopt, diff, conformance, ...) it does not use."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from acp_codegen.write import headers
from support import ROOT

# Packages of data the generator reads through importlib.resources, not code it runs: the
# runtime modules and templates are hashed file by file in each header (Inputs.runtime,
# Inputs.templates), the fragments and the reference package are inputs or output.
DATA_PACKAGES = {"acp_codegen.runtime", "acp_codegen.templates", "acp_codegen.fragments", "acp_codegen.reference"}

# A check run over the fragments into an empty directory (it renders everything and writes
# nothing), in a fresh interpreter: every codegen module that generate loads, then or before.
_RUN = """
import argparse, json, sys
from acp_codegen.generate import command
parser = argparse.ArgumentParser()
command.add_arguments(parser)
args = parser.parse_args(["--out", sys.argv[1]])
args.command = "check"
status = command.run(args)
print(json.dumps([status, sorted(m for m in sys.modules if m == "acp_codegen" or m.startswith("acp_codegen."))]))
"""


def _module_file(name: str) -> Path:
    """The checkout's file of an installed module (``acp_codegen`` is the folder ``codegen/``)."""
    path = ROOT.joinpath("codegen", *name.split(".")[1:])
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    out = tmp_path_factory.mktemp("digest") / "out"
    done = subprocess.run([sys.executable, "-c", _RUN, str(out)], cwd=ROOT, capture_output=True, text=True, check=True)
    status, modules = json.loads(done.stdout.splitlines()[-1])
    assert status == 1, done.stdout  # out of date: the whole pipeline ran
    return [m for m in modules if m not in DATA_PACKAGES and not m.startswith(tuple(p + "." for p in DATA_PACKAGES))]


def test_generate_imports_only_modules_the_digest_covers(imported: list[str]) -> None:
    hashed = set(headers.generator_sources())
    assert "acp_codegen.render.models" in imported and "acp_codegen.generate.sdk.wire" in imported
    missing = [m for m in imported if _module_file(m) not in hashed]
    assert not missing, f"generate imports modules its inputs hash leaves out: {missing}"


def test_generate_imports_no_command_package(imported: list[str]) -> None:
    rooms = {m.split(".")[1] for m in imported if m.count(".") >= 1 and (ROOT / "codegen" / m.split(".")[1]).is_dir()}
    assert {"protocol", "render", "generate"} <= rooms
    commands = sorted(rooms - set(headers.PIPELINE_PACKAGES))
    assert not commands, f"generate imports command packages it does not use: {commands}"
    assert "acp_codegen.cli" not in imported


def test_the_command_line_loads_no_other_command(tmp_path: Path) -> None:
    """``acp-codegen check`` through the command line imports generate's code alone."""
    script = (
        "import json, sys\nfrom acp_codegen.cli import main\nstatus = main(['check', '--out', sys.argv[1]])\n"
        "rooms = {m.split('.')[1] for m in sys.modules if m.startswith('acp_codegen.')}\n"
        "print(json.dumps([status, sorted(rooms)]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "out")], cwd=ROOT, capture_output=True, text=True, check=True
    )
    status, rooms = json.loads(done.stdout.splitlines()[-1])
    assert status == 1 and "generate" in rooms
    assert not {"adopt", "diff", "conformance"} & set(rooms), rooms


def test_the_checks_above_can_fail() -> None:
    # A module outside the hashed packages is seen as missing; adopt is a command package.
    hashed = set(headers.generator_sources())
    assert _module_file("acp_codegen.adopt.command") not in hashed
    assert _module_file("acp_codegen.cli") not in hashed
    assert _module_file("acp_codegen.protocol.load") in hashed


def test_appending_a_comment_to_any_imported_module_changes_the_header(
    imported: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copy = tmp_path / "codegen"
    shutil.copytree(ROOT / "codegen", copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(headers, "generator_digest", lambda: headers.digest_of_sources(copy))
    inputs = headers.Inputs((("schema/v1/schema.json", "0" * 64),), ("methods.py.jinja",), ())
    before = inputs.header()
    assert headers.digest_of_sources(copy) == headers.digest_of_sources()  # the copy hashes as the tree does
    unchanged = []
    for name in imported:
        module = copy.joinpath(*name.split(".")[1:])
        module = module / "__init__.py" if module.is_dir() else module.with_suffix(".py")
        text = module.read_text(encoding="utf-8")
        module.write_text(text + "# appended\n", encoding="utf-8")
        if inputs.header() == before:
            unchanged.append(name)
        module.write_text(text, encoding="utf-8")
    assert not unchanged, f"a comment appended to these leaves the Inputs sha256 line as it was: {unchanged}"
