"""The reference data the tests read (upstream ACP schemas, the archive RFD's text, the
official Python SDK's v2 module): where the tests find it, and the command that fetches it.

The data is upstream's, not ours to copy into the repository. CI keeps it at ``../shared``
beside the checkout; a fresh clone fetches it with ``nox -s fetch_data`` into ``.reference/``
(git-ignored), taking each file from where it is published and checking it against the sha256
sums in ``reference.tsv`` beside this module. Tests ask ``reference_dir()`` for the folder, and a
test that needs a file of it says so with ``require(path)`` (in the test or a fixture) or the
mark ``needs(path)``: the one way to skip for absent reference data, whose reason names that
command. A skip that mentions the folder without naming it fails the run (``unnamed``, checked
by tests/conftest.py), and tests/test_reference_skips.py collects the suite without the data.

The fetch needs only the standard library, git and npm. Each source can be pointed elsewhere
(an option, or the environment variable named in ``SOURCES``), which is how its test runs it
against local copies. Run it as ``python tests/support/reference_data.py --help``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = Path(__file__).with_name("reference.tsv")
LOCAL = ROOT / ".reference"  # where the fetch writes by default (git-ignored)
FETCH_COMMAND = "nox -s fetch_data"
# Set to a folder to read the reference data from there instead (an empty one hides ../shared).
DIR_ENV = "ACP_REFERENCE_DATA"

# source name -> (default location, environment variable that overrides it)
SOURCES = {
    "upstream": ("https://github.com/agentclientprotocol/agent-client-protocol.git", "ACP_REFERENCE_UPSTREAM_GIT"),
    "python-sdk": ("https://github.com/agentclientprotocol/python-sdk.git", "ACP_REFERENCE_PYTHON_SDK_GIT"),
    # The RFD as the protocol's site publishes it in Markdown (the repository holds its MDX source).
    "web": ("https://agentclientprotocol.com/", "ACP_REFERENCE_WEB"),
    # A registry URL for `npm pack` (empty: npm's own configuration) ...
    "npm": ("", "ACP_REFERENCE_NPM_REGISTRY"),
}
# ... or the package's tarball itself, read instead of running npm.
NPM_TARBALL_ENV = "ACP_REFERENCE_NPM_TARBALL"
HISTORY = "upstream/history/"  # one folder a release tag; its index is releases.tsv
TAGS = "upstream/tags/"  # stable metas, and the schema-v* tags' unstable pairs; its index is index.tsv


# -- where the tests look ------------------------------------------------------------------


def reference_dir() -> Path:
    """The folder holding ``upstream/``, ``rfd/`` and ``peers/``: ``$ACP_REFERENCE_DATA`` if set,
    else ``../shared`` beside the checkout if present, else ``.reference/`` in the checkout."""
    if os.environ.get(DIR_ENV):
        return Path(os.environ[DIR_ENV]).resolve()
    shared = ROOT.parent / "shared"
    return shared if shared.is_dir() else LOCAL


def missing(path: Path | str) -> str:
    """The reason a test gives when reference data it needs is absent: the one command that fetches it."""
    return f"reference data not present: {path} (fetch it with `{FETCH_COMMAND}`)"


def require(path: Path) -> Path:
    """``path`` if it exists; otherwise the calling test skips, naming the fetch command."""
    __tracebackhide__ = True  # pytest reports the skip at the test's line
    if not path.exists():
        import pytest  # only the tests have it; the fetch runs without

        pytest.skip(missing(path))
    return path


def needs(*paths: Path) -> Any:
    """A ``skipif`` mark for tests that need ``paths``, decided at collection."""
    import pytest

    absent = [path for path in paths if not path.exists()]
    return pytest.mark.skipif(bool(absent), reason=missing(absent[0]) if absent else "")


def unnamed(reason: str) -> bool:
    """A skip about the reference data that does not name the command fetching it: a test that
    skipped by hand instead of through ``require`` or ``needs`` (tests/conftest.py fails it)."""
    return str(reference_dir()) in reason and FETCH_COMMAND not in reason


# -- the fetch ------------------------------------------------------------------------------


class FetchError(Exception):
    """A source that cannot be read, or a file whose sum is not the manifest's."""


