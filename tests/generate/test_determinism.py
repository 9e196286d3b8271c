"""Same inputs, same bytes: across hash seeds and processes."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

from acp_codegen.write import strip_header
from support import ROOT

DIGEST = r"""
import hashlib, json, sys
from pathlib import Path
from acp_codegen.generate.pipeline import generate
from acp_codegen.write import strip_header
root = Path(sys.argv[1])
files = generate(root / "schema", frozenset({"unstable_session_archive"}), root).files
print(json.dumps({
    "bytes": {k: hashlib.sha256(v.encode()).hexdigest() for k, v in files.items()},
    "content": {k: hashlib.sha256(strip_header(v).encode()).hexdigest() for k, v in files.items()},
}))
"""


def digests(seed: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", DIGEST, str(ROOT)], capture_output=True, text=True, env=env, cwd=ROOT, check=True
    )
    return json.loads(proc.stdout)


def test_identical_bytes_under_different_hash_seeds() -> None:
    first, second = digests("1"), digests("4242")
    assert first == second  # headers included
    # The committed package keeps the header of the run that last changed a file's content.
    committed = {
        p.relative_to(ROOT / "generated").as_posix(): hashlib.sha256(
            strip_header(p.read_text(encoding="utf-8")).encode()
        ).hexdigest()
        for p in (ROOT / "generated").rglob("*.py")
    }
    assert first["content"] == committed
