"""The package the polyfill's version bridge runs on: generated from upstream's newest
published v1 and v2 schemas (``RELEASE``) with the session-archive fragments laid over
them, and shipped with the tool (``generated_upstream/`` in the checkout,
``acp_codegen.upstream`` installed).

Upstream's schemas are reference data the project may not copy; a package generated from
them may ship, without upstream's descriptions (``base_descriptions=False``: names, types
and structure are facts of the protocol). ``nox -s generate_upstream`` regenerates it:
``python -m acp_codegen.polyfill.upstream [REFERENCE_DIR]``, where the folder holds
``upstream/`` (``$ACP_REFERENCE_DATA``, else ``../shared`` beside the checkout, else
``.reference``, as the tests look). ``tests/polyfill/test_upstream_package.py`` holds the
committed package to a fresh generation.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..config.settings import ModelOptions, Settings
from ..errors import CodegenError
from ..generate.pipeline import Generation, generate
from ..resources import BUILTIN_FRAGMENTS, schema_location
from ..write.tree import write_tree

RELEASE = "2026-11"  # @agentclientprotocol/sdk 2.4.0's schema/v1 and schema/v2
SCHEMA = "schema.unstable.json"  # every unstable method too: the bridge passes them on
FEATURES = frozenset({"unstable_session_archive"})
OUT = "generated_upstream"
REGENERATE = "nox -s generate_upstream"
SETTINGS = Settings(options=ModelOptions(regenerate=REGENERATE, base_descriptions=False))


def bases(upstream: Path) -> dict[int, Path]:
    """The release's schema of each version, under the reference data's ``upstream/``."""
    return {v: upstream / RELEASE / f"v{v}" / SCHEMA for v in (1, 2)}


def generate_upstream(upstream: Path, root: Path) -> Generation:
    """The package's files, from the reference data's ``upstream/`` (named in headers
    relative to ``root``, the checkout)."""
    with schema_location(BUILTIN_FRAGMENTS) as fragments:
        return generate(fragments, FEATURES, root, bases(upstream), settings=SETTINGS)


def reference_dir(root: Path) -> Path:
    """Where the reference data is, as the tests find it."""
    if os.environ.get("ACP_REFERENCE_DATA"):
        return Path(os.environ["ACP_REFERENCE_DATA"])
    shared = root.parent / "shared"
    return shared if shared.is_dir() else root / ".reference"


def main(argv: list[str]) -> int:
    root = Path.cwd()
    upstream = (Path(argv[0]) if argv else reference_dir(root)) / "upstream"
    if not all(path.is_file() for path in bases(upstream).values()):
        print(
            f"acp-codegen: no {RELEASE} schemas under {upstream} (fetch them with `nox -s fetch_data`)",
            file=sys.stderr,
        )
        return 2
    try:
        result = generate_upstream(upstream, root)
        write_tree(root / OUT, result.files)
    except CodegenError as exc:
        print(f"acp-codegen: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {len(result.files)} files to {OUT} ({result.bridge.line()})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
