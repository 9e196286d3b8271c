"""Every release of the official Python SDK (``agent-client-protocol``) on the package index
switches with ``acp-codegen adopt`` alone, over the upstream release its ``acp/schema.py``
was generated from (its header's ``Schema ref: refs/tags/<tag>``), where that tag is at
hand (``upstream/history/<tag>/``, ``upstream/<tag>/v1/`` or ``upstream/tags/<tag>/v1/`` of the
reference data):

* ``adopt`` exits 0, every public name reproduced, with the archive feature on where the
  tag has what the RFD extends and off where it has not (``--dry-run``, which makes the
  same plan and exit status, where the sdist ships no tests: one run a release, not two);
* where the sdist ships its tests, the SDK's suite gives after ``adopt`` what it gave with
  its own module.

Each release is a test of its own (0.12.1, the pinned one, is test_sdk_dropin.py's: it
adopts it twice and checks more, and writes its row); the table of docs/sdk-migration.md holds a row per
release (its base tag, the names, the suite's counts and the settings adopt derived that
are not the defaults), which ``--update-goldens`` rewrites. A release whose header names no
tag, or a tag not at hand, is skipped with the reason, and its row says so.

The sdists come from the package index, into a git-ignored cache (``the_sdk_sdist``); the
tests skip where the index cannot be reached.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from acp_codegen.generate.sdk.releases import recognised
from support import PIP_OFFLINE_FAST, SHARED_UPSTREAM
from support.reference_data import needs
from test_sdk_dropin import (
    ENV,
    NOT_AT_HAND,
    SDK_PIN,
    adopt,
    check_row,
    repository,
    reproduced,
    row,
    same_results,
    steady_suite,
    switched_row,
    the_sdk_sdist,
)

pytestmark = [pytest.mark.slow, pytest.mark.ecosystem]

# Every release on the package index, newest first (`pip index versions agent-client-protocol`;
# test_the_list_is_the_index_s holds them in step).
RELEASES = (
    "0.12.1", "0.12.0", "0.11.1", "0.11.0", "0.10.1", "0.10.0", "0.9.0", "0.8.1", "0.8.0", "0.7.1", "0.7.0",
    "0.6.3", "0.6.2", "0.5.0", "0.4.9", "0.4.5", "0.3.0", "0.0.1",
)  # fmt: skip
# Releases adopt does not switch yet, and why (each an expected failure: strict, so that
# one that switches is noticed).
LEFT_OUT = {
    "0.6.3": "its StdioMcpServer has a `type` tag its own script added (the schema's stdio server has none)",
    "0.4.5": "every name reproduced, but its classes type the protocol's closed enums as `str`, and its suite"
    " sends a `PermissionOption.kind` the protocol does not have (`allow`), which the adopted models refuse",
}
# The types the archive RFD extends: with all of them, the feature is on.
RFD_TYPES = ("ListSessionsRequest", "SessionCapabilities", "SessionInfo", "SessionInfoUpdate")


def base_of(tag: str) -> tuple[Path, Path | None] | None:
    """The upstream schema (and meta) of ``tag``, as the SDK's scripts fetched it, if at hand."""
    for folder, stem in (
        (SHARED_UPSTREAM / "history" / tag, "schema"),
        (SHARED_UPSTREAM / tag / "v1", "schema.unstable"),
        (SHARED_UPSTREAM / "tags" / tag / "v1", "schema.unstable"),  # the schema-v* tags
    ):
        if (folder / f"{stem}.json").is_file():
            meta = folder / f"{stem.replace('schema', 'meta')}.json"
            return folder / f"{stem}.json", meta if meta.is_file() else None
    return None


