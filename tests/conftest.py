"""Shared paths and fixtures for the three test folders: ``generator/`` (the code generator),
``generated/`` (the generated package) and ``e2e/`` (CLI runs, packaging, agent processes,
the conformance kit, the docs' snippets), plus ``hostile/`` (hostile and malformed input)
and ``polyfill/`` (``acp-codegen polyfill``).

``pytest --update-goldens`` (or ``nox -s tests -- --update-goldens``) rewrites golden files
from the current generator instead of comparing against them. Tests marked ``slow`` are
deselected by a bare ``pytest``; ``pytest -m ""`` (what ``nox -s tests`` runs) runs them too.

Test modules import the paths below with ``from conftest import ROOT`` (pytest puts this
folder on ``sys.path`` when it loads this file).

``nox -s tests`` runs the suite on every core (pytest-xdist) with ``--dist loadfile``: each
module runs whole on one worker, so that its module- and session-scoped fixtures (the
upstream renders, the built wheel) are built once in the run, as without xdist.
"""

from __future__ import annotations

import difflib
import fcntl
import functools
import importlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = ROOT / "schema"
GOLDEN = ROOT / "tests" / "golden"
FIXTURES = ROOT / "tests" / "fixtures"
SHARED_UPSTREAM = ROOT.parent / "shared" / "upstream"
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


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", help="rewrite golden files instead of comparing")


