"""Inputs of ``acp-codegen diff``: a schema directory, one version directory, one schema
file (upstream style, optionally with its ``meta.json``), a directory in upstream's own
layout, ``git:REF``, or ``builtin:session-archive`` (the fragments shipped with acp-codegen).

Every input is turned into schema directories (``v<N>/`` sub-directories) so that the
normal pipeline loads, validates and generates them; file names in problems are mapped
back to what the user named (``git:main:schema/v1/schema.json``, the original path).

Upstream's layout (``v1/``, ``v2/`` ... holding ``schema.json`` and ``schema.unstable.json``,
with a ``meta.json`` / ``meta.unstable.json`` each or none at all) gives one side per
surface: the stable files of every version form the ``stable`` side, the unstable ones the
``unstable`` side, and each is compared with the other input's side of the same surface.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from ..errors import CodegenError, Problem, SchemaError, fail
from ..protocol.load import META_FILE, read_json
from ..resources import BUILTIN_PREFIX, display_name, schema_location
from ..schema_terms import DEFS, SIDES, features_inside, sides_of

GIT_PREFIX = "git:"
_VERSION_DIR = re.compile(r"v([1-9][0-9]*)\Z")
_SECTION = {side: section for section, side in SIDES.items()}
# Upstream's schema file per surface; an input in our own layout has the one surface "".
SURFACES = {"stable": "schema.json", "unstable": "schema.unstable.json"}


class InputError(CodegenError):
    """An input that is not schema text at all (a bad git ref, a missing path)."""


class VersionUnknown(SchemaError):
    """A schema file that does not say which protocol version it is (upstream's oldest
    release, v0.0.13, has no meta file): compared as the other input's, if that says."""


@dataclass
class Side:
    """One side of a comparison, materialised as a schema directory."""

    label: str  # as the user wrote it
    schema_dir: Path
    root: Path  # display names inside schema_dir are relative to this
    names: dict[str, str] = field(default_factory=dict)  # display name -> name shown to users
    prefix: str = ""  # prepended to display names not in ``names`` (git inputs)
    upstream: bool = False  # upstream's schema files: method types it does not mark are found by name

    def shown(self, name: str) -> str:
        return self.names.get(name, self.prefix + name)

    def translate(self, exc: SchemaError) -> SchemaError:
        """The same problems, naming the files the user knows."""
        return SchemaError([Problem(self.shown(p.file), p.pointer, p.message) for p in exc.problems])


@contextmanager
def open_sides(
    spec: str, root: Path, default_schema_dir: Path, git_path: str | None = None, version: int | None = None
) -> Iterator[dict[str, Side]]:
    """Resolve one command-line input into its sides by surface (see ``SURFACES``);
    temporary copies live as long as the context. ``version``: the protocol version of a
    schema file that does not tell its own (else ``VersionUnknown``)."""
    with tempfile.TemporaryDirectory(prefix="acp-codegen-diff-") as tmp:
        if spec.startswith(GIT_PREFIX):
            yield _git_sides(spec, root, default_schema_dir, git_path, Path(tmp), version)
        elif spec.startswith(BUILTIN_PREFIX):
            yield {"": _builtin_side(spec, Path(tmp))}
        else:
            yield _local_sides(spec, Path(spec), root, Path(tmp), version=version)


