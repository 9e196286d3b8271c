"""What test modules share, as a library: the checkout's paths, schema copies and JSON edits,
importing a generated package, fresh virtualenvs, the TypeScript SDK's install, and running
the conformance kit. Test modules import it (``from support import ROOT``: pytest puts
``tests/`` on ``sys.path`` when it loads ``tests/conftest.py``), which holds only fixtures
and hooks. The runnable agents tests start are in ``tests/agents/``; fixtures and goldens in
``tests/fixtures/`` and ``tests/golden/``."""

from __future__ import annotations

import ast
import fcntl
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from .reference_data import reference_dir

ROOT = Path(__file__).resolve().parents[2]


SCHEMA = ROOT / "schema"


GOLDEN = ROOT / "tests" / "golden"


FIXTURES = ROOT / "tests" / "fixtures"


# The reference data: ../shared beside the checkout, else what `nox -s fetch_data` fetched into
# .reference/ (support/reference_data.py). Tests that need a part of it skip with
# `require(path)` or `needs(path)`, whose reason names that command.
SHARED_UPSTREAM = reference_dir() / "upstream"
# How the generator names files there (relative to the checkout), as its messages show them.
UPSTREAM_SHOWN = Path(os.path.relpath(SHARED_UPSTREAM, ROOT)).as_posix()


# Every upstream release at hand, by name: the folder that holds its v1/ (and v2/) schemas.
# 2026-08 is the top folder; schema-v1.19.0 (v1 only) is what the official Python SDK is built from.
UPSTREAM_RELEASES = {
    "2026-08": SHARED_UPSTREAM,
    "2026-11": SHARED_UPSTREAM / "2026-11",
    "schema-v1.19.0": SHARED_UPSTREAM / "schema-v1.19.0",
}


# The oldest pydantic the generated package supports, as noxfile.py pins it for CI.
_NOXFILE = (ROOT / "noxfile.py").read_text(encoding="utf-8")


LOWEST_PYDANTIC = re.search(r'^LOWEST_PYDANTIC = "([0-9.]+)"', _NOXFILE, re.M)[1]


JsonEdit = Callable[[Any], None]


# The type of the ``schema_copy`` fixture, for test signatures.
SchemaCopy = Callable[..., Path]


def edit_json(path: Path, change: JsonEdit) -> None:
    """Apply ``change`` to the JSON document at ``path`` and write it back (indented, ASCII:
    control characters and surrogates stay escapes)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def copy_schema(
    dest: Path,
    *,
    source: Path = SCHEMA,
    versions: Iterable[str] | None = None,
    edits: Mapping[str, JsonEdit] | None = None,
) -> Path:
    """Copy a schema directory (the repository's fragments unless ``source`` says otherwise;
    only the ``versions`` subfolders, such as ``"v1"``, when given) to ``dest``, then apply
    each edit to the JSON file it is keyed by, relative to ``dest`` (``"v1/schema.json"``)."""
    if versions is None:
        shutil.copytree(source, dest)
    else:
        for version in versions:
            shutil.copytree(source / version, dest / version)
    for rel, change in (edits or {}).items():
        edit_json(dest / rel, change)
    return dest


def imported_models(
    root: Path, package: str, files: Mapping[str, str], versions: Iterable[int] = (1,)
) -> dict[int, ModuleType]:
    """``files`` (a generation's) written as package ``package`` under ``root``, and its
    models module of each version imported. The modules stay imported (pydantic resolves
    their annotations through them); ``root`` leaves ``sys.path`` again."""
    from acp_codegen.write.tree import write_tree

    write_tree(root / package, dict(files))
    sys.path.insert(0, str(root))
    try:
        return {v: importlib.import_module(f"{package}.v{v}.models") for v in versions}
    finally:
        sys.path.remove(str(root))


TS_AGENT = ROOT / "tests" / "agents" / "ts_agent"


def install_ts_sdk(folder: Path = TS_AGENT) -> Path:
    """The official TypeScript SDK at the version package-lock.json pins, in
    ``folder/node_modules`` (git-ignored): ``npm ci`` once, with npm's cache in
    ``folder/.npm-cache`` (git-ignored), then reused while it matches the pin. Skips where
    node or npm is missing; fails with npm's output where the install fails."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not found on PATH: the TypeScript SDK tests need Node.js and npm")
    pinned = json.loads((folder / "package-lock.json").read_text())["packages"]["node_modules/@agentclientprotocol/sdk"]
    installed = folder / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json"
    with open(folder / "package-lock.json", "rb") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one install even if test processes run side by side
        if installed.exists() and json.loads(installed.read_text())["version"] == pinned["version"]:
            return folder
        run = subprocess.run(
            ["npm", "ci", "--prefer-offline", "--no-audit", "--no-fund", "--cache", str(folder / ".npm-cache")],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=600,
        )
    if run.returncode != 0:
        pytest.fail(f"npm ci in {folder} failed:\n{run.stdout}\n{run.stderr}")
    return folder


# A scenario's line in the conformance kit's output: status, protocol version, scenario
# (AUTH: where the version stopped for want of authentication).
KIT_LINE = re.compile(r"^(PASS|FAIL|SKIP|AUTH)  v(\d)  (\S+)", re.M)


KitRun = tuple[int, dict[tuple[int, str], str], str]


def kit_statuses(out: str) -> dict[tuple[int, str], str]:
    """{(version, scenario): status} from the conformance kit's output."""
    return {(int(v), name): status for status, v, name in KIT_LINE.findall(out)}


def run_kit(
    *args: str, tool: Iterable[str | Path] = (sys.executable, "-m", "acp_codegen"), env: Mapping[str, str] | None = None
) -> KitRun:
    """``acp-codegen conformance ARGS`` as a process: its exit status, the statuses it
    printed and its stdout and stderr, which hold no traceback. ``tool`` is the checkout's
    unless given (an installed ``acp-codegen``); ``env`` the kit's environment, which the
    agent it starts inherits."""
    run = subprocess.run(
        [str(part) for part in (*tool, "conformance", *args)],
        cwd=ROOT,
        env=None if env is None else dict(env),
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = run.stdout + run.stderr
    assert "Traceback" not in out
    return run.returncode, kit_statuses(run.stdout), out


def selected_params(request: pytest.FixtureRequest, test: str, *names: str) -> list[tuple[Any, ...]]:
    """The parameters ``names`` of each item of ``test`` the session runs: a module fixture
    starts their slow runs together, each test then waits for its own."""
    return [
        tuple(item.callspec.params[name] for name in names)
        for item in request.session.items
        if isinstance(item, pytest.Function) and item.originalname == test
    ]


def run_script(
    script: Path, text: str, cwd: Path, env: Mapping[str, str], timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    """``text`` written to ``script`` and run as a CI runner runs a shell step (and as a user
    pastes a block): bash without profiles, stopping at the first failing command (``-e``, pipefail)."""
    script.write_text(text, encoding="utf-8")
    command = ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)]
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)