@dataclass(frozen=True)
class Entry:
    destination: str  # relative to the reference folder
    source: str  # a key of SOURCES, or "empty" (a file the reference data leaves empty)
    ref: str  # git: a tag or an abbreviated commit; npm: the package spec; else "-"
    path: str  # in the source: the repository, the tarball, under the site's URL
    sha256: str


def read_manifest(path: Path = MANIFEST) -> list[Entry]:
    entries = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line and not line.startswith("#"):
            fields = line.split("\t")
            if len(fields) != len(Entry.__dataclass_fields__):
                raise FetchError(f"{path.name}:{number}: expected 5 tab-separated fields, found {len(fields)}")
            entries.append(Entry(*fields))
    return entries


def _run(command: list[str], what: str, cwd: Path | None = None) -> bytes:
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, check=False)
    except FileNotFoundError as error:
        raise FetchError(f"{what}: {command[0]} is not installed") from error
    if done.returncode != 0:
        detail = done.stderr.decode(errors="replace").strip()
        raise FetchError(f"{what}: `{' '.join(command)}` failed (exit {done.returncode}): {detail}")
    return done.stdout


class GitSource:
    """Every branch and tag of a repository, fetched into a bare cache (a later run fetches only
    what is new); files read by ``ref:path``."""

    def __init__(self, name: str, url: str, cache: Path) -> None:
        self.name, self.url, self.git_dir = name, url, cache / f"{name}.git"
        if not self.git_dir.is_dir():
            _run(["git", "init", "-q", "--bare", str(self.git_dir)], name)
        refspecs = ["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"]
        _run(["git", f"--git-dir={self.git_dir}", "fetch", "-q", "--force", url, *refspecs], f"{name} ({url})")

    def git(self, *args: str, what: str) -> bytes:
        return _run(["git", f"--git-dir={self.git_dir}", *args], f"{self.name} ({self.url}) {what}")

    def read(self, entry: Entry) -> bytes:
        return self.git("cat-file", "blob", f"{entry.ref}:{entry.path}", what=f"{entry.ref}:{entry.path}")

    def commit(self, ref: str) -> tuple[str, str]:
        """The abbreviated id and the date of the commit ``ref`` names."""
        out = self.git("log", "-1", "--abbrev=8", "--format=%h %cs", f"{ref}^{{commit}}", "--", what=ref)
        short, date = out.decode().split()
        return short, date


class NpmSource:
    """A package's published tarball: ``npm pack`` from the registry, or a local file."""

    def __init__(self, registry: str, tarball: str, cache: Path) -> None:
        self.registry, self.tarball, self.cache = registry, tarball, cache
        self.members: dict[str, dict[str, bytes]] = {}

    def _load(self, spec: str) -> dict[str, bytes]:
        if self.tarball:
            path = Path(self.tarball)
        else:
            command = ["npm", "pack", spec, "--json", "--pack-destination", str(self.cache)]
            command += ["--registry", self.registry] if self.registry else []
            packed = json.loads(_run(command, f"npm ({spec})", cwd=self.cache))
            path = self.cache / packed[0]["filename"]
        try:
            with tarfile.open(path) as archive:
                return {m.name: archive.extractfile(m).read() for m in archive if m.isfile()}  # type: ignore[union-attr]
        except (OSError, tarfile.TarError) as error:
            raise FetchError(f"npm ({spec}): cannot read {path}: {error}") from error

    def read(self, entry: Entry) -> bytes:
        if entry.ref not in self.members:
            self.members[entry.ref] = self._load(entry.ref)
        try:
            return self.members[entry.ref][entry.path]
        except KeyError:
            raise FetchError(f"npm ({entry.ref}): the package has no {entry.path}") from None


def _read_web(base: str, entry: Entry) -> bytes:
    url = base.rstrip("/") + "/" + entry.path
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            data: bytes = response.read()
    except (OSError, ValueError) as error:
        raise FetchError(f"web: cannot read {url}: {error}") from error
    return data


