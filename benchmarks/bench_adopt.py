"""A1: ``acp-codegen adopt`` over the official Python SDK's schema module against one
``acp-codegen generate`` of the table it writes.

The SDK is ``agent-client-protocol`` 0.12.1 (``nox -s bench`` installs it, pinned, into the
bench environment only): its ``acp`` package is copied into a scratch repository with
upstream ``schema-v1.19.0`` (what its ``acp/schema.py`` was generated from) as the base.
The subject is ``adopt --dry-run`` (it reads the module in a subprocess, matches, derives
the settings, generates, wires every method of the base and the feature into the SDK's
meta module, handler protocols, routers and connections, and verifies, importing the wired
modules; only
the writing is left out); the baseline is the
pipeline's ``generate`` over the same repository once adopt has written its table. Target:
at most 3x (issue: adopt costs no more than three generations).

Both sides are timed in CPU time, their child processes included (adopt's reader and its
import check in the SDK's interpreter, black's workers: ``compare(children=True)``), round
by round: on the wall clock the figure depended on the machine's load (2.2x to 2.8x in one
session), since adopt waits for processes of its own that the baseline does not start.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import shutil
import tempfile
from argparse import Namespace
from pathlib import Path

from benchmarks import SAMPLE_S, Ratio, compare
from tests.support.reference_data import missing, reference_dir

ROOT = Path(__file__).resolve().parent.parent
BASE = reference_dir() / "upstream" / "schema-v1.19.0" / "v1"
TABLE = """
[tool.acp-codegen]
base-v1 = "schema/schema.json"
out = "src/acp/_generated"
features = ["unstable_session_archive"]
"""  # README's quickstart: the base is schema-v1.19.0, whose stable methods adopt knows


def _repository(at: Path, sdk: Path) -> Path:
    shutil.copytree(sdk, at / "src" / "acp", ignore=shutil.ignore_patterns("__pycache__"))
    (at / "schema").mkdir(parents=True)
    shutil.copyfile(BASE / "schema.unstable.json", at / "schema" / "schema.json")
    shutil.copyfile(BASE / "meta.unstable.json", at / "schema" / "meta.json")
    (at / "pyproject.toml").write_text(TABLE, encoding="utf-8")
    return at


ADOPT = Namespace(module=Path("src/acp/schema.py"), version=1, python=None, dry_run=False)


def adopted(at: Path, dry_run: bool = False) -> tuple[int, str]:
    """``acp-codegen adopt src/acp/schema.py`` run in ``at`` (and back): its exit status and report."""
    from acp_codegen.adopt.command import run as adopt

    here = Path.cwd()
    try:
        os.chdir(at)
        with contextlib.redirect_stdout(io.StringIO()) as report:
            code = adopt(Namespace(**{**vars(ADOPT), "dry_run": dry_run}))
    finally:
        os.chdir(here)
    return code, report.getvalue()


def run() -> list[Ratio]:
    spec = importlib.util.find_spec("acp")
    if spec is None or not spec.submodule_search_locations:
        print("A1   skipped: needs agent-client-protocol installed")
        return []
    if not (BASE / "schema.unstable.json").is_file():
        print(f"A1   skipped: {missing(BASE / 'schema.unstable.json')}")
        return []
    from acp_codegen.config.table import generation_arguments, load_config
    from acp_codegen.generate.pipeline import generate
    from acp_codegen.resources import schema_location

    sdk = Path(next(iter(spec.submodule_search_locations)))
    with tempfile.TemporaryDirectory() as tmp:
        fresh = _repository(Path(tmp) / "fresh", sdk)
        written = _repository(Path(tmp) / "adopted", sdk)
        code, report = adopted(written)
        if code != 0 or "wired: 6 modules" not in report:
            print(f"A1   skipped: adopt exited {code} (or wired less):\n{report[-2000:]}")
            return []
        config = load_config(written)

        def baseline() -> object:
            with schema_location(config.fragments) as schema_dir:
                features = frozenset(config.features)
                return generate(schema_dir, features, config.root, config.bases, **generation_arguments(config))

        return [
            compare(
                "A1",
                "adopt --dry-run (wiring included) of agent-client-protocol 0.12.1's acp/schema.py vs one generate",
                lambda: adopted(fresh, dry_run=True),
                baseline,
                target=3.0,
                repeat=5,
                sample_s=SAMPLE_S,
                children=True,
            )
        ]