def _builtin_side(spec: str, tmp: Path) -> Side:
    """The fragments shipped with acp-codegen, copied out (as files of their own), shown
    as ``builtin:<name>/v1/schema.json`` and so on."""
    copy = tmp / "schema"
    with schema_location(spec) as directory:
        shutil.copytree(directory, copy, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    names = {display_name(p, tmp): f"{spec}/{p.relative_to(copy).as_posix()}" for p in copy.rglob("*.json")}
    return Side(spec, copy, tmp, names)


def upstream_layout(version_dir: Path) -> bool:
    """Upstream's files (one per surface, a meta file per surface or none), not our fragments."""
    names = {p.name for p in version_dir.glob("*.json")}
    return bool(names & set(SURFACES.values())) and (SURFACES["unstable"] in names or META_FILE not in names)


def _local_sides(
    label: str, path: Path, root: Path, tmp: Path, prefix: str = "", version: int | None = None
) -> dict[str, Side]:
    if path.is_file():
        return {"": _file_side(label, [path], root, tmp, prefix, version)}
    if not path.is_dir():
        raise InputError(f"{label}: no such file or directory")
    versions = sorted(p for p in path.iterdir() if p.is_dir() and _VERSION_DIR.match(p.name))
    if not versions and upstream_layout(path):
        versions = [path]  # one version directory of upstream's (or an SDK's schema/ holding its files)
    if any(upstream_layout(p) for p in versions):
        sides = {}
        for surface, file_name in SURFACES.items():
            files = [p / file_name for p in versions if (p / file_name).is_file()]
            if files:
                sides[surface] = _file_side(label, files, root, tmp / surface, prefix)
        return sides
    if versions:
        return {"": Side(label, path, root, prefix=prefix)}
    if not _VERSION_DIR.match(path.name) and (path / SURFACES["stable"]).is_file():
        # An SDK's schema folder holding one upstream schema and its meta (the official Python SDK's)
        return {"": _file_side(label, [path / SURFACES["stable"]], root, tmp, prefix, version)}
    if (path / META_FILE).is_file() and _VERSION_DIR.match(path.name):
        # One version directory: give it a parent so the pipeline sees a schema directory.
        copy = tmp / "schema" / path.name
        shutil.copytree(path, copy)
        names = {display_name(p, tmp): prefix + display_name(path / p.name, root) for p in copy.iterdir()}
        return {"": Side(label, tmp / "schema", tmp, names, prefix)}
    raise InputError(
        f"{label}: not a schema file, a schema directory (with v1/, v2/ ...), a version directory"
        " (v<N>/ with meta.json) or upstream's layout (v<N>/ with schema.json, schema.unstable.json)"
    )


def _meta_path(schema_file: Path) -> Path:
    """``schema.unstable.json`` pairs with ``meta.unstable.json``; anything else with ``meta.json``."""
    stem = schema_file.name
    if stem.startswith("schema.") and stem.endswith(".json"):
        candidate = schema_file.with_name("meta." + stem[len("schema.") :])
        if candidate.is_file():
            return candidate
    return schema_file.with_name(META_FILE)


def _method_key(method: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", method.lower()).strip("_") or "method"


def derived_meta(schema: Any, version: int) -> dict[str, Any]:
    """A meta.json for a schema file that came without one: methods from x-method/x-side."""
    meta: dict[str, Any] = {"version": version}
    defs = schema.get(DEFS) if isinstance(schema, dict) else None
    for definition in (defs or {}).values() if isinstance(defs, dict) else ():
        if not isinstance(definition, dict) or not isinstance(definition.get("x-method"), str):
            continue
        method = definition["x-method"]
        for side in sides_of(definition.get("x-side")):
            if side in _SECTION:
                meta.setdefault(_SECTION[side], {})[_method_key(method)] = method
    return meta


def _file_side(label: str, paths: list[Path], root: Path, tmp: Path, prefix: str, version: int | None = None) -> Side:
    """Schema files (one per version) with their meta files, or meta derived from markers."""
    names: dict[str, str] = {}
    for path in paths:
        names.update(_add_file(label, path, root, tmp, prefix, version))
    return Side(label, tmp / "schema", tmp, names, prefix, upstream=True)


def _add_file(label: str, path: Path, root: Path, tmp: Path, prefix: str, fallback: int | None) -> dict[str, str]:
    shown = prefix + display_name(path, root)
    try:
        source = read_json(path, root)
    except SchemaError as exc:
        raise Side(label, tmp, tmp, prefix=prefix).translate(exc) from None
    meta_path = _meta_path(path)
    meta_shown = prefix + display_name(meta_path, root)
    meta: Any = None
    if meta_path.is_file():
        try:
            meta = read_json(meta_path, root).data
        except SchemaError as exc:
            raise Side(label, tmp, tmp, prefix=prefix).translate(exc) from None
    version = meta.get("version") if isinstance(meta, dict) else None
    if not (isinstance(version, int) and not isinstance(version, bool) and version >= 1):
        match = _VERSION_DIR.match(path.parent.name)
        if match:
            version = int(match.group(1))
        elif meta is not None:
            version = 1  # a bad meta version is reported by validation
        elif fallback is not None:
            version = fallback
        else:
            message = "cannot tell the protocol version: put the file in a v<N>/ directory or beside a meta.json"
            raise VersionUnknown(Problem(shown, "", message))
    if meta is None:
        meta = derived_meta(source.data, version)
        meta_shown = f"{shown} (meta derived from its x-method markers)"
    if isinstance(meta, dict) and "features" not in meta:
        # Upstream meta.json has no feature table; declare the features the file uses.
        meta = {**meta, "features": {f: "" for f in sorted(features_inside(source.data))}}
    target = tmp / "schema" / f"v{version}"
    if target.exists():
        raise fail(shown, "", f"a second schema for protocol version {version} in one input")
    target.mkdir(parents=True)
    shutil.copyfile(path, target / "schema.json")
    (target / META_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return {
        display_name(target / "schema.json", tmp): shown,
        display_name(target / META_FILE, tmp): meta_shown,
    }


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, check=False)
    except OSError as exc:
        raise InputError(f"cannot run git: {exc}") from None


def _git_sides(
    spec: str, root: Path, default_schema_dir: Path, git_path: str | None, tmp: Path, version: int | None
) -> dict[str, Side]:
    ref = spec[len(GIT_PREFIX) :]
    if not ref or ref.startswith("-"):
        raise InputError(f"{spec}: expected git:REF with a branch, tag or commit")
    top_proc = _git(root, "rev-parse", "--show-toplevel")
    if top_proc.returncode:
        raise InputError(f"{spec}: {root} is not inside a git repository")
    top = Path(top_proc.stdout.decode().strip())
    if git_path is None:
        try:
            git_path = default_schema_dir.resolve().relative_to(top.resolve()).as_posix()
        except ValueError:
            raise InputError(f"{spec}: {default_schema_dir} is outside the repository; use --path") from None
    rel = PurePosixPath(git_path)
    if rel.is_absolute() or ".." in rel.parts:
        raise InputError(f"--path {git_path}: must be relative to the repository root")
    # A schema file comes with its folder: the meta file beside it says its methods and version.
    is_file = _git(top, "cat-file", "-t", f"{ref}:{rel.as_posix()}").stdout.strip() == b"blob"
    proc = _git(top, "archive", "--format=tar", ref, "--", (rel.parent if is_file else rel).as_posix())
    if proc.returncode:
        message = proc.stderr.decode(errors="replace").strip().splitlines()
        raise InputError(f"{spec}: {message[-1] if message else 'git archive failed'}")
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as archive:
        for member in archive.getmembers():
            name = PurePosixPath(member.name)
            if not member.isfile() or name.is_absolute() or ".." in name.parts:
                continue  # only plain files, only inside the extraction directory
            data = archive.extractfile(member)
            if data is None:
                continue
            out = tmp.joinpath(*name.parts)
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data.read())
    return _local_sides(spec, tmp.joinpath(*rel.parts), tmp, tmp / ".file", prefix=f"{spec}:", version=version)
