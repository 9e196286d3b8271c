"""``nox -s fetch_data`` (``tests/support/reference_data.py``) run against local copies of its
sources: git repositories whose tags hold the files the manifest names, the npm package's
tarball, the RFD under a ``file://`` URL. The copies are built from the reference data at
hand, so the fetch must give back the same bytes, laid out where the tests look; a file
that differs fails the sum check by name, and nothing is written.

Upstream's own repositories (GitHub) are not reachable from every machine that runs the
suite, so their default locations are not tried here; in the copies, each commit the
manifest cites by its abbreviated id is a tag of that name."""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.support import reference_data as rd

ROOT = rd.ROOT
SCRIPT = ROOT / "tests" / "support" / "reference_data.py"
ENTRIES = rd.read_manifest()
DATA = rd.reference_dir()
INDEX = DATA / rd.HISTORY / "releases.tsv"
TAGS_INDEX = DATA / rd.TAGS / "index.tsv"


def _index(index: Path = INDEX) -> list[list[str]]:
    return [line.split("\t") for line in rd.require(index).read_text(encoding="utf-8").splitlines()]


def git_copy(at: Path, source: str, corrupt: str = "") -> str:
    """A repository with, for each ref the manifest names in ``source``, a commit of its files
    (read from the reference data), dated as the index of releases says, tagged with the ref.
    ``corrupt`` names a destination whose bytes get one more. Returns its URL."""
    dates = {row[0]: row[2] for index in (INDEX, TAGS_INDEX) for row in _index(index)[1:]}
    by_ref: dict[str, list[rd.Entry]] = defaultdict(list)
    for entry in ENTRIES:
        if entry.source == source:
            by_ref[entry.ref].append(entry)
    stream = io.BytesIO()
    for ref, entries in by_ref.items():
        day = datetime.strptime(dates.get(ref, "2026-08-22"), "%Y-%m-%d").replace(hour=12, tzinfo=timezone.utc)
        stream.write(f"commit refs/tags/{ref}\ncommitter T <t@example.org> {int(day.timestamp())} +0000\n".encode())
        stream.write(b"data 0\n")
        # (a file two destinations take from one tag, as tags/ and schema-v1.19.0/ do, is written once)
        spoilt = {e.path for e in entries if e.destination == corrupt}
        for entry in {e.path: e for e in entries}.values():
            content = rd.require(DATA / entry.destination).read_bytes()
            content += b"!" if entry.path in spoilt else b""
            stream.write(f"M 100644 inline {entry.path}\ndata {len(content)}\n".encode() + content + b"\n")
    subprocess.run(["git", "init", "-q", "--bare", str(at)], check=True)
    command = ["git", f"--git-dir={at}", "fast-import", "--quiet"]
    done = subprocess.run(command, input=stream.getvalue(), capture_output=True, check=False)
    assert done.returncode == 0, done.stderr.decode()
    return at.as_uri()


def npm_copy(at: Path) -> Path:
    """The npm package's tarball, holding the files the manifest takes from it."""
    with tarfile.open(at, "w:gz") as archive:
        for entry in ENTRIES:
            if entry.source == "npm":
                content = rd.require(DATA / entry.destination).read_bytes()
                info = tarfile.TarInfo(entry.path)
                info.size = len(content)
                archive.addfile(info, io.BytesIO(content))
    return at


def web_copy(at: Path) -> str:
    for entry in ENTRIES:
        if entry.source == "web":
            (at / entry.path).parent.mkdir(parents=True, exist_ok=True)
            (at / entry.path).write_bytes(rd.require(DATA / entry.destination).read_bytes())
    return at.as_uri()