def fetch(entries: list[Entry], dest: Path, locations: dict[str, str], npm_tarball: str = "") -> list[str]:
    """Read every entry from its source and check its sum; write them under ``dest`` only if
    all match (a mismatch raises ``FetchError`` naming each file and writes nothing). Returns
    the destinations written."""
    cache = dest / ".cache"
    cache.mkdir(parents=True, exist_ok=True)
    git: dict[str, GitSource] = {}
    npm = NpmSource(locations["npm"], npm_tarball, cache)
    data: dict[str, bytes] = {}
    for entry in entries:
        if entry.source == "empty":
            data[entry.destination] = b""
        elif entry.source == "npm":
            data[entry.destination] = npm.read(entry)
        elif entry.source == "web":
            data[entry.destination] = _read_web(locations["web"], entry)
        elif entry.source in SOURCES:
            if entry.source not in git:
                git[entry.source] = GitSource(entry.source, locations[entry.source], cache)
            data[entry.destination] = git[entry.source].read(entry)
        else:
            raise FetchError(f"{MANIFEST.name}: {entry.destination}: unknown source {entry.source!r}")
    wrong = [
        f"{e.destination}: sha256 {hashlib.sha256(data[e.destination]).hexdigest()}, expected {e.sha256}"
        f" (from {e.source} {e.ref}:{e.path})"
        for e in entries
        if hashlib.sha256(data[e.destination]).hexdigest() != e.sha256
    ]
    if wrong:
        raise FetchError("checksum mismatch, nothing written:\n  " + "\n  ".join(wrong))
    for name, content in data.items():
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content)
    history = [e for e in entries if e.destination.startswith(HISTORY) and e.destination.endswith("/schema.json")]
    if history:
        _write_releases(history, entries, git["upstream"], dest / HISTORY / "releases.tsv")
    tagged = [e for e in entries if e.destination.startswith(TAGS)]
    if tagged:
        _write_tags(tagged, git["upstream"], dest / TAGS / "index.tsv")
    return list(data)


def _write_releases(history: list[Entry], entries: list[Entry], upstream: GitSource, out: Path) -> None:
    """The index of the release folders, in the manifest's (date) order: tag, commit, date and
    the paths its files came from. The tests read the tags from it."""
    metas = {e.ref: e.path for e in entries if e.destination.startswith(HISTORY) and "/meta." in e.path}
    lines = ["tag\tcommit\tdate\tschema\tmeta"]
    for entry in history:
        commit, date = upstream.commit(entry.ref)
        lines.append("\t".join((entry.ref, commit, date, entry.path, metas.get(entry.ref, "-"))))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _write_tags(tagged: list[Entry], upstream: GitSource, out: Path) -> None:
    """The index of ``tags/``, in the manifest's order: tag, commit, date, protocol version, file
    and its path in the tag, one row a file."""
    commits = {ref: upstream.commit(ref) for ref in dict.fromkeys(e.ref for e in tagged)}
    lines = ["tag\tcommit\tdate\tversion\tfile\tpath"]
    for entry in tagged:
        tag, version, file = entry.destination[len(TAGS) :].split("/")
        lines.append("\t".join((tag, *commits[entry.ref], version, file, entry.path)))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="nox -s fetch_data --",
        description="Fetch the tests' reference data from where upstream publishes it, check each file "
        f"against {MANIFEST.relative_to(ROOT)}, and lay it out where the tests look.",
    )
    parser.add_argument("--dest", type=Path, default=LOCAL, help="folder to fill (default: %(default)s)")
    parser.add_argument("--only", default="", help="fetch only destinations under this prefix (e.g. rfd/)")
    for name, (default, env) in SOURCES.items():
        what = "npm registry" if name == "npm" else f"{name} location"
        parser.add_argument(f"--{name}", default=os.environ.get(env, default), help=f"{what} (${env})")
    parser.add_argument("--npm-tarball", default=os.environ.get(NPM_TARBALL_ENV, ""), help=f"${NPM_TARBALL_ENV}")
    args = parser.parse_args(argv)
    locations = {name: getattr(args, name.replace("-", "_")) for name in SOURCES}
    try:
        entries = [e for e in read_manifest() if e.destination.startswith(args.only)]
        written = fetch(entries, args.dest.resolve(), locations, args.npm_tarball)
    except FetchError as error:
        print(f"fetch_data: {error}", file=sys.stderr)
        sources = ", ".join(f"--{name} (${env})" for name, (_, env) in SOURCES.items())
        print(f"Each source can be pointed at a copy: {sources}, --npm-tarball (${NPM_TARBALL_ENV}).", file=sys.stderr)
        return 1
    print(f"fetch_data: {len(written)} files checked and written to {args.dest}")
    if args.dest.resolve() != reference_dir():
        print(f"note: the tests read {reference_dir()} (set {DIR_ENV} to choose)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
