"""Agents as people install them from npm and PyPI, for the ecosystem tests: each pinned
exactly by the test that names it (never a dependency of the tool), installed once into
``tests/conformance/.agent_cache/`` (git-ignored), in a prefix of its own that a lock keeps
to one installing process. Where the registry cannot be reached, or no Python the agent
needs is at hand, the test is skipped saying so; any other failed install fails it with the
installer's output. Agents run with the environment of :func:`setup_env`: a user's, less
any credential."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from . import ROOT, fresh_venv

AGENT_CACHE = ROOT / "tests" / "conformance" / ".agent_cache"
# Never handed to an agent: the runs are those of a user with no key at hand.
CREDENTIALS = ("OPENAI_API_KEY", "CODEX_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY")
NOT_INHERITED = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", *CREDENTIALS)


@contextmanager
def installing(name: str) -> Iterator[Path]:
    """The prefix for one agent's install, locked while a test process fills it."""
    AGENT_CACHE.mkdir(exist_ok=True)
    with open(AGENT_CACHE / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield AGENT_CACHE / name


def setup_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in NOT_INHERITED}


def unreachable_or_fail(what: str, output: str, probe: list[str]) -> None:
    """A failed install: a skip where ``probe`` (a request to the registry alone) fails
    too, else a failure with the installer's output."""
    reached = subprocess.run(probe, capture_output=True, text=True, env=setup_env(), timeout=120)
    if reached.returncode:
        pytest.skip(f"cannot reach the registry for {what}: {(reached.stderr or reached.stdout).strip()[-300:]}")
    pytest.fail(f"installing {what} failed:\n{output}")


def npm_agent(package: str, version: str, command: str) -> Path:
    """``node_modules/.bin/COMMAND`` of ``package@version`` installed with npm in its own
    prefix (``<name>-<version>``); skipped without node and npm."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not found on PATH: {package} is installed with npm")
    with installing(f"{package.rsplit('/', 1)[-1]}-{version}") as prefix:
        launcher = prefix / "node_modules" / ".bin" / command
        if not launcher.exists():
            cache = AGENT_CACHE / ".npm-cache"
            npm = ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--cache", str(cache)]
            done = subprocess.run(
                [*npm, "--fetch-retries", "1", f"{package}@{version}"],
                capture_output=True,
                text=True,
                env=setup_env(),
                timeout=600,
            )
            if done.returncode:
                shutil.rmtree(prefix, ignore_errors=True)
                output = done.stdout[-3000:] + done.stderr[-3000:]
                unreachable_or_fail(f"{package}@{version}", output, ["npm", "ping", "--cache", str(cache)])
    return launcher


def newest_python(lowest: tuple[int, int], below: tuple[int, int]) -> str | None:
    """The newest Python from ``lowest`` up to (not including) ``below`` on this machine,
    never downloaded: ``python3.N`` on PATH, and each in pyenv's versions folder. Each
    candidate is run: pyenv's shims on PATH fail for the versions it has not selected."""
    on_path = (shutil.which(f"python3.{minor}") for minor in range(lowest[1], below[1]))
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    found = {}
    for python in [*filter(None, on_path), *map(str, sorted(pyenv.glob("*/bin/python3")))]:
        asked = subprocess.run(
            [python, "-c", "import sys; print(*sys.version_info[:3])"], capture_output=True, text=True, env=setup_env()
        )
        version = tuple(map(int, asked.stdout.split())) if asked.returncode == 0 else ()
        if lowest <= version[:2] < below:
            found.setdefault(version, python)  # (PATH's first)
    return found[max(found)] if found else None


def pypi_agent(
    package: str, version: str, command: str, pythons: tuple[tuple[int, int], tuple[int, int]], probe_dir: Path
) -> Path:
    """``bin/COMMAND`` of a virtualenv (``<package>-<version>``) holding ``package==version``,
    made with the newest Python in ``pythons`` (its Requires-Python: lowest, and the first
    version above it); skipped where there is none. ``probe_dir``: where a failed install's
    probe of the registry may download."""
    python = newest_python(*pythons)
    if python is None:
        lowest, below = (".".join(map(str, v)) for v in pythons)
        pytest.skip(f"{package} {version} needs a Python >= {lowest}, < {below}: none on PATH or in pyenv's versions")
    with installing(f"{package}-{version}") as prefix:
        server = prefix / "bin" / command
        if not server.exists():
            shutil.rmtree(prefix, ignore_errors=True)
            try:
                fresh_venv(prefix, f"{package}=={version}", python=python)
            except AssertionError as failed:
                shutil.rmtree(prefix, ignore_errors=True)  # (no half install taken next time)
                pip = [python, "-m", "pip", "--disable-pip-version-check", "download", "--quiet", "--no-deps"]
                probe = [*pip, "--retries", "1", "--timeout", "15", "--dest", str(probe_dir)]
                unreachable_or_fail(f"{package}=={version}", str(failed), [*probe, f"{package}=={version}"])
    return server
