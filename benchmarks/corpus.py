"""The v1 message corpus (``codegen/adopt/corpus_v1.txt``, which ``acp-codegen adopt``
verifies with) and the upstream v1 models it is read with.

Shared by benchmarks S1/S2 (``bench_sdk.py``) and ``tests/generated/test_corpus.py``.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from acp_codegen.adopt.corpus import CORPUS_FILE, read_corpus

from tests.support.reference_data import reference_dir

ROOT = Path(__file__).resolve().parent.parent
CORPUS_V1 = ROOT / "codegen" / "adopt" / CORPUS_FILE
UPSTREAM_V1 = reference_dir() / "upstream" / "v1" / "schema.json"
FEATURES = frozenset({"unstable_session_archive"})


def load(path: Path = CORPUS_V1) -> list[tuple[str, str]]:
    """``(type name, message JSON text)`` per line (see ``acp_codegen.adopt.corpus.read_corpus``)."""
    return read_corpus(path)


def generate_upstream_v1(base: Path | None = UPSTREAM_V1, **settings: Any) -> dict[str, str]:
    """The files of upstream v1 with the archive fragments overlaid (v1 only, as
    ``acp-codegen generate --base-v1``; the fragments alone where ``base`` is None).
    ``settings``: more keyword arguments of ``generate`` (``settings=Settings(...)``)."""
    from acp_codegen.generate.pipeline import generate

    with tempfile.TemporaryDirectory() as tmp:
        schema_dir = Path(tmp) / "schema"
        shutil.copytree(ROOT / "schema" / "v1", schema_dir / "v1")
        return generate(schema_dir, FEATURES, ROOT, {1: base} if base else None, **settings).files


def write_upstream_v1(out: Path, package: str, base: Path = UPSTREAM_V1, **settings: Any) -> Path:
    """``generate_upstream_v1`` written as package ``package`` under ``out``; returns ``out``."""
    from acp_codegen.write.tree import write_tree

    write_tree(out / package, generate_upstream_v1(base, **settings))
    return out