def fetch(tmp: Path, *options: str, corrupt: str = "") -> subprocess.CompletedProcess[str]:
    """The fetch command, run as the nox session runs it, with every source a local copy,
    into ``tmp / "out"``."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    env = {
        **os.environ,
        "ACP_REFERENCE_UPSTREAM_GIT": git_copy(tmp / "upstream.git", "upstream", corrupt),
        "ACP_REFERENCE_PYTHON_SDK_GIT": git_copy(tmp / "python-sdk.git", "python-sdk", corrupt),
        "ACP_REFERENCE_NPM_TARBALL": str(npm_copy(tmp / "sdk-2.4.0.tgz")),
        "ACP_REFERENCE_WEB": web_copy(tmp / "web"),
    }
    command = [sys.executable, str(SCRIPT), "--dest", str(tmp / "out"), *options]
    return subprocess.run(command, env=env, capture_output=True, text=True, check=False)


def test_the_manifest_names_each_file_once_with_a_source_and_a_sum() -> None:
    destinations = [e.destination for e in ENTRIES]
    assert len(destinations) == len(set(destinations))
    assert {e.source for e in ENTRIES} <= {*rd.SOURCES, "empty"}
    assert all(len(e.sha256) == 64 and int(e.sha256, 16) >= 0 for e in ENTRIES)
    # What the tests read: the four upstream snapshots, every release tag, the RFD, the peer SDK.
    for folder in ("upstream/v1/", "upstream/2026-11/v2/", "upstream/schema-v1.19.0/v1/", "rfd/", "peers/"):
        assert any(d.startswith(folder) for d in destinations), folder
    assert len([d for d in destinations if d.startswith(rd.HISTORY) and d.endswith("/schema.json")]) == 92
    # tags/: every tag's stable meta, the schema-v* tags' unstable pairs (the table of releases reads them)
    assert len({d.split("/")[2] for d in destinations if d.startswith(rd.TAGS)}) == 55
    assert len([d for d in destinations if d.startswith(rd.TAGS) and d.endswith("/schema.unstable.json")]) == 26


def test_fetch_from_local_copies_lays_out_the_reference_data_byte_for_byte(tmp_path: Path) -> None:
    done = fetch(tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"{len(ENTRIES)} files checked" in done.stdout
    out = tmp_path / "out"
    for entry in ENTRIES:
        content = (out / entry.destination).read_bytes()
        assert hashlib.sha256(content).hexdigest() == entry.sha256, entry.destination
        assert content == (DATA / entry.destination).read_bytes(), entry.destination
    # The index of releases: the tags in the same order, with the same dates and paths (the
    # copies' commit ids are their own).
    for index in (INDEX, TAGS_INDEX):
        fetched = _index(out / index.relative_to(DATA))
        assert [row[:1] + row[2:] for row in fetched] == [row[:1] + row[2:] for row in _index(index)]


def test_a_file_that_differs_fails_its_sum_by_name_and_nothing_is_written(tmp_path: Path) -> None:
    done = fetch(tmp_path, "--only", "upstream/schema-v1.19.0/", corrupt="upstream/schema-v1.19.0/v1/meta.json")
    assert done.returncode == 1
    assert "checksum mismatch, nothing written" in done.stderr
    assert "upstream/schema-v1.19.0/v1/meta.json: sha256 " in done.stderr
    assert "(from upstream schema-v1.19.0:schema/v1/meta.json)" in done.stderr
    assert "schema.json:" not in done.stderr  # only the file that differs is named
    assert not (tmp_path / "out" / "upstream").exists()


def test_a_source_that_cannot_be_read_is_named_with_its_location(tmp_path: Path) -> None:
    env = {**os.environ, "ACP_REFERENCE_WEB": (tmp_path / "nowhere").as_uri()}
    command = [sys.executable, str(SCRIPT), "--dest", str(tmp_path / "out"), "--only", "rfd/"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 1
    assert f"web: cannot read {(tmp_path / 'nowhere').as_uri()}/rfds/session-archive.md" in done.stderr
    assert "Traceback" not in done.stderr


def test_tests_read_the_folder_the_environment_names_and_skip_naming_the_fetch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(rd.DIR_ENV, str(tmp_path))
    assert rd.reference_dir() == tmp_path.resolve()
    with pytest.raises(pytest.skip.Exception, match=r"fetch it with `nox -s fetch_data`"):
        rd.require(rd.reference_dir() / "upstream")
    monkeypatch.delenv(rd.DIR_ENV)
    shared = ROOT.parent / "shared"
    assert rd.reference_dir() == (shared if shared.is_dir() else ROOT / ".reference")


@pytest.mark.slow
@pytest.mark.ecosystem
def test_the_npm_release_comes_from_the_registry_with_the_manifest_s_sums(tmp_path: Path) -> None:
    """npm as it is configured (the registry is reachable where git hosts may not be)."""
    env = {k: v for k, v in os.environ.items() if k not in (rd.NPM_TARBALL_ENV, "ACP_REFERENCE_NPM_REGISTRY")}
    command = [sys.executable, str(SCRIPT), "--dest", str(tmp_path / "out"), "--only", "upstream/2026-11/"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    unreachable = ("ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "ECONNREFUSED", "ECONNRESET", "npm is not installed")
    if done.returncode != 0 and any(sign in done.stderr for sign in unreachable):
        pytest.skip(f"cannot run npm against its registry: {done.stderr.strip()[-300:]}")
    assert done.returncode == 0, done.stderr
    expected = [e for e in ENTRIES if e.destination.startswith("upstream/2026-11/")]
    assert f"{len(expected)} files checked" in done.stdout
    for entry in expected:
        assert hashlib.sha256((tmp_path / "out" / entry.destination).read_bytes()).hexdigest() == entry.sha256
