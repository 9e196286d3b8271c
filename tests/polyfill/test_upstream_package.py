"""The package the polyfill's version bridge runs on (``generated_upstream/``, shipped as
``acp_codegen.upstream``): a fresh generation from upstream's 2026-11 schemas, byte for byte
as ``generated/`` is held to its own; carrying none of upstream's descriptions; with the
bridge. Without the reference data (``nox -s fetch_data``) the tests skip."""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache

import pytest
from acp_codegen.polyfill import upstream
from acp_codegen.write.headers import same_content
from support import ROOT, SHARED_UPSTREAM
from support.reference_data import require

PACKAGE = ROOT / upstream.OUT


@cache
def fresh() -> dict[str, str]:
    for path in upstream.bases(SHARED_UPSTREAM).values():
        require(path)
    return upstream.generate_upstream(SHARED_UPSTREAM, ROOT).files


def committed() -> dict[str, str]:
    return {p.relative_to(PACKAGE).as_posix(): p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.py"))}


@pytest.mark.slow
def test_the_committed_package_is_a_fresh_generation() -> None:
    files, on_disk = fresh(), committed()
    again = "run `nox -s generate_upstream`"
    assert sorted(on_disk) == sorted(files), f"{upstream.OUT}/ has missing or extra files; {again}"
    for rel, text in files.items():
        assert same_content(on_disk[rel], text), f"{upstream.OUT}/{rel} is stale; {again}"


def descriptions(node: object) -> Iterator[str]:
    """The longest line of each description (a docstring or a description literal would hold it whole)."""
    if isinstance(node, dict):
        text = node.get("description")
        if isinstance(text, str) and len(line := max(text.splitlines() or [""], key=len)) > 30:
            yield line
        for value in node.values():
            yield from descriptions(value)
    elif isinstance(node, list):
        for value in node:
            yield from descriptions(value)


def test_no_description_of_upstreams_is_shipped() -> None:
    """Upstream's prose may not ship (``../shared/upstream/README.md``): none of its
    descriptions is in the package, though its names and structure are."""
    texts = "\n".join(committed().values())
    for version in (1, 2):
        schema = json.loads(require(upstream.bases(SHARED_UPSTREAM)[version]).read_text(encoding="utf-8"))
        found = list(descriptions(schema))
        assert len(found) > 300, len(found)  # (the check has something to find)
        shipped = [line for line in found if line in texts or json.dumps(line)[1:-1] in texts]
        assert shipped == [], shipped[:5]
    assert "class PromptResponse" in texts and "class IdleStateUpdate" in texts


def test_the_package_has_the_bridge_and_the_generator_says_why_a_package_has_none() -> None:
    from acp_codegen.upstream import bridge

    assert bridge.SERVES == "v2 as of upstream's 2026-11 draft"
    assert {"bridge.py", "_bridge.py", "_bridge_sessions.py"} <= set(committed())
    # generated/ is the archive surface alone: no prompt lifecycle to bridge.
    assert not (ROOT / "generated" / "bridge.py").exists()
