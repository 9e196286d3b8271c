"""Fixtures and hooks for every test folder. The folders mirror codegen's packages
(``protocol/``, ``config/``, ``plan/``, ``render/``, ``write/``, ``generate/``, ``adopt/``,
``diff/``, ``conformance/``, ``polyfill/``); ``generated/`` tests the generated package, ``examples/`` the
reference agent, ``hostile/`` hostile and malformed input across the tool; the modules at
the top test the tool as a whole (architecture, packaging, the docs' snippets). What test
modules share as code is the ``support`` package beside this file, never this file.

``pytest --update-goldens`` (or ``nox -s tests -- --update-goldens``) rewrites golden files
from the current generator instead of comparing against them. Tests marked ``slow`` are
deselected by a bare ``pytest``; ``pytest -m ""`` (what ``nox -s tests`` runs) runs them too.

``nox -s tests`` runs the suite on every core (pytest-xdist) with ``--dist loadfile``: each
module runs whole on one worker, so that its module- and session-scoped fixtures (the
upstream renders, the built wheel) are built once in the run, as without xdist.
"""

from __future__ import annotations

import difflib
import fcntl
import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from support import (
    GOLDEN,
    LOWEST_PYDANTIC,
    NOT_SOURCE,
    ROOT,
    SCHEMA,
    SHARED_UPSTREAM,
    SchemaCopy,
    copy_schema,
    fresh_venv,
    install_ts_sdk,
)
from support.reference_data import needs, require, unnamed

# The suite runs on every core beside agents and installs of its own, so the time a strategy
# takes says nothing about the test: hypothesis's timing checks are off, and its examples
# are counted, not timed.
settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", help="rewrite golden files instead of comparing")


# The modules that take longest (`--durations`), longest first. xdist hands modules out in
# collection order (`--dist loadfile --no-loadscope-reorder` in noxfile.py): one of them
# started last would leave the other worker idle at the end of the run. `nox -s tests` and
# `nox -s ecosystem` (the tests marked ecosystem) each take the ones they select in this order.
SLOWEST_MODULES = (
    "tests/adopt/test_sdk_releases.py",  # (ecosystem: a test per release of the official SDK, adopt and its suite)
    "tests/generate/test_releases.py",  # (ecosystem: every upstream release tag)
    "tests/adopt/test_sdk_rfd.py",  # (the SDK adopted with the feature: kit, client, its suite, its regeneration)
    "tests/conformance/test_conformance_kit.py",
    "tests/polyfill/test_published_agents.py",  # (ecosystem: four agents, each in v1 and through the bridge)
    "tests/polyfill/test_polyfill_agents.py",  # (the kit through the polyfill, five agents)
    "tests/adopt/test_sdk_every_method.py",  # (0.12.1 adopted once more: every method reached; ecosystem: the move)
    "tests/generate/test_upstream.py",
    "tests/generated/test_convert_upstream.py",  # (six generations over upstream pairs, every method pair)
    "tests/conformance/test_typescript_sdk.py",  # (ecosystem)
    "tests/conformance/test_typescript_v2_client.py",  # (ecosystem)
    "tests/conformance/test_conformance_agents.py",  # (ecosystem: agents from npm and PyPI, installed once)
    "tests/test_packaging.py",  # (before test_sdk_dropin: it builds the wheel both install)
    "tests/adopt/test_sdk_dropin.py",
    "tests/generated/test_wire.py",
    "tests/generated/test_convert_migration_guide.py",  # (two generations over 2026-08)
    "tests/config/test_sdk_settings.py",
    "tests/hostile/test_fuzz_generated.py",
    "tests/adopt/test_adopt_regen.py",
    "tests/generate/test_cli.py",
    "tests/examples/test_archive_agent_hostile.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:  # decided at collection, as marks are (tests/test_reference_skips.py sees them)
        if {"upstream", "upstream_render"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(needs(SHARED_UPSTREAM))

    def rank(item: pytest.Item) -> int:
        module = item.nodeid.split("::")[0]
        return SLOWEST_MODULES.index(module) if module in SLOWEST_MODULES else len(SLOWEST_MODULES)

    items.sort(key=rank)  # stable: the order within a module, and of the others, is kept


def _hand_written(report: pytest.CollectReport | pytest.TestReport) -> None:
    """A skip about absent reference data that does not say how to fetch it fails instead."""
    if report.skipped and not hasattr(report, "wasxfail") and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2])
        if unnamed(reason):
            report.outcome = "failed"
            report.longrepr = (
                f"{reason}\na skip for absent reference data must name `nox -s fetch_data`:"
                " skip with support.reference_data.require(path) or the mark needs(path)"
            )


def pytest_collectreport(report: pytest.CollectReport) -> None:
    _hand_written(report)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    _hand_written(outcome.get_result())


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
    return require(SHARED_UPSTREAM)


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


@pytest.fixture(scope="session")
def ts_sdk() -> Path:
    """The folder of the TypeScript SDK test agent and client, its SDK installed."""
    return install_ts_sdk()


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


@pytest.fixture(scope="session")
def upstream_render() -> Callable[[str, str, bool], Any]:
    """``upstream_render(release, schema, enabled)``: ``acp_codegen.generate.pipeline.generate`` of the
    fragments over both versions of an upstream release (``""``: the top folder, 2026-08;
    ``"2026-11"``), ``schema`` (``"schema.json"`` or ``"schema.unstable.json"``), with or
    without the archive feature. A render takes seconds: each one is made once a session
    (once a worker), and its result is only read."""
    require(SHARED_UPSTREAM)
    from acp_codegen.generate.pipeline import generate  # lowest_pydantic's environment has no generator

    @functools.cache
    def render(release: str, schema: str, enabled: bool) -> Any:
        base = SHARED_UPSTREAM / release if release else SHARED_UPSTREAM
        features = frozenset({"unstable_session_archive"}) if enabled else frozenset()
        return generate(SCHEMA, features, ROOT, {v: base / f"v{v}" / schema for v in (1, 2)})

    return render