# Without the reference data no release has its base, and the table's rows are not this run's
# to hold: every release skips (before its sdist is downloaded), rows untouched.
@needs(SHARED_UPSTREAM)
@pytest.mark.parametrize(
    "release",
    [
        pytest.param(r, marks=pytest.mark.xfail(reason=LEFT_OUT[r], strict=True)) if r in LEFT_OUT else r
        for r in RELEASES
        if f"agent-client-protocol=={r}" != SDK_PIN  # (test_sdk_dropin.py's test of it writes its row)
    ],
)
def test_the_sdk_release_switches(release: str, venv: Path, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    sdk = the_sdk_sdist(tmp_path / "sdk", venv, f"agent-client-protocol=={release}")
    header = "".join((sdk / "src" / "acp" / "schema.py").read_text(encoding="utf-8").splitlines(True)[:5])
    tag = re.search(r"Schema ref: refs/tags/(\S+)", header)
    base = base_of(tag.group(1)) if tag else None
    if tag is None or base is None:
        why = "its acp/schema.py names no upstream tag" if tag is None else NOT_AT_HAND
        check_row(request, release, row(release, tag.group(1) if tag else "none", "", "", "", "", f"left out: {why}"))
        pytest.skip(f"{release}: {why}")
    schema, meta = base
    defs = json.loads(schema.read_text(encoding="utf-8"))["$defs"]
    feature = all(name in defs for name in RFD_TYPES)
    repository(sdk, version=1, out="src/acp/_generated", schema=schema, meta=meta, feature=feature)
    on = "on" if feature else "off"
    if release in LEFT_OUT:
        check_row(request, release, row(release, tag.group(1), on, "", "", "", f"left out: {LEFT_OUT[release]}"))

    # adopt exits 0 with every name. Its --dry-run makes the same plan and exit status, and
    # writes nothing: it is what runs where there is no suite to run on the written files.
    shipped = (sdk / "tests").is_dir()
    before = steady_suite(venv, sdk) if shipped else {}
    report = adopt(venv, sdk, "src/acp/schema.py", *(() if shipped else ("--dry-run",)))  # (exit 0)
    done, total = reproduced(report)
    assert done == total > 0
    stable_known(report, schema, tag.group(1))
    after = steady_suite(venv, sdk) if shipped else {}
    same_results(before, after)
    print(f"{release} over {tag.group(1)}: {done} names; its suite {before} with its module, {after} adopted")
    check_row(request, release, switched_row(release, sdk, feature, report, before, after))


def stable_known(report: str, schema: Path, tag: str) -> None:
    """Over a release that publishes its stable methods apart (every schema-v1.* tag does),
    adopt knows them from its own table, no stable meta given: none that it wires anew is
    gated as unstable, and the report says which release the base is."""
    release = recognised(schema)
    assert release is not None and tag in release.names, tag
    if release.stable is None:
        assert not tag.startswith("schema-v1."), tag
        return
    wired = next((line for line in report.splitlines() if line.startswith("methods wired anew")), None)
    if wired is None:  # (nothing wired anew: no gate to tell of)
        assert "stable-meta-v1" not in report, report
        return
    assert f"gates: schema.json is upstream's {release.label}; what it calls stable is not gated" in report
    for wire, how in re.findall(r"(\S+) -> \w+ \(([^)]*)\)", wired):
        assert how.endswith(", unstable") == ((how.split(",")[0], wire) not in release.stable), (wire, how)


def test_the_list_is_the_index_s(venv: Path, tmp_path: Path) -> None:
    """RELEASES is every release the package index lists."""
    done = subprocess.run(
        [str(venv / "python"), "-m", "pip", "index", "versions", *PIP_OFFLINE_FAST, "agent-client-protocol"],
        capture_output=True, text=True, check=False, env=ENV, cwd=tmp_path,
    )  # fmt: skip
    listed = re.search(r"^Available versions: (.*)$", done.stdout, re.M)
    if done.returncode or listed is None:
        pytest.skip(f"cannot reach the package index: {done.stderr.strip().splitlines()[-1:]}")
    assert tuple(listed.group(1).split(", ")) == RELEASES
