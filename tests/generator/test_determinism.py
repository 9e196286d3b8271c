"""Same inputs, same bytes: across hash seeds and processes."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

from conftest import ROOT

DIGEST = r"""
import hashlib, json, sys
from pathlib import Path
from codegen.pipeline import generate
root = Path(sys.argv[1])
files = generate(root / "schema", frozenset({"unstable_session_archive"}), root).files
print(json.dumps({k: hashlib.sha256(v.encode()).hexdigest() for k, v in files.items()}))
"""


def digests(seed: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", DIGEST, str(ROOT)], capture_output=True, text=True, env=env, cwd=ROOT, check=True
    )
    return json.loads(proc.stdout)


def test_identical_bytes_under_different_hash_seeds() -> None:
    first, second = digests("1"), digests("4242")
    assert first == second
    committed = {
        p.relative_to(ROOT / "generated").as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in (ROOT / "generated").rglob("*.py")
    }
    assert first == committed