# The modules that take longest (`--durations`), longest first. xdist hands modules out in
# collection order (`--dist loadfile --no-loadscope-reorder` in noxfile.py): one of them
# started last would leave the other worker idle at the end of the run. `nox -s tests` and
# `nox -s ecosystem` (the tests marked ecosystem) each take the ones they select in this order.
SLOWEST_MODULES = (
    "tests/e2e/test_sdk_releases.py",  # (ecosystem: a test per release of the official SDK, adopt and its suite)
    "tests/generator/test_releases.py",  # (ecosystem: every upstream release tag)
    "tests/e2e/test_sdk_rfd.py",  # (the SDK adopted with the feature: kit, client, its suite, its regeneration)
    "tests/e2e/test_conformance_kit.py",
    "tests/polyfill/test_polyfill_agents.py",  # (the kit through the polyfill, five agents)
    "tests/generator/test_upstream.py",
    "tests/e2e/test_typescript_sdk.py",  # (ecosystem)
    "tests/e2e/test_conformance_agents.py",  # (ecosystem: agents from npm and PyPI, installed once)
    "tests/e2e/test_packaging.py",  # (before test_sdk_dropin: it builds the wheel both install)
    "tests/e2e/test_sdk_dropin.py",
    "tests/generated/test_wire.py",
    "tests/generator/test_sdk_settings.py",
    "tests/hostile/test_fuzz_generated.py",
    "tests/generator/test_adopt_regen.py",
    "tests/e2e/test_cli.py",
    "tests/e2e/test_archive_agent_hostile.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        module = item.nodeid.split("::")[0]
        return SLOWEST_MODULES.index(module) if module in SLOWEST_MODULES else len(SLOWEST_MODULES)

    items.sort(key=rank)  # stable: the order within a module, and of the others, is kept


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


@pytest.fixture
def schema_copy(tmp_path: Path) -> SchemaCopy:
    """``schema_copy(name="schema", *, source=..., versions=..., edits=...)``: a writable
    copy of a schema directory at ``tmp_path / name`` (see ``copy_schema``)."""

    def make(name: str = "schema", **options: Any) -> Path:
        return copy_schema(tmp_path / name, **options)

    return make


@pytest.fixture
def golden(request: pytest.FixtureRequest) -> Callable[[str, str], None]:
    """``golden(relative_path, text)``: compare text with tests/golden/<path>, or rewrite it."""
    update = request.config.getoption("--update-goldens")

    def check(rel: str, text: str) -> None:
        path = GOLDEN / rel
        if update:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            return
        assert path.is_file(), f"missing golden {path}; run `nox -s tests -- --update-goldens`"
        expected = path.read_text(encoding="utf-8")
        if expected != text:
            diff = "".join(
                difflib.unified_diff(
                    expected.splitlines(True), text.splitlines(True), f"golden/{rel}", f"{rel} (generated)"
                )
            )
            pytest.fail(f"golden mismatch (regenerate with `nox -s tests -- --update-goldens`):\n{diff}")

    return check


@pytest.fixture
def upstream() -> Path:
    if not SHARED_UPSTREAM.is_dir():
        pytest.skip(f"upstream ACP schemas not present at {SHARED_UPSTREAM}")
    return SHARED_UPSTREAM


def imported_models(
    root: Path, package: str, files: Mapping[str, str], versions: Iterable[int] = (1,)
) -> dict[int, ModuleType]:
    """``files`` (a generation's) written as package ``package`` under ``root``, and its
    models module of each version imported. The modules stay imported (pydantic resolves
    their annotations through them); ``root`` leaves ``sys.path`` again."""
    from codegen.write import write_tree

    write_tree(root / package, dict(files))
    sys.path.insert(0, str(root))
    try:
        return {v: importlib.import_module(f"{package}.v{v}.models") for v in versions}
    finally:
        sys.path.remove(str(root))


@pytest.fixture(scope="session")
def lowest_pydantic_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Python with nothing but the oldest pydantic in range (and what it needs), for
    importing generated packages: made with uv where it is on PATH (seconds), else with
    venv and pip; skipped where neither can install it (offline, no cache)."""
    venv = tmp_path_factory.mktemp("lowest-pydantic") / "venv"
    try:
        return fresh_venv(venv, f"pydantic=={LOWEST_PYDANTIC}") / "python"
    except AssertionError as exc:
        pytest.skip(f"cannot install pydantic=={LOWEST_PYDANTIC}: {str(exc)[-500:]}")


TS_AGENT = ROOT / "tests" / "e2e" / "ts_agent"


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
    *args: str, tool: Iterable[str | Path] = (sys.executable, "-m", "codegen"), env: Mapping[str, str] | None = None
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


@pytest.fixture(scope="session")
def ts_sdk() -> Path:
    """The folder of the TypeScript SDK test agent and client, its SDK installed."""
    return install_ts_sdk()


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
)


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``python -m build``: the sdist, then the wheel built from that sdist. Built once a run:
    under xdist, in the run's folder that all workers share (the first to ask builds it, the
    others wait for it), and with uv filling build's isolated environments where uv is on PATH."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = tmp_path_factory.getbasetemp().parent / "dist"  # (each worker's own folder is below it)
        base.mkdir(exist_ok=True)
    else:
        base = tmp_path_factory.mktemp("dist")
    with open(base / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (base / "out").is_dir():
            for stale in ("src", "building"):  # where another worker's build failed
                shutil.rmtree(base / stale, ignore_errors=True)
            shutil.copytree(ROOT, base / "src", ignore=NOT_SOURCE)
            installer = ["--installer", "uv"] if shutil.which("uv") else []
            done = subprocess.run(
                [sys.executable, "-m", "build", *installer, "--outdir", str(base / "building"), str(base / "src")],
                capture_output=True,
                text=True,
                check=False,
            )
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
            (base / "building").rename(base / "out")  # only a whole build is reused
    return base / "out"


@pytest.fixture(scope="session")
def wheel(dist: Path) -> Path:
    (found,) = dist.glob("acp_codegen-*.whl")
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


@pytest.fixture(scope="session")
def upstream_render() -> Callable[[str, str, bool], Any]:
    """``upstream_render(release, schema, enabled)``: ``codegen.pipeline.generate`` of the
    fragments over both versions of an upstream release (``""``: the top folder, 2026-08;
    ``"2026-11"``), ``schema`` (``"schema.json"`` or ``"schema.unstable.json"``), with or
    without the archive feature. A render takes seconds: each one is made once a session
    (once a worker), and its result is only read."""
    if not SHARED_UPSTREAM.is_dir():
        pytest.skip(f"upstream ACP schemas not present at {SHARED_UPSTREAM}")
    from codegen.pipeline import generate  # lowest_pydantic's environment has no generator

    @functools.cache
    def render(release: str, schema: str, enabled: bool) -> Any:
        base = SHARED_UPSTREAM / release if release else SHARED_UPSTREAM
        features = frozenset({"unstable_session_archive"}) if enabled else frozenset()
        return generate(SCHEMA, features, ROOT, {v: base / f"v{v}" / schema for v in (1, 2)})

    return render