# The official Python SDK's sdists, downloaded once (git-ignored; NOT_SOURCE keeps ".*_cache" out
# of the build).
SDIST_CACHE = ROOT / "tests" / "adopt" / ".sdist_cache"
# Where the index cannot be reached, pip says so in seconds rather than minutes of retries.
PIP_OFFLINE_FAST = ("--retries", "1", "--timeout", "15")


def sdk_sdist(at: Path, bin_dir: Path, pin: str) -> Path:
    """The official SDK's sdist (``pin``, exact: ``agent-client-protocol==0.12.1``), unpacked at
    ``at``: downloaded once with ``bin_dir``'s pip into ``SDIST_CACHE``, then taken from there;
    skipped, naming the pin, where it cannot be downloaded."""
    archive = SDIST_CACHE / f"{pin.replace('==', '-').replace('-', '_', 2)}.tar.gz"
    if not archive.is_file():
        download = at.parent / "download"
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
        done = subprocess.run(
            [str(bin_dir / "python"), "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
             *PIP_OFFLINE_FAST, "--dest", str(download), pin],
            capture_output=True, text=True, check=False, env=env,
        )  # fmt: skip
        if done.returncode:
            pytest.skip(f"cannot download {pin}'s sdist: {done.stderr.strip().splitlines()[-1:]}")
        (downloaded,) = download.glob("agent_client_protocol-*.tar.gz")
        SDIST_CACHE.mkdir(exist_ok=True)
        partial = SDIST_CACHE / f".{archive.name}.{os.getpid()}"  # (whole, or not at all)
        shutil.copyfile(downloaded, partial)
        partial.replace(archive)
    with tarfile.open(archive) as sdist:
        sdist.extractall(at.parent, filter="data")
    (unpacked,) = at.parent.glob("agent_client_protocol-*/")
    unpacked.rename(at)
    return at


# Build from a clean copy: setuptools reuses a stale build/ directory, which could hide a missing file.
NOT_SOURCE = shutil.ignore_patterns(
    ".git",
    ".nox",
    ".venv",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".*_cache",
    ".hypothesis",
    "node_modules",
    ".npm-cache",
    ".reference",  # the fetched reference data (nox -s fetch_data): not part of the source
)


def processes_naming(marker: str) -> list[str]:
    """Live processes (not zombies) whose command line names ``marker``, a run's own path:
    what a run left behind."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if stat[stat.rindex(")") + 2] != "Z" and marker in command:
            found.append(f"{entry.name}: {command}")
    return found


def fresh_venv(venv: Path, *requirements: str | Path, pip: bool = False, python: str | Path = sys.executable) -> Path:
    """A new virtualenv at ``venv`` with ``requirements`` installed (not editable), its ``bin``
    folder. Made by uv where it is on PATH (seconds; venv and pip take half a minute), by the
    standard venv and pip otherwise. Bytecode is compiled at install: where
    PYTHONDONTWRITEBYTECODE is set, every process would compile pydantic and the generator
    again (a second or two each; the official SDK's own tests give a process two seconds to
    start). ``pip``: pip in it too (a uv environment has none unless seeded). ``python``: the
    interpreter it is made for (this one unless given)."""
    inside = venv / "bin" / "python"
    uv = shutil.which("uv")
    if uv:
        commands = [[uv, "venv", "--quiet", *(["--seed"] if pip else []), "--python", python, venv]]
        commands.append([uv, "pip", "install", "--quiet", "--compile-bytecode", "--python", inside, *requirements])
    else:
        commands = [[python, "-m", "venv", venv]]
        commands.append([inside, "-m", "pip", "install", "--quiet", *requirements])
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    for command in commands:  # (run beside the venv: no project's settings in the way)
        done = subprocess.run([str(c) for c in command], cwd=venv.parent, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{command}: exit {done.returncode}\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    return venv / "bin"


def identifiers(source: str) -> set[str]:
    """Every name the code uses or defines (strings and comments aside)."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add(node.asname or node.name)
    return names
