"""The official Python SDK (``agent-client-protocol``) as the tests take it: its sdist,
unpacked (downloaded once, then cached), made a repository with a ``[tool.acp-codegen]``
table and its base schemas, adopted from the built wheel, run with the adopted SDK on the
path. Test modules import it (``from support.sdk import ...``): the adopt tests, and those that
drive an adopted SDK's agent (``sdk_v2``: with ``base-v2``, as a protocol 2 client would).

The SDK and its test dependencies are pinned here, installed into the tests' virtualenvs
only: none is a dependency of the tool or of the generated package.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from . import ROOT, SHARED_UPSTREAM, sdk_sdist
from .reference_data import require

SDK_PIN = "agent-client-protocol==0.12.1"
# What the SDK's own suite imports (its dev dependency group), pinned.
SDK_TEST_PINS = (
    "pytest-asyncio==1.5.0",
    "httpx[http2]==0.28.1",
    "websockets==17.4",
    "uvicorn==0.54.0",
    "python-dotenv==1.2.4",
)
TABLE = """
[tool.acp-codegen]
base-v{version} = "schema/schema.json"
out = "{out}"
features = {features}
"""
V2_LINE = 'base-v2 = "schema/v2/schema.json"\n'  # (a second base: the v2 schema beside it)
FEATURE = "unstable_session_archive"
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}


def run(*command: str | Path, cwd: Path, check: bool = True, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [str(c) for c in command], cwd=cwd, env=env or ENV, capture_output=True, text=True, check=False
    )
    if check:
        assert done.returncode == 0, f"{command}: exit {done.returncode}\n{done.stdout[-4000:]}{done.stderr[-3000:]}"
    return done.stdout + done.stderr


def repository(
    at: Path,
    *,
    version: int,
    out: str,
    schema: Path,
    meta: Path | None = None,
    feature: bool = True,
    v2: Path | None = None,
) -> Path:
    """The SDK at ``at`` made a git repository with its base (``schema``, and ``meta``) in
    ``schema/``, and a table naming it, ``out`` and the feature; ``v2``: a v2 base beside it
    (``schema/v2/schema.json``, ``base-v2``), committed as it was before adopt."""
    (at / "schema").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(schema, at / "schema" / "schema.json")
    if meta is not None:
        shutil.copyfile(meta, at / "schema" / "meta.json")
    text = TABLE.format(version=version, out=out, features=json.dumps([FEATURE] if feature else []))
    if v2 is not None:
        (at / "schema" / "v2").mkdir(exist_ok=True)
        shutil.copyfile(v2, at / "schema" / "v2" / "schema.json")
        text = text.replace('.json"\n', '.json"\n' + V2_LINE, 1)
    with open(at / "pyproject.toml", "a", encoding="utf-8") as table:
        table.write(text)
    run("git", "init", "--quiet", cwd=at)
    run("git", "add", "--all", cwd=at)
    run("git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "before", cwd=at)
    return at


def tree(at: Path) -> dict[str, bytes]:
    return {
        p.relative_to(at).as_posix(): p.read_bytes()
        for p in sorted(at.rglob("*"))
        if p.is_file() and ".git" not in p.parts and "__pycache__" not in p.parts
    }


def adopt(bin_dir: Path, at: Path, module: str, *args: str, twice: bool = False) -> str:
    out = run(bin_dir / "acp-codegen", "adopt", module, *args, cwd=at)
    if twice:  # a second run finds the same table and writes nothing
        before = tree(at)
        again = run(bin_dir / "acp-codegen", "adopt", module, *args, cwd=at)
        assert tree(at) == before, again
    return out


def the_sdk_sdist(at: Path, bin_dir: Path, pin: str = SDK_PIN) -> Path:
    return sdk_sdist(at, bin_dir, pin)


# -- the SDK adopted with base-v2: its unchanged v1 agent serves protocol 2 ---------------------

# README's quickstart: 0.12.1's own v1 base (upstream schema-v1.19.0, the unstable pair, as the
# SDK's download step fetches it) and the newest v2 draft beside it.
V1_BASE = SHARED_UPSTREAM / "schema-v1.19.0" / "v1"
V2_DRAFT = SHARED_UPSTREAM / "2026-11" / "v2" / "schema.unstable.json"
TURN_AGENT = ROOT / "tests" / "agents" / "sdk_turn_agent.py"


def adopted_with_v2(sdist: Path, at: Path, bin_dir: Path, *, v2: Path = V2_DRAFT) -> tuple[Path, str]:
    """A copy at ``at`` of the unpacked sdist (``the_sdk_sdist``) with README's table
    (``base-v1``, ``base-v2``, ``out``, ``features``), adopted with the ``acp-codegen`` of
    ``bin_dir`` (run twice: the second changes nothing), and adopt's report."""
    require(V1_BASE / "schema.unstable.json")
    require(v2)
    shutil.copytree(sdist, at)
    repository(
        at, version=1, out="src/acp/_generated", schema=V1_BASE / "schema.unstable.json",
        meta=V1_BASE / "meta.unstable.json", v2=v2,
    )  # fmt: skip
    return at, adopt(bin_dir, at, "src/acp/schema.py", twice=True)


def sdk_env(sdk: Path) -> dict[str, str]:
    """The environment of a process that imports the SDK copy ``sdk`` as ``acp``."""
    return {**ENV, "PYTHONPATH": str(sdk / "src")}


def turn_agent(bin_dir: Path, sdk: Path, store: Path) -> tuple[list[str], dict[str, str]]:
    """The command and environment that run ``tests/agents/sdk_turn_agent.py`` on the SDK
    copy ``sdk`` (sessions in ``store``), directly: no polyfill, no proxy."""
    return [str(bin_dir / "python"), str(TURN_AGENT), "--store", str(store)], sdk_env(sdk)
