"""Every command README.md and docs/ show a user for another repository, run exactly as written
against the built wheel, in a scratch SDK repository beside a clone of acp-codegen.

The docs write such commands as fenced ``sh`` blocks (```` ```sh ````); indented blocks are
synopses, output, or this repository's own commands, and ``<!-- not-run: why -->`` before an
``sh`` block leaves it out. Each block runs on its own, with bash (``-eo pipefail``), in a fresh
copy of the scratch repository, and must exit 0 without a traceback. A block with a placeholder
(``<org>``, ``<tag>``) fails before it runs. Fenced shell blocks tagged anything but ``sh``
(``bash``, ``console``, ``shell``) fail too: they would escape the test.

The scratch layout (``work/``), which commands may rely on:

- ``acp-codegen/``: this checkout's source (committed as the ``main`` branch of a git
  repository, so that git URLs work), as a user's clone; ``nox -s build`` works in it.
- each block's repository (``sdk-N/``, the ``../acp-codegen`` beside it): the official Python
  SDK's sdist (pinned below), a git repository whose ``main`` holds it, with upstream's schemas
  as an SDK keeps them: ``schema/schema.json`` and ``schema/meta.json`` (the unstable pair of
  ``schema-v1.19.0``, which SDK 0.12.1 was generated from), and ``schema/v1/``, ``schema/v2/``
  (``schema.json``, ``schema.unstable.json`` and their meta files of upstream's 2026-08).
- one virtualenv made by ``python -m venv`` (this machine's pip, 23.2), first on PATH, with
  the built wheel installed; a block that installs something is followed by the wheel again,
  so that every other block runs against it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import NOT_SOURCE, ROOT, SHARED_UPSTREAM, run_script, sdk_sdist
from support.reference_data import require
from support.sdk import SDK_PIN  # the official Python SDK the blocks adopt, as published

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.M | re.S)
PLACEHOLDER = re.compile(r"<[A-Za-z][\w.-]*>")
SHELLS = {"bash", "shell", "console", "zsh", "shell-session"}
# What the docs must show a user, among the blocks run (the list).
COVERED = (
    "pip install ../acp-codegen",
    "uv add --dev ../acp-codegen",
    "git+file://",
    "nox -s build",
    "acp-codegen generate --feature",
    "acp-codegen generate --base-v1",
    "acp-codegen adopt",
    "acp-codegen diff",
    "acp-codegen conformance",
    "acp-codegen polyfill",
)


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int
    text: str

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def blocks() -> tuple[list[Block], list[str]]:
    """The ``sh`` blocks to run, and the fenced shell blocks in another form (mistakes)."""
    found, wrong = [], []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            before = text[: match.start()].rstrip().splitlines()[-1:] or [""]
            if match[1] in SHELLS:
                wrong.append(f"{doc.relative_to(ROOT)}:{line}: ```{match[1]} (user commands are ```sh)")
            elif match[1] == "sh" and not before[0].startswith("<!-- not-run:"):
                found.append(Block(doc, line, match[2]))
    return found, wrong


def test_user_commands_are_sh_blocks_without_placeholders() -> None:
    found, wrong = blocks()
    assert not wrong, "\n".join(wrong)
    placeholders = [f"{b.where}: {m}" for b in found for m in PLACEHOLDER.findall(b.text)]
    assert not placeholders, "\n".join(placeholders)
    shown = "\n".join(b.text for b in found)
    assert [c for c in COVERED if c not in shown] == []


def _run(command: list[str | Path], cwd: Path, env: dict[str, str] | None = None) -> None:
    done = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{command}: exit {done.returncode}\n{done.stdout[-2000:]}{done.stderr[-2000:]}"


def _git_main(folder: Path) -> None:
    _run(["git", "init", "-q", "-b", "main"], folder)
    _run(["git", "add", "-A"], folder)
    _run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "main"], folder)


@pytest.mark.slow
def test_every_command_the_docs_show_a_user_works_as_written(wheel: Path, tmp_path: Path) -> None:
    found, _ = blocks()
    v1_19, snapshot = require(SHARED_UPSTREAM / "schema-v1.19.0" / "v1"), require(SHARED_UPSTREAM / "v1").parent
    work = tmp_path / "work"
    work.mkdir()
    clone = work / "acp-codegen"
    shutil.copytree(ROOT, clone, ignore=NOT_SOURCE)
    _git_main(clone)

    venv = work / "venv"
    _run([sys.executable, "-m", "venv", venv], work)  # pip as this machine's Python has it
    uv = shutil.which("uv")
    reinstall = (
        [uv, "pip", "install", "--quiet", "--python", venv / "bin" / "python", "--reinstall-package", "acp-codegen"]
        if uv
        else [venv / "bin" / "python", "-m", "pip", "install", "--quiet", "--force-reinstall", "--no-deps"]
    )
    _run([*reinstall, wheel], work)

    template = sdk_sdist(work / "sdk", venv / "bin", SDK_PIN)
    schema = template / "schema"
    schema.mkdir(exist_ok=True)
    shutil.copyfile(v1_19 / "schema.unstable.json", schema / "schema.json")
    shutil.copyfile(v1_19 / "meta.unstable.json", schema / "meta.json")
    for version in ("v1", "v2"):
        shutil.copytree(snapshot / version, schema / version)
    _git_main(template)

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "UV_PROJECT_ENVIRONMENT")}
    env |= {"VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    failures = []
    for number, block in enumerate(found):
        here = work / f"sdk-{number}"
        shutil.copytree(template, here, symlinks=True)
        done = run_script(work / f"block-{number}.sh", block.text, here, env)
        if done.returncode or "Traceback (most recent call last)" in done.stderr:
            failures.append(
                f"{block.where}: exit {done.returncode}\n{block.text}{done.stdout[-3000:]}{done.stderr[-3000:]}"
            )
        if re.search(r"\b(pip install|uv add|uv pip install)\b", block.text):
            _run([*reinstall, wheel], work)  # the next blocks run against the built wheel again
        shutil.rmtree(here)
    assert not failures, "\n\n".join(failures)
