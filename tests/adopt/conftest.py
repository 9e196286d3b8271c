"""What the tests of the official SDK's releases share: a virtualenv of the built wheel, and
0.12.1's sdist unpacked (module-scoped: each module, run in a worker of its own, builds its
own)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import fresh_venv
from test_sdk_dropin import SDK_TEST_PINS, the_sdk_sdist


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built wheel (not editable), what the SDK's tests need, and pip (for the sdist)."""
    return fresh_venv(tmp_path_factory.mktemp("sdk-venv") / "venv", wheel, "pytest", *SDK_TEST_PINS, pip=True)


@pytest.fixture(scope="module")
def sdist(venv: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The SDK 0.12.1's sdist, unpacked once; each test works on a copy of it."""
    return the_sdk_sdist(tmp_path_factory.mktemp("sdk-sdist") / "sdk", venv)
