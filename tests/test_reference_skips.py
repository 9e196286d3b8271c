"""Every skip for absent reference data names `nox -s fetch_data`: the suite collected with the
reference folder pointed somewhere empty (``ACP_REFERENCE_DATA``), each skip reason read.

``--setup-plan`` decides what collection and marks decide without running fixtures or tests:
module-level skips, ``needs(path)`` marks, and the ``upstream`` fixtures (tests/conftest.py
marks their users at collection). ``require(path)`` in a test or fixture names the command by
construction, and a skip written by hand that mentions the reference folder fails wherever it
runs (``unnamed``, checked by tests/conftest.py's report hooks).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT
from support.reference_data import DIR_ENV, FETCH_COMMAND, missing, unnamed


@pytest.mark.slow
def test_without_the_reference_data_every_skip_names_the_command_that_fetches_it(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    env = {**os.environ, DIR_ENV: str(empty)}
    env.pop("PYTEST_XDIST_WORKER", None)
    command = [sys.executable, "-m", "pytest", "-m", "", "--setup-plan", "-p", "no:xdist", "-p", "no:cacheprovider"]
    done = subprocess.run(
        [*command, "-q", "-rs", "tests"], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-3000:]
    reasons = re.findall(r"^SKIPPED \[[0-9]+\] [^:]+:[0-9]+: (.*)$", done.stdout, re.M)
    skipped = int(re.search(r"([0-9]+) skipped", done.stdout)[1])  # type: ignore[index]
    # Without the data, whole modules and the tests of every upstream fixture skip (over 100 here).
    assert skipped >= 100 and len(reasons) >= 30, done.stdout[-3000:]
    wrong = [r for r in reasons if f"`{FETCH_COMMAND}`" not in r]
    assert not wrong, "\n".join(wrong)
    assert all(str(empty) in r for r in reasons), reasons  # each names the file it lacks


def test_a_skip_that_names_the_reference_folder_but_not_the_command_is_caught() -> None:
    from support.reference_data import reference_dir

    assert unnamed(f"not present: {reference_dir() / 'upstream' / 'v1'}")
    assert not unnamed(missing(reference_dir() / "upstream" / "v1"))
    assert not unnamed("node and npm not found on PATH")  # other skips are not about the data
