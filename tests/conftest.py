"""Shared fixtures. ``pytest --update-goldens`` (or ``nox -s tests -- --update-goldens``)
rewrites golden files from the current generator instead of comparing against them."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
SHARED_UPSTREAM = ROOT.parent / "shared" / "upstream"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-goldens", action="store_true", help="rewrite golden files instead of comparing")


@pytest.fixture
def golden(request: pytest.FixtureRequest):
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
